"""The fake cloud's Kubernetes side (and the test data of the Kubernetes tests: certificates, settings): a management cluster that stores the objects a program creates in it.

``install()`` adds the handlers to :data:`tests.mocks.resources.HANDLERS` (idempotent): Kubernetes providers (their
state is their inputs), Cluster API ``Cluster`` / ``OpenStackCluster`` objects, ``Secret`` and ``Deployment`` objects
(stored per provider, namespace and name; a second object of the same kind, namespace and name is refused, as the API
server would; a Secret without a name is named as pulumi-kubernetes names it), and the
ControlPlaneEndpointGuard dynamic resource (no cloud object). In preview nothing is stored.
"""

from __future__ import annotations

import copy
import datetime
import hashlib
import json

from . import resources
from .cloud import CloudError, FakeCloud, known

PROVIDER_TYPE = "pulumi:providers:kubernetes"
CLUSTER_TYPE = "kubernetes:cluster.x-k8s.io/v1beta2:Cluster"
OPENSTACK_CLUSTER_TYPE = "kubernetes:infrastructure.cluster.x-k8s.io/v1beta1:OpenStackCluster"
GUARD_TYPE = "pulumi-python:dynamic/haendpoint:ControlPlaneEndpointGuard"
NAMESPACE_TYPE = "kubernetes:core/v1:Namespace"
SECRET_TYPE = "kubernetes:core/v1:Secret"
CONFIG_MAP_TYPE = "kubernetes:core/v1:ConfigMap"
DEPLOYMENT_TYPE = "kubernetes:apps/v1:Deployment"


def _object(kind: str):
    def handler(cloud, name: str, inputs: dict) -> dict:
        metadata = inputs.get("metadata") or {}
        key = (kind, metadata.get("namespace", "default"), metadata.get("name", name))
        if cloud.preview or not known(key):
            return {}
        objects = cloud.kind("k8s-objects")
        if key in objects:
            raise CloudError(f'{kind} "{key[2]}" already exists in namespace {key[1]} (409 AlreadyExists)')
        objects[key] = inputs
        return {"id": f"{key[1]}/{key[2]}"}

    return handler


def _auto_named(kind: str):
    """An object the program may leave unnamed: named ``<resource name>-<suffix>`` as pulumi-kubernetes names it, the
    suffix here a digest of the inputs (the provider's is random; a new one comes with every replacement, which
    pulumi-kubernetes makes of every change of a Secret's data)."""
    store = _object(kind)

    def handler(cloud, name: str, inputs: dict) -> dict:
        metadata = dict(inputs.get("metadata") or {})
        if "name" not in metadata:
            digest = hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode()).hexdigest()[:8]
            metadata["name"] = f"{name}-{digest}"
        if cloud.preview:
            return {}
        return {**store(cloud, name, {**inputs, "metadata": metadata}), "metadata": metadata}

    return handler


class CloudWithStacks(FakeCloud):
    """The fake cloud, plus other stacks whose outputs a ``StackReference`` reads (``stack_outputs[<stack name>]``;
    the mock monitor reads a StackReference as a non-custom resource, so it is answered here)."""

    stack_outputs: dict[str, dict] = {}

    def new_resource(self, args):
        if args.typ == "pulumi:pulumi:StackReference":
            stack = args.inputs.get("name") or args.name
            if stack not in self.stack_outputs:
                raise CloudError(f"stack {stack} not found")
            return stack, {"name": stack, "outputs": self.stack_outputs[stack], "secretOutputNames": []}
        return super().new_resource(args)


HANDLERS = {
    PROVIDER_TYPE: lambda cloud, name, inputs: dict(inputs),
    CLUSTER_TYPE: _object("Cluster"),
    OPENSTACK_CLUSTER_TYPE: _object("OpenStackCluster"),
    GUARD_TYPE: lambda cloud, name, inputs: {},
    NAMESPACE_TYPE: lambda cloud, name, inputs: {},
    SECRET_TYPE: _auto_named("Secret"),
    CONFIG_MAP_TYPE: _object("ConfigMap"),
    DEPLOYMENT_TYPE: _object("Deployment"),
}


def _certificates() -> dict[str, str]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)

    def cert(subject: str, key, issuer_name, issuer_key, ca: bool):
        return (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
                .issuer_name(issuer_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
                .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
                .sign(issuer_key, hashes.SHA256()))

    ca_key, client_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = cert("kubernetes", ca_key, x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubernetes")]), ca_key, True)
    client = cert("kubernetes-admin", client_key, ca.subject, ca_key, False)
    pem = serialization.Encoding.PEM
    return {
        "ca": ca.public_bytes(pem).decode(),
        "cert": client.public_bytes(pem).decode(),
        "key": client_key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                        serialization.NoEncryption()).decode(),
    }


CERTS = _certificates()


def kubernetes_config(**changes) -> dict:
    """``ha-endpoint:kubernetes`` for the dev endpoint: client certificate credentials, defaults elsewhere."""
    raw = {"credentials": {"caCertificate": CERTS["ca"], "clientCertificate": CERTS["cert"],
                           "clientKey": CERTS["key"]}}
    raw.update(copy.deepcopy(changes))
    return raw


CLUSTER_API = {"identityRef": {"name": "openstack-cloud-config", "cloudName": "openstack"}}

CLOUDS_YAML = ("clouds:\n  openstack:\n    auth:\n      auth_url: https://keystone.example.test:5000/v3\n"
               "      username: watcher\n      password: s3cret\n      project_name: ha\n"
               "      user_domain_name: Default\n      project_domain_name: Default\n    region_name: RegionOne\n")
"""The watcher's clouds.yaml (one entry, ``openstack``)."""


def watcher_config(**changes) -> dict:
    """``ha-endpoint:kubernetes.watcher``: an image, the clouds.yaml and its entry, the watcher's defaults."""
    return {"image": "registry.example.test/ha-endpoint:0.1.0", "cloudsYaml": CLOUDS_YAML, "cloud": "openstack",
            **copy.deepcopy(changes)}


def install() -> None:
    """Teach the fake cloud the Kubernetes types (the other handlers are left as they are)."""
    for typ, handler in HANDLERS.items():
        resources.HANDLERS.setdefault(typ, handler)

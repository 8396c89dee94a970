"""WatcherDeployment: the DNS watcher (``python -m ha_endpoint.watch``) running beside a Kubernetes cluster.

    watcher = WatcherDeployment("dns-watcher", endpoint, clouds_yaml=config.require_secret("cloudsYaml"),
                                cloud="openstack", image="registry.example/ha-endpoint:0.1.0",
                                opts=pulumi.ResourceOptions(provider=management))

A component (``haendpoint:kubernetes:WatcherDeployment``) whose children are a ``Secret`` (clouds.yaml and the
endpoint's outputs) and a ``Deployment`` of one pod running the watcher on them (manifests and checks:
:mod:`.watcher_manifests`). The cluster is the Kubernetes provider the children inherit (the default provider, or
one given in ``opts``); the component never creates one.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional, Union

import pulumi
import pulumi_kubernetes as k8s

from ..backends.watching import watched_outputs, watcher_calls_of
from ..core.errors import ConfigError, Problem
from .credential import WATCHER_ROLES, CredentialSettings, ScopedCredential, credential_problems
from .endpoint_ref import EndpointRef
from .watcher_manifests import (DEFAULT_RESOURCES, WatcherSpec, WatchOptions, clouds_problems, deployment_manifest,
                                project_stack, secret_manifest, spec_problems, stack_problems)

WATCHER_DEPLOYMENT_TYPE = "haendpoint:kubernetes:WatcherDeployment"
SECRET_TYPE = "kubernetes:core/v1:Secret"
DEPLOYMENT_TYPE = "kubernetes:apps/v1:Deployment"


def secret_name(name: str) -> str:
    return f"{name}-config"


def deployment_name(name: str) -> str:
    return f"{name}-deployment"


class WatcherDeployment(pulumi.ComponentResource):
    """The DNS watcher of ``endpoint`` (an HaEndpoint of this program or an :class:`EndpointRef`, e.g.
    ``EndpointRef.from_stack_reference(ref)``) as a Deployment in a Kubernetes cluster.

    **One watcher at a time.** Two watchers writing the record at once would undo each other's changes, so the
    Deployment runs one replica with strategy ``Recreate`` (on a rollout the old pod is gone before the new one
    starts), and is deleted before it is replaced (a new namespace or name). Kubernetes does not promise more: a pod
    on a node that stops answering is replaced only once the node is declared lost (5 minutes by default), and the
    old pod may still run there; deploy it to a cluster that does not depend on this endpoint (a management cluster),
    where a lost AZ does not take the watcher with it.

    - ``credential`` (:class:`~ha_endpoint.kubernetes.CredentialSettings` or a mapping of its keys) makes the watcher
      its own application credential, allowed exactly its calls on this endpoint's load balancers, pools and record
      (docs/security.md), written as entry ``cloud`` of its clouds.yaml; or ``clouds_yaml`` (a secret Input: the
      content of a clouds.yaml) and ``cloud`` (its entry, ``OS_CLOUD``; and ``options.region``) give it credentials
      made elsewhere (one of the two). The file must be self-contained: a ``cacert`` path would have to exist in the
      image.
    - ``image``: there is no published image; any image with Python 3.11 or later on its PATH and this package
      installed (``pip install ha-endpoint``: the watcher needs neither pulumi-kubernetes nor write access to its
      filesystem) runs it, as user 65532.
    - ``stack``: ``<project>/<stack>`` of the endpoint (or the ``<org>/<project>/<stack>`` a StackReference reads),
      which the load balancers and the record must carry; default: the HaEndpoint's own stack.
    - ``options``: the watcher's thresholds (:class:`WatchOptions`; unset ones keep the watcher's defaults).
    - ``resources``: the container's requests and limits (default :data:`DEFAULT_RESOURCES`).

    The watcher reads its files once, at start: a change of the outputs (a new zone, a replaced load balancer) or of
    the credentials makes a new Secret (it is named by the program), and the Deployment, which names it, restarts its
    pod on it. (Under a provider with ``enableSecretMutable`` the Secret is updated in place instead: restart the
    pod by hand.) Bad input raises :class:`~ha_endpoint.ConfigError` naming the argument (``root``) before anything
    is registered. Outputs: ``secret`` and ``deployment`` (the resources), ``stack``.
    """

    def __init__(self, name: str, endpoint: Union[EndpointRef, Any], clouds_yaml: Optional[pulumi.Input[str]],
                 cloud: str, image: str, namespace: str = "default", stack: Optional[str] = None,
                 options: Optional[WatchOptions] = None, resources: Optional[Mapping[str, Mapping[str, str]]] = None,
                 opts: Optional[pulumi.ResourceOptions] = None, root: Optional[str] = None,
                 credential: Optional[Any] = None):
        root = root or f"WatcherDeployment({name!r})"
        ref = endpoint if isinstance(endpoint, EndpointRef) else EndpointRef.of(endpoint, root)
        spec = WatcherSpec(name=name, image=image, cloud=cloud, resources=dict(resources or DEFAULT_RESOURCES),
                           namespace=namespace, stack=project_stack(stack or ref.stack or ""),
                           options=options or WatchOptions())
        problems = _problems(spec, ref, stack, clouds_yaml, root)
        settings, found = credential_problems(clouds_yaml, credential, root)
        problems += found
        if problems:
            raise ConfigError(problems)
        super().__init__(WATCHER_DEPLOYMENT_TYPE, name, {"namespace": namespace, "stack": spec.stack}, opts)
        self.spec = spec
        # Waits for the record (ref.published): before it exists, the watcher would find nothing to watch.
        outputs_json = pulumi.Output.all(ref.fqdn, ref.zones, ref.published, ref.ports).apply(
            lambda values: json.dumps(watched_outputs(values[0], values[1], values[3]), indent=2, sort_keys=True))
        self.credential = _scoped(name, spec, ref, settings, self) if settings is not None else None
        clouds = self.credential.clouds_yaml if self.credential is not None else pulumi.Output.secret(clouds_yaml)
        secret = secret_manifest(spec, clouds, outputs_json)
        self.secret = k8s.core.v1.Secret(secret_name(name), metadata=secret["metadata"], type=secret["type"],
                                         string_data=secret["stringData"],
                                         opts=pulumi.ResourceOptions(parent=self))
        deployment = deployment_manifest(spec, self.secret.metadata.name)
        self.deployment = k8s.apps.v1.Deployment(
            deployment_name(name), metadata=deployment["metadata"], spec=deployment["spec"],
            opts=pulumi.ResourceOptions(parent=self, delete_before_replace=True))
        self.stack = spec.stack
        self.register_outputs({"deployment": f"{namespace}/{name}", "stack": spec.stack})


def _scoped(name: str, spec: WatcherSpec, ref: EndpointRef, settings: CredentialSettings, parent: pulumi.Resource
            ) -> ScopedCredential:
    """The watcher's own application credential: what it reads of each zone (its load balancer and pools, or what
    the zone's backend reads), its DNS zone and record."""
    calls = pulumi.Output.all(ref.zones, ref.record_id).apply(lambda values: watcher_calls_of(values[0], values[1]))
    return ScopedCredential(f"{name}-credential", f"{spec.stack}-{name}".replace("/", "-"), spec.cloud, settings,
                            WATCHER_ROLES, calls, parent, f"ha-endpoint DNS watcher {spec.namespace}/{name}: its record only")


def _problems(spec: WatcherSpec, ref: EndpointRef, stack: Optional[str], clouds_yaml: Any, root: str
              ) -> list[Problem]:
    problems = spec_problems(spec, root)
    if not spec.stack:
        problems.append(Problem(f"{root}.stack", "the endpoint comes from a StackReference, which does not say its "
                                                 "stack as a plain value; give stack='<project>/<stack>' (e.g. the "
                                                 "name the StackReference reads)"))
    else:
        problems += stack_problems(spec.stack, f"{root}.stack")
        if stack and ref.stack and spec.stack != ref.stack:
            problems.append(Problem(f"{root}.stack", f"the endpoint is stack {ref.stack}'s, not {spec.stack}'s: the "
                                                     "watcher would refuse its load balancers; leave stack unset"))
    if ref.zones is None:
        problems.append(Problem(root, "the endpoint gives no zones to watch; use EndpointRef.of(<HaEndpoint>) or "
                                      "EndpointRef.from_stack_reference(<StackReference>)"))
    if isinstance(clouds_yaml, str):  # an Output is checked by the watcher when it starts
        problems += clouds_problems(clouds_yaml, spec.cloud, f"{root}.clouds_yaml")
    return problems

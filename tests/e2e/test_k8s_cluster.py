"""A real Kubernetes control plane (lab/localcloud/k8s: three etcd members, three kube-apiservers, all on 127.0.0.1),
no OpenStack cloud needed: kubectl answers through each API server with the kubeconfig the project renders, the
pulumi-kubernetes plugin built here runs under the real engine with the project's ClusterAccess, the API server
accepts the Cluster API CRDs (Cluster API v1.14.2's Cluster, with its own conversion webhook, and CAPO v0.14.7's
OpenStackCluster) and the objects the project generates, a stack's v1beta1 Cluster moves to v1beta2 in place, and
etcd keeps quorum with one member stopped. The cluster starts once per module (its start time and memory are printed); the binaries come from
`lab/engine/build.sh --k8s` (built first when missing: minutes on a cold machine)."""

from __future__ import annotations

import json
import subprocess
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from localcloud.k8s import cluster, layout
from tests.e2e.management import established, wait_for
from tests.e2e.pulumi_cli import PulumiStack
from tests.unit.kubernetes.capi_schema import crd_dir

pytestmark = pytest.mark.e2e

KUBE_VERSION = "v1.34.4"


@dataclass(frozen=True)
class Running:
    plan: layout.Layout
    bins: cluster.Binaries
    credentials: cluster.Credentials

    def kubectl(self, *args: str, kubeconfig: Path | None = None, stdin: str | None = None,
                check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run([str(self.bins.kubectl), "--kubeconfig", str(kubeconfig or self.plan.kubeconfig),
                               "--request-timeout=20s", *args], input=stdin, capture_output=True, text=True, timeout=90)
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
        return done

    def kubeconfig_for(self, node: layout.Node, ca: Path | None = None) -> Path:
        """A kubeconfig rendered by the project's own render_kubeconfig for ``node``'s API server by the name
        ``localhost.`` (the trailing dot of a DNS record, as an endpoint's fqdn has it), with the admin's
        certificate; ``ca``: another CA to trust instead of the cluster's."""
        from ha_endpoint.kubernetes import render_kubeconfig, server_url
        from ha_endpoint.kubernetes.kubeconfig import KubeconfigUser

        certificate, key = self.credentials.admin.pem()
        path = self.plan.state / f"{node.name}-{'other-ca' if ca else 'rendered'}.kubeconfig"
        path.write_text(render_kubeconfig(server_url("localhost.", node.api_port), "e2e", "e2e-admin",
                                          (ca or self.credentials.ca).read_text(),
                                          KubeconfigUser(client_certificate=certificate, client_key=key)))
        return path


@pytest.fixture(scope="module")
def k8s(tmp_path_factory):
    bins = cluster.binaries()
    plan = cluster.local_layout("e2e", tmp_path_factory.mktemp("k8s"))
    layout.save(plan)
    try:
        started = cluster.up(plan, bins)
        usage = cluster.memory(plan)
        print(f"\nk8s: 3 etcd + 3 kube-apiserver ready in {started.seconds:.1f} s (etcd {started.etcd_seconds:.1f} s, "
              f"API servers {started.api_seconds:.1f} s); RSS {sum(u.rss for u in usage) / 2**20:.0f} MiB, "
              f"PSS {sum(u.pss for u in usage) / 2**20:.0f} MiB; ports {[n.ports() for n in plan.nodes]}")
        yield Running(plan, bins, cluster.certificates(plan))
    finally:
        print(f"k8s: stopped {cluster.down(plan)}")


def test_kubectl_answers_through_every_api_server_with_the_rendered_kubeconfig(k8s):
    for node in k8s.plan.nodes:
        kubeconfig = k8s.kubeconfig_for(node)
        assert k8s.kubectl("get", "--raw", "/readyz", kubeconfig=kubeconfig).stdout.strip() == "ok"
        versions = json.loads(k8s.kubectl("version", "-o", "json", kubeconfig=kubeconfig).stdout)
        assert versions["clientVersion"]["gitVersion"] == KUBE_VERSION
        assert versions["serverVersion"]["gitVersion"] == KUBE_VERSION
    namespaces = k8s.kubectl("get", "namespaces", "-o", "name").stdout.split()  # the kubeconfig `up` wrote
    assert {"namespace/default", "namespace/kube-system", "namespace/kube-public"} <= set(namespaces)

    untrusted = k8s.kubectl("get", "--raw", "/readyz", kubeconfig=k8s.kubeconfig_for(k8s.plan.nodes[0],
                                                                                    ca=k8s.credentials.etcd_ca),
                            check=False)
    assert untrusted.returncode != 0 and "certificate signed by unknown authority" in untrusted.stderr


PROGRAM = textwrap.dedent('''
    import pulumi
    import pulumi_kubernetes as k8s
    from ha_endpoint.kubernetes import ClusterAccess, Credentials, EndpointRef

    config = pulumi.Config()
    # The endpoint as ClusterAccess reads it; its name is localhost here (in the API servers' certificates).
    endpoint = EndpointRef(fqdn="localhost.", ports=[config.require_int("port")], published=["127.0.0.1"], azs=["az1"])
    access = ClusterAccess("local", endpoint, Credentials(
        ca_certificate=config.require_secret("ca"), client_certificate=config.require_secret("clientCertificate"),
        client_key=config.require_secret("clientKey")))
    opts = pulumi.ResourceOptions(provider=access.provider())
    # This cluster runs no controller manager: nothing finishes a namespace's deletion (its "kubernetes" finalizer)
    # or a foreground deletion (the garbage collector's finalizer). So the namespace's deletion is not awaited and
    # the ConfigMap is deleted in the background (it has no dependents).
    namespace = k8s.core.v1.Namespace("apps", metadata={"name": "ha-endpoint-e2e",
                                                        "annotations": {"pulumi.com/skipAwait": "true"}}, opts=opts)
    settings = k8s.core.v1.ConfigMap("settings", metadata={
        "namespace": namespace.metadata.name, "name": "settings",
        "annotations": {"pulumi.com/deletionPropagationPolicy": "background"}},
        data={"zones": config.get("zones") or "az1,az2,az3"}, opts=opts)
    pulumi.export("configmap", settings.metadata.name)
''')


def kubernetes_stack(workdir: Path, k8s: Running, environment: dict[str, str]) -> PulumiStack:
    stack = PulumiStack.program(workdir, "k8s-local", "local", PROGRAM, environment)
    certificate, key = k8s.credentials.admin.pem()
    for name, value in (("ca", k8s.credentials.ca.read_text()), ("clientCertificate", certificate),
                        ("clientKey", key)):
        stack.set_secret(name, value)
    stack.run("config", "set", "port", str(k8s.plan.nodes[1].api_port))
    return stack


def test_pulumi_kubernetes_creates_previews_no_change_and_destroys(k8s, k8s_engine_environment, tmp_path):
    stack = kubernetes_stack(tmp_path / "program", k8s, k8s_engine_environment)
    plugins = json.loads(subprocess.run(["pulumi", "plugin", "ls", "--json"], env=stack.env, check=True,
                                        capture_output=True, text=True, timeout=120).stdout)
    assert {"name": "kubernetes", "kind": "resource", "version": k8s.bins.provider_version} in [
        {key: plugin[key] for key in ("name", "kind", "version")} for plugin in plugins], plugins
    created = False
    try:
        up = stack.up(policy=False)
        created = True
        print(f"up {up.seconds:.1f} s")
        live = json.loads(k8s.kubectl("get", "configmap", "settings", "-n", "ha-endpoint-e2e", "-o", "json").stdout)
        assert live["data"] == {"zones": "az1,az2,az3"}
        assert stack.outputs()["configmap"] == "settings"

        same = stack.preview("--expect-no-changes", policy=False)
        print(f"no-change preview {same.seconds:.1f} s")
        stack.run("config", "set", "zones", "az1,az2")
        changed = stack.preview(policy=False)  # the provider replaces a ConfigMap whose data changes (its default)
        assert "+-1 to replace" in changed.output and '~ zones: "az1,az2,az3" => "az1,az2"' in changed.output, \
            changed.output
        stack.run("config", "rm", "zones")
    finally:
        if created:
            destroyed = stack.destroy()
            print(f"destroy {destroyed.seconds:.1f} s")
    gone = k8s.kubectl("get", "configmap", "settings", "-n", "ha-endpoint-e2e", check=False)
    assert gone.returncode != 0 and "NotFound" in gone.stderr
    namespace = json.loads(k8s.kubectl("get", "namespace", "ha-endpoint-e2e", "-o", "json").stdout)
    assert namespace["metadata"].get("deletionTimestamp") and namespace["status"]["phase"] == "Terminating"
    # What the namespace controller would do once the namespace is empty: drop its finalizer, delete it again.
    k8s.kubectl("replace", "--raw", "/api/v1/namespaces/ha-endpoint-e2e/finalize", "-f", "-",
                stdin=json.dumps({**namespace, "spec": {"finalizers": []}}))
    k8s.kubectl("delete", "namespace", "ha-endpoint-e2e", "--wait=true", "--timeout=30s")
    assert "NotFound" in k8s.kubectl("get", "namespace", "ha-endpoint-e2e", check=False).stderr


@pytest.fixture(scope="module")
def capi(k8s):
    """The Cluster API CRDs the tests validate against (capi/versions.env: Cluster API v1.14.2, CAPO v0.14.7) in the
    API server, the Cluster's with Cluster API's own conversion webhook (lab/engine/capi-conversion, serving on
    127.0.0.1 with a certificate of the cluster's CA), as Cluster API's manager installs it: the CRD serves v1beta1
    and v1beta2 and stores v1beta2. Without the webhook (strategy None, the CRD file as it is) the API server only
    relabels an object: a v1beta1 Cluster's references lose their apiVersion to pruning and gain no apiGroup, and a
    later v1beta2 apply by the same field manager is refused ("failed to convert merged object to last applied
    version: .spec.infrastructureRef.apiGroup: field not declared in schema")."""
    import base64

    from localcloud.k8s import pki

    authority = pki.Authority(k8s.plan.pki, "ca", f"{k8s.plan.name}-ca")
    serving = authority.issue("capi-conversion", "capi-conversion", server=True, sans=("127.0.0.1",))
    webhook = subprocess.Popen([str(k8s.bins.capi_conversion), "--cert", str(serving.cert), "--key", str(serving.key)],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        address = webhook.stdout.readline().split()[-1]  # "listening on 127.0.0.1:<port>"
        ca_bundle = base64.b64encode(k8s.credentials.ca.read_bytes()).decode()
        for crd_file in sorted(crd_dir().glob("*.yaml")):
            crd = yaml.safe_load(crd_file.read_text())
            if crd["metadata"]["name"] == "clusters.cluster.x-k8s.io":
                crd["spec"]["conversion"] = {"strategy": "Webhook", "webhook": {
                    "conversionReviewVersions": ["v1"],
                    "clientConfig": {"url": f"https://{address}/convert", "caBundle": ca_bundle}}}
            k8s.kubectl("apply", "--server-side", "-f", "-", stdin=json.dumps(crd))
            name = crd["metadata"]["name"]
            wait_for(lambda: established(k8s.kubectl("get", f"crd/{name}", "-o", "json").stdout),
                     f"CRD {name} Established", 60)
        yield address
    finally:
        webhook.terminate()
        webhook.wait(timeout=10)


def apply(k8s: Running, manifest: dict, check: bool = True) -> subprocess.CompletedProcess:
    for attempt in range(20):  # a CRD's discovery reaches every API server's cache shortly after Established
        applied = k8s.kubectl("apply", "--server-side", "--validate=strict", "-f", "-", stdin=json.dumps(manifest),
                              check=False)
        if applied.returncode == 0 or "the server could not find the requested resource" not in applied.stderr:
            break
        time.sleep(0.5)
    if check:
        assert applied.returncode == 0, applied.stderr
    return applied


def test_the_api_server_accepts_cluster_api_crds_and_the_generated_objects(k8s, capi):
    from ha_endpoint.kubernetes.manifests import (ClusterSpecInputs, ObjectRef, cluster_manifest,
                                                  openstack_cluster_manifest)

    spec = ClusterSpecInputs(
        name="e2e", namespace="default", host="api.example.test", port=6443, azs=["az1", "az2", "az3"],
        identity_name="openstack-cloud-config", cloud_name="openstack", api_server_port=6443, network="cp",
        subnets=("cp-az1",), pods=("192.168.0.0/16",), services=("10.96.0.0/12",), service_domain="cluster.local",
        control_plane_ref=ObjectRef("KubeadmControlPlane", "e2e-control-plane"))
    for manifest in (cluster_manifest(spec), openstack_cluster_manifest(spec)):
        apply(k8s, manifest)
        group, version = manifest["apiVersion"].split("/")
        stored = json.loads(k8s.kubectl("get", f"{manifest['kind'].lower()}s.{version}.{group}", "e2e", "-n",
                                        "default", "-o", "json").stdout)
        assert stored["spec"] == manifest["spec"], manifest["kind"]  # nothing pruned, nothing defaulted away
        assert stored["metadata"]["labels"] == manifest["metadata"]["labels"]

    manifest = cluster_manifest(spec)
    misspelled = {**manifest, "metadata": {**manifest["metadata"], "name": "e2e-typo"},
                  "spec": {**manifest["spec"], "controlPlaneEndpont": {"host": "x", "port": 1}}}
    refused = apply(k8s, misspelled, check=False)
    assert refused.returncode != 0 and ".spec.controlPlaneEndpont: field not declared in schema" in refused.stderr, \
        refused.stderr


MOVE_PROGRAM = textwrap.dedent('''
    import pulumi
    import pulumi_kubernetes as k8s
    from ha_endpoint.kubernetes import ClusterAccess, ClusterApi, ControlPlaneEndpointGuard, Credentials, EndpointRef
    from ha_endpoint.kubernetes.cluster_api import CLUSTER_API_TYPE, child_name, spec_inputs
    from ha_endpoint.kubernetes.manifests import openstack_cluster_manifest
    from ha_endpoint.kubernetes.settings import ClusterApiSettings

    config = pulumi.Config()
    local = EndpointRef(fqdn="localhost.", ports=[config.require_int("port")], published=["127.0.0.1"], azs=["az1"])
    management = ClusterAccess("management", local, Credentials(
        ca_certificate=config.require_secret("ca"), client_certificate=config.require_secret("clientCertificate"),
        client_key=config.require_secret("clientKey"))).provider()
    # The endpoint the workload cluster's objects name (from another stack: the network is given).
    endpoint = EndpointRef(fqdn="api.example.test.", ports=[6443], published=["172.24.4.100"], azs=["az1", "az2"])
    settings = {"identityRef": {"name": "openstack-cloud-config", "cloudName": "openstack"}, "network": "cp",
                "controlPlaneRef": {"name": "k8s-api-control-plane"}}


    class ClusterApiV1beta1(pulumi.ComponentResource):
        """What ClusterApi registered before it moved to v1beta2: the same component, guard and OpenStackCluster,
        and its Cluster as cluster.x-k8s.io/v1beta1 with v1beta1 references (apiVersion and namespace)."""

        def __init__(self, name, opts):
            spec = spec_inputs(name, endpoint, ClusterApiSettings.model_validate(settings))
            super().__init__(CLUSTER_API_TYPE, name, {"name": spec.name, "namespace": spec.namespace}, opts)
            guard = ControlPlaneEndpointGuard(child_name(name, "guard"), cluster=f"{spec.namespace}/{spec.name}",
                                              host=spec.host, port=spec.port,
                                              opts=pulumi.ResourceOptions(parent=self))
            children = pulumi.ResourceOptions(parent=self, depends_on=[guard])
            openstack = openstack_cluster_manifest(spec)
            k8s.apiextensions.CustomResource(child_name(name, "openstack_cluster"), api_version=openstack["apiVersion"],
                                             kind=openstack["kind"], metadata=openstack["metadata"],
                                             spec=openstack["spec"], opts=children)
            k8s.apiextensions.CustomResource(child_name(name, "cluster"), api_version="cluster.x-k8s.io/v1beta1",
                                             kind="Cluster", metadata=openstack["metadata"], spec={
                "controlPlaneEndpoint": {"host": spec.host, "port": spec.port},
                "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                      "kind": "OpenStackCluster", "name": spec.name, "namespace": spec.namespace},
                "clusterNetwork": {"apiServerPort": 6443},
                "controlPlaneRef": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
                                    "kind": "KubeadmControlPlane", "name": "k8s-api-control-plane",
                                    "namespace": spec.namespace}}, opts=children)


    opts = pulumi.ResourceOptions(providers=[management])
    if config.get_bool("v1beta1"):
        ClusterApiV1beta1("k8s-api", opts)
    else:
        ClusterApi("k8s-api", endpoint, settings, opts=opts)
''')


def test_a_stack_with_a_v1beta1_cluster_moves_to_v1beta2_in_place(k8s, capi, k8s_engine_environment, tmp_path):
    """A stack deployed with the v1beta1 Cluster, then `up` with this ClusterApi: the Cluster's resource type
    changes (kubernetes:cluster.x-k8s.io/v1beta1:Cluster -> .../v1beta2:Cluster), its alias makes the engine update
    it in place, and the API server keeps the same object (its uid), now with v1beta2 references. (The Cluster is not
    destroyed here: this cluster runs no garbage collector to finish a foreground deletion; the API server goes with
    the module.)"""
    stack = PulumiStack.program(tmp_path / "move", "k8s-move", "move", MOVE_PROGRAM, k8s_engine_environment)
    certificate, key = k8s.credentials.admin.pem()
    for name, value in (("ca", k8s.credentials.ca.read_text()), ("clientCertificate", certificate),
                        ("clientKey", key)):
        stack.set_secret(name, value)
    stack.run("config", "set", "port", str(k8s.plan.nodes[0].api_port))
    stack.run("config", "set", "v1beta1", "true")
    stack.up(policy=False)

    def live(version: str) -> dict:
        return json.loads(k8s.kubectl("get", f"clusters.{version}.cluster.x-k8s.io", "k8s-api", "-n", "default",
                                      "-o", "json").stdout)

    before = live("v1beta1")
    assert before["spec"]["infrastructureRef"]["apiVersion"] == "infrastructure.cluster.x-k8s.io/v1beta1"
    types = {r["type"] for r in stack.resources()}
    assert "kubernetes:cluster.x-k8s.io/v1beta1:Cluster" in types

    stack.run("config", "set", "v1beta1", "false")
    preview = stack.preview(policy=False)
    print("\n".join(line for line in preview.output.splitlines() if "k8s-api" in line or "to update" in line))
    assert "~ 1 to update" in preview.output and "replace" not in preview.output, preview.output[-3000:]
    assert "to create" not in preview.output and "to delete" not in preview.output, preview.output[-3000:]

    up = stack.up(policy=False)
    assert "~ 1 updated" in up.output and "replace" not in up.output, up.output[-3000:]
    after = live("v1beta2")
    assert after["metadata"]["uid"] == before["metadata"]["uid"]  # the same Cluster: the workload cluster lives on
    assert after["spec"]["infrastructureRef"] == {"apiGroup": "infrastructure.cluster.x-k8s.io",
                                                  "kind": "OpenStackCluster", "name": "k8s-api"}
    assert after["spec"]["controlPlaneRef"] == {"apiGroup": "controlplane.cluster.x-k8s.io",
                                                "kind": "KubeadmControlPlane", "name": "k8s-api-control-plane"}
    types = {r["type"] for r in stack.resources()}
    assert "kubernetes:cluster.x-k8s.io/v1beta2:Cluster" in types
    assert "kubernetes:cluster.x-k8s.io/v1beta1:Cluster" not in types
    stack.preview("--expect-no-changes", policy=False)


def readyz(k8s: Running, node: layout.Node) -> tuple[int, str]:
    return cluster.api_ready(node, k8s.credentials)


def test_etcd_keeps_quorum_with_one_member_stopped(k8s):
    """Last in the module: it stops members (and starts them again)."""
    first, second, third = k8s.plan.nodes
    assert cluster.stop_process(k8s.plan, third, "etcd")
    try:
        for node in k8s.plan.nodes:  # the third API server too: it has every member in --etcd-servers
            waited = cluster.wait_until(lambda node=node: readyz(k8s, node), f"kube-apiserver {node.name}", 60)
            print(f"{node.name} ready {waited:.1f} s after etcd {third.name} stopped")
        k8s.kubectl("create", "configmap", "quorum", "-n", "default", "--from-literal=members=2")  # a write: quorum
        assert k8s.kubectl("get", "configmap", "quorum", "-n", "default", "-o", "jsonpath={.data.members}",
                           kubeconfig=k8s.kubeconfig_for(third)).stdout == "2"

        assert cluster.stop_process(k8s.plan, second, "etcd")  # one member of three left: no quorum
        lost = time.monotonic()
        status, body = 200, ""
        while status == 200 and time.monotonic() - lost < 60:
            status, body = cluster.probe(first.address, first.api_port, "/readyz?verbose",
                                         cluster.tls_context(k8s.credentials.ca, k8s.credentials.admin), timeout=20)
            time.sleep(0.25)
        print(f"without quorum: /readyz {status} after {time.monotonic() - lost:.1f} s: "
              f"{[line for line in body.splitlines() if 'etcd' in line]}")
        assert status != 200 and "[-]etcd" in body
    finally:
        for node in (second, third):
            cluster.start_process(k8s.plan, node, "etcd", k8s.bins)
    back = cluster.wait_until(lambda: readyz(k8s, first), f"kube-apiserver {first.name}", 120)
    print(f"quorum back: {first.name} ready {back:.1f} s after the members restarted")
    assert k8s.kubectl("get", "configmap", "quorum", "-n", "default", "-o", "jsonpath={.data.members}").stdout == "2"

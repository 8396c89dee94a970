"""The Cluster API objects, under mocks with the real pulumi-kubernetes SDK: their fields, the Cluster (v1beta2)
validated against Cluster API v1.14.2's own CRD schema and the OpenStackCluster (v1beta1) against CAPO v0.14.7's, the
Cluster's alias to its former v1beta1 type, the guard in front of both, and the management cluster's provider."""

from __future__ import annotations

import copy

import pulumi
import pulumi_kubernetes as k8s
import pytest

from ha_endpoint import ConfigError, HaEndpoint
from ha_endpoint.kubernetes import ClusterApi, EndpointRef
from ha_endpoint.kubernetes.manifests import ClusterSpecInputs, cluster_manifest, openstack_cluster_manifest
from tests.mocks import FakeCloud, run_program, run_stack
from tests.mocks.configs import amphora_endpoint, internal_endpoint
from tests.mocks.kubernetes import (CLUSTER_API, CLUSTER_TYPE, GUARD_TYPE, OPENSTACK_CLUSTER_TYPE, PROVIDER_TYPE,
                                    kubernetes_config)

import capi_schema  # noqa: E402  (tests/unit/kubernetes is on sys.path: pytest's rootdir import mode)

K = "ha-endpoint:kubernetes"


def cluster_api(**changes) -> dict:
    return {**copy.deepcopy(CLUSTER_API), **changes}


def stack(cloud: FakeCloud, secret_config, endpoint: dict = None, preview: bool = False, **api):
    secret_config(K)
    return run_stack(cloud, {"endpoint": endpoint or amphora_endpoint(),
                             "kubernetes": kubernetes_config(clusterApi=cluster_api(**api))}, preview=preview)


def manifest(registration: dict) -> dict:
    inputs = registration["inputs"]
    return {key: inputs[key] for key in ("apiVersion", "kind", "metadata", "spec")}


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_the_cluster_and_the_openstack_cluster_have_the_endpoint_as_control_plane_endpoint(secret_config, preview):
    cloud = FakeCloud.dev()
    run = stack(cloud, secret_config, preview=preview, subnets=["cp-az1"])
    (cluster,), (openstack,) = run.of_type(CLUSTER_TYPE), run.of_type(OPENSTACK_CLUSTER_TYPE)
    endpoint = {"host": "api.example.test", "port": 6443}
    assert cluster["inputs"]["spec"] == {
        "controlPlaneEndpoint": endpoint,
        "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackCluster",
                              "name": "k8s-api"},  # v1beta2: a group, not a version; the Cluster's own namespace
        "clusterNetwork": {"apiServerPort": 6443},  # where the API servers listen: the listener's member port
    }
    assert cluster["inputs"]["metadata"] == openstack["inputs"]["metadata"] == {
        "name": "k8s-api", "namespace": "default", "labels": {"cluster.x-k8s.io/cluster-name": "k8s-api"}}
    assert openstack["inputs"]["spec"] == {
        "controlPlaneEndpoint": endpoint,
        "apiServerLoadBalancer": {"enabled": False},  # the endpoint's load balancers serve the API, not CAPO's
        "disableAPIServerFloatingIP": True,
        "controlPlaneAvailabilityZones": ["az1", "az2", "az3"],
        "identityRef": {"type": "Secret", "name": "openstack-cloud-config", "cloudName": "openstack"},
        "network": {"id": cloud.network_id("cp")},  # the members' (control-plane nodes') network
        "subnets": [{"filter": {"name": "cp-az1"}}],
        "externalNetwork": {"id": cloud.network_id("public")},  # the endpoint's floating network
        "managedSecurityGroups": {"allowAllInClusterTraffic": False},
    }
    if preview:
        assert not cloud.kind("k8s-objects")
    else:
        assert set(cloud.kind("k8s-objects")) == {("Cluster", "default", "k8s-api"),
                                                  ("OpenStackCluster", "default", "k8s-api")}
        assert run.outputs["controlPlaneEndpoint"] == endpoint


def test_the_cluster_is_valid_under_cluster_apis_own_crd_schema(secret_config):
    run = stack(FakeCloud.dev(), secret_config, subnets=[], pods=["192.168.0.0/16"], services=["10.96.0.0/12"],
                serviceDomain="cluster.local", controlPlaneRef={"name": "k8s-api-control-plane"})
    (cluster,) = run.of_type(CLUSTER_TYPE)
    assert cluster["inputs"]["apiVersion"] == "cluster.x-k8s.io/v1beta2"
    assert capi_schema.errors(manifest(cluster)) == []
    assert cluster["inputs"]["spec"]["controlPlaneRef"] == {
        "apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": "k8s-api-control-plane"}
    assert cluster["inputs"]["spec"]["clusterNetwork"] == {
        "apiServerPort": 6443, "pods": {"cidrBlocks": ["192.168.0.0/16"]},
        "services": {"cidrBlocks": ["10.96.0.0/12"]}, "serviceDomain": "cluster.local"}


def test_the_schema_check_catches_what_the_api_server_would_refuse_or_silently_drop():
    spec = ClusterSpecInputs(name="c", namespace="default", host="api.example.test", port=6443, azs=["az1"],
                             identity_name="cloud-config", cloud_name="openstack")
    good = cluster_manifest(spec)
    assert capi_schema.errors(good) == []
    misspelled = copy.deepcopy(good)
    misspelled["spec"]["controlPlaneEndPoint"] = misspelled["spec"].pop("controlPlaneEndpoint")
    assert capi_schema.errors(misspelled) == [
        "spec: Additional properties are not allowed ('controlPlaneEndPoint' was unexpected)"]
    v1beta1_ref = copy.deepcopy(good)  # a v1beta1 reference in a v1beta2 Cluster
    v1beta1_ref["spec"]["infrastructureRef"] = {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                                "kind": "OpenStackCluster", "name": "c"}
    assert capi_schema.errors(v1beta1_ref) == [
        "spec.infrastructureRef: 'apiGroup' is a required property",
        "spec.infrastructureRef: Additional properties are not allowed ('apiVersion' was unexpected)"]


@pytest.mark.parametrize("endpoint", [amphora_endpoint, internal_endpoint], ids=["floating", "internal"])
def test_the_openstack_cluster_is_valid_under_capos_own_crd_schema(secret_config, endpoint):
    run = stack(FakeCloud.dev(), secret_config, endpoint=endpoint(), subnets=["cp-az2"], tags=["k8s"],
                allowAllInClusterTraffic=True, identityRef={"name": "c", "cloudName": "o", "region": "RegionOne"})
    (openstack,) = run.of_type(OPENSTACK_CLUSTER_TYPE)
    spec = openstack["inputs"]["spec"]
    assert capi_schema.errors(manifest(openstack)) == []
    assert spec["managedSecurityGroups"] == {"allowAllInClusterTraffic": True}
    assert spec["identityRef"] == {"type": "Secret", "name": "c", "cloudName": "o", "region": "RegionOne"}
    if endpoint is internal_endpoint:  # no floating IPs: CAPO must not look for an external network either
        assert spec["disableExternalNetwork"] is True and "externalNetwork" not in spec


def test_the_capo_check_catches_unknown_fields_and_wrong_shapes():
    openstack = openstack_cluster_manifest(ClusterSpecInputs(
        name="c", namespace="default", host="h", port=6443, azs=["az1"], identity_name="i", cloud_name="o",
        network="cp", subnets=("cp-az1",)))
    assert capi_schema.errors(openstack) == []
    spec = openstack["spec"]
    spec["apiServerLoadBalancer"]["enable"] = False
    spec["network"]["id"] = "also-an-id"
    del spec["identityRef"]["cloudName"]
    assert capi_schema.errors(openstack) == [
        "spec.apiServerLoadBalancer: Additional properties are not allowed ('enable' was unexpected)",
        "spec.identityRef: 'cloudName' is a required property",
        "spec.network: {'filter': {'name': 'cp'}, 'id': 'also-an-id'} has too many properties",  # an id or a filter
    ]


def test_each_object_is_written_in_the_version_its_crd_stores(secret_config):
    """The newest CRDs the module proxy serves: Cluster API v1.14.2 stores Cluster as v1beta2 (v1beta1 is deprecated
    and due to stop being served in v1.16); CAPO v0.14.7 serves OpenStackCluster as v1beta1 only. A newer pin in
    capi/versions.env whose CRD stores another version fails here until the manifests follow it."""
    run = stack(FakeCloud.dev(), secret_config, subnets=[])
    (cluster,), (openstack,) = run.of_type(CLUSTER_TYPE), run.of_type(OPENSTACK_CLUSTER_TYPE)
    assert cluster["inputs"]["apiVersion"] == capi_schema.storage_version("Cluster") == "cluster.x-k8s.io/v1beta2"
    assert openstack["inputs"]["apiVersion"] == capi_schema.storage_version("OpenStackCluster") == \
        "infrastructure.cluster.x-k8s.io/v1beta1"
    assert CLUSTER_TYPE == "kubernetes:cluster.x-k8s.io/v1beta2:Cluster"


def test_the_cluster_carries_its_former_v1beta1_type_as_an_alias(secret_config):
    """The resource type carries the API version, so the Cluster a stack created as v1beta1 has another URN. With
    the alias the engine takes it for this one and the provider patches it to v1beta2 in place; without it, `up`
    would create a second Cluster of the same name and delete the first, tearing down the workload cluster
    (tests/e2e/test_k8s_cluster.py moves a real stack)."""
    run = stack(FakeCloud.dev(), secret_config, subnets=[])
    (cluster,), (openstack,) = run.of_type(CLUSTER_TYPE), run.of_type(OPENSTACK_CLUSTER_TYPE)
    assert cluster["aliases"] == [{"type": "kubernetes:cluster.x-k8s.io/v1beta1:Cluster"}]
    assert cluster["urn"].endswith(
        "::haendpoint:kubernetes:ClusterApi$kubernetes:cluster.x-k8s.io/v1beta2:Cluster::k8s-api-cluster")
    assert openstack["aliases"] == []  # its version (and so its URN) is unchanged


def test_both_objects_wait_for_the_guard_which_records_the_endpoint(secret_config):
    run = stack(FakeCloud.dev(), secret_config, subnets=[])
    (guard,) = run.of_type(GUARD_TYPE)
    assert guard["name"] == "k8s-api-endpoint-guard"
    assert {key: guard["inputs"][key] for key in ("cluster", "host", "port")} == {
        "cluster": "default/k8s-api", "host": "api.example.test", "port": 6443}
    assert "ha-endpoint:endpoint.dns (dnsZone, record) and ha-endpoint:kubernetes.apiPort" in guard["inputs"]["settings"]
    for typ in (CLUSTER_TYPE, OPENSTACK_CLUSTER_TYPE):
        (registration,) = run.of_type(typ)
        assert guard["urn"] in registration["dependencies"]
        assert registration["parent"] == guard["parent"]
        assert registration["parent"].endswith("haendpoint:kubernetes:ClusterApi::k8s-api")
    assert [r["name"] for r in run.of_type(CLUSTER_TYPE) + run.of_type(OPENSTACK_CLUSTER_TYPE)] == [
        "k8s-api-cluster", "k8s-api-openstackcluster"]


def test_the_objects_go_to_the_management_clusters_provider_the_user_gives():
    def program():
        endpoint = HaEndpoint("k8s-api", amphora_endpoint())
        management = k8s.Provider("management", kubeconfig="apiVersion: v1\nkind: Config\n")
        return ClusterApi("k8s-api", endpoint, cluster_api(subnets=[]),
                          opts=pulumi.ResourceOptions(providers=[management]))

    run = run_program(program, FakeCloud.dev(), preview=False, outputs=lambda api: {})
    (management,) = run.of_type(PROVIDER_TYPE)
    for typ in (CLUSTER_TYPE, OPENSTACK_CLUSTER_TYPE):
        (registration,) = run.of_type(typ)
        assert registration["provider"].startswith(management["urn"] + "::")


def test_from_a_stack_reference_the_network_must_be_given():
    ref = EndpointRef(fqdn="api.example.test.", ports=[6443], published=["172.24.4.100"], azs=["az1", "az2"])
    with pytest.raises(ConfigError) as error:
        run_program(lambda: ClusterApi("prod", ref, cluster_api()), FakeCloud.dev(), preview=True,
                    outputs=lambda api: {})
    assert str(error.value) == (
        "invalid endpoint configuration (1 problem):\n"
        f"  - {K}.clusterApi.network: the endpoint comes from another stack, which does not say which network its "
        "members (the control-plane nodes) are on; give it (network: <id or name>)")
    run = run_program(lambda: ClusterApi("prod", ref, cluster_api(network="cp")), FakeCloud.dev(), preview=False,
                      outputs=lambda api: {"endpoint": api.control_plane_endpoint})
    (openstack,) = run.of_type(OPENSTACK_CLUSTER_TYPE)
    assert openstack["inputs"]["spec"]["network"] == {"filter": {"name": "cp"}}
    assert "subnets" not in openstack["inputs"]["spec"] and "externalNetwork" not in openstack["inputs"]["spec"]
    assert run.outputs["endpoint"] == {"host": "api.example.test", "port": 6443}

"""The Cluster API objects of a cluster behind the endpoint, as manifests (pure: plain values in, dicts out).

``Cluster`` (cluster.x-k8s.io/v1beta2: its references name an ``apiGroup``, not an ``apiVersion``) and
``OpenStackCluster`` (infrastructure.cluster.x-k8s.io/v1beta1, Cluster API Provider OpenStack) whose
``controlPlaneEndpoint`` is the endpoint's DNS name and API port. This project owns
the API server's load balancers and floating IPs, so CAPO's own are disabled (``apiServerLoadBalancer.enabled:
false``, ``disableAPIServerFloatingIP: true``). The control plane's availability zones are the endpoint's zones; its
network (and, where CAPO's shape allows it, its subnets) are those of the endpoint's members, the control-plane
nodes. Field names follow the CRDs of Cluster API v1.14.2 and CAPO v0.14.7, the newest releases the Go module proxy
serves (the tests validate both objects against their openAPIV3Schema); CAPO v0.14.7 serves OpenStackCluster as
v1beta1 only (its v1beta2, with ``apiServer: {enableFloatingIP, managedLoadBalancer}``, comes with v0.15).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

CLUSTER_API_VERSION = "cluster.x-k8s.io/v1beta2"
INFRASTRUCTURE_GROUP = "infrastructure.cluster.x-k8s.io"
INFRASTRUCTURE_API_VERSION = f"{INFRASTRUCTURE_GROUP}/v1beta1"
CONTROL_PLANE_GROUP = "controlplane.cluster.x-k8s.io"
CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"
K8S_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
"""A Kubernetes object name or namespace (RFC 1123 label; Cluster API names stay within 63 characters)."""
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)


def not_a_k8s_name(value: str) -> Optional[str]:
    """Why ``value`` cannot name a Kubernetes object or namespace, or None when it can."""
    if K8S_NAME.match(value):
        return None
    return (f"{value!r} is not a Kubernetes name: use 1-63 lowercase letters, digits or '-', starting and ending "
            "with a letter or digit")


@dataclass(frozen=True)
class ObjectRef:
    """A reference to another Kubernetes object of the cluster's namespace (e.g. its KubeadmControlPlane), as
    Cluster API v1beta2 references it: by API group, kind and name (the version is the one the group's contract
    serves)."""

    kind: str
    name: str
    api_group: str = CONTROL_PLANE_GROUP


@dataclass(frozen=True)
class ClusterSpecInputs:
    """Everything the two manifests are made of. Values may be Pulumi Inputs where a field says Input; the
    decisions (which fields are set) are taken on plain values only."""

    name: str
    namespace: str
    host: Any
    """Input[str]: the endpoint's DNS name without its trailing dot."""
    port: Any
    """Input[int]: the endpoint port serving the API."""
    azs: Any
    """Input[list[str]]: the control plane's availability zones."""
    identity_name: str
    """The Secret holding CAPO's clouds.yaml."""
    cloud_name: str
    """The clouds.yaml entry CAPO uses."""
    region: Optional[str] = None
    api_server_port: Optional[int] = None
    """The port the API servers listen on (the endpoint's member port), when known."""
    network: Optional[Any] = None
    """Input[str]: the control-plane nodes' network, an id or a name."""
    subnets: tuple[Any, ...] = ()
    """Input[str] each: the subnets for CAPO's cluster network (at most one IPv4 and one IPv6), ids or names."""
    external_network: Optional[Any] = None
    """Input[str]: the external network (the endpoint's floating network); None with ``disable_external_network``."""
    disable_external_network: bool = False
    managed_security_groups: bool = True
    allow_all_in_cluster_traffic: bool = False
    control_plane_ref: Optional[ObjectRef] = None
    pods: tuple[str, ...] = ()
    services: tuple[str, ...] = ()
    service_domain: Optional[str] = None
    tags: tuple[str, ...] = ()
    labels: dict[str, str] = field(default_factory=dict)


def _param(value: Any) -> dict[str, Any]:
    """A CAPO NetworkParam/SubnetParam: ``{id}`` for a UUID (or an Output, which is always an id), else a filter by
    name."""
    if isinstance(value, str) and not UUID.match(value):
        return {"filter": {"name": value}}
    return {"id": value}


def _metadata(spec: ClusterSpecInputs) -> dict[str, Any]:
    return {"name": spec.name, "namespace": spec.namespace,
            "labels": {CLUSTER_NAME_LABEL: spec.name, **spec.labels}}


def cluster_manifest(spec: ClusterSpecInputs) -> dict[str, Any]:
    """The ``Cluster``: its control-plane endpoint, its infrastructure (the OpenStackCluster of the same name) and,
    when given, its control plane and cluster network."""
    body: dict[str, Any] = {
        "controlPlaneEndpoint": {"host": spec.host, "port": spec.port},
        "infrastructureRef": {"apiGroup": INFRASTRUCTURE_GROUP, "kind": "OpenStackCluster", "name": spec.name},
    }
    network: dict[str, Any] = {}
    if spec.api_server_port is not None:
        network["apiServerPort"] = spec.api_server_port
    if spec.pods:
        network["pods"] = {"cidrBlocks": list(spec.pods)}
    if spec.services:
        network["services"] = {"cidrBlocks": list(spec.services)}
    if spec.service_domain:
        network["serviceDomain"] = spec.service_domain
    if network:
        body["clusterNetwork"] = network
    if spec.control_plane_ref is not None:
        ref = spec.control_plane_ref
        body["controlPlaneRef"] = {"apiGroup": ref.api_group, "kind": ref.kind, "name": ref.name}
    return {"apiVersion": CLUSTER_API_VERSION, "kind": "Cluster", "metadata": _metadata(spec), "spec": body}


def openstack_cluster_manifest(spec: ClusterSpecInputs) -> dict[str, Any]:
    """The ``OpenStackCluster``: the endpoint as control-plane endpoint, no CAPO load balancer nor floating IP, the
    endpoint's AZs, network and subnets, security groups as configured, and the identity CAPO uses."""
    # CAPO v0.14 requires the type (its default, Secret: the API server would add it; said here as the CRD says it)
    identity: dict[str, Any] = {"type": "Secret", "name": spec.identity_name, "cloudName": spec.cloud_name}
    if spec.region:
        identity["region"] = spec.region
    body: dict[str, Any] = {
        "controlPlaneEndpoint": {"host": spec.host, "port": spec.port},
        # This project owns the API's load balancers (one per AZ) and floating IPs: CAPO must create neither.
        "apiServerLoadBalancer": {"enabled": False},
        "disableAPIServerFloatingIP": True,
        "controlPlaneAvailabilityZones": spec.azs,
        "identityRef": identity,
    }
    if spec.network is not None:
        body["network"] = _param(spec.network)
    if spec.subnets:
        body["subnets"] = [_param(subnet) for subnet in spec.subnets]
    if spec.disable_external_network:
        body["disableExternalNetwork"] = True
    elif spec.external_network is not None:
        body["externalNetwork"] = _param(spec.external_network)
    if spec.managed_security_groups:
        body["managedSecurityGroups"] = {"allowAllInClusterTraffic": spec.allow_all_in_cluster_traffic}
    if spec.tags:
        body["tags"] = list(spec.tags)
    return {"apiVersion": INFRASTRUCTURE_API_VERSION, "kind": "OpenStackCluster", "metadata": _metadata(spec),
            "spec": body}

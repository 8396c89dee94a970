"""ClusterApi: the Cluster API objects of the cluster behind the endpoint, in a management cluster.

A component (``haendpoint:kubernetes:ClusterApi``) whose children are a :class:`ControlPlaneEndpointGuard`, the
``OpenStackCluster`` and the ``Cluster`` (``pulumi_kubernetes.apiextensions.CustomResource``, manifests from
:mod:`.manifests`); both depend on the guard, so a refused endpoint change stops before either is touched. The
management cluster is the Kubernetes provider the children inherit: the default provider, or one passed as
``opts=pulumi.ResourceOptions(providers=[management])``; the component never creates one.

The objects do not wait for the endpoint's readiness: the control-plane machines Cluster API creates are what the
endpoint's readiness waits for (start a new cluster with ``dns.publish: bootstrap``).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Mapping, Optional, Union

import pulumi
import pulumi_kubernetes as k8s
from pydantic import ValidationError

from ..core.errors import ConfigError, Problem
from ..core.messages import problems_from_pydantic
from .endpoint_ref import EndpointRef, NodeSubnet
from .guard import DEFAULT_SETTINGS, ControlPlaneEndpointGuard
from .kubeconfig import api_host, pick_api_port
from .manifests import ClusterSpecInputs, ObjectRef, cluster_manifest, openstack_cluster_manifest
from .settings import ClusterApiSettings, DEFAULT_ROOT

CLUSTER_API_TYPE = "haendpoint:kubernetes:ClusterApi"
CLUSTER_TYPE = "kubernetes:cluster.x-k8s.io/v1beta2:Cluster"
LEGACY_CLUSTER_TYPE = "kubernetes:cluster.x-k8s.io/v1beta1:Cluster"
"""The Cluster's type up to v1beta1: an alias, so that a stack deployed with it updates its Cluster in place (the
provider patches it at v1beta2) instead of creating a second one and deleting the first, which would tear down the
workload cluster."""
OPENSTACK_CLUSTER_TYPE = "kubernetes:infrastructure.cluster.x-k8s.io/v1beta1:OpenStackCluster"
CHILD_SUFFIXES = {"guard": "endpoint-guard", "openstack_cluster": "openstackcluster", "cluster": "cluster"}
"""The suffix of each child's resource name, ``<component name>-<suffix>``. Deployed stacks hold these names in their
state: a new one would replace the child (and, for the Cluster, the workload cluster with it)."""


def child_name(name: str, child: str) -> str:
    """The resource name of ClusterApi ``name``'s ``child`` (a key of :data:`CHILD_SUFFIXES`)."""
    return f"{name}-{CHILD_SUFFIXES[child]}"


def spec_inputs(name: str, ref: EndpointRef, args: ClusterApiSettings, api_port: Optional[int] = None,
                root: str = DEFAULT_ROOT) -> ClusterSpecInputs:
    """What the manifests are made of, from the endpoint and the settings; :class:`ConfigError` names the setting to
    add when the endpoint does not say it (a network or subnets CAPO cannot take as they are)."""
    path = f"{root}.clusterApi"
    problems: list[Problem] = []
    host = api_host(ref.fqdn) if isinstance(ref.fqdn, str) else pulumi.Output.from_input(ref.fqdn).apply(api_host)
    port: Any
    member_port = None
    if isinstance(ref.ports, list):
        try:
            port = pick_api_port(list(ref.ports), api_port)
            member_port = ref.member_ports.get(port)
        except ValueError as error:
            problems.append(Problem(f"{root}.apiPort", str(error)))
            port = None
    else:
        port = pulumi.Output.from_input(ref.ports).apply(lambda ports: pick_api_port(list(ports), api_port))
    network, network_problem = _network(ref, args, path)
    subnets, subnets_problem = _subnets(ref, args, path)
    problems += [problem for problem in (network_problem, subnets_problem) if problem]
    if problems:
        raise ConfigError(problems)
    control_plane = args.control_plane_ref
    return ClusterSpecInputs(
        name=args.name or name, namespace=args.namespace, host=host, port=port, azs=ref.azs,
        identity_name=args.identity_ref.name, cloud_name=args.identity_ref.cloud_name,
        region=args.identity_ref.region, api_server_port=member_port, network=network, subnets=subnets,
        external_network=ref.floating_network_id, disable_external_network=bool(ref.internal),
        managed_security_groups=args.managed_security_groups,
        allow_all_in_cluster_traffic=args.allow_all_in_cluster_traffic,
        control_plane_ref=ObjectRef(control_plane.kind, control_plane.name, control_plane.api_group)
        if control_plane else None,
        pods=tuple(args.pods), services=tuple(args.services), service_domain=args.service_domain,
        tags=tuple(args.tags))


def _network(ref: EndpointRef, args: ClusterApiSettings, path: str) -> tuple[Any, Optional[Problem]]:
    if args.network:
        return args.network, None
    if ref.node_subnets is None:
        return None, Problem(f"{path}.network", "the endpoint comes from another stack, which does not say which "
                                                "network its members (the control-plane nodes) are on; give it "
                                                "(network: <id or name>)")
    networks = sorted({subnet.network_id for subnets in ref.node_subnets.values() for subnet in subnets}, key=str)
    if len(networks) == 1:
        return networks[0], None
    return None, Problem(f"{path}.network", f"the endpoint's members are on {len(networks)} networks "
                                            f"({', '.join(map(str, networks)) or 'none'}) and CAPO's cluster has "
                                            "one; say which one its machines use (network: <id or name>)")


def _subnets(ref: EndpointRef, args: ClusterApiSettings, path: str) -> tuple[tuple[Any, ...], Optional[Problem]]:
    if args.subnets is not None:
        return tuple(args.subnets), None
    if ref.node_subnets is None:
        return (), None  # CAPO uses the network's subnets (the network itself is required above)
    by_version: dict[int, list[NodeSubnet]] = defaultdict(list)
    where: dict[Any, list[str]] = defaultdict(list)
    for az, subnets in sorted(ref.node_subnets.items()):
        for subnet in subnets:
            where[subnet.id].append(az)
            if subnet not in by_version[subnet.ip_version]:
                by_version[subnet.ip_version].append(subnet)
    if all(len(subnets) <= 1 for subnets in by_version.values()):
        return tuple(subnets[0].id for _, subnets in sorted(by_version.items())), None
    listed = ", ".join(f"{subnet.name or subnet.id} ({', '.join(where[subnet.id])})"
                       for _, subnets in sorted(by_version.items()) for subnet in subnets)
    return (), Problem(f"{path}.subnets", f"the control-plane nodes are on subnets {listed}, and CAPO's "
                                          "OpenStackCluster takes at most one IPv4 and one IPv6 subnet (its machines' "
                                          "default ports); say which one its machines use by default (subnets: "
                                          "[<id or name>]; per-AZ subnets go in the ports of your machine "
                                          "templates), or subnets: [] to let CAPO use every subnet of the network")


class ClusterApi(pulumi.ComponentResource):
    """The ``Cluster`` and ``OpenStackCluster`` of the cluster behind ``endpoint`` (an HaEndpoint of this program or
    an :class:`EndpointRef`), guarded against a change of their control-plane endpoint.

    ``args`` is a :class:`ClusterApiSettings` or the mapping of ``ha-endpoint:kubernetes.clusterApi`` (camelCase or
    snake_case keys). ``settings_naming_the_endpoint`` tells the guard's refusal which settings to keep. Outputs: ``cluster`` and ``openstack_cluster`` (the CustomResources), ``control_plane_endpoint``
    (``{"host", "port"}``)."""

    def __init__(self, name: str, endpoint: Union[EndpointRef, Any], args: Union[ClusterApiSettings, Mapping],
                 api_port: Optional[int] = None, opts: Optional[pulumi.ResourceOptions] = None,
                 root: str = DEFAULT_ROOT, settings_naming_the_endpoint: str = DEFAULT_SETTINGS):
        if not isinstance(args, ClusterApiSettings):
            try:
                args = ClusterApiSettings.model_validate(dict(args))
            except ValidationError as error:
                raise ConfigError(problems_from_pydantic(error, f"{root}.clusterApi", ClusterApiSettings)) from None
        ref = endpoint if isinstance(endpoint, EndpointRef) else EndpointRef.of(endpoint, root)
        spec = spec_inputs(name, ref, args, api_port, root)
        super().__init__(CLUSTER_API_TYPE, name, {"name": spec.name, "namespace": spec.namespace}, opts)
        self.spec = spec
        self.guard = ControlPlaneEndpointGuard(
            child_name(name, "guard"), cluster=f"{spec.namespace}/{spec.name}", host=spec.host, port=spec.port,
            settings=settings_naming_the_endpoint, opts=pulumi.ResourceOptions(parent=self))
        children = pulumi.ResourceOptions(parent=self, depends_on=[self.guard])
        self.openstack_cluster = _custom_resource(child_name(name, "openstack_cluster"),
                                                  openstack_cluster_manifest(spec), children)
        self.cluster = _custom_resource(child_name(name, "cluster"), cluster_manifest(spec),
                                        pulumi.ResourceOptions.merge(children, pulumi.ResourceOptions(
                                            aliases=[pulumi.Alias(type_=LEGACY_CLUSTER_TYPE)])))
        self.control_plane_endpoint = pulumi.Output.from_input({"host": spec.host, "port": spec.port})
        self.register_outputs({"controlPlaneEndpoint": self.control_plane_endpoint,
                               "cluster": f"{spec.namespace}/{spec.name}"})


def _custom_resource(name: str, manifest: dict, opts: pulumi.ResourceOptions) -> k8s.apiextensions.CustomResource:
    return k8s.apiextensions.CustomResource(
        name, api_version=manifest["apiVersion"], kind=manifest["kind"], metadata=manifest["metadata"],
        spec=manifest["spec"], opts=opts)

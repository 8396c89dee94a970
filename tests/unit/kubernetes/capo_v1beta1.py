"""Field names (and shapes) of Cluster API Provider OpenStack's v1beta1 API, for checking the OpenStackCluster the
component generates.

CAPO's Go module (sigs.k8s.io/cluster-api-provider-openstack) is not served by the module proxy here, so its CRD
cannot be fetched the way Cluster API's is (tests/unit/kubernetes/capi). This list is taken by hand from CAPO's v1beta1
API reference, docs/book/src/api/v1beta1/api.md of kubernetes-sigs/cluster-api-provider-openstack (the version at
commit 5e24fab74365), sections OpenStackClusterSpec, APIServerLoadBalancer, ManagedSecurityGroups, NetworkParam,
NetworkFilter, SubnetParam, SubnetFilter, FilterByNeutronTags and OpenStackIdentityReference; required fields and the
one-of rule of the *Param types from api/v1beta1 (types.go, openstackcluster_types.go, kubebuilder markers), and
APIEndpoint from Cluster API. Types: "bool", "string", "int", "[]T" (a list of T), or the name of another entry.
"""

from __future__ import annotations

from typing import Any

NEUTRON_TAGS = {"tags": "[]string", "tagsAny": "[]string", "notTags": "[]string", "notTagsAny": "[]string"}

FIELDS: dict[str, dict[str, str]] = {
    "OpenStackClusterSpec": {
        "managedSubnets": "[]SubnetSpec", "router": "RouterParam", "network": "NetworkParam",
        "subnets": "[]SubnetParam", "networkMTU": "int", "externalRouterIPs": "[]ExternalRouterIPParam",
        "externalNetwork": "NetworkParam", "disableExternalNetwork": "bool",
        "apiServerLoadBalancer": "APIServerLoadBalancer", "disableAPIServerFloatingIP": "bool",
        "apiServerFloatingIP": "string", "apiServerFixedIP": "string", "apiServerPort": "int",
        "managedSecurityGroups": "ManagedSecurityGroups", "disablePortSecurity": "bool", "tags": "[]string",
        "controlPlaneEndpoint": "APIEndpoint", "controlPlaneAvailabilityZones": "[]string",
        "controlPlaneOmitAvailabilityZone": "bool", "bastion": "Bastion", "identityRef": "OpenStackIdentityReference",
    },
    "APIServerLoadBalancer": {
        "enabled": "bool", "additionalPorts": "[]int", "allowedCIDRs": "[]string", "provider": "string",
        "network": "NetworkParam", "subnets": "[]SubnetParam", "availabilityZone": "string", "flavor": "string",
    },
    "ManagedSecurityGroups": {
        "allNodesSecurityGroupRules": "[]SecurityGroupRuleSpec", "controlPlaneNodesSecurityGroupRules":
        "[]SecurityGroupRuleSpec", "workerNodesSecurityGroupRules": "[]SecurityGroupRuleSpec",
        "allowAllInClusterTraffic": "bool",
    },
    "NetworkParam": {"id": "string", "filter": "NetworkFilter"},
    "NetworkFilter": {"name": "string", "description": "string", "projectID": "string", **NEUTRON_TAGS},
    "SubnetParam": {"id": "string", "filter": "SubnetFilter"},
    "SubnetFilter": {"name": "string", "description": "string", "projectID": "string", "ipVersion": "int",
                     "gatewayIP": "string", "cidr": "string", "ipv6AddressMode": "string", "ipv6RAMode": "string",
                     **NEUTRON_TAGS},
    "OpenStackIdentityReference": {"name": "string", "cloudName": "string", "region": "string"},
    "APIEndpoint": {"host": "string", "port": "int"},
}
REQUIRED: dict[str, set[str]] = {
    "OpenStackClusterSpec": {"identityRef"},
    "OpenStackIdentityReference": {"name", "cloudName"},
    "ManagedSecurityGroups": {"allowAllInClusterTraffic"},
    "APIServerLoadBalancer": {"enabled"},
    "APIEndpoint": {"host", "port"},
}
EXACTLY_ONE = {"NetworkParam", "SubnetParam"}
"""``+kubebuilder:validation:MinProperties:=1`` and ``MaxProperties:=1``: an id or a filter, not both."""
SCALARS = {"bool": bool, "string": str, "int": int}


def problems(value: Any, typ: str, path: str = "spec") -> list[str]:
    """Every place where ``value`` is not of CAPO's v1beta1 type ``typ``: unknown or missing fields, wrong shapes."""
    if typ.startswith("[]"):
        if not isinstance(value, list):
            return [f"{path}: a list of {typ[2:]} expected, got {value!r}"]
        return [found for index, item in enumerate(value) for found in problems(item, typ[2:], f"{path}[{index}]")]
    if typ in SCALARS:
        kind = SCALARS[typ]
        if kind is int and isinstance(value, float) and value.is_integer():
            return []  # numbers reach the engine (and Kubernetes) as JSON numbers: 6443.0 is 6443
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            return [f"{path}: a {typ} expected, got {value!r}"]
        return []
    if typ not in FIELDS:
        return [f"{path}: type {typ} is not in the checked-in list; add it from the API reference"]
    if not isinstance(value, dict):
        return [f"{path}: a {typ} object expected, got {value!r}"]
    found = [f"{path}.{key}: not a field of {typ}" for key in value if key not in FIELDS[typ]]
    found += [f"{path}.{key}: required by {typ}" for key in sorted(REQUIRED.get(typ, ())) if key not in value]
    if typ in EXACTLY_ONE and len(value) != 1:
        found.append(f"{path}: {typ} takes exactly one of {', '.join(FIELDS[typ])}")
    for key, item in value.items():
        if key in FIELDS[typ]:
            found += problems(item, FIELDS[typ][key], f"{path}.{key}")
    return found

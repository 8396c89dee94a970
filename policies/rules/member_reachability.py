"""Every member's address is in its subnet, and that subnet is reachable from the VIP subnet of each zone serving it.

Octavia sends traffic and health checks from the VIP subnet's side. A member on a subnet of another network that no
router joins to the VIP subnet never answers: the pool stays in ERROR/OFFLINE and the readiness gate times out.
Reachable here means: the same network, or both subnets attached to one router (the looked-up facts).
"""

from __future__ import annotations

from typing import Any

from ha_endpoint import contract

from ..facts import gap
from ..model import Violation, address, missing, network
from ..stack import endpoints, props

NAME = "ha-endpoint-member-reachability"
DESCRIPTION = "Each member's address lies in its subnet, and that subnet is routable from its zone's VIP subnet."
ENFORCEMENT = "mandatory"
SEVERITY = "high"
KIND = "stack"
CONFIG: dict[str, dict[str, Any]] = {}


def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    violations: list[Violation] = []
    for endpoint in endpoints(resources):
        urn = endpoint.resource.urn
        facts = endpoint.facts
        for member in facts.members:
            violations.extend(_check_address(endpoint.name, member, urn))
            for key in _zones_serving(endpoint, member):
                zone = facts.zones.get(key)
                if zone is None:
                    continue  # an unconfigured zone is ha-endpoint-member-zones' finding
                violations.extend(_check_route(endpoint.name, member, key, zone, urn))
    return violations


def _check_address(endpoint: str, member: Any, urn: str) -> list[Violation]:
    if missing(member.subnet_cidr):
        return [Violation(gap(endpoint, f"members.{member.name}.subnetCidr",
                              f"the CIDR of member {member.name}'s subnet"), urn)]
    cidr, ip = network(member.subnet_cidr), address(member.address)
    if ip is None:
        return [Violation(gap(endpoint, f"members.{member.name}.address", f"the address of member {member.name}"),
                          urn)]
    if cidr is None or ip.version != cidr.version or ip not in cidr:
        return [Violation(
            f"member {member.name} has address {member.address}, which is not in its subnet "
            f"{member.subnet_id or '?'} ({member.subnet_cidr}); fix members[].address, or set members[].subnet to "
            f"the subnet that address is on", urn)]
    return []


def _zones_serving(endpoint: Any, member: Any) -> list[str]:
    """The zones whose load balancer has this member: what the program registers, else the placement rule."""
    zones: list[str] = []
    for resource in endpoint.of_type(contract.MEMBER_TYPE):
        key = endpoint.zone_of(resource)
        if key is None or key in zones:
            continue
        registered = props(resource).get("address")
        named = isinstance(member.address, str) and resource.name.endswith(
            f"-member-{contract.member_key(member.address)}")  # members are named by address (contract.member_name)
        if registered == member.address or named:
            zones.append(key)
    if zones:
        return zones
    if endpoint.facts.member_placement == "all-zones":
        return list(endpoint.facts.zones)
    return [member.zone] if isinstance(member.zone, str) else []


def _check_route(endpoint: str, member: Any, key: str, zone: Any, urn: str) -> list[Violation]:
    needed = [(member.network_id, f"members.{member.name}.networkId", f"the network of member {member.name}"),
              (member.router_ids, f"members.{member.name}.routerIds", f"the routers of member {member.name}'s subnet"),
              (zone.network_id, f"zones.{key}.networkId", f"the network of zone {key}'s VIP subnet"),
              (zone.router_ids, f"zones.{key}.routerIds", f"the routers of zone {key}'s VIP subnet")]
    gaps = [Violation(gap(endpoint, path, what), urn) for value, path, what in needed if missing(value)]
    if gaps:
        return gaps
    if member.network_id == zone.network_id:
        return []
    if set(member.router_ids or []) & set(zone.router_ids or []):
        return []
    return [Violation(
        f"member {member.name} ({member.address} on subnet {member.subnet_id}, network {member.network_id}) is not "
        f"reachable from the load balancer of zone {key} (VIP subnet {zone.subnet_id}, network {zone.network_id}): "
        f"the subnets are on different networks and share no router; attach both subnets to one router, or move the "
        f"member to a subnet of network {zone.network_id}", urn)]

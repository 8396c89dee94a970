"""Every member's address is in its subnet, and that subnet is reachable from the VIP subnet of each zone serving it.

Octavia sends traffic and health checks from the VIP subnet's side. A member on a subnet of another network that no
router joins to the VIP subnet never answers: the pool stays in ERROR/OFFLINE and the readiness gate times out.
Reachable here means: the same network, or both subnets attached to one router (the looked-up facts).
"""

from __future__ import annotations

from typing import Any

from ha_endpoint.core import contract, predicates
from ha_endpoint.core.facts import EndpointFacts, MemberFact

from ..model import Violation
from ..registry import rule
from ..stack import Endpoint, judged, props


@rule("ha-endpoint-member-reachability",
      "Each member's address lies in its subnet, and that subnet is routable from its zone's VIP subnet.")
def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    violations: list[Violation] = []
    for endpoint, facts in judged(resources):
        urn = endpoint.resource.urn
        for member in facts.members.values():
            subnet = facts.subnet(member.subnet_id)
            if subnet is None:
                violations.append(Violation(
                    f"endpoint {endpoint.name}: member {member.name}'s subnet {member.subnet_id} is not among the "
                    "declared subnets; the component must declare every subnet it uses", urn))
                continue
            if not predicates.address_in_subnet(member.address, subnet.cidr):
                violations.append(Violation(
                    f"member {member.name} has address {member.address}, which is not in its subnet "
                    f"{subnet.id} ({subnet.cidr}); {_address_fix(member)}", urn))
                continue
            for key in _zones_serving(endpoint, facts, member):
                violations.extend(_check_route(facts, member, key, urn))
    return violations


def _address_fix(member: MemberFact) -> str:
    """How to fix a member's address, where its source takes it from."""
    if member.source == "clusterApi":
        return ("its Machine's address (status.addresses) is on another network: give the Machine an address on its "
                "zone's subnet, or set memberSources.clusterApi.addressType to the type that is")
    return "fix members[].address, or set members[].subnet to the subnet that address is on"


def _zones_serving(endpoint: Endpoint, facts: EndpointFacts, member: MemberFact) -> list[str]:
    """The zones whose load balancer has this member: what the program registers, else the placement rule."""
    zones: list[str] = []
    for resource in endpoint.of_type(contract.MEMBER_TYPE):
        key = endpoint.zone_of(resource)
        if key is None or key in zones:
            continue
        named = resource.name.endswith(f"-member-{contract.member_key(member.address)}")  # contract.member_name
        if props(resource).get("address") == member.address or named:
            zones.append(key)
    if zones:
        return zones
    if facts.member_placement == "all-zones":
        return list(facts.zones)
    return [member.az] if member.az in facts.zones else []


def _check_route(facts: EndpointFacts, member: MemberFact, key: str, urn: str) -> list[Violation]:
    zone = facts.zones.get(key)
    vip = facts.subnet(zone.vip_subnet_id) if zone is not None else None
    subnet = facts.subnet(member.subnet_id)
    if zone is None or vip is None or subnet is None:
        return []  # an unconfigured zone is ha-endpoint-member-zones' finding
    if predicates.subnets_reach(vip.network_id, vip.router_ids, subnet.network_id, subnet.router_ids):
        return []
    return [Violation(
        f"member {member.name} ({member.address} on subnet {subnet.id}, network {subnet.network_id}) is not "
        f"reachable from the load balancer of zone {key} (VIP subnet {vip.id}, network {vip.network_id}): "
        f"the subnets are on different networks and share no router; attach both subnets to one router, or move the "
        f"member to a subnet of network {vip.network_id}", urn)]

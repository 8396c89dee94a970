"""Judge a member declared beside an HaEndpoint, in one of its pools, against the endpoint's declared facts.

Reachability is the shared rule (:func:`ha_endpoint.core.predicates.address_in_subnet`,
:func:`ha_endpoint.core.predicates.subnets_reach`) over the subnets the endpoint declares (CIDR, network, routers). Each
member gets one :class:`MemberVerdict`: ``problems`` the pack is sure of (an address outside its subnet, a subnet no
route joins to a zone's VIP subnet) and ``unjudged`` reasons it could not decide (a subnet the facts do not describe,
a subnet created in the same stack, no subnet and an address off the VIP subnet, a pool id that could be any of
several zones' with different answers). Two policies report the two lists; nothing is passed unseen.

A member that sets no ``subnet_id`` is reached from the load balancer's VIP subnet (Octavia's rule). An address not
known at preview (a server created in the same stack) leaves the route judged on the subnet alone; the address is
checked at the next preview, once known.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ha_endpoint.core import contract, predicates
from ha_endpoint.core.facts import EndpointFacts, SubnetFact

from .model import UNKNOWN, join
from .neighbours import PoolLink, neighbours, pool_link
from .stack import Endpoint, endpoints, props

DECLARE = ("declare it through the endpoint instead (members[] with its subnet: the component looks the subnet up, "
           "checks the route and its readiness gate waits for the member)")


@dataclass
class MemberVerdict:
    """What the pack found about one member beside the endpoint."""

    problems: list[str] = field(default_factory=list)
    unjudged: list[str] = field(default_factory=list)


def judge(endpoint: Endpoint, member: Any, link: PoolLink) -> MemberVerdict:
    """The verdict on ``member`` (a member resource outside the endpoint) joining the endpoint's pools ``link``."""
    facts = endpoint.facts
    verdict = MemberVerdict()
    if facts is None:
        return verdict  # ha-endpoint-declared-facts / facts-known-at-preview say why
    stray = [zone for zone in link.zones if zone not in facts.zones]
    if stray:
        verdict.unjudged.append(
            f"member {member.name} (declared beside endpoint {endpoint.name}) joins {link.describe()}, but zone "
            f"{join(stray)} is not among the zones the endpoint declares ({join(facts.zones)}), so its route cannot "
            f"be judged; use the component and the pack of one release")
        return verdict
    member_props = props(member)
    address, subnet_id = member_props.get("address"), member_props.get("subnetId")
    who = f"member {member.name} (declared beside endpoint {endpoint.name}) joins {link.describe()}"
    if address is None or (address is not UNKNOWN and predicates.parse_address(address) is None):
        what = "no address" if address is None else f"address {address!r}, which is not an IP address"
        verdict.problems.append(f"{who} with {what}; give the member's IP address")
        return verdict
    if subnet_id is None or subnet_id == "":
        _judge_on_vip_subnets(facts, who, address, link, verdict)
        return verdict
    if subnet_id is UNKNOWN:
        verdict.unjudged.append(
            f"{who}, but its subnet_id is not known at preview (a subnet created in this stack), so the endpoint's "
            f"facts cannot describe it and whether the load balancer reaches it cannot be judged; put the member on "
            f"a subnet the endpoint declares ({_declared(facts)}), or {DECLARE}")
        return verdict
    subnet = facts.subnets.get(subnet_id) if isinstance(subnet_id, str) else None
    if subnet is None:
        what = f"its subnet {subnet_id}" if isinstance(subnet_id, str) else f"its subnet_id {subnet_id!r}"
        verdict.unjudged.append(
            f"{who}, but {what} is not one the endpoint declares, so whether the load balancer of "
            f"{_zones(list(link.zones))} reaches it cannot be judged; put the member on a subnet the endpoint declares "
            f"({_declared(facts)}), or {DECLARE}")
        return verdict
    if address is not UNKNOWN and not predicates.address_in_subnet(address, subnet.cidr):
        verdict.problems.append(
            f"{who} with address {address}, which is not in its subnet {subnet.name} ({subnet.id}, {subnet.cidr}); "
            f"give it an address of that subnet, or set its subnet_id to the subnet {address} is on")
        return verdict
    unreachable = [zone for zone in link.zones if not _reaches(facts, zone, subnet)]
    if not unreachable:
        return verdict
    if len(unreachable) == len(link.zones):
        for zone in unreachable:
            vip = facts.subnets[facts.zones[zone].vip_subnet_id]
            verdict.problems.append(
                f"{who}, but zone {zone}'s load balancer cannot reach it: its subnet {subnet.name} ({subnet.id}, "
                f"network {subnet.network_id}) and the VIP subnet {vip.name} ({vip.id}, network {vip.network_id}) are "
                f"on different networks and share no router; attach both subnets to one router, or put the member on "
                f"a subnet of network {vip.network_id}")
        return verdict
    reached = [zone for zone in link.zones if zone not in unreachable]
    verdict.unjudged.append(
        f"{who} (its pool id is not known at preview): the load balancer(s) of {_zones(unreachable)} would not reach "
        f"its subnet {subnet.name} ({subnet.id}, network {subnet.network_id}), that of {_zones(reached)} would; take "
        f"the pool id from the one zone the member belongs to (not from the endpoint's zones output, which depends "
        f"on every zone), so that the pack can tell which zone it joins")
    return verdict


def _judge_on_vip_subnets(facts: EndpointFacts, who: str, address: Any, link: PoolLink,
                          verdict: MemberVerdict) -> None:
    """A member without ``subnet_id``: Octavia reaches it from the VIP subnet of its load balancer."""
    if address is UNKNOWN:
        verdict.unjudged.append(
            f"{who} and sets no subnet_id, and its address is not known at preview, so whether it is on the VIP "
            f"subnet of {_zones(list(link.zones))} cannot be judged; set its subnet_id to the member's subnet")
        return
    for zone in link.zones:
        vip = facts.subnets[facts.zones[zone].vip_subnet_id]
        if predicates.address_in_subnet(address, vip.cidr):
            continue
        verdict.unjudged.append(
            f"{who} and sets no subnet_id, so Octavia reaches it from zone {zone}'s VIP subnet {vip.name} "
            f"({vip.cidr}), which does not hold its address {address}: whether a router forwards that traffic is not "
            f"in the endpoint's facts; set its subnet_id to the member's subnet (one the endpoint declares: "
            f"{_declared(facts)}), or {DECLARE}")


def _reaches(facts: EndpointFacts, zone: str, subnet: SubnetFact) -> bool:
    vip = facts.subnets[facts.zones[zone].vip_subnet_id]
    return predicates.subnets_reach(vip.network_id, vip.router_ids, subnet.network_id, subnet.router_ids)


def _zones(zones: list[str]) -> str:
    return f"zone {zones[0]}" if len(zones) == 1 else f"zones {', '.join(zones[:-1])} and {zones[-1]}"


def _declared(facts: EndpointFacts) -> str:
    return join(f"{subnet.name} {subnet.cidr}" for subnet in facts.subnets.values())


def verdicts(resources: list[Any]) -> list[tuple[Endpoint, Any, MemberVerdict]]:
    """Every member beside an endpoint in one of its pools, with the verdict on it."""
    found = []
    members = neighbours(resources, contract.MEMBER_TYPE)
    for endpoint in endpoints(resources):
        for member in members:
            link = pool_link(endpoint, member)
            if link is not None:
                found.append((endpoint, member, judge(endpoint, member, link)))
    return found


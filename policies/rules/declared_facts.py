"""The HaEndpoint declares, as plain values, the looked-up cloud facts the other policies check.

The stack policies judge reachability, security-group coverage and placement from facts no resource input states:
the CIDR, network and routers of each zone's VIP subnet and of each member's subnet. The component looks them up
before creating anything and declares them in its properties. This resource policy sees those properties as the
component registers them (``Analyze`` gets a resource's inputs), names every fact that is missing or unknown at
preview, and hands the facts on to the stack policies of the same run (see :mod:`policies.observed`).
"""

from __future__ import annotations

from typing import Any

from ha_endpoint import contract

from ..facts import gap, read_facts
from ..model import Violation, missing

NAME = "ha-endpoint-declared-facts"
DESCRIPTION = "The HaEndpoint declares the looked-up facts (subnets, networks, routers, ports) the pack checks."
ENFORCEMENT = "advisory"
SEVERITY = "medium"
KIND = "resource"
RESOURCE_TYPES = (contract.ENDPOINT_TYPE,)
CONFIG: dict[str, dict[str, Any]] = {}


def check_resource(resource_type: str, props: dict[str, Any], name: str, urn: str,
                   config: dict[str, Any]) -> list[Violation]:
    if resource_type not in RESOURCE_TYPES:
        return []
    facts = read_facts(props, name)
    needed: list[tuple[Any, str, str]] = [
        (facts.provider, "provider", "the Octavia provider"),
        (facts.member_placement, "memberPlacement", "the member placement"),
    ]
    if not facts.zones_declared:
        needed.append((None, "zones", "the zones and their VIP subnets"))
    for key, zone in facts.zones.items():
        needed += [
            (zone.az, f"zones.{key}.az", f"the availability zone of zone {key}"),
            (zone.subnet_id, f"zones.{key}.vipSubnetId", f"the VIP subnet id of zone {key}"),
            (zone.subnet_cidr, f"zones.{key}.vipSubnetCidr", f"the CIDR of zone {key}'s VIP subnet"),
            (zone.network_id, f"zones.{key}.vipNetworkId", f"the network of zone {key}'s VIP subnet"),
            (zone.router_ids, f"zones.{key}.routerIds", f"the routers of zone {key}'s VIP subnet"),
        ]
    if not facts.members_declared:
        needed.append((None, "members", "the members and their zones"))
    for member in facts.members:
        m = member.name
        needed += [
            (member.zone, f"members.{m}.zone", f"the zone of member {m}"),
            (member.address, f"members.{m}.address", f"the address of member {m}"),
            (member.subnet_id, f"members.{m}.subnetId", f"the subnet id of member {m}"),
            (member.subnet_cidr, f"members.{m}.subnetCidr", f"the CIDR of member {m}'s subnet"),
            (member.network_id, f"members.{m}.networkId", f"the network of member {m}"),
            (member.router_ids, f"members.{m}.routerIds", f"the routers of member {m}'s subnet"),
        ]
    if not facts.listeners_declared:
        needed.append((None, "listeners", "the listeners and their ports"))
    for index, listener in enumerate(facts.listeners):
        needed += [
            (listener.port, f"listeners[{index}].port", f"the port of listener {index}"),
            (listener.member_port, f"listeners[{index}].memberPort", f"the member port of listener {index}"),
        ]
    if facts.has_dns:
        needed.append((facts.publish, "dns.publish", "the DNS publication mode"))
    return [Violation(gap(facts.name, path, what), urn) for value, path, what in needed if missing(value)]

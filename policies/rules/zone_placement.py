"""Every zone's load balancer sits in the zone's AZ, on the subnet mapped to that zone; no two zones share a subnet.
Under the ovn provider a load balancer has no AZ (Octavia refuses one): the zone's AZ is where its VIP subnet's router
has its gateway, which ha-endpoint-az-independence checks.

An LB placed in another AZ, or with its VIP on another zone's subnet, shares that zone's failure domain: losing one
AZ then takes two of the endpoint's addresses down.
"""

from __future__ import annotations

from typing import Any

from ha_endpoint.backends.octavia import rules as octavia
from ha_endpoint.core import contract, predicates

from ..model import UNKNOWN, Violation
from ..registry import rule
from ..stack import endpoints, props


@rule("ha-endpoint-zone-placement",
      "Each zone's load balancer is in the zone's availability zone, on the zone's own VIP subnet.")
def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    violations: list[Violation] = []
    for endpoint in endpoints(resources):
        urn = endpoint.resource.urn
        if endpoint.facts is None:
            continue  # ha-endpoint-declared-facts / facts-known-at-preview say why
        seen_subnets: dict[str, str] = {}
        for key, zone in endpoint.facts.zones.items():
            if zone.backend != octavia.NAME:
                continue  # this policy is about Octavia's load balancers; other backends have their own
            expected_name = contract.loadbalancer_name(endpoint.name, key)
            balancers = endpoint.in_zone(contract.LOADBALANCER_TYPE, key)
            if not balancers:
                violations.append(Violation(
                    f"zone {key} of endpoint {endpoint.name} has no load balancer (expected {expected_name}); "
                    f"every configured zone needs its own load balancer", urn))
                continue
            for lb in balancers:
                violations.extend(_check_balancer(endpoint.name, key, zone, lb, endpoint.facts.load_balancer_provider))
                subnet = props(lb).get("vipSubnetId")
                if isinstance(subnet, str) and subnet:
                    if subnet in seen_subnets:
                        violations.append(Violation(
                            f"load balancer {lb.name} (zone {key}) has its VIP on subnet {subnet}, already the VIP "
                            f"subnet of zone {seen_subnets[subnet]}; each zone needs a subnet of its own in its own "
                            f"AZ (zones.{key}.subnet), or one AZ's failure takes both zones down", lb.urn))
                    else:
                        seen_subnets[subnet] = key
    return violations


def _check_balancer(endpoint: str, key: str, zone: Any, lb: Any, declared: Any) -> list[Violation]:
    found: list[Violation] = []
    lb_props = props(lb)
    actual = lb_props.get("availabilityZone")
    provider = lb_props.get("loadbalancerProvider")
    provider = provider if isinstance(provider, str) and provider else declared
    if not predicates.pins_availability_zone(provider):
        if isinstance(actual, str) and actual:
            found.append(Violation(
                f"load balancer {lb.name} (zone {key}) sets availability zone '{actual}', which the {provider} "
                f"provider refuses (Octavia: 'This provider does not support validating availability zones'); "
                f"leave it unset: the zone's AZ is its VIP subnet's router's gateway", lb.urn))
    elif actual is UNKNOWN:
        found.append(Violation(
            f"load balancer {lb.name} (zone {key}): its availability zone is unknown at preview; pass the "
            f"zone's AZ '{zone.az}' as a plain value", lb.urn))
    elif not actual:
        found.append(Violation(
            f"load balancer {lb.name} (zone {key}) sets no availability zone, so Octavia may place it in any "
            f"AZ; set its availability_zone to '{zone.az}'", lb.urn))
    elif actual != zone.az:
        found.append(Violation(
            f"load balancer {lb.name} serves zone {key} but is placed in availability zone '{actual}'; set "
            f"its availability_zone to '{zone.az}'", lb.urn))
    actual = lb_props.get("vipSubnetId")
    if actual is UNKNOWN:
        found.append(Violation(
            f"load balancer {lb.name} (zone {key}): its VIP subnet is unknown at preview; pass the looked-up "
            f"subnet id {zone.vip_subnet_id} as a plain value", lb.urn))
    elif actual != zone.vip_subnet_id:
        found.append(Violation(
            f"load balancer {lb.name} has its VIP on subnet {actual or '(none)'} but zone {key} is mapped to "
            f"subnet {zone.vip_subnet_id}; put the VIP on the zone's subnet (zones.{key}.subnet)", lb.urn))
    return found

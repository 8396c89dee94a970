"""The endpoint spans at least ``minZones`` distinct availability zones.

One load balancer per AZ is the point of the endpoint: with fewer than two distinct AZs (or two zones that are the
same AZ under different names) an AZ outage takes the whole API down. One zone that adopted an existing load balancer
is let through: it is the way back to that load balancer alone (docs/adoption.md).
"""

from __future__ import annotations

from typing import Any

from ha_endpoint.backends.octavia import rules as octavia
from ha_endpoint.core import contract, predicates

from ..model import Violation, as_int, join
from ..registry import rule, whole_number
from ..stack import endpoints, props

CONFIG = {"minZones": whole_number(2, "Distinct availability zones the endpoint must span.")}


@rule("ha-endpoint-min-zones",
      "The endpoint's load balancers span at least minZones distinct availability zones.",
      severity="critical", config=CONFIG)
def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    minimum = as_int(config.get("minZones")) or 2
    violations: list[Violation] = []
    for endpoint in endpoints(resources):
        balancers = endpoint.of_type(contract.LOADBALANCER_TYPE)
        others = [zone.az for zone in endpoint.facts.zones.values() if zone.backend != octavia.NAME] \
            if endpoint.facts is not None else []
        if balancers:
            declared = endpoint.facts.load_balancer_provider if endpoint.facts is not None else None
            azs = [_zone_az(endpoint, lb, declared) for lb in balancers] + others
            source = "load balancers"
        elif endpoint.facts is not None:
            azs = [zone.az for zone in endpoint.facts.zones.values()]
            source = "zones"
        else:
            continue  # ha-endpoint-declared-facts / facts-known-at-preview say why
        distinct = sorted({az for az in azs if isinstance(az, str) and az})
        if _way_back(endpoint):
            continue  # the adopted load balancer alone: the way back of an adoption (docs/adoption.md)
        if len(distinct) < minimum:
            violations.append(Violation(
                f"endpoint {endpoint.name}'s {source} span {len(distinct)} distinct availability zone(s) "
                f"({join(distinct)}); at least {minimum} are required: add zones, each in its own AZ with its own "
                f"subnet", endpoint.resource.urn))
    return violations


def _way_back(endpoint: Any) -> bool:
    """One zone, and it adopted an existing load balancer (``zones.<az>.adopt``): the way back to that load balancer
    alone, which the component allows for such a zone only."""
    zones = list(endpoint.facts.zones.values()) if endpoint.facts is not None else []
    return len(zones) == 1 and zones[0].adopted


def _zone_az(endpoint: Any, lb: Any, declared: Any) -> Any:
    """The AZ a load balancer serves: its own, or, for a provider that has none (ovn), its zone's."""
    provider = props(lb).get("loadbalancerProvider")
    provider = provider if isinstance(provider, str) and provider else declared
    if predicates.pins_availability_zone(provider):
        return props(lb).get("availabilityZone")
    key = endpoint.zone_of(lb)
    zone = endpoint.facts.zones.get(key) if endpoint.facts is not None and key is not None else None
    return zone.az if zone is not None else None

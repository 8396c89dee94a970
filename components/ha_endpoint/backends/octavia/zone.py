"""The Octavia backend's own plan of a zone: what it decides from the endpoint's zone plan and its settings.

The endpoint's :class:`ha_endpoint.core.plan.ZonePlan` says what any backend needs (the VIP subnet, listeners,
members, floating IP, readiness); what only an Octavia load balancer has is decided here, once per zone: its name, its
provider driver (the ``loadBalancerProvider`` key, the backend's one setting), the Octavia availability zone it is
pinned to, and whether an adopted load balancer is taken over with its tree or built anew beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ...core import contract, predicates
from ...core.cloud_facts import AdoptedLoadBalancer
from ...core.plan import ZonePlan

SETTINGS = ("load_balancer_provider",)
"""The configuration keys that are this backend's settings (:attr:`ha_endpoint.backends.plugin.Backend.settings`)."""


@dataclass(frozen=True)
class OctaviaZone:
    """One zone's load balancer as the Octavia backend builds it."""

    lb_name: str
    provider: str
    """Octavia's provider driver (``amphora``, ``ovn``)."""
    availability_zone: Optional[str]
    """The Octavia availability zone the load balancer is pinned to: the zone's AZ under amphora; none under ovn,
    whose provider has no availability zones (Octavia refuses one on its load balancers: their flows exist on every
    chassis, and the zone's traffic leaves through the gateway chassis of the VIP subnet's router)."""
    adopted_tree: Optional[AdoptedLoadBalancer]
    """The adopted load balancer when it is taken over with its tree (imported); None when there is none, or when the
    configuration differs from it in what Octavia cannot change in place (``adopt.allowReplacement``: the zone's load
    balancer is then built new and only the floating IP's association is taken over)."""


def octavia_zone(zone: ZonePlan) -> OctaviaZone:
    """What the Octavia backend builds zone ``zone`` with."""
    provider = str(zone.settings["load_balancer_provider"])
    pinned = zone.az if predicates.pins_availability_zone(provider) else None
    found = zone.adopted
    replaced = found is not None and bool(found.fixed_differences(zone.vip_subnet.id, provider, pinned))
    return OctaviaZone(contract.loadbalancer_name(zone.endpoint, zone.az), provider, pinned,
                       found if found is not None and not replaced else None)

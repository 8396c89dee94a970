"""A member declared beside the endpoint, in one of its pools, is on its subnet and reachable from its zone.

A program may add its own ``openstack.loadbalancer.Member`` to a pool the component built. The component's checks
never see it, and the zone's readiness gate does not wait for it: a member on a subnet no route joins to the zone's
VIP subnet, or with an address outside its subnet, stays OFFLINE without anyone noticing until the other members
fail. The rule is the component's own (:func:`ha_endpoint.predicates.address_in_subnet`,
:func:`ha_endpoint.predicates.subnets_reach`), over the subnets the endpoint declares in its facts; members the facts
cannot judge are ``ha-endpoint-neighbour-member-unjudged``'s.
"""

from __future__ import annotations

from typing import Any

from ..member_routes import verdicts
from ..model import Violation

NAME = "ha-endpoint-neighbour-member-reachability"
DESCRIPTION = "A member added beside the endpoint to one of its pools is on its subnet and reachable from its zone."
ENFORCEMENT = "mandatory"
SEVERITY = "high"
KIND = "stack"
CONFIG: dict[str, dict[str, Any]] = {}


def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    return [Violation(problem, member.urn)
            for _, member, verdict in verdicts(resources) for problem in verdict.problems]

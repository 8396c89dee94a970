"""Members declared beside the endpoint, in its pools: one judgement (:func:`policies.member_routes.verdicts`) in two
policies, what it finds wrong and what it cannot judge.
"""

from __future__ import annotations

from typing import Any

from ..member_routes import verdicts
from ..model import Violation
from ..registry import rule


@rule("ha-endpoint-neighbour-member-reachability",
      "A member added beside the endpoint to one of its pools is on its subnet and reachable from its zone.")
def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    """A member declared beside the endpoint, in one of its pools, is on its subnet and reachable from its zone.

A program may add its own ``openstack.loadbalancer.Member`` to a pool the component built. The component's checks
never see it, and the zone's readiness gate does not wait for it: a member on a subnet no route joins to the zone's
VIP subnet, or with an address outside its subnet, stays OFFLINE without anyone noticing until the other members
fail. The rule is the component's own (:func:`ha_endpoint.core.predicates.address_in_subnet`,
:func:`ha_endpoint.core.predicates.subnets_reach`), over the subnets the endpoint declares in its facts; members the facts
cannot judge are ``ha-endpoint-neighbour-member-unjudged``'s.
"""
    return [Violation(problem, member.urn)
            for _, member, verdict in verdicts(resources) for problem in verdict.problems]


@rule("ha-endpoint-neighbour-member-unjudged",
      "A member added beside the endpoint to one of its pools is on a subnet the endpoint's facts describe.",
      severity="medium")
def check_unjudged(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    """A member declared beside the endpoint, in one of its pools, that the pack cannot judge is not passed unseen.

The pack judges a member's route over the subnets the endpoint declares (CIDR, network, routers). A member beside
the endpoint on another subnet (or on a subnet created in the same stack, or with no subnet and an address off the
VIP subnet, or with a pool id that could be any of several zones' that answer differently) cannot be judged.
Mandatory by default: such a member bypasses every check that protects the endpoint (the component's validation,
the zone's readiness gate, the drain before removal) and an unreachable one fails silently, so a careful operator
wants the preview to stop and the member either declared through the endpoint (``members[]``) or put on a subnet
the endpoint declares. Set this policy to ``advisory`` to accept such members knowingly.
"""
    return [Violation(reason, member.urn)
            for _, member, verdict in verdicts(resources) for reason in verdict.unjudged]

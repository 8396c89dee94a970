"""A member declared beside the endpoint, in one of its pools, that the pack cannot judge is not passed unseen.

The pack judges a member's route over the subnets the endpoint declares (CIDR, network, routers). A member beside
the endpoint on another subnet (or on a subnet created in the same stack, or with no subnet and an address off the
VIP subnet, or with a pool id that could be any of several zones' that answer differently) cannot be judged.
Mandatory by default: such a member bypasses every check that protects the endpoint (the component's validation,
the zone's readiness gate, the drain before removal) and an unreachable one fails silently, so a careful operator
wants the preview to stop and the member either declared through the endpoint (``members[]``) or put on a subnet
the endpoint declares. Set this policy to ``advisory`` to accept such members knowingly.
"""

from __future__ import annotations

from typing import Any

from ..member_routes import verdicts
from ..model import Violation

NAME = "ha-endpoint-neighbour-member-unjudged"
DESCRIPTION = "A member added beside the endpoint to one of its pools is on a subnet the endpoint's facts describe."
ENFORCEMENT = "mandatory"
SEVERITY = "medium"
KIND = "stack"
CONFIG: dict[str, dict[str, Any]] = {}


def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    return [Violation(reason, member.urn)
            for _, member, verdict in verdicts(resources) for reason in verdict.unjudged]

"""The HaEndpoint declares, in its ``facts`` output, the looked-up facts the other policies check, in the model's shape.

The stack policies judge reachability, security-group coverage and placement from facts no resource input states:
the CIDR, network and routers of each zone's VIP subnet and of each member's subnet. The component looks them up
before creating anything and declares them once (:class:`ha_endpoint.core.facts.EndpointFacts`). Facts that are missing
or malformed leave the other policies nothing to judge, so this policy is mandatory: it names every bad fact.
"""

from __future__ import annotations

from typing import Any

from ..model import Violation
from ..registry import rule
from ..stack import endpoints


@rule("ha-endpoint-declared-facts",
      "The HaEndpoint declares the looked-up facts (subnets, networks, routers, ports) the pack checks.")
def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    return [Violation(f"endpoint {endpoint.name}: {problem}; the other policies cannot check this endpoint until its "
                      "facts are declared in the component's shape", endpoint.resource.urn)
            for endpoint in endpoints(resources) for problem in endpoint.declared.problems]

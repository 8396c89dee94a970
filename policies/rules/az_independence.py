"""Each zone still serves when any other AZ is lost: no hidden single-AZ dependency (mandatory findings).

An endpoint with one load balancer per AZ is only as available as what every zone shares. The routers a zone depends
on (the one holding its floating IPs' gateway; those joining its VIP subnet to members on other networks) and its VIP
network must not live only in another AZ. Mandatory by default: a router every zone depends on that its hints pin to
one AZ, and a zone's VIP network hinted to other AZs only. The rule is the component's own
(:meth:`ha_endpoint.facts.EndpointFacts.az_loss`): it refuses the same layouts before creating anything.
"""

from __future__ import annotations

from typing import Any

from ..model import Violation
from ..stack import endpoints

NAME = "ha-endpoint-az-independence"
DESCRIPTION = "No router or VIP network every zone depends on lives in one AZ only (each zone survives another AZ's loss)."
ENFORCEMENT = "mandatory"
SEVERITY = "critical"
KIND = "stack"
CONFIG: dict[str, dict[str, Any]] = {}
MANDATORY = True


def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    return [Violation(f"endpoint {endpoint.name}: {finding.message}", endpoint.resource.urn)
            for endpoint in endpoints(resources) if endpoint.facts is not None
            for finding in endpoint.facts.az_loss() if finding.mandatory is MANDATORY]

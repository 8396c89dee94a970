"""Each zone still serves when any other AZ is lost: no hidden single-AZ dependency, in two policies over one
computation (:meth:`ha_endpoint.core.facts.EndpointFacts.az_loss`, the component's own rule): its mandatory findings
and its advisory ones.
"""

from __future__ import annotations

from typing import Any

from ..model import Violation
from ..registry import rule
from ..stack import judged


def findings(resources: list[Any], mandatory: bool) -> list[Violation]:
    """The AZ-loss findings of every endpoint whose facts are usable, mandatory or advisory ones."""
    return [Violation(f"endpoint {endpoint.name}: {finding.message}", endpoint.resource.urn)
            for endpoint, facts in judged(resources) for finding in facts.az_loss() if finding.mandatory is mandatory]


@rule("ha-endpoint-az-independence",
      "No router or VIP network every zone depends on lives in one AZ only (each zone survives another AZ's loss).",
      severity="critical")
def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    """Each zone still serves when any other AZ is lost: no hidden single-AZ dependency (mandatory findings).

An endpoint with one load balancer per AZ is only as available as what every zone shares. The routers a zone depends
on (the one holding its floating IPs' gateway; those joining its VIP subnet to members on other networks) and its VIP
network must not live only in another AZ. Mandatory by default: a router every zone depends on that its hints pin to
one AZ, and a zone's VIP network hinted to other AZs only. The rule is the component's own
(:meth:`ha_endpoint.core.facts.EndpointFacts.az_loss`): it refuses the same layouts before creating anything.
"""
    return findings(resources, mandatory=True)


@rule("ha-endpoint-az-independence-advisory",
      "Shared routers are HA or distributed and hinted to every zone's AZ; AZ information is visible.",
      enforcement="advisory")
def check_advisory(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    """Each zone still serves when any other AZ is lost: the findings that are advisory by default.

A router several zones share that is neither HA nor distributed (Neutron runs it on one L3 agent, in one AZ,
whatever its hints say); a router whose hints leave out some of the zones that depend on it; and, once, a cloud that
reports no availability-zone hints at all (the extensions absent or unset), so that nothing could be checked. Raise
this policy to mandatory (`"ha-endpoint-az-independence-advisory": "mandatory"`) to refuse them too.
"""
    return findings(resources, mandatory=False)

"""Each zone still serves when any other AZ is lost: the findings that are advisory by default.

A router several zones share that is neither HA nor distributed (Neutron runs it on one L3 agent, in one AZ,
whatever its hints say); a router whose hints leave out some of the zones that depend on it; and, once, a cloud that
reports no availability-zone hints at all (the extensions absent or unset), so that nothing could be checked. Raise
this policy to mandatory (`"ha-endpoint-az-independence-advisory": "mandatory"`) to refuse them too.
"""

from __future__ import annotations

from typing import Any

from ..model import Violation
from ..stack import endpoints

NAME = "ha-endpoint-az-independence-advisory"
DESCRIPTION = "Shared routers are HA or distributed and hinted to every zone's AZ; AZ information is visible."
ENFORCEMENT = "advisory"
SEVERITY = "high"
KIND = "stack"
CONFIG: dict[str, dict[str, Any]] = {}


def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    return [Violation(f"endpoint {endpoint.name}: {finding.message}", endpoint.resource.urn)
            for endpoint in endpoints(resources) if endpoint.facts is not None
            for finding in endpoint.facts.az_loss() if not finding.mandatory]

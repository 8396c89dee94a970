"""A production endpoint that leaves zones out during an outage keeps at least two ready.

``readiness.onZoneNotReady: unpublish`` lets `pulumi up` complete while an AZ is down: a zone that does not become
ready is left out of DNS. ``readiness.minReadyZones`` is the floor below which the update fails instead. At 1, an
update run during an outage (or a bad rollout reaching every zone but one) may complete with a single zone serving:
the endpoint is no longer highly available and nothing stopped it. The floor's rule is
:func:`ha_endpoint.core.predicates.min_ready_zones_problem`, read from the endpoint's declared facts.
"""

from __future__ import annotations

from typing import Any

from ha_endpoint.core import predicates

from ..model import Violation
from ..production import CONFIG as PRODUCTION_CONFIG, production_check
from ..registry import rule
from ..stack import Endpoint

NAME = "ha-endpoint-outage-floor"
CONFIG: dict[str, dict[str, Any]] = PRODUCTION_CONFIG


@rule(NAME,
      "In a production stack, an endpoint with readiness.onZoneNotReady unpublish keeps readiness.minReadyZones >= 2.",
      config=CONFIG)
@production_check(NAME)
def check(endpoint: Endpoint, reason: str, resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    if endpoint.facts is None:
        return []  # ha-endpoint-declared-facts / facts-known-at-preview say why
    readiness = endpoint.facts.readiness
    if readiness.on_zone_not_ready != "unpublish":
        return []
    found = predicates.min_ready_zones_problem(readiness.min_ready_zones, len(endpoint.facts.zones))
    if found is None:
        return []
    return [Violation(f"endpoint {endpoint.name} in a production stack ({reason}): {found}", endpoint.resource.urn)]

"""Say which declared facts were not known at preview, instead of passing silently.

A program may hand the component values it computes from resources of the same stack (a subnet created beside the
endpoint): at preview those are unknown, so the component's facts are too, and the other policies cannot judge the
endpoint until ``up``. The component checks the same rules itself (:mod:`ha_endpoint.core.predicates`) before it creates
any load balancer; this advisory names what the pack could not see.
"""

from __future__ import annotations

from typing import Any

from ..model import Violation, join
from ..registry import rule
from ..stack import endpoints

LISTED = 10


@rule("ha-endpoint-facts-known-at-preview",
      "The endpoint's declared facts are known at preview (else the pack names the ones it could not see).",
      enforcement="advisory", severity="low")
def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    found = []
    for endpoint in endpoints(resources):
        unknown = sorted(endpoint.declared.unknown)
        if not unknown:
            continue
        shown = join(unknown[:LISTED]) + (f" and {len(unknown) - LISTED} more" if len(unknown) > LISTED else "")
        found.append(Violation(
            f"endpoint {endpoint.name}: {len(unknown)} declared fact(s) are not known at preview ({shown}), so the "
            "pack cannot check this endpoint before `up`; the component checks the same rules before it creates any "
            "load balancer. Pass plain values (names or ids of existing resources) to have them judged at preview",
            endpoint.resource.urn))
    return found

"""Every pool of the endpoint has a health monitor.

Without a monitor Octavia never takes a dead member out of rotation, and a member's operating status stays
NO_MONITOR: the readiness gate can then only tell that it was provisioned, not that it serves.
"""

from __future__ import annotations

from typing import Any

from ha_endpoint import contract, predicates

from ..model import Violation
from ..stack import direct_dependencies, endpoints, props

NAME = "ha-endpoint-pool-health-monitor"
DESCRIPTION = "Every pool of the endpoint has a health monitor."
ENFORCEMENT = "mandatory"
SEVERITY = "high"
KIND = "stack"
CONFIG: dict[str, dict[str, Any]] = {}


def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    violations: list[Violation] = []
    for endpoint in endpoints(resources):
        monitors = endpoint.of_type(contract.MONITOR_TYPE)
        for pool in endpoint.of_type(contract.POOL_TYPE):
            watched = next((monitor for monitor in monitors if _monitors(monitor, pool)), None)
            if predicates.pool_monitored(watched):
                continue
            violations.append(Violation(
                f"pool {pool.name} has no health monitor: {predicates.MISSING_MONITOR}; give its listener a monitor "
                f"(listeners[].monitor, e.g. type TCP)", pool.urn))
    return violations


def _monitors(monitor: Any, pool: Any) -> bool:
    """The monitor watches the pool: its poolId depends on the pool (known at preview), or equals the pool's id."""
    if any(dependency is pool for dependency in direct_dependencies(monitor, "poolId")):
        return True
    pool_id = props(monitor).get("poolId")
    return isinstance(pool_id, str) and bool(pool_id) and pool_id == props(pool).get("id")

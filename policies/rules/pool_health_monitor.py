"""Every pool of the endpoint has a health monitor, and one Octavia accepts on that pool.

Without a monitor Octavia never takes a dead member out of rotation, and a member's operating status stays
NO_MONITOR: the readiness gate can then only tell that it was provisioned, not that it serves. A monitor Octavia
refuses (its type on the pool's protocol, a UDP-CONNECT delay under Octavia's least, a URL path or expected codes
Octavia's API does not take) fails the update in the middle: the Octavia backend's rules
(``ha_endpoint.backends.octavia.rules``) and the shared predicates say which, as for the component's validation.
"""

from __future__ import annotations

from typing import Any

from ha_endpoint.backends.octavia import rules as octavia
from ha_endpoint.core import contract, predicates
from ha_endpoint.core.args import expected_codes_problem

from ..model import Violation
from ..registry import rule
from ..stack import direct_dependencies, endpoints, props


@rule("ha-endpoint-pool-health-monitor", "Every pool of the endpoint has a health monitor.")
def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    violations: list[Violation] = []
    for endpoint in endpoints(resources):
        monitors = endpoint.of_type(contract.MONITOR_TYPE)
        for pool in endpoint.of_type(contract.POOL_TYPE):
            watched = next((monitor for monitor in monitors if _monitors(monitor, pool)), None)
            if watched is not None:
                violations.extend(_refused(watched, props(pool).get("protocol")))
                continue
            violations.append(Violation(
                f"pool {pool.name} has no health monitor: {octavia.MISSING_MONITOR}; give its listener a monitor "
                f"(listeners[].monitor, e.g. type TCP)", pool.urn))
    return violations


def _refused(monitor: Any, pool_protocol: Any) -> list[Violation]:
    """What Octavia refuses in ``monitor`` on a pool of ``pool_protocol`` (values unknown at preview are skipped)."""
    monitor_props = props(monitor)
    kind, delay = monitor_props.get("type"), monitor_props.get("delay")
    path, codes = monitor_props.get("urlPath"), monitor_props.get("expectedCodes")
    reasons = []
    if isinstance(kind, str) and isinstance(pool_protocol, str):
        reasons.append(octavia.monitor_pool_problem(kind, pool_protocol))
    if isinstance(kind, str) and isinstance(delay, (int, float)) and not isinstance(delay, bool):
        reasons.append(octavia.monitor_delay_problem(kind, int(delay)))
    if isinstance(path, str) and path:
        reasons.append(predicates.url_path_problem(path))
    if isinstance(codes, str) and codes:
        reasons.append(expected_codes_problem(codes))
    return [Violation(f"health monitor {monitor.name}: {reason}; fix listeners[].monitor", monitor.urn)
            for reason in reasons if reason]


def _monitors(monitor: Any, pool: Any) -> bool:
    """The monitor watches the pool: its poolId depends on the pool (known at preview), or equals the pool's id."""
    if any(dependency is pool for dependency in direct_dependencies(monitor, "poolId")):
        return True
    pool_id = props(monitor).get("poolId")
    return isinstance(pool_id, str) and bool(pool_id) and pool_id == props(pool).get("id")

"""Whether an endpoint is production: the stack's name or the endpoint's tags say so (one rule, several policies).

A stack is production when its name matches ``productionStackPattern`` (a regular expression), or when the endpoint
carries ``productionTag`` (``EndpointArgs.tags``: declared in its facts and put on every load balancer). Every policy
that is stricter in production takes these two settings (:data:`CONFIG`) and asks :func:`production_reason`.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, Iterable, Optional

from ha_endpoint.core import contract

from .model import Violation
from .stack import Endpoint, endpoints, props, stack_name

CONFIG: dict[str, dict[str, Any]] = {
    "productionStackPattern": {
        "type": "string", "default": "^prod(uction)?([-_.].*)?$",
        "description": "Regular expression; a stack whose name matches it is production.",
    },
    "productionTag": {
        "type": "string", "default": "production",
        "description": "A load balancer tag (EndpointArgs.tags) that marks the endpoint as production.",
    },
}


def config_problem(config: dict[str, Any], policy: str) -> Optional[Violation]:
    """A violation when ``productionStackPattern`` is not a regular expression (nothing could be judged)."""
    pattern = config.get("productionStackPattern")
    if not pattern:
        return None
    if not isinstance(pattern, str):
        return Violation(f"productionStackPattern {pattern!r} is not a string; fix the policy configuration of "
                         f"{policy}")
    try:
        re.compile(pattern)
    except re.error as error:
        return Violation(f"productionStackPattern '{pattern}' is not a regular expression ({error}); fix the policy "
                         f"configuration of {policy}")
    return None


def production_reason(endpoint: Endpoint, config: dict[str, Any]) -> Optional[str]:
    """Why ``endpoint`` is production (for the messages), or None when it is not. Call :func:`config_problem`
    first."""
    pattern = config.get("productionStackPattern")
    stack = stack_name(endpoint.resource.urn)
    if isinstance(pattern, str) and pattern and stack and re.search(pattern, stack):
        return f"stack '{stack}' matches productionStackPattern '{pattern}'"
    tag = config.get("productionTag")
    if isinstance(tag, str) and tag:
        tagged = endpoint.facts is not None and tag in endpoint.facts.tags
        for lb in endpoint.of_type(contract.LOADBALANCER_TYPE):
            tags = props(lb).get("tags")
            tagged = tagged or (isinstance(tags, list) and tag in tags)
        if tagged:
            return f"load balancers tagged '{tag}'"
    return None


Judge = Callable[[Endpoint, str, list[Any], dict[str, Any]], Iterable[Violation]]


def production_check(policy: str) -> Callable[[Judge], Callable[[list[Any], dict[str, Any]], list[Violation]]]:
    """Make a stack check of ``policy`` from ``judge(endpoint, reason, resources, config)``, which is asked about each
    production endpoint only (``reason`` says why it is production); a bad ``productionStackPattern`` is the one
    violation, since nothing can be judged."""

    def wrap(judge: Judge) -> Callable[[list[Any], dict[str, Any]], list[Violation]]:
        @functools.wraps(judge)
        def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
            problem = config_problem(config, policy)
            if problem is not None:
                return [problem]
            violations: list[Violation] = []
            for endpoint in endpoints(resources):
                reason = production_reason(endpoint, config)
                if reason is not None:
                    violations.extend(judge(endpoint, reason, resources, config))
            return violations
        return check
    return wrap

"""No listener of a production endpoint is open to the whole internet (0.0.0.0/0 or ::/0).

A production API endpoint (e.g. a Kubernetes API server) should admit the networks that use it, not everyone. A
stack is production when its name matches ``productionStackPattern`` or a load balancer of the endpoint carries the
``productionTag`` (EndpointArgs.tags puts tags on every load balancer).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from ha_endpoint import contract, predicates

from ..model import UNKNOWN, Violation
from ..stack import direct_dependencies, endpoints, props, stack_name

NAME = "ha-endpoint-production-listener-cidrs"
DESCRIPTION = "In a production stack no listener of the endpoint admits 0.0.0.0/0 (or ::/0)."
ENFORCEMENT = "mandatory"
SEVERITY = "high"
KIND = "stack"
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


def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    violations: list[Violation] = []
    pattern = config.get("productionStackPattern")
    if pattern:
        try:
            re.compile(pattern)
        except re.error as error:
            return [Violation(f"productionStackPattern '{pattern}' is not a regular expression ({error}); fix the "
                              f"policy configuration of {NAME}")]
    for endpoint in endpoints(resources):
        reason = _production_reason(endpoint, config)
        if reason is None:
            continue
        for listener in endpoint.of_type(contract.LISTENER_TYPE):
            cidrs = props(listener).get("allowedCidrs")
            if cidrs is UNKNOWN or (isinstance(cidrs, list) and UNKNOWN in cidrs):
                violations.append(Violation(
                    f"listener {listener.name}: its allowed CIDRs are unknown at preview, so an opening to the "
                    f"internet cannot be ruled out in a production stack ({reason}); pass allowedCidrs as plain "
                    f"values", listener.urn))
                continue
            for cidr in cidrs or []:
                if _everyone(cidr):
                    violations.append(Violation(
                        f"listener {listener.name} admits {cidr} in a production stack ({reason}); set "
                        f"allowedCidrs to the client networks that need the endpoint", listener.urn))
            if not cidrs and not _restricted_by_vip_group(endpoint):
                violations.append(Violation(
                    f"listener {listener.name} sets no allowed CIDRs, so it admits everyone, in a production stack "
                    f"({reason}); set allowedCidrs to the client networks that need the endpoint", listener.urn))
        group = endpoint.named(contract.vip_secgroup_name(endpoint.name), contract.SECGROUP_TYPE)
        for rule in _rules_of(endpoint, group):
            rule_props = props(rule)
            if str(rule_props.get("direction") or "").lower() != "ingress":
                continue
            prefix = rule_props.get("remoteIpPrefix")
            if _everyone(prefix) or (prefix in (None, "") and not rule_props.get("remoteGroupId")):
                violations.append(Violation(
                    f"security group rule {rule.name} opens the endpoint's VIPs to {prefix or 'everyone'} in a "
                    f"production stack ({reason}); set allowedCidrs to the client networks that need the endpoint",
                    rule.urn))
    return violations


def _production_reason(endpoint: Any, config: dict[str, Any]) -> Optional[str]:
    pattern = config.get("productionStackPattern")
    stack = stack_name(endpoint.resource.urn)
    if pattern and stack and re.search(pattern, stack):
        return f"stack '{stack}' matches productionStackPattern '{pattern}'"
    tag = config.get("productionTag")
    if tag:
        tagged = endpoint.facts is not None and tag in endpoint.facts.tags
        for lb in endpoint.of_type(contract.LOADBALANCER_TYPE):
            tags = props(lb).get("tags")
            tagged = tagged or (isinstance(tags, list) and tag in tags)
        if tagged:
            return f"load balancers tagged '{tag}'"
    return None


def _everyone(cidr: Any) -> bool:
    return predicates.admits_everyone(cidr)


def _rules_of(endpoint: Any, group: Any) -> list[Any]:
    if group is None:
        return []
    return [rule for rule in endpoint.of_type(contract.SECGROUP_RULE_TYPE)
            if any(dep is group for dep in direct_dependencies(rule, "securityGroupId")) or rule.parent is group]


def _restricted_by_vip_group(endpoint: Any) -> bool:
    group = endpoint.named(contract.vip_secgroup_name(endpoint.name), contract.SECGROUP_TYPE)
    return group is not None and bool(_rules_of(endpoint, group))

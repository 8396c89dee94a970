"""No listener of a production endpoint is open to the whole internet (0.0.0.0/0 or ::/0).

A production API endpoint (e.g. a Kubernetes API server) should admit the networks that use it, not everyone. A
stack is production when its name matches ``productionStackPattern`` or a load balancer of the endpoint carries the
``productionTag`` (EndpointArgs.tags puts tags on every load balancer).
"""

from __future__ import annotations

from typing import Any

from ha_endpoint.core import contract, predicates

from ..model import UNKNOWN, Violation
from ..production import CONFIG as PRODUCTION_CONFIG, production_check
from ..registry import rule
from ..stack import Endpoint, direct_dependencies, props

NAME = "ha-endpoint-production-listener-cidrs"
CONFIG: dict[str, dict[str, Any]] = PRODUCTION_CONFIG


@rule(NAME,
      "In a production stack no listener of the endpoint admits 0.0.0.0/0 (or ::/0).",
      config=CONFIG)
@production_check(NAME)
def check(endpoint: Endpoint, reason: str, resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    violations: list[Violation] = []
    for listener in endpoint.of_type(contract.LISTENER_TYPE):
        cidrs = props(listener).get("allowedCidrs")
        if cidrs is UNKNOWN or (isinstance(cidrs, list) and UNKNOWN in cidrs):
            violations.append(Violation(
                f"listener {listener.name}: its allowed CIDRs are unknown at preview, so an opening to the "
                f"internet cannot be ruled out in a production stack ({reason}); pass allowedCidrs as plain "
                f"values", listener.urn))
            continue
        if cidrs is not None and not isinstance(cidrs, list):
            violations.append(Violation(
                f"listener {listener.name}: its allowed CIDRs are {cidrs!r}, not a list of CIDRs, so an opening "
                f"to the internet cannot be ruled out in a production stack ({reason}); set allowedCidrs to the "
                f"client networks that need the endpoint", listener.urn))
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

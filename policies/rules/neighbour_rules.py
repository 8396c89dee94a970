"""In a production stack no rule declared beside the endpoint opens its VIP or members' security group to everyone.

A program may add its own ``openstack.networking.SecGroupRule`` to a security group the component built: to the VIP
group (which the component fills from ``allowedCidrs``) or to the members' group (which admits only the load
balancers' subnets). A rule admitting ``0.0.0.0/0`` or ``::/0`` (or any source: no remote prefix and no remote
group) there puts a production API endpoint, or the servers behind it, on the internet whatever ``allowedCidrs``
says. Production is decided as for ``ha-endpoint-production-listener-cidrs`` (:mod:`policies.production`).
"""

from __future__ import annotations

from typing import Any

from ha_endpoint.core import contract, predicates

from ..model import UNKNOWN, Violation, as_int
from ..neighbours import group_role, neighbours
from ..production import CONFIG as PRODUCTION_CONFIG, production_check
from ..registry import rule
from ..stack import Endpoint, props

NAME = "ha-endpoint-production-neighbour-rules"
CONFIG: dict[str, dict[str, Any]] = PRODUCTION_CONFIG

GROUPS = {
    "vip": ("the endpoint's VIP security group {group}",
            "admit only the client networks that need the endpoint (their CIDRs as remote_ip_prefix, or the "
            "endpoint's allowedCidrs)"),
    "members": ("the endpoint's members' security group {group} (the servers behind its load balancers)",
                "admit only the networks that need the members' ports (the endpoint already admits its load "
                "balancers' subnets)"),
}


@rule(NAME,
      "In a production stack no security-group rule declared beside the endpoint opens its VIP or members' "
               "group to 0.0.0.0/0 (or ::/0).",
      config=CONFIG)
@production_check(NAME)
def check(endpoint: Endpoint, reason: str, resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    violations: list[Violation] = []
    for rule in neighbours(resources, contract.SECGROUP_RULE_TYPE):
        role = group_role(endpoint, rule)
        opening = None if role is None else _opening(props(rule))
        if opening is None:
            continue
        where, fix = GROUPS[role[0]]
        violations.append(Violation(
            f"security group rule {rule.name} (declared beside endpoint {endpoint.name}) {opening} "
            f"{where.format(group=role[1])} in a production stack ({reason}); {fix}", rule.urn))
    return violations


def _opening(rule: dict[str, Any]) -> Any:
    """How the rule opens its group to everyone (the words of the message), or None when it does not."""
    prefix, remote_group = rule.get("remoteIpPrefix"), rule.get("remoteGroupId")
    if prefix is UNKNOWN:
        source = "a remote_ip_prefix not known at preview (an opening to the internet cannot be ruled out)"
    elif predicates.admits_everyone(prefix):
        source = str(prefix)
    elif prefix in (None, "") and remote_group in (None, ""):
        source = "everyone (no remote_ip_prefix nor remote_group_id)"
    else:
        return None
    direction = rule.get("direction")
    if direction is UNKNOWN:
        return f"may admit {_traffic(rule)} from {source} (its direction is not known at preview) into"
    if not isinstance(direction, str) or direction.lower() != "ingress":
        return None
    return f"admits {_traffic(rule)} from {source} into"


def _traffic(rule: dict[str, Any]) -> str:
    protocol = rule.get("protocol")
    protocol = protocol if isinstance(protocol, str) and protocol else "every protocol"
    low, high = as_int(rule.get("portRangeMin")), as_int(rule.get("portRangeMax"))
    if low and high and low != high:
        return f"{protocol} ports {low}-{high}"
    if low or high:
        return f"{protocol} port {low or high}"
    return protocol if protocol == "every protocol" else f"{protocol} on every port"

"""The members' security group admits every zone's VIP subnet on every member port and health-monitor port.

Octavia reaches members (and probes them) from the VIP subnet's side. A security group that leaves out one zone's
VIP subnet, or the monitor port, makes that zone's members look dead: the pool never goes ONLINE and the readiness
gate keeps the zone out of DNS (or, in bootstrap mode, DNS points at a zone that cannot serve).
"""

from __future__ import annotations

from typing import Any, Optional

from ha_endpoint.core import contract, predicates

from ..model import UNKNOWN, Violation, as_int
from ..registry import rule
from ..stack import direct_dependencies, judged, props


@rule("ha-endpoint-member-security-group",
      "The members' security group admits each zone's VIP subnet on every member and health-monitor port.")
def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    violations: list[Violation] = []
    for endpoint, facts in judged(resources):
        urn = endpoint.resource.urn
        group_name = contract.members_secgroup_name(endpoint.name)
        group = endpoint.named(group_name, contract.SECGROUP_TYPE)
        if group is None:
            violations.append(Violation(
                f"endpoint {endpoint.name} has no members' security group {group_name}; the load balancers' "
                f"traffic and health checks to the members depend on it: create it with a rule per zone VIP "
                f"subnet and port", urn))
            continue
        rules = [rule for rule in endpoint.of_type(contract.SECGROUP_RULE_TYPE) if _belongs(rule, group)]
        ports = _required_ports(endpoint)
        for key, zone in facts.zones.items():
            vip = facts.subnet(zone.vip_subnet_id)
            if vip is None:
                continue  # ha-endpoint-member-reachability names an undeclared subnet
            for (protocol, port), purposes in ports.items():
                if any(_admits(rule, protocol, port, vip.cidr) for rule in rules):
                    continue
                where = f"{protocol} port {port}" if port is not None else protocol
                violations.append(Violation(
                    f"the members' security group {group_name} does not admit zone {key}'s VIP subnet "
                    f"{vip.cidr} on {where} ({' and '.join(purposes)}); add an ingress rule for {where} from "
                    f"{vip.cidr}", group.urn))
    return violations


def _belongs(rule: Any, group: Any) -> bool:
    """A rule of ``group``: its securityGroupId depends on the group (known at preview), or equals its id."""
    if any(dependency is group for dependency in direct_dependencies(rule, "securityGroupId")):
        return True
    group_id = props(rule).get("securityGroupId")
    if isinstance(group_id, str) and group_id and group_id == props(group).get("id"):
        return True
    return rule.parent is group


def _required_ports(endpoint: Any) -> dict[tuple[str, Any], list[str]]:
    """(protocol, port) -> why it must be open: what the listeners need (the shared rule,
    :func:`ha_endpoint.core.predicates.member_rule_ports`), and the ports the registered members actually use."""
    ports = {key: list(reasons) for key, reasons in predicates.member_rule_ports(endpoint.facts.listeners).items()}
    for member in endpoint.of_type(contract.MEMBER_TYPE):
        member_props = props(member)
        port = as_int(member_props.get("protocolPort"))
        if port is not None and not any(key[1] == port for key in ports):
            ports[("tcp", port)] = [f"port of member {member.name}"]
        monitor_port = as_int(member_props.get("monitorPort"))
        # Octavia (and the provider's read-back) report an unset monitor port as 0: the member port is probed.
        if monitor_port and not any(key[1] == monitor_port for key in ports):
            ports[("tcp", monitor_port)] = [f"monitor port of member {member.name}"]
    return ports


def _admits(rule: Any, protocol: str, port: Any, cidr: str) -> bool:
    rule_props = props(rule)
    if str(rule_props.get("direction") or "").lower() != "ingress":
        return False
    rule_protocol = rule_props.get("protocol")
    if rule_protocol is UNKNOWN:
        rule_protocol = None
    if not rule_props.get("remoteIpPrefix") and rule_props.get("remoteGroupId"):
        return False  # admits a group's ports, not the load balancers' subnet
    return predicates.rule_admits(rule_protocol, as_int(rule_props.get("portRangeMin")),
                                  as_int(rule_props.get("portRangeMax")), rule_props.get("remoteIpPrefix"),
                                  protocol, port, cidr)

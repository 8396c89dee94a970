"""The members' security group admits every zone's VIP subnet on every member port and health-monitor port.

Octavia reaches members (and probes them) from the VIP subnet's side. A security group that leaves out one zone's
VIP subnet, or the monitor port, makes that zone's members look dead: the pool never goes ONLINE and the readiness
gate keeps the zone out of DNS (or, in bootstrap mode, DNS points at a zone that cannot serve).
"""

from __future__ import annotations

from typing import Any, Optional

from ha_endpoint import contract

from ..facts import gap
from ..model import UNKNOWN, Violation, as_int, missing, network
from ..stack import direct_dependencies, endpoints, props

NAME = "ha-endpoint-member-security-group"
DESCRIPTION = "The members' security group admits each zone's VIP subnet on every member and health-monitor port."
ENFORCEMENT = "mandatory"
SEVERITY = "high"
KIND = "stack"
CONFIG: dict[str, dict[str, Any]] = {}

_ANY_PROTOCOL = (None, "", "any", UNKNOWN)


def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    violations: list[Violation] = []
    for endpoint in endpoints(resources):
        urn = endpoint.resource.urn
        facts = endpoint.facts
        if not facts.listeners_declared:
            violations.append(Violation(gap(endpoint.name, "listeners", "the listeners and their ports"), urn))
            continue
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
            cidr = network(zone.subnet_cidr)
            if missing(zone.subnet_cidr) or cidr is None:
                violations.append(Violation(gap(endpoint.name, f"zones.{key}.subnetCidr",
                                                f"the CIDR of zone {key}'s VIP subnet"), urn))
                continue
            for (protocol, port), purposes in ports.items():
                if any(_admits(rule, protocol, port, cidr) for rule in rules):
                    continue
                violations.append(Violation(
                    f"the members' security group {group_name} does not admit zone {key}'s VIP subnet "
                    f"{zone.subnet_cidr} on {protocol} port {port} ({' and '.join(purposes)}); add an ingress rule "
                    f"for {protocol} port {port} from {zone.subnet_cidr}", group.urn))
    return violations


def _belongs(rule: Any, group: Any) -> bool:
    """A rule of ``group``: its securityGroupId depends on the group (known at preview), or equals its id."""
    if any(dependency is group for dependency in direct_dependencies(rule, "securityGroupId")):
        return True
    group_id = props(rule).get("securityGroupId")
    if isinstance(group_id, str) and group_id and group_id == props(group).get("id"):
        return True
    return rule.parent is group


def _required_ports(endpoint: Any) -> dict[tuple[str, int], list[str]]:
    """(protocol, port) -> why it must be open: each listener's member port and monitor port, and the ports the
    registered members actually use."""
    ports: dict[tuple[str, int], list[str]] = {}

    def need(protocol: str, port: Optional[int], purpose: str) -> None:
        if port is None:
            return
        reasons = ports.setdefault((protocol, port), [])
        if purpose not in reasons:
            reasons.append(purpose)

    for listener in endpoint.facts.listeners:
        protocol = "udp" if str(listener.protocol).upper() == "UDP" else "tcp"
        need(protocol, as_int(listener.member_port), f"member port of listener {listener.port}")
        if listener.monitor_type:
            monitor_protocol = "udp" if str(listener.monitor_type).upper() == "UDP-CONNECT" else "tcp"
            need(monitor_protocol, as_int(listener.monitor_port), f"health-monitor port of listener {listener.port}")
    for member in endpoint.of_type(contract.MEMBER_TYPE):
        member_props = props(member)
        port = as_int(member_props.get("protocolPort"))
        if port is not None and not any(key[1] == port for key in ports):
            need("tcp", port, f"port of member {member.name}")
        monitor_port = as_int(member_props.get("monitorPort"))
        # Octavia (and the provider's read-back) report an unset monitor port as 0: the member port is probed.
        if monitor_port and not any(key[1] == monitor_port for key in ports):
            need("tcp", monitor_port, f"monitor port of member {member.name}")
    return ports


def _admits(rule: Any, protocol: str, port: int, cidr: Any) -> bool:
    rule_props = props(rule)
    if str(rule_props.get("direction") or "").lower() != "ingress":
        return False
    rule_protocol = rule_props.get("protocol")
    if rule_protocol not in _ANY_PROTOCOL and str(rule_protocol).lower() != protocol:
        return False
    low, high = as_int(rule_props.get("portRangeMin")), as_int(rule_props.get("portRangeMax"))
    if low is not None and low > 0 and port < low:
        return False
    if high is not None and high > 0 and port > high:
        return False
    prefix = rule_props.get("remoteIpPrefix")
    if prefix in (None, "") and not rule_props.get("remoteGroupId"):
        return True  # no remote restriction: any source
    remote = network(prefix)
    return remote is not None and remote.version == cidr.version and cidr.subnet_of(remote)

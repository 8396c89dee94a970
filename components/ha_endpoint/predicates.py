"""The rules of an HA endpoint that both sides decide: the component's validation and plan, and the policy pack.

Each rule is said here once and both sides call it; neither writes its own copy (the copies diverged once: the plan
opened ``sctp`` rules for an SCTP listener while the pack looked for ``udp``-else-``tcp``). Pure: the standard library
only, importable without Pulumi's resource machinery (the pack imports it inside the analyzer).

What is here: address-in-subnet and member reachability (same network, or a shared router); the protocol -> security
group rule mapping and the ports the members' group must open; whether a rule admits a source; monitor/pool protocol
compatibility (as Octavia's API checks it); the OVN provider's limits; pools without a monitor; DNS name rules
(as Designate checks them).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Iterable, Optional, Protocol

# -- protocols -----------------------------------------------------------------------------------------------------

POOL_PROTOCOL = {"TCP": "TCP", "UDP": "UDP", "SCTP": "SCTP", "HTTP": "HTTP", "HTTPS": "HTTPS",
                 "TERMINATED_HTTPS": "HTTP"}
"""Listener protocol -> the protocol of its pool (TLS terminated at the load balancer reaches members as HTTP)."""

LISTENER_RULE_PROTOCOL = {"TCP": "tcp", "HTTP": "tcp", "HTTPS": "tcp", "TERMINATED_HTTPS": "tcp", "UDP": "udp",
                          "SCTP": "sctp"}
"""Listener protocol -> the IP protocol of the security-group rules that admit its traffic (VIP and members)."""

MONITOR_RULE_PROTOCOL = {"TCP": "tcp", "HTTP": "tcp", "HTTPS": "tcp", "TLS-HELLO": "tcp", "UDP-CONNECT": "udp",
                         "SCTP": "sctp", "PING": "icmp"}
"""Health-monitor type -> the IP protocol its probes use (the members' group must admit it)."""

DATAGRAM_POOL_PROTOCOLS = ("UDP", "SCTP")
DATAGRAM_MONITOR_TYPES = ("UDP-CONNECT", "SCTP", "TCP", "HTTP")
"""Octavia's API: pools of UDP or SCTP take only these monitor types; UDP-CONNECT and SCTP monitors only such pools."""

PROVIDER_MONITOR_TYPES = ("TCP", "UDP-CONNECT", "HTTP", "HTTPS", "TLS-HELLO", "PING")
"""The monitor types the OpenStack provider this project runs accepts (terraform-provider-openstack v1.54.1, under
pulumi-openstack 3.15.1: its schema refuses SCTP at preview, though Octavia has SCTP monitors since Wallaby)."""

UDP_CONNECT_MIN_DELAY = 3
"""Octavia's default ``[api_settings] udp_connect_min_interval_health_monitor``: the least delay of a UDP-CONNECT
monitor."""


def listener_rule_protocol(listener_protocol: str) -> str:
    """The security-group rule protocol that admits a listener's traffic (``SCTP`` -> ``sctp``, ``HTTPS`` -> ``tcp``)."""
    return LISTENER_RULE_PROTOCOL[str(listener_protocol).upper()]


def monitor_rule_protocol(monitor_type: str) -> str:
    """The security-group rule protocol a health monitor's probes use (``UDP-CONNECT`` -> ``udp``)."""
    return MONITOR_RULE_PROTOCOL[str(monitor_type).upper()]


def monitor_pool_problem(monitor_type: str, pool_protocol: str) -> Optional[str]:
    """Why Octavia (or the provider in front of it) refuses a monitor of ``monitor_type`` on a pool of
    ``pool_protocol``, or None when it accepts it."""
    kind, protocol = str(monitor_type).upper(), str(pool_protocol).upper()
    if kind not in PROVIDER_MONITOR_TYPES:
        usable = [t for t in DATAGRAM_MONITOR_TYPES if t in PROVIDER_MONITOR_TYPES] \
            if protocol in DATAGRAM_POOL_PROTOCOLS else ["TCP", "HTTP", "HTTPS", "TLS-HELLO"]
        return (f"the OpenStack provider (terraform-provider-openstack 1.54) cannot create {kind} health monitors; "
                f"a {protocol} pool can use {', '.join(usable)}")
    if protocol in DATAGRAM_POOL_PROTOCOLS and kind not in DATAGRAM_MONITOR_TYPES:
        return (f"a {protocol} pool takes only {', '.join(DATAGRAM_MONITOR_TYPES)} health monitors, not {kind}")
    if protocol not in DATAGRAM_POOL_PROTOCOLS and kind in ("UDP-CONNECT", "SCTP"):
        return f"a {kind} health monitor works only on UDP or SCTP pools, not on a {protocol} pool"
    return None


MISSING_MONITOR = ("without a health monitor Octavia cannot take a dead member out of rotation and a member reports "
                   "NO_MONITOR, which says nothing about whether it serves, so readiness would be blind")
"""Why every pool needs a health monitor: validation refuses ``monitor: null`` and the pack a pool without one."""


def pool_monitored(monitor: object) -> bool:
    """Whether a pool has the health monitor every pool of the endpoint needs (see :data:`MISSING_MONITOR`)."""
    return monitor is not None


# -- the OVN provider ----------------------------------------------------------------------------------------------

OVN_PROTOCOLS = ("TCP", "UDP", "SCTP")
OVN_MONITOR_TYPES = ("TCP", "UDP-CONNECT", "SCTP")
OVN_METHOD = "SOURCE_IP_PORT"


def ovn_protocol_allowed(protocol: str) -> bool:
    """Whether Octavia's OVN provider serves listeners and pools of ``protocol``."""
    return str(protocol).upper() in OVN_PROTOCOLS


def ovn_monitor_allowed(monitor_type: str) -> bool:
    """Whether Octavia's OVN provider has health monitors of ``monitor_type``."""
    return str(monitor_type).upper() in OVN_MONITOR_TYPES


def ovn_method_allowed(lb_method: Optional[str]) -> bool:
    """Whether Octavia's OVN provider balances with ``lb_method`` (None: the provider's default)."""
    return lb_method is None or str(lb_method).upper() == OVN_METHOD


def is_ovn(provider: Optional[str]) -> bool:
    return str(provider or "").lower() == "ovn"


# -- addresses and reachability --------------------------------------------------------------------------------------

def parse_network(cidr: object) -> Optional[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """``cidr`` as a network (host bits allowed), or None when it is not one."""
    if not isinstance(cidr, str):
        return None
    try:
        return ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return None


def parse_address(address: object) -> Optional[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    if not isinstance(address, str):
        return None
    try:
        return ipaddress.ip_address(address.strip())
    except ValueError:
        return None


def address_in_subnet(address: str, cidr: str) -> bool:
    """Whether ``address`` lies inside the subnet ``cidr`` (same IP version, inside the prefix)."""
    ip, network = parse_address(address), parse_network(cidr)
    return ip is not None and network is not None and ip.version == network.version and ip in network


def subnets_reach(network_a: str, routers_a: Iterable[str], network_b: str, routers_b: Iterable[str]) -> bool:
    """Whether traffic flows between two subnets: the same network, or both attached to one router. A load balancer
    reaches (and probes) a member only so."""
    return network_a == network_b or bool(set(routers_a) & set(routers_b))


# -- security groups -------------------------------------------------------------------------------------------------

class MonitoredListener:
    """Mixin for a listener with an optional ``monitor`` (having ``type`` and ``port``): the two facts the security
    rules read. The plan's listeners and the declared facts' listeners both use it."""

    monitor: object

    @property
    def monitor_type(self) -> Optional[str]:
        return getattr(self.monitor, "type", None) if self.monitor is not None else None

    @property
    def monitor_port(self) -> Optional[int]:
        return getattr(self.monitor, "port", None) if self.monitor is not None else None


class ListenerPorts(Protocol):
    """What the members' security group needs to know of a listener (the plan's and the facts' listeners are both)."""

    port: int
    member_port: int
    protocol: str

    @property
    def monitor_type(self) -> Optional[str]: ...

    @property
    def monitor_port(self) -> Optional[int]: ...


def member_rule_ports(listeners: Iterable[ListenerPorts]) -> dict[tuple[str, Optional[int]], list[str]]:
    """(rule protocol, port) -> why the members' security group must admit it from every load balancer's subnet: each
    listener's member port (in the listener's protocol) and its health monitor's port (in the monitor's protocol;
    ``None`` for ICMP, which has no port). Sorted by protocol and port."""
    needed: dict[tuple[str, Optional[int]], list[str]] = {}

    def need(protocol: str, port: Optional[int], purpose: str) -> None:
        reasons = needed.setdefault((protocol, port), [])
        if purpose not in reasons:
            reasons.append(purpose)

    for listener in sorted(listeners, key=lambda item: item.port):
        need(listener_rule_protocol(listener.protocol), listener.member_port,
             f"member port of listener {listener.port}")
        if listener.monitor_type:
            protocol = monitor_rule_protocol(listener.monitor_type)
            port = None if protocol == "icmp" else (listener.monitor_port or listener.member_port)
            need(protocol, port, f"health-monitor port of listener {listener.port}")
    return dict(sorted(needed.items(), key=lambda item: (item[0][0], item[0][1] or 0)))


def rule_admits(rule_protocol: Optional[str], port_min: Optional[int], port_max: Optional[int],
                remote_prefix: Optional[str], protocol: str, port: Optional[int], source_cidr: str) -> bool:
    """Whether an ingress rule (``rule_protocol`` None/""/"any" = every protocol; a port bound of None or 0 = open;
    ``remote_prefix`` None/"" = any source) admits ``protocol`` on ``port`` from every address of ``source_cidr``."""
    if rule_protocol not in (None, "", "any") and str(rule_protocol).lower() != protocol:
        return False
    if port is not None:
        if port_min and port < port_min:
            return False
        if port_max and port > port_max:
            return False
    if not remote_prefix:
        return True
    remote, source = parse_network(remote_prefix), parse_network(source_cidr)
    return remote is not None and source is not None and remote.version == source.version and \
        source.subnet_of(remote)


def admits_everyone(cidr: object) -> bool:
    """Whether a CIDR is the whole internet (``0.0.0.0/0`` or ``::/0``)."""
    network = parse_network(cidr)
    return network is not None and network.prefixlen == 0


# -- DNS names (Designate) ---------------------------------------------------------------------------------------------

DNS_LABEL = re.compile(r"^(?!-)[A-Za-z0-9_-]{1,63}(?<!-)$")
"""A label as Designate accepts it in a record name: 1-63 letters, digits, '-' or '_', not starting or ending with
'-'."""
DNS_NAME_MAX = 253


def dns_name_problem(fqdn: str) -> Optional[str]:
    """Why Designate refuses ``fqdn`` (fully qualified, trailing dot) as a record name, or None."""
    name = fqdn[:-1] if fqdn.endswith(".") else fqdn
    if len(name) > DNS_NAME_MAX:
        return f"'{fqdn}' is {len(name)} characters long; a DNS name may have at most {DNS_NAME_MAX}"
    for label in name.split("."):
        if len(label) > 63:
            return f"label '{label}' of '{fqdn}' is {len(label)} characters long; a DNS label may have at most 63"
        if not DNS_LABEL.match(label):
            return (f"label '{label}' of '{fqdn}' is not a valid DNS label: use letters, digits and '-' (not at the "
                    "start or end)")
    return None


# -- surviving the loss of an availability zone ---------------------------------------------------------------------

@dataclass(frozen=True)
class RouterView:
    """A router as the AZ-loss rule sees it."""

    id: str
    name: str
    az_hints: tuple[str, ...] = ()
    ha: bool = False
    distributed: bool = False
    external_network_id: Optional[str] = None


@dataclass(frozen=True)
class SubnetPath:
    """A subnet's network and the routers with an interface on it."""

    network_id: str
    router_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class AzFinding:
    """One way a zone would go down with another AZ: ``mandatory`` findings are refused by default."""

    rule: str
    subject: str
    zones: tuple[str, ...]
    mandatory: bool
    message: str


def zone_routers(vip: SubnetPath, members: Iterable[SubnetPath], floating_network_id: Optional[str],
                 routers: dict[str, RouterView]) -> tuple[str, ...]:
    """The routers a zone depends on: the one of its VIP subnet that holds the floating network's gateway (its
    floating IP's NAT), and those joining its VIP subnet to a member subnet on another network."""
    needed = set()
    if floating_network_id:
        needed |= {router for router in vip.router_ids
                   if router in routers and routers[router].external_network_id == floating_network_id}
    for member in members:
        if member.network_id != vip.network_id:
            needed |= set(vip.router_ids) & set(member.router_ids)
    return tuple(sorted(needed))


def az_loss_findings(zone_azs: dict[str, str], zone_deps: dict[str, tuple[str, ...]],
                     routers: dict[str, RouterView], vip_networks: dict[str, tuple[str, str, tuple[str, ...]]]
                     ) -> list[AzFinding]:
    """For each pair of zones A and B: does zone A still serve when AZ B is lost? ``zone_azs``: zone -> its AZ;
    ``zone_deps``: zone -> the routers it depends on (:func:`zone_routers`); ``vip_networks``: zone -> (network id,
    name, AZ hints) of its VIP subnet. Mandatory by default: a router every zone depends on that its hints pin to one
    AZ, and a VIP network hinted to other AZs only."""
    findings: list[AzFinding] = []
    everyone = set(zone_azs)
    for router_id in sorted({r for deps in zone_deps.values() for r in deps}):
        router = routers.get(router_id)
        if router is None:
            continue
        dependents = tuple(sorted(zone for zone, deps in zone_deps.items() if router_id in deps))
        hints = set(router.az_hints)
        stranded = tuple(zone for zone in dependents if hints and zone_azs[zone] not in hints)
        if stranded:
            where = ", ".join(sorted(hints))
            findings.append(AzFinding(
                "router-pinned", router.name, stranded,
                mandatory=set(dependents) == everyone and len(hints) == 1,
                message=f"router {router.name} ({router.id}) is hinted to {where} only, but zone(s) "
                        f"{', '.join(dependents)} depend on it (its floating IPs' gateway or the path to their "
                        f"members): losing {where} takes zone(s) {', '.join(stranded)} down with it; hint it to every "
                        f"zone's AZ and make it HA or distributed, or give each zone its own router in its own AZ"))
        if len(dependents) > 1 and not (router.ha or router.distributed):
            findings.append(AzFinding(
                "router-single-agent", router.name, dependents, mandatory=False,
                message=f"router {router.name} ({router.id}) is shared by zones {', '.join(dependents)} and is "
                        "neither HA nor distributed, so Neutron runs it on one L3 agent in one AZ whatever its hints "
                        "say: losing that AZ takes all of them down; make it HA (openstack router set --ha) or "
                        "distributed, or give each zone its own router in its own AZ"))
    for zone, (network_id, name, hints) in sorted(vip_networks.items()):
        if hints and zone_azs[zone] not in hints:
            findings.append(AzFinding(
                "vip-network-elsewhere", name, (zone,), mandatory=True,
                message=f"zone {zone}'s VIP network {name} ({network_id}) is hinted to {', '.join(hints)} only, not "
                        f"to {zone_azs[zone]}: its DHCP and ports live outside the zone's AZ; hint the network to "
                        f"{zone_azs[zone]} too, or give the zone a subnet on a network of its own AZ"))
    if routers and not any(router.az_hints for router in routers.values()) and \
            not any(hints for _, _, hints in vip_networks.values()):
        findings.append(AzFinding(
            "no-az-information", "cloud", tuple(sorted(everyone)), mandatory=False,
            message="the cloud reports no availability-zone hints for the endpoint's routers and VIP networks (the "
                    "router_availability_zone / network_availability_zone extensions are absent, or no hints are "
                    "set), so whether each zone survives the loss of another AZ could not be checked"))
    return findings

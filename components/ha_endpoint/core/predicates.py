"""The rules of an HA endpoint that both sides decide: the component's validation and plan, and the policy pack.

Each rule is said here once and both sides call it; neither writes its own copy (the copies diverged once: the plan
opened ``sctp`` rules for an SCTP listener while the pack looked for ``udp``-else-``tcp``). Pure: the standard library
only, importable without Pulumi's resource machinery (the pack imports it inside the analyzer).

What is here: address-in-subnet and member reachability (same network, or a shared router); the protocol -> security
group rule mapping and the ports the members' group must open; whether a rule admits a source; a monitor's URL path,
which listeners take a TLS certificate and the addresses a member may not have; which listeners take the listener
timeouts; DNS name rules (as Designate checks them); what a Neutron id looks like. A backend's own rules are its
folder's (the Octavia backend's, which the pack decides too: :mod:`ha_endpoint.backends.octavia.rules`), and a field's
own rule that pydantic runs is :mod:`ha_endpoint.core.args`'.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Iterable, Mapping, Optional, Protocol, Sequence

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

_PATH_CHARACTERS = re.compile(r"^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*$")
"""The characters of an RFC 3986 path: unreserved, sub-delimiters, ':', '@', '/' and percent-encoded octets."""


def listener_rule_protocol(listener_protocol: str) -> str:
    """The security-group rule protocol that admits a listener's traffic (``SCTP`` -> ``sctp``, ``HTTPS`` -> ``tcp``)."""
    return LISTENER_RULE_PROTOCOL[str(listener_protocol).upper()]


def monitor_rule_protocol(monitor_type: str) -> str:
    """The security-group rule protocol a health monitor's probes use (``UDP-CONNECT`` -> ``udp``)."""
    return MONITOR_RULE_PROTOCOL[str(monitor_type).upper()]


def url_path_problem(path: str) -> Optional[str]:
    """Why Octavia refuses ``path`` as an HTTP(S) monitor's URL path, or None: an absolute path (a query may follow)
    without scheme, host or port, without whitespace, in the characters of an RFC 3986 path."""
    if re.search(r"\s", path):
        return f"'{path}' contains whitespace; write a space as %20"
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", path) or path.startswith("//"):
        return f"'{path}' is a URL with a scheme or host; give only its path, e.g. '/healthz'"
    if not path.startswith("/"):
        return f"'{path}' does not start with '/'; write e.g. '/{path}'"
    bare = re.split(r"[?#]", path, maxsplit=1)[0]
    if not _PATH_CHARACTERS.match(bare):
        bad = sorted({char for char in re.sub(r"%[0-9A-Fa-f]{2}", "", bare)
                      if not _PATH_CHARACTERS.match(char)})
        return (f"'{path}' has characters a URL path cannot hold ({' '.join(bad)}); percent-encode them "
                "(e.g. %25 for '%')")
    return None


TLS_TERMINATING_PROTOCOLS = ("TERMINATED_HTTPS",)
"""Listener protocols that terminate TLS at the load balancer: they need a certificate; every other protocol refuses
one (Octavia's rule, and the OpenStack provider's)."""


def certificate_problem(protocol: str, has_certificate: bool, why_needed: str) -> Optional[str]:
    """Why a listener of ``protocol`` with (or without) a TLS certificate reference is refused, or None;
    ``why_needed``: why one that terminates TLS needs a certificate, in the backend's words
    (:attr:`ha_endpoint.core.checks.Rules.needs_certificate`)."""
    terminates = str(protocol).upper() in TLS_TERMINATING_PROTOCOLS
    if terminates and not has_certificate:
        return f"a TERMINATED_HTTPS listener needs the certificate it serves: {why_needed}"
    if has_certificate and not terminates:
        return (f"a listener of protocol {str(protocol).upper()} takes no certificate (only TERMINATED_HTTPS "
                "terminates TLS at the load balancer)")
    return None


# -- the OVN provider (its limits are the Octavia backend's rules: ha_endpoint.backends.octavia.rules) -----------

OVN_METHOD = "SOURCE_IP_PORT"
"""The only balancing method of Octavia's OVN provider (a pool's default under ovn)."""


def is_ovn(provider: Optional[str]) -> bool:
    return str(provider or "").lower() == "ovn"


def drains_admin_down(provider: Optional[str]) -> bool:
    """Whether a member's drain (its ``MemberDrain``) also sets the member administratively down.

    Under ``ovn`` a member's weight does nothing (ovn-octavia-provider 3.1.2 keeps a weight-0 member among the OVN load
    balancer's backends: it got new connections until it was deleted); an admin-down member the provider takes out of
    them (it rewrites the load balancer's VIPs without it, and Octavia lists the member OFFLINE). Other providers
    (amphora) stop sending new connections at weight 0 and the member stays up. The provider then overwrites the
    member's OFFLINE with ERROR (OVN dropped its health check) and its next rewrite of the backends takes it back: the
    drain watches the member through its grace and drains it again (:mod:`ha_endpoint.gates.held_out`)."""
    return is_ovn(provider)


TAKEN_OUT = "enabled: false or weight: 0"
"""How a configuration takes a member out (:func:`member_in_service`), as messages name it."""


def member_in_service(enabled: object = True, weight: object = 1) -> bool:
    """Whether a member serves new connections and counts as its zone's capacity: not taken out, i.e. neither
    ``enabled: false`` (Octavia's ``admin_state_up`` false) nor at weight 0, which means the same. A taken-out member
    stays registered with its pool, administratively down on every provider (the ovn provider ignores the weight:
    :func:`drains_admin_down`; amphora stops sending new connections to an admin-down member as it does at weight 0),
    is not waited for by a readiness gate, and does not count toward a zone's members: a zone whose only members are
    taken out has no capacity (the component's validation and the pack's ``ha-endpoint-member-zones`` both ask this).
    ``None`` (not given) is the default: in service."""
    return enabled is not False and not (weight == 0 and not isinstance(weight, bool))


def pins_availability_zone(provider: Optional[str]) -> bool:
    """Whether a load balancer of ``provider`` is pinned to its zone's Octavia availability zone. Not under ovn:
    Octavia refuses an AZ on its load balancers (501 "This provider does not support validating availability
    zones"); their flows exist on every chassis, and a zone's traffic leaves through the gateway chassis of its VIP
    subnet's router, which the router's AZ hints place (ha-endpoint-az-independence)."""
    return not is_ovn(provider)


# -- listener timeouts (long-lived API connections) ------------------------------------------------------------------

TIMEOUT_KEYS = (("timeout_client_data", "timeoutClientData"), ("timeout_member_data", "timeoutMemberData"),
                ("timeout_member_connect", "timeoutMemberConnect"), ("timeout_tcp_inspect", "timeoutTcpInspect"))
"""A listener's timeouts: (Python name, configuration key); the pulumi-openstack ``Listener`` takes the same names."""

DATA_TIMEOUT_KEYS = ("timeoutClientData", "timeoutMemberData")
"""The two idle timeouts of a proxied connection (client side, member side): either cuts an idle stream."""

LISTENER_TIMEOUT_MAX = 24 * 24 * 60 * 60 * 1000
"""Octavia's API bound on a listener's timeouts: 24 days in milliseconds (2073600000)."""

WATCH_IDLE_MS = 3_600_000
"""How long a Kubernetes API connection may stay idle, in milliseconds: kube-apiserver ends a watch after a random
time in [minRequestTimeout, 2 x minRequestTimeout), 30 to 60 minutes at its default --min-request-timeout=1800, and
an idle watch (``kubectl get --watch``, an informer on a quiet resource), ``kubectl logs -f`` or ``exec`` sends
nothing in between (TCP keepalives are not data to a proxy). The amphora's default data timeouts (one hour), and the
least the pack admits in production (``minDataTimeoutMs``). OpenShift's Kuryr set the same hour on its API load
balancer for the same reason."""

PROXIED_PROTOCOLS = ("TCP", "HTTP", "HTTPS", "TERMINATED_HTTPS")
"""Listener protocols an amphora serves with HAProxy, whose ``timeout client``/``server``/``connect`` and
``tcp-request inspect-delay`` are the listener's timeouts. UDP and SCTP it serves with LVS, which has none of
them."""


def listener_timeouts_apply(provider: Optional[str], protocol: str) -> bool:
    """Whether a listener of ``protocol`` under ``provider`` takes the listener timeouts (and so their defaults): an
    amphora listener HAProxy serves (:data:`PROXIED_PROTOCOLS`); the ovn provider ignores them (why, in the Octavia
    backend's words: :func:`ha_endpoint.backends.octavia.rules.listener_timeouts_problem`)."""
    return not is_ovn(provider) and str(protocol).upper() in PROXIED_PROTOCOLS


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


def member_address_problem(address: str, cidr: str, gateway_ip: Optional[str] = None,
                           reserved: Mapping[str, str] = MappingProxyType({})) -> Optional[str]:
    """Why ``address`` (inside the subnet ``cidr``, whose gateway is ``gateway_ip``) cannot be a member's address, or
    None: an address the backend reserves (``reserved``: address -> what it is, e.g. Octavia's metadata service:
    :attr:`ha_endpoint.core.checks.Rules.reserved_addresses`), the subnet's network address, its broadcast address
    (IPv4 prefixes up to /30), or its gateway. No server holds such an address: the member would never answer."""
    ip, network = parse_address(address), parse_network(cidr)
    if ip is None or network is None or ip.version != network.version or ip not in network:
        return None
    if str(ip) in reserved:
        return f"{ip} is {reserved[str(ip)]}"
    if ip == network.network_address and (network.version == 6 or network.prefixlen < 31):
        return f"{ip} is the network address of {network}, not a server's"
    if network.version == 4 and network.prefixlen < 31 and ip == network.broadcast_address:
        return f"{ip} is the broadcast address of {network}, not a server's"
    gateway = parse_address(gateway_ip)
    if gateway is not None and ip == gateway:
        return f"{ip} is the gateway of the subnet (its router's address), not a server's"
    return None


def ip_version_problem(cidr: str, vip_version: int, vip: str = "the VIP") -> Optional[str]:
    """Why Octavia refuses ``cidr`` in a listener's allowed CIDRs when its load balancer's VIP (``vip`` says which) is
    of IP version ``vip_version``, or None: every allowed CIDR must be of the VIP's version."""
    network = parse_network(cidr)
    if network is None or network.version == vip_version:
        return None
    return f"{cidr} is an IPv{network.version} network, but {vip} is IPv{vip_version}"


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


def client_rule_ports(listeners: Iterable[ListenerPorts]) -> list[tuple[str, int]]:
    """(rule protocol, member port) of each listener, sorted: what a member's group must admit from the clients
    themselves when the load balancer forwards their packets unproxied (the ovn provider)."""
    return sorted({(listener_rule_protocol(listener.protocol), listener.member_port) for listener in listeners})


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
'-' (Designate's ``RE_HOSTNAME``, which also takes ``*`` as the first label of a wildcard record)."""
DNS_NAME_MAX = 253


def dns_name_problem(fqdn: str) -> Optional[str]:
    """Why Designate refuses ``fqdn`` (fully qualified, trailing dot) as a record name, or None."""
    name = fqdn[:-1] if fqdn.endswith(".") else fqdn
    if len(name) > DNS_NAME_MAX:
        return f"the name is {len(name)} characters long; a DNS name may have at most {DNS_NAME_MAX}"
    for position, label in enumerate(name.split(".")):
        if position == 0 and label == "*":
            continue
        if len(label) > 63:
            return f"its label '{label}' is {len(label)} characters long; a DNS label may have at most 63"
        if not DNS_LABEL.match(label):
            return (f"its label '{label}' is not a DNS label (letters, digits, '-' and '_' only, no '-' at either "
                    "end, not empty)")
    return None


def zone_record_names(record: str, dns_zone: str, azs: Iterable[str], per_zone: bool) -> list[tuple[str, str]]:
    """The record names the endpoint publishes, as ``(what, fqdn)``: ``record.dns_zone`` and, with per-zone records,
    ``record-az.dns_zone`` for each AZ (``dns_zone`` fully qualified, with its trailing dot)."""
    zone = dns_zone if dns_zone.endswith(".") else dns_zone + "."
    names = [("the endpoint's record", f"{record}.{zone}")]
    if per_zone:
        names += [(f"zone {az}'s record", f"{record}-{az}.{zone}") for az in azs]
    return names


# -- ids -------------------------------------------------------------------------------------------------------------

_UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")


def is_uuid(value: object) -> bool:
    """Whether ``value`` looks like an OpenStack id (a UUID, with or without its dashes)."""
    return isinstance(value, str) and bool(_UUID.match(value))


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


class SubnetPath(Protocol):
    """What the AZ-loss rule reads of a subnet: its network and the routers with an interface on it (the facts'
    subnets are read as they are: :class:`ha_endpoint.core.facts.SubnetFact`)."""

    network_id: str
    router_ids: Sequence[str]


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


def min_ready_zones(configured: Optional[int], zone_count: int) -> int:
    """The floor of ready zones an update with ``onZoneNotReady: unpublish`` keeps: the configured one, else every
    zone but one (one AZ lost during an update), at least 1 (Designate refuses an empty record)."""
    return configured if configured is not None else max(1, zone_count - 1)


def min_ready_zones_problem(floor: int, zone_count: int) -> Optional[str]:
    """Why a floor does not survive the loss of an AZ (the production rule), or None."""
    if zone_count >= 2 and floor < 2:
        return (f"minReadyZones is {floor}: an update during an outage may leave a single zone serving; set "
                f"readiness.minReadyZones to at least 2")
    return None


def online_hold_seconds(provider: Optional[str], delay: int, timeout: int, max_retries_down: int) -> int:
    """How long a monitored member must have been reported ONLINE without a break before a readiness gate counts it.

    Octavia's OVN provider reports a new member ONLINE as soon as it is created, before any health check: measured
    on the local cloud, a member whose server serves nothing was ACTIVE/ONLINE from 2.5 s to 17.2 s after its create
    (TCP monitor, delay 3, timeout 2, maxRetriesDown 3), then ERROR. So under ``ovn`` an ONLINE counts once the
    monitor has had the time to fail it: ``maxRetriesDown`` + 3 delays and a timeout (20 s for those settings). Other
    providers report a new member OFFLINE until its first check: 0."""
    if not is_ovn(provider):
        return 0
    return delay * (max_retries_down + 3) + timeout

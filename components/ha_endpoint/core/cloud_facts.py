"""The cloud facts the plan reads: what the lookups (:mod:`ha_endpoint.cloud.lookups`) found, as typed values.

Defined here, below the planner and the checks, so that they read the facts without reaching up to the module that
asks the cloud. :func:`resolve_members` is the one place a member's address, subnet and port are resolved (a member
given by ``server`` takes its server's), once, into the typed list the checks and the planner read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from . import predicates
from .args import EndpointArgs, MemberArgs, placed_zones
from .predicates import RouterView


@dataclass(frozen=True)
class SubnetFacts:
    """A Neutron subnet as the plan needs it: where it is, what addresses it holds, which routers it is on."""

    ref: str
    id: str
    name: str
    cidr: str
    network_id: str
    ip_version: int
    gateway_ip: Optional[str] = None
    router_ids: tuple[str, ...] = ()

    def contains(self, address: str) -> bool:
        """True when ``address`` is inside this subnet's CIDR."""
        return predicates.address_in_subnet(address, self.cidr)


@dataclass(frozen=True)
class PortFacts:
    """A Neutron port as the endpoint asks about it: the port a brought floating IP is associated with now, a
    member's port (the keepalived backend adds the zone's VIP to it), or a port holding an address."""

    id: str
    device_owner: str = ""
    device_id: str = ""
    ours: bool = False
    """Whether it is this endpoint's own VIP port (its security groups include the endpoint's VIP group, tagged with
    this stack's identity)."""
    network_id: str = ""
    name: str = ""
    tags: tuple[str, ...] = ()
    port_security: bool = True


@dataclass(frozen=True)
class FloatingIpFacts:
    """An existing (user-brought) floating IP: associated by the component, never created or deleted."""

    address: str
    id: str
    network_id: str
    port: Optional[PortFacts] = None
    """The port it is associated with now (None: none)."""


RouterFacts = RouterView
"""A router on a path the endpoint depends on, as the lookups find it and the AZ-loss rule judges it (one type:
:class:`ha_endpoint.core.predicates.RouterView`). ``ha`` and ``distributed`` come from its interface ports' owners
(``network:ha_router_replicated_interface`` / ``network:router_interface_distributed``), which a project user sees, and
from the router's own ``distributed`` flag when the credentials show it."""


@dataclass(frozen=True)
class NetworkFacts:
    """A VIP subnet's network and the AZs Neutron may place it in (``availability_zone_hints``; empty: any)."""

    id: str
    name: str
    az_hints: tuple[str, ...] = ()


@dataclass(frozen=True)
class ServerFacts:
    """A member given as a server: where Nova placed it, and the port (and address) it serves the endpoint on."""

    id: str
    name: str
    az: str
    port_id: str
    address: str


@dataclass(frozen=True)
class AdoptedMember:
    """A member of an adopted pool."""

    id: str
    address: str
    protocol_port: int
    subnet_id: Optional[str] = None
    name: str = ""


@dataclass(frozen=True)
class AdoptedListener:
    """A listener of an adopted load balancer, with its default pool and that pool's monitor and members."""

    id: str
    port: int
    protocol: str
    pool_id: Optional[str] = None
    pool_protocol: Optional[str] = None
    monitor_id: Optional[str] = None
    monitor_type: Optional[str] = None
    members: tuple[AdoptedMember, ...] = ()
    name: str = ""
    pool_name: str = ""
    monitor_name: str = ""


@dataclass(frozen=True)
class AdoptedRecord:
    """The DNS record set that publishes an adopted load balancer's address under the endpoint's name."""

    id: str
    zone_id: str
    records: tuple[str, ...]


@dataclass(frozen=True)
class AdoptedLoadBalancer:
    """An existing load balancer a zone takes over (``zones.<az>.adopt``), as the preview found it: what Octavia
    cannot change in place (VIP subnet, provider, availability zone), its listeners' trees, and the floating IP on
    its VIP port (None: none)."""

    ref: str
    id: str
    name: str
    vip_subnet_id: str
    vip_port_id: str
    vip_address: str
    provider: str
    availability_zone: Optional[str]
    listeners: tuple[AdoptedListener, ...] = ()
    floating_ip: Optional[FloatingIpFacts] = None

    def listener(self, port: int) -> Optional[AdoptedListener]:
        """The listener on ``port``, if the load balancer has one."""
        return next((listener for listener in self.listeners if listener.port == port), None)

    def fixed_differences(self, subnet_id: Optional[object], provider: str, availability_zone: Optional[str]
                          ) -> tuple[str, ...]:
        """What of ``subnet``, ``provider`` and ``availability_zone`` differs from this load balancer, among what
        Octavia cannot change in place (adopting it with them replaces it); a ``subnet_id`` of None is not known and
        differs in nothing."""
        return tuple(name for name, differs in (
            ("subnet", subnet_id is not None and subnet_id != self.vip_subnet_id),
            ("provider", bool(self.provider and self.provider != provider)),
            ("availability_zone", (self.availability_zone or None) != availability_zone)) if differs)


@dataclass(frozen=True)
class CloudFacts:
    """Everything the plan reads from the cloud, as plain values (known at preview time). Facts of inputs that are
    Outputs (resources declared beside the component) are not here: :mod:`ha_endpoint.pipeline` looks them up once
    they are known."""

    subnets: dict[str, SubnetFacts] = field(default_factory=dict)
    floating_network_id: Optional[str] = None
    floating_network_name: Optional[str] = None
    floating_ips: dict[str, FloatingIpFacts] = field(default_factory=dict)
    dns_zone_id: Optional[str] = None
    routers: dict[str, RouterFacts] = field(default_factory=dict)
    networks: dict[str, NetworkFacts] = field(default_factory=dict)
    servers: dict[str, ServerFacts] = field(default_factory=dict)
    """Member name -> its server, for members given by ``server``."""
    published: Optional[dict[str, Optional[str]]] = None
    """The A recordsets the DNS zone holds already: name -> description (None: not known)."""
    members_down: Optional[frozenset[tuple[str, str]]] = None
    """(pool name, member name) of the members the endpoint's pools list administratively down now, where a member put
    back must be re-created (the ovn provider, members written one by one:
    :func:`ha_endpoint.backends.octavia.checks.members_put_back_from`); None: not known."""
    agent_held: frozenset[tuple[str, str, int]] = frozenset()
    """``(pool name, address, port)`` of the members the member agent holds already: ``up`` leaves them to it."""
    adopted: dict[str, AdoptedLoadBalancer] = field(default_factory=dict)
    """AZ -> the load balancer that zone adopts (``zones.<az>.adopt``), as found at preview."""
    adopted_record: Optional[AdoptedRecord] = None
    """The record set another tool made that publishes the endpoint's name with adopted addresses only, which the
    endpoint's record takes over (:func:`adopted_record_taken_over`, decided once when the facts are gathered:
    :func:`ha_endpoint.pipeline.ask_cloud`); None otherwise, and any other record set at the name is refused
    (:func:`ha_endpoint.core.checks.check_cloud_facts`)."""


ADOPTED_RECORD_TEXT = "HA endpoint: one A record per ready availability zone; adopted, left in place when it goes"
"""The description (before the identity suffix) of a record set the endpoint took over: how later runs, which find it
publishing every zone, know it is still the adopted one (retained when the endpoint goes)."""


def adopted_record_taken_over(args: EndpointArgs, facts: "CloudFacts") -> bool:
    """Whether the endpoint's record takes over the record set found at its name (:attr:`CloudFacts.adopted_record`):
    it publishes nothing but the adopted load balancers' addresses (their floating IPs, or VIPs), or it is the one
    an earlier run took over (its description says so: :data:`ADOPTED_RECORD_TEXT`)."""
    record = facts.adopted_record
    if record is None or not facts.adopted:
        return False
    dns = args.dns
    fqdn = f"{dns.record}.{dns.dns_zone}" if dns is not None else None
    if ADOPTED_RECORD_TEXT in ((facts.published or {}).get(fqdn) or ""):
        return True
    addresses = {found.floating_ip.address if found.floating_ip else found.vip_address
                 for found in facts.adopted.values()}
    return bool(record.records) and set(record.records) <= addresses


def member_subnet_ref(args: EndpointArgs, member: MemberArgs) -> Any:
    """The subnet reference (name, id or Output) of ``member``: its own ``subnet``, else its zone's VIP subnet; None
    when its zone is not configured."""
    if member.subnet is not None:
        return member.subnet
    return args.zones[member.az].subnet if member.az in args.zones else None


@dataclass(frozen=True)
class MemberSpec:
    """One member of the endpoint's list (from any source: :mod:`ha_endpoint.members`), resolved on the cloud facts:
    its AZ, address, the subnet that address is on, port id, weight. The address and port of a member given by
    ``server`` are its server's."""

    name: str
    az: str
    address: str
    subnet: SubnetFacts
    port_id: Optional[str]
    weight: int
    in_service: bool = True
    """False when the configuration takes the member out (:func:`ha_endpoint.core.predicates.member_in_service`)."""
    source: str = "static"
    """The member source that gave it (:mod:`ha_endpoint.members`): ``static`` or ``clusterApi``."""
    held_by_agent: bool = False
    """True when the member agent holds it already (in a pool it joins): ``up`` registers no member for it there."""
    path: str = field(default="", compare=False)
    """Where messages name it, under the root (its ``_origin``: a static member's index,
    so not part of what the member is: a plan does not depend on the members' order)."""
    key: str = ""
    """What its resources are named by: its address when given as a value (a rename then updates the member in
    place), else ``by-name-<name>`` (an address that is an Output, or a server's, is not known when resources are
    named)."""
    address_given: bool = False
    """Whether its address was given as a value (its resources once were named by its name: an alias)."""
    server: Optional[ServerFacts] = None
    """Its server, for a member given by ``server`` whose server was looked up."""
    zones: tuple[str, ...] = ()
    """The zones whose load balancers it joins under ``memberPlacement`` (:func:`ha_endpoint.core.args.placed_zones`),
    sorted."""


def resolve_members(args: EndpointArgs, facts: CloudFacts) -> tuple[MemberSpec, ...]:
    """Every member of ``args``, in order, resolved on ``facts`` (a subnet or server not looked up yet: None)."""
    placed = {az: tuple(placed_zones(args.zones, args.member_placement, az))
              for az in {member.az for member in args.members}}
    return tuple(
        MemberSpec(member.name, member.az, _member_address(member, facts), _member_subnet(args, facts, member),
                   _member_port(member, facts), member.weight,
                   predicates.member_in_service(member.enabled, member.weight), member._source,
                   path=member._origin or "",
                   key=member.address if isinstance(member.address, str) else f"by-name-{member.name}",
                   address_given=isinstance(member.address, str),
                   server=facts.servers.get(member.name) if member.server is not None else None,
                   zones=placed[member.az])
        for member in args.members)


def _member_subnet(args: EndpointArgs, facts: CloudFacts, member: MemberArgs) -> Optional[SubnetFacts]:
    """The looked-up subnet ``member`` is on (see :func:`member_subnet_ref`; a subnet given as an Output is keyed by
    that Output); None when it was not looked up."""
    ref = member_subnet_ref(args, member)
    return facts.subnets.get(ref) if ref is not None else None


def _member_address(member: MemberArgs, facts: CloudFacts) -> Optional[str]:
    """The member's address: as configured, else its server's on the member's subnet."""
    if member.address is not None:
        return member.address
    server = facts.servers.get(member.name)
    return server.address if server is not None else None


def _member_port(member: MemberArgs, facts: CloudFacts) -> Optional[str]:
    """The member's Neutron port: as configured, else its server's port on the member's subnet."""
    server = facts.servers.get(member.name) if member.server is not None else None
    return server.port_id if server is not None else member.port

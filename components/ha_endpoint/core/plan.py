"""The plan: what the endpoint will build, computed from its arguments and the cloud facts. Pure, no resources.

``make_plan(args, facts)`` places members, derives every listener, pool, monitor, security-group rule and DNS
record and names them all through :mod:`ha_endpoint.core.contract`. It only plans: the arguments are checked before
(:mod:`ha_endpoint.core.validation`, and :mod:`ha_endpoint.core.checks` for what the cloud facts reveal; the
pipeline, :mod:`ha_endpoint.pipeline`, runs them in that order). Zones, listeners and members are sorted by their
names/ports, so the plan of a reordered configuration is the same plan.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping, Optional

from . import contract, predicates
from .args import EndpointArgs, ListenerArgs, ReadinessArgs
from .cloud_facts import (AdoptedLoadBalancer, AdoptedRecord, CloudFacts, FloatingIpFacts, MemberSpec, NetworkFacts,
                          RouterFacts, SubnetFacts)
from .errors import Problem
from .identity import UNNAMED_STACK, StackIdentity
from .inputs import Input, Output, joined, plain


@dataclass(frozen=True)
class PollTarget:
    """The cloud the readiness gates and drains poll: the clouds.yaml entry and region of the OpenStack provider the
    endpoint's children use. ``source`` says where it was decided: ``readiness`` (the readiness.cloud/region keys),
    ``stack`` (the stack's ``openstack:cloud``/``openstack:region``, for the default provider) or ``provider`` (the
    explicit provider's own ``cloud``/``region``, resolved when it is created: see :func:`ha_endpoint.backends.plugin.poll_inputs`)."""

    cloud: Optional[str] = None
    region: Optional[str] = None
    source: str = "stack"


@dataclass(frozen=True)
class ReadinessPlan:
    """How the zones' gates wait, and the drains of their members: the configured readiness as it is (its keys and
    their defaults are :class:`~ha_endpoint.core.args.ReadinessArgs`', said once there), the cloud the gates poll and
    the floor of ready zones, resolved."""

    configured: ReadinessArgs
    target: PollTarget
    min_ready_zones: int
    """With ``unpublish``: fewer ready zones than this fail the update (resolved: :func:`predicates.min_ready_zones`)."""

    @property
    def floor(self) -> int:
        """The ready zones an update needs before DNS changes: ``min_ready_zones`` with ``unpublish``; 0 with ``fail``
        (every zone's gate fails the update itself)."""
        return self.min_ready_zones if self.configured.on_zone_not_ready == "unpublish" else 0

    def gate_waits(self, publish: str) -> dict[str, Any]:
        """How a zone's readiness gate waits, as every backend's gate takes it: for what (``provisioned`` under
        bootstrap publication, which needs the name before the members serve), how long, how often, how steadily, and
        what a zone that does not become ready does."""
        configured = self.configured
        return dict(require="provisioned" if publish == "bootstrap" else configured.require,
                    timeout_seconds=configured.timeout_seconds,
                    poll_interval_seconds=configured.poll_interval_seconds, stable_polls=configured.stable_polls,
                    on_not_ready=str(configured.on_zone_not_ready),
                    dead_after_seconds=configured.dead_after_seconds)


@dataclass(frozen=True)
class MonitorPlan:
    """The health monitor of one pool."""

    name: str
    type: str
    delay: int
    timeout: int
    max_retries: int
    max_retries_down: int
    url_path: Optional[str]
    expected_codes: Optional[str]
    port: int


@dataclass(frozen=True)
class MemberPlan:
    """One member of one pool: a server (``member``) registered with one zone's load balancer on one port.

    ``resource_name`` derives from the address (see :func:`ha_endpoint.core.contract.member_name`), ``member`` is the
    configured name, which becomes the Octavia member's ``name`` property."""

    resource_name: str
    member: str
    home_zone: str
    address: str
    subnet: SubnetFacts
    protocol_port: int
    monitor_port: Optional[int]
    weight: int
    drain_name: str
    legacy_name: Optional[str]
    """The name it had when members were keyed by their configured name (an alias), for members keyed by address."""
    in_service: bool = True
    """False when the configuration takes the member out (``enabled: false`` or weight 0,
    :func:`ha_endpoint.core.predicates.member_in_service`): registered administratively down, not waited for."""
    put_back: bool = False
    """In service, and its pool lists it administratively down now under the ovn provider (members written one by
    one, a monitored pool): put back, so re-created, not set admin up (:attr:`CloudFacts.members_down`)."""


@dataclass(frozen=True)
class ListenerPlan(predicates.MonitoredListener):
    """One port of one zone's load balancer: its listener, pool, monitor and members."""

    port: int
    member_port: int
    protocol: str
    pool_protocol: str
    lb_method: str
    allowed_cidrs: tuple[str, ...]
    listener_name: str
    pool_name: str
    monitor: Optional[MonitorPlan]
    members: tuple[MemberPlan, ...]
    certificate_ref: Optional[str] = None
    """The certificate a TERMINATED_HTTPS listener serves (its Barbican reference; may be an Output)."""
    timeouts: tuple[tuple[str, int], ...] = ()
    """The listener timeouts sent to Octavia, as (pulumi-openstack argument, milliseconds): the configured ones and
    the data timeouts' default where they apply (:func:`listener_timeouts`); none under ovn or on UDP/SCTP."""



@dataclass(frozen=True)
class FloatingPlan:
    """How a zone is reached from outside: ``allocate`` a floating IP, associate a ``byo`` one, or ``none``."""

    mode: str
    name: Optional[str] = None
    association_name: Optional[str] = None
    network_id: Optional[str] = None
    network_name: Optional[str] = None
    byo: Optional[FloatingIpFacts] = None


@dataclass(frozen=True)
class ZonePlan:
    """One availability zone: its load balancer on its VIP subnet, listeners, floating IP and readiness gate, with
    the endpoint-wide settings it needs (so that a zone is built from its own plan alone)."""

    endpoint: str
    identity: StackIdentity
    tags: tuple[str, ...]
    publish: str
    az: str
    component_name: str
    vip_subnet: SubnetFacts
    listeners: tuple[ListenerPlan, ...]
    floating: FloatingPlan
    vip_secgroup_association_name: str
    readiness_name: str
    readiness: ReadinessPlan
    settings: Mapping[str, Any]
    """The backend's own settings (the configuration keys it declares: :attr:`ha_endpoint.backends.plugin.Backend.
    settings`), as configured; it reads them with its own model."""
    preflight: Optional[Output] = None
    """When some inputs are Outputs: fails with every problem once they are known (:mod:`ha_endpoint.pipeline`); the
    zone's load balancer waits for it."""
    adopted: Optional[AdoptedLoadBalancer] = None
    """What this zone takes over (``zones.<az>.adopt``), as found at preview; its floating IP is the zone's
    (``floating.byo``). The backend decides whether it takes over the rest, or builds anew beside it
    (``adopt.allowReplacement``)."""
    vip_address: Optional[Input[str]] = None
    """The VIP address the configuration gives (``zones.<az>.vipAddress``, keepalived backend); None: the cloud picks
    one."""


@dataclass(frozen=True)
class RulePlan:
    """One ingress rule of a security group."""

    name: str
    protocol: str
    port: Optional[int]
    remote_ip_prefix: str
    ethertype: str


@dataclass(frozen=True)
class MemberPortPlan:
    """A member's Neutron port that gets the members' security group."""

    name: str
    member: str
    port_id: str


@dataclass(frozen=True)
class SecurityPlan:
    """The VIP security group (clients -> listeners) and the members' one (load balancers -> members)."""

    vip_group_name: str
    vip_rules: tuple[RulePlan, ...]
    members_group_name: str
    members_rules: tuple[RulePlan, ...]
    member_ports: tuple[MemberPortPlan, ...]
    preflight: Optional[Output] = None
    """As :attr:`ZonePlan.preflight`: the member ports get the members' group only once every input checked out."""


@dataclass(frozen=True)
class DnsPlan:
    """The endpoint's records: ``fqdn`` gets every published zone's address; per-zone records
    ``(az, resource name, fqdn)`` when asked."""

    resource_name: str
    dns_zone_id: str
    dns_zone_name: str
    fqdn: str
    ttl: int
    publish: str
    zone_records: tuple[tuple[str, str, str], ...]
    adopted_record: Optional[AdoptedRecord] = None
    """The record set another tool made at ``fqdn`` that publishes adopted addresses only: the endpoint's record is
    imported from it (and left, never deleted, when the endpoint goes)."""
    delete_first: frozenset[str] = frozenset()
    """The records (resource names) whose name the DNS zone holds already as this stack's record of that resource:
    Designate keeps one recordset per zone, name and type, so replacing one of them (``pulumi up --replace``, a
    provider change) can only create the new recordset after deleting the old. Every other record is new or renamed:
    it is created before the old name is deleted, so the old name answers until the new one does. Updates of the
    addresses, TTL and description never replace a record: Designate changes it in place."""


@dataclass(frozen=True)
class EndpointPlan:
    """Everything the endpoint builds, in a stable order."""

    name: str
    backend: str
    """The registered backend that serves every zone (:mod:`ha_endpoint.backends`)."""
    load_balancer_provider: str
    member_placement: str
    publish: str
    zones: tuple[ZonePlan, ...]
    security: SecurityPlan
    dns: Optional[DnsPlan]
    tags: tuple[str, ...]
    """The configured tags and the stack's identity tag (:mod:`ha_endpoint.core.identity`)."""
    members: tuple[MemberSpec, ...]
    allowed_cidrs: tuple[str, ...]
    floating_network_id: Optional[str]
    readiness: ReadinessPlan
    identity: StackIdentity
    routers: dict[str, RouterFacts]
    networks: dict[str, NetworkFacts]
    notices: tuple[Problem, ...] = ()
    """What the component says once, as a warning on itself, at preview and up (:func:`ha_endpoint.core.checks.notices`, then the backend's own)."""

    def zone(self, az: str) -> ZonePlan:
        return next(zone for zone in self.zones if zone.az == az)


def make_plan(args: EndpointArgs, facts: CloudFacts, resolved: tuple[MemberSpec, ...],
              target: PollTarget = PollTarget(), identity: StackIdentity = UNNAMED_STACK,
              preflight: Optional[Output] = None, settings: Mapping[str, Any] = {}) -> EndpointPlan:
    """The plan of ``args`` and their ``resolved`` members (:func:`ha_endpoint.core.cloud_facts.resolve_members`) on
    the cloud described by ``facts``, its gates polling ``target``, its objects marked as
    ``identity``'s (the checks of :mod:`ha_endpoint.core.checks` passed). When some inputs are Outputs, ``facts``
    holds Outputs for what depends on them, the problems among them are ``preflight``'s to raise, and the load
    balancers and member ports wait for it (:mod:`ha_endpoint.pipeline`); ``settings``: the backend's own (every zone
    carries them: :attr:`ZonePlan.settings`)."""
    name = args.name
    readiness = ReadinessPlan(args.readiness, target,
                              predicates.min_ready_zones(args.readiness.min_ready_zones, len(args.zones)))
    tags = (*args.tags, identity.tag)
    zones = tuple(replace(_zone_plan(args, facts, resolved, az, readiness, identity, tags, settings),
                          preflight=preflight) for az in sorted(args.zones))
    dns = None
    if args.dns is not None:
        fqdn = _join_name(args.dns.record, args.dns.dns_zone)
        per_zone = tuple((az, contract.zone_recordset_name(name, az),
                          _join_name(contract.zone_record_label(args.dns.record, az), args.dns.dns_zone))
                         for az in sorted(args.zones)) \
            if args.dns.per_zone_records else ()
        records = ((contract.recordset_name(name), fqdn), *((resource, name_) for _, resource, name_ in per_zone))
        dns = DnsPlan(contract.recordset_name(name), facts.dns_zone_id or "", args.dns.dns_zone, fqdn, args.dns.ttl,
                      args.dns.publish, per_zone, facts.adopted_record,
                      _delete_first(records, facts.published, identity))
    members = tuple(sorted((replace(member, held_by_agent=_held_by_agent(args, facts, member)) for member in resolved),
                           key=lambda member: member.name))
    return EndpointPlan(name=name, backend=args.backend, load_balancer_provider=args.load_balancer_provider, member_placement=args.member_placement,
                        publish=args.dns.publish if args.dns else "when-ready", zones=zones,
                        security=replace(_security_plan(args, zones, members), preflight=preflight), dns=dns, tags=tags, members=members,
                        allowed_cidrs=tuple(args.allowed_cidrs), floating_network_id=facts.floating_network_id,
                        readiness=readiness, identity=identity, routers=dict(facts.routers),
                        networks=dict(facts.networks))


def _held_by_agent(args: EndpointArgs, facts: CloudFacts, member: MemberSpec) -> bool:
    """Whether the member agent holds ``member`` already in a pool it joins (``facts.agent_held``)."""
    pools = {contract.pool_name(args.name, az, listener.port) for az in member.zones
             for listener in args.listeners}
    return any(pool in pools and address == member.address for pool, address, _ in facts.agent_held)


def _zone_plan(args: EndpointArgs, facts: CloudFacts, resolved: tuple[MemberSpec, ...], az: str,
               readiness: ReadinessPlan, identity: StackIdentity, tags: tuple[str, ...],
               settings: Mapping[str, Any]) -> ZonePlan:
    name = args.name
    placed = [member for member in resolved if az in member.zones]
    listeners = tuple(_listener_plan(args, facts, az, listener, placed)
                      for listener in sorted(args.listeners, key=lambda listener: listener.port))
    adopted = facts.adopted.get(az)
    brought = args.zones[az].floating_ip or (adopted is not None and adopted.floating_ip is not None)
    if args.floating_network is None:
        floating = FloatingPlan("none")
    else:
        floating = FloatingPlan("byo" if brought else "allocate",
                                None if brought else contract.floating_ip_name(name, az),
                                contract.floating_ip_association_name(name, az), facts.floating_network_id,
                                facts.floating_network_name, facts.floating_ips.get(az))
    return ZonePlan(endpoint=name, identity=identity, tags=tags,
                    publish=args.dns.publish if args.dns else "when-ready", az=az,
                    component_name=contract.zone_component_name(name, az),
                    vip_subnet=facts.subnets[args.zones[az].subnet], listeners=listeners, floating=floating,
                    vip_secgroup_association_name=contract.vip_port_secgroup_name(name, az),
                    readiness_name=contract.readiness_name(name, az), readiness=readiness, settings=dict(settings),
                    adopted=adopted, vip_address=args.zones[az].vip_address)


def _listener_plan(args: EndpointArgs, facts: CloudFacts, az: str, listener: ListenerArgs,
                   placed: list[MemberSpec]) -> ListenerPlan:
    name, port = args.name, listener.port
    member_port = listener.member_port or port
    monitor = None
    if listener.monitor is not None:
        spec = listener.monitor
        http = spec.type in ("HTTP", "HTTPS")
        monitor = MonitorPlan(contract.monitor_name(name, az, port), spec.type, spec.delay, spec.timeout,
                              spec.max_retries, spec.max_retries_down, spec.path if http else None,
                              spec.expected_codes if http else None, spec.port or member_port)
    members = tuple(sorted(
        (MemberPlan(contract.member_name(name, az, port, member.key), member.name, member.az, member.address,
                    member.subnet, member_port,
                    listener.monitor.port if listener.monitor and listener.monitor.port else None, member.weight,
                    contract.member_drain_name(name, az, port, member.key),
                    contract.legacy_member_name(name, az, port, member.name) if member.address_given else None,
                    member.in_service,
                    member.in_service and (contract.pool_name(name, az, port), member.name) in (facts.members_down or ()))
         for member in placed
         # a member the member agent holds already in this pool is the agent's: no resource of ours there
         if (contract.pool_name(name, az, port), member.address, member_port) not in facts.agent_held),
        key=lambda member: member.member))
    method = listener.lb_method or (predicates.OVN_METHOD if predicates.is_ovn(args.load_balancer_provider) else "ROUND_ROBIN")
    # the ovn provider refuses allowed_cidrs on a listener ("OVN provider does not support allowed_cidrs option"):
    # its clients reach the members unproxied, so the members' group admits allowedCidrs instead (_security_plan)
    cidrs = () if predicates.is_ovn(args.load_balancer_provider) else tuple(args.allowed_cidrs)
    return ListenerPlan(port, member_port, listener.protocol, predicates.POOL_PROTOCOL[listener.protocol], method, cidrs,
                        contract.listener_name(name, az, port), contract.pool_name(name, az, port), monitor, members,
                        listener.certificate_ref, listener_timeouts(args.load_balancer_provider, listener))


def listener_timeouts(provider: Optional[str], listener: ListenerArgs) -> tuple[tuple[str, int], ...]:
    """The timeouts a listener is created with: where they apply (an amphora listener HAProxy serves), each one
    configured, and the client and member data timeouts :data:`predicates.WATCH_IDLE_MS` when not (Octavia's 50 s
    default cuts idle Kubernetes API connections); the connect and inspect timeouts are then the cloud's. Where they
    do not apply, none (validation refused configured ones)."""
    if not predicates.listener_timeouts_apply(provider, listener.protocol):
        return ()
    defaults = {"timeout_client_data": predicates.WATCH_IDLE_MS, "timeout_member_data": predicates.WATCH_IDLE_MS}
    chosen = ((field, getattr(listener, field) if getattr(listener, field) is not None else defaults.get(field))
              for field, _ in predicates.TIMEOUT_KEYS)
    return tuple((field, value) for field, value in chosen if value is not None)


def _security_plan(args: EndpointArgs, zones: tuple[ZonePlan, ...], members: tuple[MemberSpec, ...]) -> SecurityPlan:
    vip_group = contract.vip_secgroup_name(args.name)
    vip_rules = {}
    for listener in args.listeners:
        protocol = predicates.listener_rule_protocol(listener.protocol)
        for cidr in args.allowed_cidrs:
            rule = _rule(vip_group, protocol, listener.port, cidr)
            vip_rules[rule.name] = rule
    members_group = contract.members_secgroup_name(args.name)
    sources: dict[object, tuple[object, str]] = {}  # one rule source per CIDR; a CIDR not known yet, per subnet
    for zone in zones:
        _add_source(sources, zone.vip_subnet)
        for listener in zone.listeners:  # amphorae plug into a member's subnet and reach it from there
            for member in listener.members:
                _add_source(sources, member.subnet)
    member_rules = {}
    for protocol, port in predicates.member_rule_ports(zones[0].listeners if zones else ()):
        for cidr, label in sources.values():
            rule = _rule(members_group, protocol, port, cidr, label)
            member_rules[rule.name] = rule
    if predicates.is_ovn(args.load_balancer_provider):
        # OVN balances without a proxy: a member sees the client's own address (the floating IP is one more VIP of
        # the load balancer, DNAT to the member), so its group admits the clients on the listeners' member ports
        for protocol, port in predicates.client_rule_ports(zones[0].listeners if zones else ()):
            for cidr in args.allowed_cidrs:
                rule = _rule(members_group, protocol, port, cidr)
                member_rules[rule.name] = rule
    ports = tuple(MemberPortPlan(contract.member_port_secgroup_name(
        args.name, member.port_id if plain(member.port_id) else f"of-{member.name}"), member.name, member.port_id)
                  for member in members if member.port_id is not None)
    return SecurityPlan(vip_group, tuple(vip_rules[key] for key in sorted(vip_rules)), members_group,
                        tuple(member_rules[key] for key in sorted(member_rules)), ports)


def _add_source(sources: dict[object, tuple[object, str]], subnet: SubnetFacts) -> None:
    """A subnet the members' group admits: keyed by its CIDR, or, when that is not known yet, by the subnet itself
    (named after its reference, e.g. ``zones.az1.subnet``)."""
    if plain(subnet.cidr):
        sources.setdefault(subnet.cidr, (subnet.cidr, subnet.cidr))
    else:
        sources.setdefault(id(subnet), (subnet.cidr, subnet.ref))


def _rule(group: str, protocol: str, port: Optional[int], cidr, label: Optional[str] = None) -> RulePlan:
    """An ingress rule from ``cidr`` (an Output when not known yet: then named by ``label``)."""
    if plain(cidr):
        ethertype = "IPv4" if ipaddress.ip_network(cidr, strict=False).version == 4 else "IPv6"
    else:
        ethertype = cidr.apply(lambda value: "IPv4" if ipaddress.ip_network(value, strict=False).version == 4
                               else "IPv6")
    return RulePlan(contract.secgroup_rule_name(group, protocol, port or 0, label or cidr), protocol, port, cidr,
                    ethertype)


def _join_name(label: str, dns_zone):
    """``label.dns_zone`` (the zone fully qualified), an Output when the zone is one."""
    return joined(label, ".", dns_zone)


def _delete_first(records: Iterable[tuple[str, Any]], published: Optional[Mapping[str, Optional[str]]],
                  identity: StackIdentity) -> frozenset[str]:
    """The records among ``(resource name, name)`` whose name ``published`` holds as this stack's record of the same
    resource (see :attr:`DnsPlan.delete_first`); all of them when ``published`` is not known."""
    if published is None:
        return frozenset(resource for resource, _ in records)
    return frozenset(resource for resource, name in records
                     if isinstance(name, str) and identity.owns_description(published.get(name), resource))

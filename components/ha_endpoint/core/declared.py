"""What the HaEndpoint declares to its policy pack: the :class:`~ha_endpoint.core.facts.EndpointFacts` of its plan.

Built from the typed plan alone (the plan already holds the looked-up subnets, the placement and the readiness
settings), recorded once in the component's outputs under ``facts`` (see :mod:`ha_endpoint.resources.endpoint`).
It only declares: the AZ-loss rule over these facts is :func:`ha_endpoint.core.checks.refuse_az_loss`.
"""

from __future__ import annotations

from typing import Any

from .facts import (
    DnsFact, EndpointFacts, FloatingIpFact, ListenerFact, MemberFact, MonitorFact, NetworkFact, ReadinessFact,
    RouterFact, RuleFact, SecurityGroupFact, SubnetFact, ZoneFact,
)
from .cloud_facts import SubnetFacts
from .plan import EndpointPlan, ListenerPlan, ReadinessPlan, RulePlan


def endpoint_facts(plan: EndpointPlan) -> EndpointFacts:
    """The facts of ``plan`` (its zones served by its backend): every subnet once, zones and members referring to
    them by id."""
    subnets: dict[str, SubnetFact] = {}
    for subnet in [zone.vip_subnet for zone in plan.zones] + [member.subnet for member in plan.members]:
        subnets.setdefault(subnet.id, _subnet(subnet))
    return EndpointFacts(
        **layout_facts(plan),
        floating_network_id=plan.floating_network_id,
        subnets=subnets,
        routers={key: RouterFact(id=r.id, name=r.name, az_hints=list(r.az_hints), ha=r.ha, distributed=r.distributed,
                                 external_network_id=r.external_network_id) for key, r in plan.routers.items()},
        networks={key: NetworkFact(id=n.id, name=n.name, az_hints=list(n.az_hints))
                  for key, n in plan.networks.items()},
        zones={zone.az: ZoneFact(
            az=zone.az, backend=plan.backend, vip_subnet_id=zone.vip_subnet.id,
            floating_ip=FloatingIpFact(mode=zone.floating.mode,
                                       address=zone.floating.byo.address if zone.floating.byo else None,
                                       id=zone.floating.byo.id if zone.floating.byo else None),
            members=sorted({member.member for listener in zone.listeners for member in listener.members}),
            adopted=zone.adopted is not None,
        ) for zone in plan.zones},
        members={member.name: MemberFact(name=member.name, az=member.az, address=member.address,
                                         subnet_id=member.subnet.id, port_id=member.port_id, weight=member.weight,
                                         source=member.source, held_by_agent=member.held_by_agent)
                 for member in plan.members},
        members_security_group=SecurityGroupFact(name=plan.security.members_group_name,
                                                 rules=[_rule(rule) for rule in plan.security.members_rules]),
        dns=None if plan.dns is None else DnsFact(
            dns_zone_id=plan.dns.dns_zone_id, dns_zone_name=plan.dns.dns_zone_name, fqdn=plan.dns.fqdn, ttl=plan.dns.ttl,
            zone_records={az: fqdn for az, _, fqdn in plan.dns.zone_records}),
    )


def layout_facts(plan: EndpointPlan) -> dict[str, Any]:
    """The facts that come from the configuration alone (never from the cloud): known even when some inputs are
    Outputs not known yet (:mod:`ha_endpoint.pipeline` declares them at once)."""
    listeners = plan.zones[0].listeners if plan.zones else ()
    return dict(
        name=plan.name,
        load_balancer_provider=plan.load_balancer_provider,
        member_placement=plan.member_placement,
        publish=plan.publish,
        internal=all(zone.floating.mode == "none" for zone in plan.zones),
        allowed_cidrs=list(plan.allowed_cidrs),
        tags=[tag for tag in plan.tags if tag != plan.identity.tag],
        listeners=[_listener(listener) for listener in listeners],
        vip_security_group=SecurityGroupFact(name=plan.security.vip_group_name,
                                             rules=[_rule(rule) for rule in plan.security.vip_rules]),
        readiness=_readiness(plan.readiness),
    )


def _readiness(readiness: ReadinessPlan) -> ReadinessFact:
    """The configured readiness, with the floor of ready zones as updates apply it (0 under ``fail``)."""
    configured = readiness.configured
    return ReadinessFact(require=configured.require, timeout_seconds=configured.timeout_seconds,
                         poll_interval_seconds=configured.poll_interval_seconds,
                         drain_seconds=configured.drain_seconds, on_zone_not_ready=str(configured.on_zone_not_ready),
                         min_ready_zones=readiness.floor, dead_after_seconds=configured.dead_after_seconds)


def _subnet(subnet: SubnetFacts) -> SubnetFact:
    return SubnetFact(id=subnet.id, name=subnet.name, cidr=subnet.cidr, network_id=subnet.network_id,
                      router_ids=list(subnet.router_ids))


def _listener(listener: ListenerPlan) -> ListenerFact:
    monitor = listener.monitor
    return ListenerFact(
        port=listener.port, member_port=listener.member_port, protocol=listener.protocol,
        pool_protocol=listener.pool_protocol, lb_method=listener.lb_method,
        allowed_cidrs=list(listener.allowed_cidrs),
        monitor=None if monitor is None else MonitorFact(
            type=monitor.type, port=monitor.port, delay=monitor.delay, timeout=monitor.timeout,
            max_retries=monitor.max_retries, max_retries_down=monitor.max_retries_down, url_path=monitor.url_path))


def _rule(rule: RulePlan) -> RuleFact:
    return RuleFact(protocol=rule.protocol, port=rule.port, remote_ip_prefix=rule.remote_ip_prefix,
                    ethertype=rule.ethertype)

"""The plan of arguments some of whose inputs are Outputs of resources declared beside the component.

A program may create its network, subnets, servers, floating IPs or DNS zone in the same stack and hand their
Outputs to the endpoint (``zones: {az1: {subnet: subnet.id}}``). Resources are named from what is known when the
component is built, so the plan is made at once, with Outputs where values are not known yet (see
:func:`structural_facts`). Every rule over those values is checked once they are known, by the pipeline itself
(:func:`ha_endpoint.pipeline.run` over the resolved arguments, :func:`ha_endpoint.pipeline.resolved_raw`, inside one
Output that fails with every problem; :func:`ha_endpoint.pipeline.deferred_inputs` finds them). That happens at preview when
the Outputs are known there (resources that exist already), else during ``up`` before any load balancer is created:
each load balancer, and each member port that gets the members' group, waits for it (:func:`ha_endpoint.backends.plugin.after_checks`); the
values the plan could not know are taken from it, so everything that uses them waits too. The policy pack gets the
checked plan's facts, entry by entry, so that at preview it can name the ones that are not known yet.
"""

from dataclasses import replace
from typing import Any

import pulumi
from pydantic import BaseModel

from ..core.args import EndpointArgs
from ..core.cloud_facts import CloudFacts, FloatingIpFacts, ServerFacts, SubnetFacts
from ..core.declared import layout_facts
from ..core.facts import FACTS_VERSION, EndpointFacts
from ..core.plan import EndpointPlan, MemberSpec

def structural_facts(args: EndpointArgs, plain: CloudFacts, checked: pulumi.Output[EndpointPlan]) -> CloudFacts:
    """``plain`` (the facts of the plain inputs, looked up at once) completed with the facts of the deferred ones, as
    Outputs of ``checked``: a subnet given as an Output (keyed by that Output, as the arguments refer to it), the
    floating network, brought floating IPs, the DNS zone, and the servers of members given by a server whose facts
    could not be looked up at once."""
    subnets = dict(plain.subnets)
    for az, zone in sorted(args.zones.items()):
        if not isinstance(zone.subnet, str) and zone.subnet not in subnets:
            subnets[zone.subnet] = _subnet(checked.apply(lambda p, az=az: p.zone(az).vip_subnet),
                                           f"zones.{az}.subnet")
    for member in args.members:
        if member.subnet is not None and not isinstance(member.subnet, str) and member.subnet not in subnets:
            subnets[member.subnet] = _subnet(checked.apply(lambda p, name=member.name: _member(p, name).subnet),
                                             f"members.{member.name}.subnet")
    network_id, network_name = plain.floating_network_id, plain.floating_network_name
    if args.floating_network is not None and not isinstance(args.floating_network, str):
        network_id = checked.apply(lambda p: p.floating_network_id)
        network_name = checked.apply(lambda p: p.zones[0].floating.network_name)
    floating_ips = dict(plain.floating_ips)
    for az, zone in args.zones.items():
        if zone.floating_ip is not None and not isinstance(zone.floating_ip, str):
            byo = checked.apply(lambda p, az=az: p.zone(az).floating.byo)
            floating_ips[az] = FloatingIpFacts(address=zone.floating_ip, id=byo.apply(lambda f: f.id),
                                               network_id=byo.apply(lambda f: f.network_id),
                                               port=byo.apply(lambda f: f.port))
    dns_zone_id = plain.dns_zone_id
    if args.dns is not None and not isinstance(args.dns.dns_zone, str):
        dns_zone_id = checked.apply(lambda p: p.dns.dns_zone_id)
    servers = dict(plain.servers)
    for member in args.members:
        if member.server is not None and member.name not in servers:
            spec = checked.apply(lambda p, name=member.name: _member(p, name))
            servers[member.name] = ServerFacts(id=member.server, name=member.name, az=member.az,
                                               port_id=spec.apply(lambda m: m.port_id),
                                               address=spec.apply(lambda m: m.address))
    return replace(plain, subnets=subnets, floating_network_id=network_id, floating_network_name=network_name,
                   floating_ips=floating_ips, dns_zone_id=dns_zone_id, servers=servers)


def declared_facts(dumped: pulumi.Output[dict[str, Any]], plan: EndpointPlan) -> dict[str, Any]:
    """The facts the policy pack reads (:mod:`ha_endpoint.core.facts`), from the checked plan's ``dumped`` facts, one
    Output per entry (each zone and member its own): at preview the pack can then name the entries not known yet."""

    def entry(*keys: str) -> pulumi.Output[Any]:
        return dumped.apply(lambda facts: _get(facts, keys))

    layout = {EndpointFacts.model_fields[key].alias or key: value for key, value in layout_facts(plan).items()}
    facts: dict[str, Any] = {key: entry(key) for key in _FACT_KEYS if key not in layout}
    facts.update(version=FACTS_VERSION, **_dumped(layout))
    facts["zones"] = {zone.az: entry("zones", zone.az) for zone in plan.zones}
    facts["members"] = {member.name: entry("members", member.name) for member in plan.members}
    return facts


def _dumped(values: dict[str, Any]) -> dict[str, Any]:
    """Fact values (models, lists of models) in their recorded form, as :meth:`EndpointFacts.dump` writes them."""
    def one(value: Any) -> Any:
        if isinstance(value, BaseModel):
            return value.model_dump(by_alias=True, mode="json")
        if isinstance(value, list):
            return [one(item) for item in value]
        return value
    return {key: one(value) for key, value in values.items()}


def _get(value: Any, keys: tuple) -> Any:
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


_FACT_KEYS = tuple(info.alias or name for name, info in EndpointFacts.model_fields.items())


def _member(plan: EndpointPlan, name: str) -> MemberSpec:
    return next(member for member in plan.members if member.name == name)


def _subnet(found: pulumi.Output[SubnetFacts], ref: str) -> SubnetFacts:
    """A subnet not known yet: each fact an Output of the checked plan; ``ref`` (where the configuration names it)
    names what is derived from it, e.g. the members' security-group rule admitting it."""
    return SubnetFacts(ref=ref, id=found.apply(lambda s: s.id), name=found.apply(lambda s: s.name),
                       cidr=found.apply(lambda s: s.cidr), network_id=found.apply(lambda s: s.network_id),
                       ip_version=found.apply(lambda s: s.ip_version),
                       gateway_ip=found.apply(lambda s: s.gateway_ip),
                       router_ids=found.apply(lambda s: s.router_ids))

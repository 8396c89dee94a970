"""The inputs the HaEndpoint component records in state: the resolved cloud facts and a summary of its plan.

The policy pack reads these (``resource.props`` of the ``haendpoint:index:HaEndpoint`` resource) at preview time,
so every value is plain (never an Output) and keyed by name (never by list position). Shape (camelCase keys)::

    name: str                          endpoint name, prefix of every child
    provider: "amphora" | "ovn"
    memberPlacement: "own-zone" | "all-zones"
    publish: "when-ready" | "bootstrap"  DNS publication mode (dns.publish; "when-ready" when dns is omitted)
    internal: bool                     true when floatingNetwork is omitted (DNS gets the VIPs)
    floatingNetworkId: str | None
    allowedCidrs: [str]
    tags: [str]                        tags put on every load balancer (e.g. "production")
    listenerPorts: [int]               sorted
    memberPorts: [int]                 sorted, unique
    monitorPorts: [int]                sorted, unique (ports the health monitors probe)
    listeners: [{port, memberPort, protocol, poolProtocol, lbMethod, allowedCidrs: [str],
                 monitor: {type, port, delay, timeout, maxRetries, maxRetriesDown, urlPath} | None}]
    zones: {az: {az, vipSubnetId, vipSubnetName, vipSubnetCidr, vipNetworkId, routerIds: [str],
                 floatingIp: {mode: "allocate" | "byo" | "none", address: str | None, id: str | None},
                 members: [member name]}}      the members placed in this zone's pools
    members: {name: {name, zone, address, subnetId, subnetName, subnetCidr, networkId, routerIds: [str],
                     port: str | None, weight: int}}
    securityGroups: {vip: {name, rules: [rule]}, members: {name, rules: [rule]}}
                     rule = {protocol, port: int | None, remoteIpPrefix, ethertype}
    dns: {zoneId, zoneName, fqdn, ttl, publish, perZoneRecords: bool, zoneRecords: {az: fqdn}} | None
    readiness: {require, timeoutSeconds, pollIntervalSeconds, drainSeconds}

Reachability, as the component checks it too: a member's subnet is reachable from a zone's VIP subnet when both
have the same ``networkId`` or share one of ``routerIds``.
"""

from __future__ import annotations

from typing import Any

from .args import EndpointArgs
from .lookups import CloudFacts, SubnetFacts
from .plan import EndpointPlan, RulePlan, member_subnet


def endpoint_props(args: EndpointArgs, facts: CloudFacts, plan: EndpointPlan) -> dict[str, Any]:
    """The component's recorded inputs (see the module docstring for the shape)."""
    listeners = plan.zones[0].listeners if plan.zones else ()
    return {
        "name": plan.name,
        "provider": plan.provider,
        "memberPlacement": plan.member_placement,
        "publish": plan.publish,
        "internal": args.floating_network is None,
        "floatingNetworkId": facts.floating_network_id,
        "allowedCidrs": list(args.allowed_cidrs),
        "tags": list(plan.tags),
        "listenerPorts": sorted(listener.port for listener in listeners),
        "memberPorts": sorted({listener.member_port for listener in listeners}),
        "monitorPorts": sorted({listener.monitor.port for listener in listeners if listener.monitor}),
        "listeners": [{
            "port": listener.port, "memberPort": listener.member_port, "protocol": listener.protocol,
            "poolProtocol": listener.pool_protocol, "lbMethod": listener.lb_method,
            "allowedCidrs": list(listener.allowed_cidrs),
            "monitor": None if listener.monitor is None else {
                "type": listener.monitor.type, "port": listener.monitor.port, "delay": listener.monitor.delay,
                "timeout": listener.monitor.timeout, "maxRetries": listener.monitor.max_retries,
                "maxRetriesDown": listener.monitor.max_retries_down, "urlPath": listener.monitor.url_path},
        } for listener in listeners],
        "zones": {zone.az: {
            "az": zone.az, **_subnet(zone.vip_subnet, "vipSubnet"), "vipNetworkId": zone.vip_subnet.network_id,
            "routerIds": list(zone.vip_subnet.router_ids),
            "floatingIp": {"mode": zone.floating.mode,
                           "address": zone.floating.byo.address if zone.floating.byo else None,
                           "id": zone.floating.byo.id if zone.floating.byo else None},
            "members": sorted({member.member for listener in zone.listeners for member in listener.members}),
        } for zone in plan.zones},
        "members": {member.name: {
            "name": member.name, "zone": member.zone, "address": member.address,
            **_subnet(member_subnet(args, facts, index), "subnet"),
            "networkId": member_subnet(args, facts, index).network_id,
            "routerIds": list(member_subnet(args, facts, index).router_ids),
            "port": member.port, "weight": member.weight,
        } for index, member in enumerate(args.members)},
        "securityGroups": {
            "vip": {"name": plan.security.vip_group_name, "rules": [_rule(r) for r in plan.security.vip_rules]},
            "members": {"name": plan.security.members_group_name,
                        "rules": [_rule(r) for r in plan.security.members_rules]},
        },
        "dns": None if plan.dns is None else {
            "zoneId": plan.dns.zone_id, "zoneName": plan.dns.zone_name, "fqdn": plan.dns.fqdn, "ttl": plan.dns.ttl,
            "publish": plan.dns.publish, "perZoneRecords": bool(plan.dns.zone_records),
            "zoneRecords": {az: fqdn for az, _, fqdn in plan.dns.zone_records},
        },
        "readiness": {"require": args.readiness.require, "timeoutSeconds": args.readiness.timeout_seconds,
                      "pollIntervalSeconds": args.readiness.poll_interval_seconds,
                      "drainSeconds": args.readiness.drain_seconds},
    }


def _subnet(subnet: SubnetFacts, prefix: str) -> dict[str, Any]:
    return {f"{prefix}Id": subnet.id, f"{prefix}Name": subnet.name, f"{prefix}Cidr": subnet.cidr}


def _rule(rule: RulePlan) -> dict[str, Any]:
    return {"protocol": rule.protocol, "port": rule.port, "remoteIpPrefix": rule.remote_ip_prefix,
            "ethertype": rule.ethertype}

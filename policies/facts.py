"""The endpoint's declared facts: the HaEndpoint's looked-up view of the cloud, parsed from its properties.

The facts come from the HaEndpoint component's own properties (see :class:`Facts` for the shape): the plain,
looked-up cloud facts (subnet CIDRs, networks, routers) the component resolved before creating anything. A fact that
is missing or unknown is reported as a violation naming the fact (:func:`gap`), never silently skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .model import UNKNOWN, fully_known, natural_key, number

def _pick(data: Any, *keys: str, default: Any = None) -> Any:
    """The first of ``keys`` present in ``data`` (camelCase and snake_case spellings are both accepted)."""
    if not isinstance(data, dict):
        return default
    for key in keys:
        if key in data:
            return data[key]
    return default


def _as_list(value: Any) -> Any:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return value if value is UNKNOWN else [value]


@dataclass(frozen=True)
class ZoneFacts:
    """One configured zone: its AZ and the VIP subnet mapped to it, as looked up in the cloud."""

    key: str
    az: Any
    subnet_id: Any
    subnet_cidr: Any
    network_id: Any
    router_ids: Any
    published_address: Any = None


@dataclass(frozen=True)
class MemberFacts:
    """One member: its zone, address and the subnet that address is on, as looked up in the cloud."""

    name: str
    zone: Any
    address: Any
    subnet_id: Any
    subnet_cidr: Any
    network_id: Any
    router_ids: Any


@dataclass(frozen=True)
class ListenerFacts:
    """One listener: the port clients use, the port members serve, and the port the health monitor probes."""

    port: Any
    member_port: Any
    monitor_port: Any
    protocol: Any
    monitor_type: Any
    lb_method: Any


@dataclass
class Facts:
    """The endpoint as the component declares it in its properties (camelCase keys; snake_case also accepted)::

        name: str                         # the endpoint name (prefix of every child name)
        provider: "amphora" | "ovn"
        memberPlacement: "own-zone" | "all-zones"
        tags: [str]                       # tags put on every load balancer, e.g. "production"
        allowedCidrs: [str]
        zones: {<zone>: {az, subnetId | vipSubnetId, subnetCidr | vipSubnetCidr, networkId | vipNetworkId,
                         routerIds: [str], floatingIp?: {mode, address, id} | publishedAddress?: str}}
        members: [{name, zone, address, subnetId, subnetCidr, networkId, routerIds: [str]}]
        listeners: [{port, memberPort, protocol, lbMethod, monitor: {type, port} | null}]  (or monitorType/Port)
        dns: {ttl, publish: "when-ready" | "bootstrap", publishedZones?: [zone],
              zoneRecords?: {zone: fqdn} | perZoneRecords?: bool} | null

    The whole bag may also sit under a ``facts`` key. ``publish`` may also be given at the top level.
    """

    name: str
    provider: Any = None
    member_placement: Any = None
    tags: Any = field(default_factory=list)
    allowed_cidrs: Any = None
    zones: dict[str, ZoneFacts] = field(default_factory=dict)
    members: list[MemberFacts] = field(default_factory=list)
    listeners: list[ListenerFacts] = field(default_factory=list)
    has_dns: bool = False
    publish: Any = None
    published_zones: Any = None
    zone_record_zones: Any = field(default_factory=list)
    ttl: Any = None
    zones_declared: bool = False
    members_declared: bool = False
    listeners_declared: bool = False

    def zone_records(self) -> list[str]:
        """The published zones that also get a record of their own (``<record>-<zone>``)."""
        published = self.published()
        if self.zone_record_zones is None:
            return published
        return [zone for zone in self.zone_record_zones if zone in published]

    def published(self) -> list[str]:
        """The zones whose address the endpoint declares it publishes in DNS (default: every zone)."""
        if isinstance(self.published_zones, list) and fully_known(self.published_zones):
            return [str(zone) for zone in self.published_zones]
        return list(self.zones)


def read_facts(props: Any, fallback_name: str) -> Facts:
    """Parse the HaEndpoint's (plain) properties into :class:`Facts`; absent facts stay ``None``/``UNKNOWN``."""
    data = props if isinstance(props, dict) else {}
    nested = data.get("facts")
    if isinstance(nested, dict):
        data = {**data, **nested}
    name = _pick(data, "name", "endpointName", "endpoint_name")
    facts = Facts(name=name if isinstance(name, str) and name else fallback_name)
    facts.provider = _pick(data, "provider")
    facts.member_placement = _pick(data, "memberPlacement", "member_placement")
    facts.tags = _as_list(_pick(data, "tags"))
    facts.allowed_cidrs = _pick(data, "allowedCidrs", "allowed_cidrs")

    zones = _pick(data, "zones")
    facts.zones_declared = isinstance(zones, (dict, list))
    if isinstance(zones, list):  # also accept a list of {name|key|az, ...}
        zones = {str(_pick(z, "name", "key", "zone", "az")): z for z in zones if isinstance(z, dict)}
    for key, zone in sorted(zones.items(), key=lambda item: natural_key(item[0])) if isinstance(zones, dict) else []:
        zone = zone if isinstance(zone, dict) else {}
        facts.zones[key] = ZoneFacts(
            key=key,
            az=_pick(zone, "az", "availabilityZone", "availability_zone", default=key),
            subnet_id=_pick(zone, "subnetId", "subnet_id", "vipSubnetId", "vip_subnet_id"),
            subnet_cidr=_pick(zone, "subnetCidr", "subnet_cidr", "vipSubnetCidr", "vip_subnet_cidr", "cidr"),
            network_id=_pick(zone, "networkId", "network_id", "vipNetworkId", "vip_network_id"),
            router_ids=_pick(zone, "routerIds", "router_ids"),
            published_address=_address_of(_pick(zone, "publishedAddress", "published_address", "floatingIp",
                                                "floating_ip")),
        )

    members = _pick(data, "members")
    facts.members_declared = isinstance(members, (dict, list))
    if isinstance(members, dict):
        members = [{"name": key, **(value if isinstance(value, dict) else {})} for key, value in members.items()]
    members = members if isinstance(members, list) else []
    for member in sorted(members, key=lambda m: natural_key(str(_pick(m, "name", default="")))):
        member = member if isinstance(member, dict) else {}
        facts.members.append(MemberFacts(
            name=str(_pick(member, "name", default="?")),
            zone=_pick(member, "zone", "az"),
            address=_pick(member, "address"),
            subnet_id=_pick(member, "subnetId", "subnet_id"),
            subnet_cidr=_pick(member, "subnetCidr", "subnet_cidr", "cidr"),
            network_id=_pick(member, "networkId", "network_id"),
            router_ids=_pick(member, "routerIds", "router_ids"),
        ))

    listeners = _pick(data, "listeners")
    facts.listeners_declared = isinstance(listeners, list)
    for listener in listeners if isinstance(listeners, list) else []:
        listener = listener if isinstance(listener, dict) else {}
        monitor = _pick(listener, "monitor")
        port = number(_pick(listener, "port"))
        member_port = number(_pick(listener, "memberPort", "member_port", default=port))
        if member_port is None:
            member_port = port
        monitor_type = _pick(listener, "monitorType", "monitor_type", default=_pick(monitor, "type"))
        monitor_port = number(_pick(listener, "monitorPort", "monitor_port", default=_pick(monitor, "port")))
        if monitor_port is None and monitor_type:
            monitor_port = member_port
        facts.listeners.append(ListenerFacts(
            port=port, member_port=member_port, monitor_port=monitor_port,
            protocol=_pick(listener, "protocol", default="TCP"), monitor_type=monitor_type,
            lb_method=_pick(listener, "lbMethod", "lb_method"),
        ))

    dns = _pick(data, "dns")
    facts.has_dns = isinstance(dns, dict)
    facts.publish = _pick(dns, "publish", default=_pick(data, "publish", "publishMode", "publish_mode"))
    facts.published_zones = _pick(dns, "publishedZones", "published_zones",
                                  default=_pick(data, "publishedZones", "published_zones"))
    zone_records = _pick(dns, "zoneRecords", "zone_records")
    if isinstance(zone_records, dict):
        facts.zone_record_zones = [str(zone) for zone in zone_records]
    elif _pick(dns, "perZoneRecords", "per_zone_records") is True:
        facts.zone_record_zones = None  # every published zone
    else:
        facts.zone_record_zones = []
    facts.ttl = _pick(dns, "ttl")
    return facts


def _address_of(value: Any) -> Any:
    """A zone's published address: a string, or the ``address`` of a ``{mode, address, id}`` floating IP."""
    if isinstance(value, dict):
        return value.get("address")
    return value


def gap(endpoint: str, path: str, what: str) -> str:
    """The message for a fact a policy needs and the component did not declare (or declared unknown)."""
    return (f"endpoint {endpoint}: {what} ({path}) is missing from the HaEndpoint's properties or unknown at "
            f"preview, so it cannot be checked; the component must pass it as a plain, looked-up value")

"""The fake cloud's answers to provider invokes (data sources), with the real provider's "no results" errors."""

from __future__ import annotations

import ipaddress
from typing import Any, Callable

NO_RESULTS = "Your query returned no results. Please change your search criteria and try again."
MANY_RESULTS = "Your query returned more than one result. Please try a more specific search criteria"


class NotFound(Exception):
    """The data source matched no object (or several): the provider's error, about ``property``."""

    def __init__(self, message: str, property_: str = ""):
        super().__init__(message)
        self.property = property_


def answer(cloud, token: str, args: dict) -> dict:
    handler = HANDLERS.get(token)
    if handler is None:  # lookups of what a program declares beside the endpoint (servers)
        from .neighbours import INVOKES

        handler = INVOKES.get(token)
    if handler is None:
        raise NotImplementedError(f"the fake cloud does not answer {token}")
    return handler(cloud, args)


def _one(items: list[dict], args: dict) -> dict:
    if not items:
        raise NotFound(NO_RESULTS, ",".join(sorted(args)))
    if len(items) > 1:
        raise NotFound(MANY_RESULTS, ",".join(sorted(args)))
    return items[0]


def _matches(item: dict, filters: dict[str, Any]) -> bool:
    return all(value is None or item.get(key) == value for key, value in filters.items())


def get_subnet(cloud, args: dict) -> dict:
    subnets = [{"id": s.id, "name": s.name, "cidr": s.cidr, "networkId": s.network_id, "gatewayIp": s.gateway_ip,
                "ipVersion": ipaddress.ip_network(s.cidr).version, "subnetId": s.id}
               for s in cloud.subnets.values()]
    return _one([s for s in subnets if _matches(s, {"name": args.get("name"), "id": args.get("subnetId"),
                                                    "networkId": args.get("networkId")})], args)


def get_network(cloud, args: dict) -> dict:
    networks = [{"id": n["id"], "name": n["name"], "external": n["external"], "subnets": n["subnets"],
                 "networkId": n["id"], "availabilityZoneHints": list(n.get("az_hints", []))}
                for n in cloud.networks.values()]
    return _one([n for n in networks if _matches(n, {"name": args.get("name"), "id": args.get("networkId"),
                                                     "external": args.get("external")})], args)


def get_port_ids(cloud, args: dict) -> dict:
    ports = [p for p in cloud.ports.values()
             if _matches(p, {"network_id": args.get("networkId"), "device_owner": args.get("deviceOwner"),
                             "device_id": args.get("deviceId")})]
    return {"id": "ports", "ids": sorted(p["id"] for p in ports)}


def get_port(cloud, args: dict) -> dict:
    port = cloud.ports.get(args.get("portId"))
    if port is None:
        raise NotFound(NO_RESULTS, "portId")
    return {"id": port["id"], "portId": port["id"], "networkId": port["network_id"], "deviceId": port["device_id"],
            "deviceOwner": port["device_owner"], "allFixedIps": [ip for _, ip in port["fixed_ips"]],
            "allSecurityGroupIds": sorted(port["security_groups"])}


def get_router(cloud, args: dict) -> dict:
    router = cloud.routers.get(args.get("routerId"))
    if router is None:
        raise NotFound(NO_RESULTS, "routerId")
    return {"id": router["id"], "routerId": router["id"], "name": router["name"],
            "availabilityZoneHints": list(router["az_hints"]), "distributed": router["distributed"],
            "externalNetworkId": router["external_network_id"] or ""}


def get_floating_ip(cloud, args: dict) -> dict:
    fips = [f for f in cloud.floating_ips.values() if f.address == args.get("address")]
    fip = _one([{"fip": f} for f in fips], args)["fip"]
    return {"id": fip.id, "address": fip.address, "pool": fip.network_id, "portId": fip.port_id or "",
            "status": "ACTIVE" if fip.port_id else "DOWN"}


def get_sec_group(cloud, args: dict) -> dict:
    group = cloud.kind("openstack:networking/secGroup:SecGroup").get(args.get("secgroupId"))
    if group is None:
        raise NotFound(NO_RESULTS, "secgroupId")
    return {"id": args["secgroupId"], "secgroupId": args["secgroupId"], "name": group.get("name"),
            "allTags": list(group.get("tags") or [])}


def get_dns_zone(cloud, args: dict) -> dict:
    zones = [{"id": zone_id, "name": name} for zone_id, name in cloud.dns_zones.items()]
    return _one([z for z in zones if _matches(z, {"name": args.get("name")})], args)


HANDLERS: dict[str, Callable[[Any, dict], dict]] = {
    "openstack:networking/getSubnet:getSubnet": get_subnet,
    "openstack:networking/getNetwork:getNetwork": get_network,
    "openstack:networking/getPortIds:getPortIds": get_port_ids,
    "openstack:networking/getPort:getPort": get_port,
    "openstack:networking/getFloatingIp:getFloatingIp": get_floating_ip,
    "openstack:networking/getRouter:getRouter": get_router,
    "openstack:networking/getSecGroup:getSecGroup": get_sec_group,
    "openstack:dns/getDnsZone:getDnsZone": get_dns_zone,
}

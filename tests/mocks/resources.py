"""The fake cloud's resource handlers: check a create request as the cloud would, then allocate and store it.

Each handler gets the inputs (camelCase, as the engine sends them) and returns ``(id, outputs)``. In preview mode
only the known inputs are checked; nothing is stored and no id or computed output is returned.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Callable

from .cloud import CloudError, FloatingIp, known

HTTP_MONITORS = ("HTTP", "HTTPS")


def create(cloud, typ: str, name: str, inputs: dict) -> tuple[str, dict]:
    handler = HANDLERS.get(typ)
    if handler is None:
        raise CloudError(f"the fake cloud does not know resource type {typ}")
    outputs = handler(cloud, name, inputs)
    if cloud.preview:
        return "", inputs  # the state of a preview is its inputs (the registration's own dict, not a copy)
    resource_id = outputs.pop("id", None) or cloud.new_id()
    state = {**inputs, **outputs}
    cloud.kind(typ)[resource_id] = state
    return resource_id, state


def _get(cloud, typ: str, resource_id, what: str) -> dict:
    if not known(resource_id):
        return {}
    found = cloud.kind(typ).get(resource_id)
    if found is None and not cloud.preview:
        raise CloudError(f"{what} {resource_id} could not be found")
    return found or {}


def _subnet(cloud, subnet_id, what: str):
    if not known(subnet_id):
        return None
    subnet = cloud.subnets.get(subnet_id)
    if subnet is None:
        raise CloudError(f"{what}: subnet {subnet_id} could not be found")
    return subnet


def loadbalancer(cloud, name: str, inputs: dict) -> dict:
    subnet = _subnet(cloud, inputs.get("vipSubnetId"), f"load balancer {name}")
    az = inputs.get("availabilityZone")
    if known(az) and az is not None and az not in cloud.azs:
        raise CloudError(f"load balancer {name}: availability zone '{az}' does not exist (have {sorted(cloud.azs)})")
    if known(az) and az in cloud.disabled_azs:
        raise CloudError(f"load balancer {name}: availability zone '{az}' is disabled")
    provider = inputs.get("loadbalancerProvider")
    if known(provider) and provider is not None and provider not in cloud.providers:
        raise CloudError(f"load balancer {name}: provider '{provider}' is not enabled")
    if cloud.preview or subnet is None:
        return {}
    address = subnet.allocate()
    port_id = cloud.add_port(subnet.network_id, [(subnet.id, address)], "Octavia", name)
    return {"vipAddress": address, "vipPortId": port_id, "vipNetworkId": subnet.network_id,
            "provisioningStatus": "ACTIVE"}


def listener(cloud, name: str, inputs: dict) -> dict:
    lb = _get(cloud, LB, inputs.get("loadbalancerId"), f"listener {name}: load balancer")
    protocol, ref = inputs.get("protocol"), inputs.get("defaultTlsContainerRef")
    if known(protocol) and known(ref):
        if protocol == "TERMINATED_HTTPS" and not ref:
            raise CloudError(f"listener {name}: a TERMINATED_HTTPS listener needs a default_tls_container_ref (400)")
        if protocol != "TERMINATED_HTTPS" and ref:
            raise CloudError(f"listener {name}: certificate references are only allowed on TERMINATED_HTTPS (400)")
        if ref and ref not in cloud.certificates and not cloud.preview:  # Octavia loads it when it creates
            raise CloudError(f"listener {name}: could not retrieve certificate {ref} (400)")
    port = inputs.get("protocolPort")
    if lb and not cloud.preview:
        taken = [l for l in cloud.kind(LISTENER).values() if l["loadbalancerId"] == inputs["loadbalancerId"]
                 and l["protocolPort"] == port]
        if taken:
            raise CloudError(f"listener {name}: port {port} is already used by another listener (409)")
    return {}


def pool(cloud, name: str, inputs: dict) -> dict:
    found = _get(cloud, LISTENER, inputs.get("listenerId"), f"pool {name}: listener")
    lb = _get(cloud, LB, found.get("loadbalancerId"), "load balancer") if found else {}
    if lb.get("loadbalancerProvider") == "ovn" and inputs.get("lbMethod") != "SOURCE_IP_PORT":
        raise CloudError(f"pool {name}: the ovn provider supports SOURCE_IP_PORT only, not {inputs.get('lbMethod')}")
    return {"loadbalancerId": found.get("loadbalancerId", "")} if found else {}


def monitor(cloud, name: str, inputs: dict) -> dict:
    found = _get(cloud, POOL, inputs.get("poolId"), f"monitor {name}: pool")
    if found and any(m["poolId"] == inputs["poolId"] for m in cloud.kind(MONITOR).values()):
        raise CloudError(f"monitor {name}: pool {inputs['poolId']} already has a health monitor (409)")
    lb = _get(cloud, LB, found.get("loadbalancerId"), "load balancer") if found else {}
    if lb.get("loadbalancerProvider") == "ovn" and inputs.get("type") in HTTP_MONITORS:
        raise CloudError(f"monitor {name}: the ovn provider has no {inputs.get('type')} monitors")
    if inputs.get("timeout", 0) >= inputs.get("delay", 1):
        raise CloudError(f"monitor {name}: timeout must be less than delay")
    kind = inputs.get("type")
    if kind == "UDP-CONNECT" and known(inputs.get("delay")) and inputs.get("delay", 0) < 3:
        raise CloudError(f"monitor {name}: the delay of a UDP-CONNECT monitor must be at least 3 (400)")
    if kind not in HTTP_MONITORS and (inputs.get("urlPath") or inputs.get("expectedCodes")):
        raise CloudError(f"monitor {name}: url_path and expected_codes are for HTTP(S) monitors only (400)")
    codes = inputs.get("expectedCodes")
    if known(codes) and codes and not re.match(r"^(\d{3}(\s*,\s*\d{3})*)$|^(\d{3}-\d{3})$", codes):
        raise CloudError(f"monitor {name}: invalid expected_codes {codes!r} (400)")
    if found and known(kind) and found.get("protocol") in ("UDP", "SCTP") and \
            kind not in ("UDP-CONNECT", "SCTP", "TCP", "HTTP"):
        raise CloudError(f"monitor {name}: a {found.get('protocol')} pool takes no {kind} monitor (400)")
    return {}


def member(cloud, name: str, inputs: dict) -> dict:
    _get(cloud, POOL, inputs.get("poolId"), f"member {name}: pool")
    subnet = _subnet(cloud, inputs.get("subnetId"), f"member {name}")
    address = inputs.get("address")
    if subnet is not None and known(address) and ipaddress.ip_address(address) not in subnet.net:
        raise CloudError(f"member {name}: address {address} is not in subnet {subnet.name} ({subnet.cidr})")
    if subnet is not None and known(address) and address in (str(subnet.net.network_address), subnet.gateway_ip,
                                                              str(subnet.net.broadcast_address)):
        raise CloudError(f"member {name}: address {address} is the network, broadcast or gateway address of "
                         f"{subnet.cidr}; no server answers there")
    if known(inputs.get("poolId")) and not cloud.preview:
        endpoints = cloud.pool_members.setdefault(inputs["poolId"], set())
        if (address, inputs.get("protocolPort")) in endpoints:
            raise CloudError(f"member {name}: {address}:{inputs.get('protocolPort')} is already in the pool")
        endpoints.add((address, inputs.get("protocolPort")))
    return {"operatingStatus": "ONLINE", "provisioningStatus": "ACTIVE"}


def floating_ip(cloud, name: str, inputs: dict) -> dict:
    pool_name = inputs.get("pool")
    networks = [n for n in cloud.networks.values() if n["name"] == pool_name and n["external"]]
    if known(pool_name) and not networks:
        raise CloudError(f"floating IP {name}: external network '{pool_name}' could not be found")
    if cloud.preview:
        return {}
    network_id = networks[0]["id"]
    free = cloud.fip_pools.get(network_id, [])
    if not free:
        raise CloudError(f"floating IP {name}: no more IP addresses available on network {network_id}")
    address = free.pop(0)
    fip = FloatingIp(cloud.new_id(), address, network_id)
    cloud.floating_ips[fip.id] = fip
    return {"id": fip.id, "address": address, "pool": pool_name}


def floating_ip_associate(cloud, name: str, inputs: dict) -> dict:
    address, port_id = inputs.get("floatingIp"), inputs.get("portId")
    fip = next((f for f in cloud.floating_ips.values() if f.address == address), None)
    if known(address) and fip is None and not cloud.preview:
        raise CloudError(f"association {name}: floating IP {address} could not be found")
    if known(port_id) and port_id not in cloud.ports and not cloud.preview:
        raise CloudError(f"association {name}: port {port_id} could not be found")
    if fip is None or cloud.preview:
        return {}
    fip.port_id = port_id  # as Neutron does: an associated floating IP moves to the new port without a word
    fixed = cloud.ports[port_id]["fixed_ips"][0][1]
    return {"id": fip.id, "fixedIp": fixed}


def secgroup(cloud, name: str, inputs: dict) -> dict:
    return {"tenantId": "project"}


def secgroup_rule(cloud, name: str, inputs: dict) -> dict:
    _get(cloud, SECGROUP, inputs.get("securityGroupId"), f"rule {name}: security group")
    keys = ("securityGroupId", "direction", "ethertype", "protocol", "portRangeMin", "portRangeMax",
            "remoteIpPrefix")
    wanted = tuple(inputs.get(key) for key in keys)
    if not cloud.preview and any(tuple(r.get(key) for key in keys) == wanted
                                 for r in cloud.kind(RULE).values()):
        raise CloudError(f"rule {name}: security group rule already exists (409)")
    prefix = inputs.get("remoteIpPrefix")
    if known(prefix) and prefix:
        ipaddress.ip_network(prefix, strict=True)
    return {}


def port_secgroup(cloud, name: str, inputs: dict) -> dict:
    port_id = inputs.get("portId")
    if known(port_id) and port_id not in cloud.ports and not cloud.preview:
        raise CloudError(f"{name}: port {port_id} could not be found")
    groups = inputs.get("securityGroupIds") or []
    for group in groups:
        _get(cloud, SECGROUP, group, f"{name}: security group")
    if not cloud.preview and known(port_id):
        cloud.ports[port_id]["security_groups"].update(groups)
    return {"allSecurityGroupIds": sorted(cloud.ports.get(port_id, {}).get("security_groups", []))
            if known(port_id) else []}


def recordset(cloud, name: str, inputs: dict) -> dict:
    zone_id, fqdn, records = inputs.get("zoneId"), inputs.get("name"), inputs.get("records")
    if known(zone_id) and zone_id not in cloud.dns_zones:
        raise CloudError(f"recordset {name}: zone {zone_id} could not be found")
    if known(zone_id) and known(fqdn) and not fqdn.endswith("." + cloud.dns_zones.get(zone_id, "")):
        raise CloudError(f"recordset {name}: {fqdn} is not inside zone {cloud.dns_zones.get(zone_id)}")
    if known(records) and not records:
        raise CloudError(f"recordset {name}: records must not be empty")
    if known(records):
        for record in records:
            ipaddress.IPv4Address(record)
    return {}


class ReadinessFailed(Exception):
    """A readiness gate's create failing, as the provider's does when a zone does not become ready (on_not_ready
    ``fail``)."""


def readiness(cloud, name: str, inputs: dict) -> dict:
    """The readiness dynamic resource: ready once every member it waits for exists. A zone whose AZ is listed in
    ``cloud.unready_azs`` (tests use it to hold a zone back) never becomes ready: its gate fails the update, or, with
    ``on_not_ready: unpublish``, records ``ready`` false and the reason, as the provider does."""
    if "pools" not in inputs:  # a MemberDrain: nothing to answer before a delete
        return {}
    pools = inputs.get("pools") or {}
    if not known(pools):
        return {}
    members = cloud.kind(MEMBER)
    ready = all(member_id in members for spec in pools.values() for member_id in spec.get("member_ids", []))
    if cloud.preview:
        return {}
    lb_id = inputs.get("loadbalancer_id")
    lb = cloud.kind(LB).get(lb_id, {})
    if lb.get("availabilityZone") not in cloud.unready_azs:
        return {"ready": ready, "not_ready_reason": None}
    reason = f"load balancer {lb_id}: the zone is dead (every member has been down for 60s)"
    if inputs.get("on_not_ready") == "unpublish":
        return {"ready": False, "not_ready_reason": reason}
    raise ReadinessFailed(f"load balancer {lb_id}: members not ready after {inputs.get('timeout_seconds')}s")


def member_vip(cloud, name: str, inputs: dict) -> dict:
    """A keepalived MemberVip: the VIP added to the member port's allowed address pairs and the zone's group to its
    groups, as the provider does (a port found by id, else by address on the network; port security must be on)."""
    if cloud.preview or not known(inputs):
        return {}
    port_id = inputs.get("port_id")
    ports = [cloud.ports[port_id]] if port_id else [
        port for port in cloud.ports.values() if port["network_id"] == inputs.get("network_id")
        and any(ip == inputs.get("address") for _, ip in port["fixed_ips"])]
    if len(ports) != 1:
        raise CloudError(f"{name}: {len(ports)} ports hold {inputs.get('address')}")
    port = ports[0]
    if not port["port_security"]:
        raise CloudError(f"{name}: port {port['id']} has port security disabled")
    vip, group = inputs["vip_address"], inputs["group_id"]
    added_pair = vip not in port["allowed_address_pairs"]
    added_group = group not in port["security_groups"]
    if added_pair:
        port["allowed_address_pairs"].append(vip)
    port["security_groups"].add(group)
    return {"held_port_id": port["id"], "added_pair": added_pair, "added_group": added_group}


def vip_readiness(cloud, name: str, inputs: dict) -> dict:
    """A keepalived zone's VipReadiness: ready once its VIP port exists and every member port of the zone holds the
    VIP in its allowed address pairs; a zone in ``cloud.unready_azs`` never is (as :func:`readiness`)."""
    if cloud.preview:
        return {}
    port_id = inputs.get("loadbalancer_id")
    port = cloud.ports.get(port_id)
    az = name.rsplit("-", 2)[-2] if name.endswith("-ready") else None
    if port is not None and az not in cloud.unready_azs:
        return {"ready": True, "not_ready_reason": None}
    reason = f"VIP port {port_id}: the zone is dead (no member has held the VIP for 60s)"
    if inputs.get("on_not_ready") == "unpublish":
        return {"ready": False, "not_ready_reason": reason}
    raise ReadinessFailed(f"VIP port {port_id}: not held after {inputs.get('timeout_seconds')}s")


LB = "openstack:loadbalancer/loadBalancer:LoadBalancer"
LISTENER = "openstack:loadbalancer/listener:Listener"
POOL = "openstack:loadbalancer/pool:Pool"
MONITOR = "openstack:loadbalancer/monitor:Monitor"
MEMBER = "openstack:loadbalancer/member:Member"
SECGROUP = "openstack:networking/secGroup:SecGroup"
RULE = "openstack:networking/secGroupRule:SecGroupRule"
HANDLERS: dict[str, Callable[..., dict]] = {
    LB: loadbalancer, LISTENER: listener, POOL: pool, MONITOR: monitor, MEMBER: member,
    "openstack:networking/floatingIp:FloatingIp": floating_ip,
    "openstack:networking/floatingIpAssociate:FloatingIpAssociate": floating_ip_associate,
    SECGROUP: secgroup, RULE: secgroup_rule,
    "openstack:networking/portSecGroupAssociate:PortSecGroupAssociate": port_secgroup,
    "openstack:dns/recordSet:RecordSet": recordset,
    "pulumi-python:dynamic:Resource": readiness,
    "pulumi-python:dynamic/haendpoint:MemberReadiness": readiness,
    "pulumi-python:dynamic/haendpoint:MemberDrain": readiness,
    "haendpoint:index:MemberReadiness": readiness,  # the same, built in the package's provider host
    "haendpoint:index:MemberDrain": readiness,
    "pulumi-python:dynamic/haendpoint:PutBack": lambda cloud, name, inputs: dict(inputs),  # a record, no API call
    "haendpoint:index:PutBack": lambda cloud, name, inputs: dict(inputs),
    "pulumi:providers:openstack": lambda cloud, name, inputs: dict(inputs),  # a provider's state is its inputs
    "pulumi-python:dynamic/haendpoint:MemberVip": member_vip,
    "haendpoint:index:MemberVip": member_vip,
    "pulumi-python:dynamic/haendpoint:VipReadiness": vip_readiness,
    "haendpoint:index:VipReadiness": vip_readiness,
}


def destroy(cloud) -> None:
    """``pulumi destroy``: delete what the program created, dependents first (reverse registration order)."""
    for record in reversed(cloud.registrations):
        resource_id = record.get("id")
        if not record["custom"] or not resource_id or resource_id not in cloud.kind(record["type"]):
            continue
        state = cloud.kind(record["type"]).pop(resource_id)
        DELETERS.get(record["type"], lambda *_: None)(cloud, resource_id, state)
        cloud.deleted.append((record["type"], resource_id))


def _delete_lb(cloud, _id: str, state: dict) -> None:
    port = cloud.ports.pop(state["vipPortId"])
    for subnet_id, address in port["fixed_ips"]:
        cloud.subnets[subnet_id].used.discard(address)


def _delete_fip(cloud, fip_id: str, _state: dict) -> None:
    fip = cloud.floating_ips.pop(fip_id)
    if fip.brought:
        raise CloudError(f"deleted the user's floating IP {fip.address}")
    cloud.fip_pools[fip.network_id].append(fip.address)


def _disassociate(cloud, fip_id: str, _state: dict) -> None:
    cloud.floating_ips[fip_id].port_id = None


def _detach_groups(cloud, _id: str, state: dict) -> None:
    port = cloud.ports.get(state["portId"])
    if port is not None:
        port["security_groups"].difference_update(state.get("securityGroupIds") or [])


def _remove_vip(cloud, _id: str, state: dict) -> None:
    port = cloud.ports.get(state.get("held_port_id"))
    if port is None:
        return
    if state.get("added_pair"):
        port["allowed_address_pairs"].remove(state["vip_address"])
    if state.get("added_group"):
        port["security_groups"].discard(state["group_id"])


def _delete_port(cloud, port_id: str, _state: dict) -> None:
    port = cloud.ports.pop(port_id, None)
    for subnet_id, address in (port or {}).get("fixed_ips", []):
        cloud.subnets[subnet_id].used.discard(address)


DELETERS = {
    LB: _delete_lb,
    "openstack:networking/port:Port": _delete_port,
    "pulumi-python:dynamic/haendpoint:MemberVip": _remove_vip,
    "openstack:networking/floatingIp:FloatingIp": _delete_fip,
    "openstack:networking/floatingIpAssociate:FloatingIpAssociate": _disassociate,
    "openstack:networking/portSecGroupAssociate:PortSecGroupAssociate": _detach_groups,
}


def _neighbours() -> None:
    """What a program declares beside the endpoint (networks, subnets, routers, ports, servers, DNS zones)."""
    from . import neighbours

    HANDLERS.update(neighbours.HANDLERS)


_neighbours()

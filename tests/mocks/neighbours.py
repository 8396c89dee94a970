"""What a program declares beside the endpoint, in the fake cloud: networks, subnets, routers and their interfaces,
ports, servers (``compute.Instance``) and DNS zones.

Each is created the way the cloud does it (ids, addresses allocated from the subnet, a router interface port at the
subnet's gateway, a server's port bound to it), so that the component's lookups of them (subnet, router, port,
server invokes) answer as they would against a real cloud. In preview mode nothing is created.
"""

from __future__ import annotations

import ipaddress

from .cloud import CloudError, known

NETWORK = "openstack:networking/network:Network"
SUBNET = "openstack:networking/subnet:Subnet"
ROUTER = "openstack:networking/router:Router"
ROUTER_INTERFACE = "openstack:networking/routerInterface:RouterInterface"
PORT = "openstack:networking/port:Port"
INSTANCE = "openstack:compute/instance:Instance"
DNS_ZONE = "openstack:dns/zone:Zone"


def network(cloud, name: str, inputs: dict) -> dict:
    if cloud.preview:
        return {}
    network_id = cloud.add_network(inputs.get("name") or name, bool(inputs.get("external")))
    cloud.networks[network_id]["az_hints"] = list(inputs.get("availabilityZoneHints") or [])
    return {"id": network_id}


def subnet(cloud, name: str, inputs: dict) -> dict:
    network_id, cidr = inputs.get("networkId"), inputs.get("cidr")
    if known(network_id) and network_id is not None and network_id not in cloud.networks and not cloud.preview:
        raise CloudError(f"subnet {name}: network {network_id} could not be found")
    if known(cidr) and cidr is not None:
        ipaddress.ip_network(cidr, strict=True)
    if cloud.preview:
        return {}
    subnet_id = cloud.add_subnet(network_id, inputs.get("name") or name, cidr)
    return {"id": subnet_id, "gatewayIp": cloud.subnets[subnet_id].gateway_ip,
            "ipVersion": ipaddress.ip_network(cidr).version}


def router(cloud, name: str, inputs: dict) -> dict:
    if cloud.preview:
        return {}
    router_id = cloud.new_id()
    cloud.routers[router_id] = {"id": router_id, "name": inputs.get("name") or name,
                                "az_hints": tuple(inputs.get("availabilityZoneHints") or ()),
                                "distributed": bool(inputs.get("distributed")),
                                "external_network_id": inputs.get("externalNetworkId") or None}
    return {"id": router_id}


def router_interface(cloud, name: str, inputs: dict) -> dict:
    router_id, subnet_id = inputs.get("routerId"), inputs.get("subnetId")
    if cloud.preview:
        return {}
    if router_id not in cloud.routers or subnet_id not in cloud.subnets:
        raise CloudError(f"router interface {name}: router {router_id} or subnet {subnet_id} could not be found")
    found = cloud.subnets[subnet_id]
    port_id = cloud.add_port(found.network_id, [(subnet_id, found.gateway_ip)], "network:router_interface",
                             router_id)
    return {"id": port_id, "portId": port_id}


def port(cloud, name: str, inputs: dict) -> dict:
    network_id = inputs.get("networkId")
    if cloud.preview:
        return {}
    if network_id not in cloud.networks:
        raise CloudError(f"port {name}: network {network_id} could not be found")
    fixed = []
    for spec in inputs.get("fixedIps") or [{"subnetId": cloud.networks[network_id]["subnets"][0]}]:
        found = cloud.subnets[spec["subnetId"]]
        address = spec.get("ipAddress") or _server_address(found)
        if ipaddress.ip_address(address) not in found.net:
            raise CloudError(f"port {name}: address {address} is not in subnet {found.name} ({found.cidr})")
        if address in found.used:
            raise CloudError(f"port {name}: address {address} is already in use on subnet {found.name} (409)")
        found.used.add(address)
        fixed.append((found.id, address))
    port_id = cloud.add_port(network_id, fixed)
    cloud.ports[port_id].update(name=inputs.get("name") or "", tags=list(inputs.get("tags") or []))
    return {"id": port_id, "allFixedIps": [address for _, address in fixed], "macAddress": "fa:16:3e:00:00:01"}


def _server_address(found) -> str:
    """A server's address: from .10 up (the load balancers' VIPs are allocated from .100)."""
    for host in found.net.hosts():
        address = str(host)
        if address not in found.used and int(address.rsplit(".", 1)[-1]) >= 10:
            return address
    raise CloudError(f"No more IP addresses available on subnet {found.id}")


def instance(cloud, name: str, inputs: dict) -> dict:
    az = inputs.get("availabilityZone")
    if known(az) and az is not None and az not in cloud.azs:
        raise CloudError(f"server {name}: availability zone '{az}' does not exist (have {sorted(cloud.azs)})")
    if cloud.preview:
        return {}
    server_id = cloud.new_id()
    networks = []
    for spec in inputs.get("networks") or []:
        port_id = spec.get("port")
        if port_id not in cloud.ports:
            raise CloudError(f"server {name}: port {port_id} could not be found")
        bound = cloud.ports[port_id]
        if bound["device_id"]:
            raise CloudError(f"server {name}: port {port_id} is in use by device {bound['device_id']} (409)")
        bound["device_id"], bound["device_owner"] = server_id, f"compute:{az}"
        addresses = [address for _, address in bound["fixed_ips"]]
        networks.append({"port": port_id, "uuid": bound["network_id"],
                         "fixedIpV4": next((a for a in addresses if ipaddress.ip_address(a).version == 4), ""),
                         "fixedIpV6": next((a for a in addresses if ipaddress.ip_address(a).version == 6), "")})
    return {"id": server_id, "name": inputs.get("name") or name, "availabilityZone": az, "networks": networks,
            "accessIpV4": networks[0]["fixedIpV4"] if networks else ""}


def dns_zone(cloud, name: str, inputs: dict) -> dict:
    fqdn = inputs.get("name")
    if known(fqdn) and fqdn is not None and not fqdn.endswith("."):
        raise CloudError(f"zone {name}: '{fqdn}' is not fully qualified")
    if cloud.preview:
        return {}
    zone_id = cloud.new_id()
    cloud.dns_zones[zone_id] = fqdn
    return {"id": zone_id}


def get_instance_v2(cloud, args: dict) -> dict:
    """The ``compute.getInstanceV2`` invoke: a server created in this fake cloud, by id."""
    from .invokes import NO_RESULTS, NotFound

    found = cloud.kind(INSTANCE).get(args.get("id"))
    if found is None:
        raise NotFound(NO_RESULTS, "id")
    return {"id": args["id"], "name": found["name"], "availabilityZone": found["availabilityZone"],
            "accessIpV4": found["accessIpV4"], "networks": found["networks"]}


HANDLERS = {NETWORK: network, SUBNET: subnet, ROUTER: router, ROUTER_INTERFACE: router_interface, PORT: port,
            INSTANCE: instance, DNS_ZONE: dns_zone}
INVOKES = {"openstack:compute/getInstanceV2:getInstanceV2": get_instance_v2}

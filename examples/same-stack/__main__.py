"""An HA endpoint over resources created in the same program: its network, a subnet per AZ behind one router, a
server per AZ (the control-plane nodes), a floating IP for one zone and the DNS zone. Their ids and addresses are
Outputs, handed to the component as they are; it checks them once they are known, before any load balancer exists.

Configuration (all optional): ``zones`` (the AZs, default az1, az2, az3), ``externalNetwork`` (default ``public``),
``flavor`` and ``image`` of the servers (default ``m1.tiny`` and ``cirros``), ``dnsZone`` (default
``same-stack.example.test.``) and ``cidrPrefix`` (default ``10.30``: subnet N is ``<prefix>.N.0/24``).
"""

import pulumi
import pulumi_openstack as openstack

from ha_endpoint import HaEndpoint

config = pulumi.Config()
azs = config.get_object("zones") or ["az1", "az2", "az3"]
prefix = config.get("cidrPrefix") or "10.30"
external = openstack.networking.get_network(name=config.get("externalNetwork") or "public", external=True)

network = openstack.networking.Network("app-net", admin_state_up=True, availability_zone_hints=azs)
# One router for every zone, allowed in every AZ. Neutron runs it on one L3 agent unless an admin makes it HA or
# distributed: the policy pack says so (an advisory) after the update, when it can see the router.
router = openstack.networking.Router("app-router", external_network_id=external.id, availability_zone_hints=azs)
subnets, servers = {}, {}
for number, az in enumerate(azs, start=1):
    subnet = openstack.networking.Subnet(f"app-{az}", network_id=network.id, cidr=f"{prefix}.{number}.0/24",
                                         ip_version=4)
    # The endpoint takes the subnet from the router interface, so it waits until the subnet is routed.
    subnets[az] = openstack.networking.RouterInterface(f"app-{az}-if", router_id=router.id, subnet_id=subnet.id)
    port = openstack.networking.Port(f"app-{az}-cp", network_id=network.id,
                                     fixed_ips=[{"subnet_id": subnet.id}])
    servers[az] = openstack.compute.Instance(f"app-{az}-cp", availability_zone=az,
                                             flavor_name=config.get("flavor") or "m1.tiny",
                                             image_name=config.get("image") or "cirros",
                                             networks=[{"port": port.id}])

brought = openstack.networking.FloatingIp("app-brought-fip", pool=external.name)
dns_zone = openstack.dns.Zone("app-zone", name=config.get("dnsZone") or "same-stack.example.test.",
                              email="ops@example.test", ttl=60)

endpoint = HaEndpoint("app-api", {
    "name": "app-api",
    "floatingNetwork": external.name,
    "zones": {az: {"subnet": subnets[az].subnet_id, **({"floatingIp": brought.address} if az == azs[-1] else {})}
              for az in azs},
    "listeners": [{"port": 6443, "monitor": {"type": "TCP"}}],
    "members": [{"name": f"cp-{az}", "az": az, "server": servers[az]} for az in azs],
    "dns": {"dnsZone": dns_zone.name, "record": "api"},
})

pulumi.export("fqdn", endpoint.fqdn)
pulumi.export("addresses", endpoint.addresses)
pulumi.export("zones", endpoint.zones)

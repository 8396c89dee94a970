"""A second stack that uses an HA endpoint stack's outputs through a StackReference.

    pulumi config set endpointStack organization/ha-endpoint/dev && pulumi up

It reads ``fqdn``, ``ports``, ``addresses`` (published in DNS) and ``zones`` (per AZ: vipAddress, floatingIp, ...) and
creates, for the servers that call the API, a security group with an egress rule to every published address and
every zone's VIP on every listener port, and a CNAME ``<this stack>.<the endpoint's DNS zone>`` to the endpoint's
name. When the endpoint stack changes (a zone added or removed), the next ``pulumi up`` here follows.
"""

import pulumi
import pulumi_openstack as openstack

config = pulumi.Config()
endpoint = pulumi.StackReference(config.require("endpointStack"))
fqdn = endpoint.require_output("fqdn")
ports = endpoint.require_output("ports")
addresses = endpoint.require_output("addresses")
zones = endpoint.require_output("zones")

clients = openstack.networking.SecGroup("api-clients", name=f"{pulumi.get_stack()}-api-clients",
                                        description="servers that call the HA endpoint")


def egress_rules(args) -> list[str]:
    """One rule per target and port: the published addresses (clients outside) and the zones' VIPs (inside)."""
    published, per_zone, listener_ports = args
    listener_ports = [int(port) for port in listener_ports]  # numbers come back from the other stack as floats
    targets = {f"dns-{address}": address for address in published}
    targets.update({f"{az}-vip": outputs["vipAddress"] for az, outputs in per_zone.items()})
    created = []
    for name, address in sorted(targets.items()):
        for port in listener_ports:
            openstack.networking.SecGroupRule(
                f"api-clients-{name}-{port}", security_group_id=clients.id, direction="egress", ethertype="IPv4",
                protocol="tcp", port_range_min=port, port_range_max=port, remote_ip_prefix=f"{address}/32")
            created.append(f"{address}/32:{port}")
    return created


dns_zone_name = fqdn.apply(lambda name: name.split(".", 1)[1])  # api.example.test. -> example.test.
dns_zone = openstack.dns.get_dns_zone_output(name=dns_zone_name)
alias = openstack.dns.RecordSet("api-alias", zone_id=dns_zone.id, name=dns_zone_name.apply(
    lambda zone: f"{pulumi.get_stack()}.{zone}"), type="CNAME", records=[fqdn], ttl=30)

pulumi.export("apiUrl", pulumi.Output.all(fqdn, ports).apply(lambda a: f"https://{a[0].rstrip('.')}:{int(a[1][0])}"))
pulumi.export("alias", alias.name)
pulumi.export("clientsSecurityGroupId", clients.id)
pulumi.export("egress", pulumi.Output.all(addresses, zones, ports).apply(egress_rules))

"""The ha-endpoint stack program: ``ha-endpoint:endpoint`` -> :class:`ha_endpoint.HaEndpoint` -> stack outputs.

Outputs (for ``pulumi stack output`` and other stacks' ``StackReference``): ``fqdn``, ``ports``, ``addresses`` (the
addresses published in DNS), ``membersSecurityGroupId``, ``vipSecurityGroupId`` and ``zones`` (per availability
zone: loadbalancer_id, vip_address, vip_port_id, floating_ip, pool_ids, member_ids, ready, published, gate).
"""

from __future__ import annotations

import pulumi

from ha_endpoint import HaEndpoint, load_endpoint_args

CONFIG_KEY = "endpoint"


def main() -> HaEndpoint:
    """Build the endpoint from the stack's configuration and export its outputs."""
    config = pulumi.Config()
    root = f"{config.name}:{CONFIG_KEY}"
    raw = config.require_object(CONFIG_KEY)
    args = load_endpoint_args(raw, root)
    provider = pulumi.Config("openstack")  # the default provider's cloud: the readiness gates poll the same one
    endpoint = HaEndpoint(args.name, args, root=root, cloud=provider.get("cloud"), region=provider.get("region"))
    pulumi.export("fqdn", endpoint.fqdn)
    pulumi.export("ports", endpoint.ports)
    pulumi.export("addresses", endpoint.addresses)
    pulumi.export("membersSecurityGroupId", endpoint.members_security_group_id)
    pulumi.export("vipSecurityGroupId", endpoint.vip_security_group_id)
    pulumi.export("zones", endpoint.zones)
    return endpoint

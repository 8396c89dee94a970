"""A zone's floating IP, for every backend: allocated (tagged with the stack's identity) or the user's own (never
created or deleted here), associated with the port that holds the zone's VIP."""

from __future__ import annotations

from typing import Optional

import pulumi
import pulumi_openstack as openstack

from ..core.plan import ZonePlan


def floating_ip(zone: ZonePlan, vip_port_id: pulumi.Input[str], opts: pulumi.ResourceOptions,
                association_opts: Optional[pulumi.ResourceOptions] = None
                ) -> tuple[Optional[openstack.networking.FloatingIp], pulumi.Output[Optional[str]]]:
    """The floating IP this zone allocates (None for ``none`` and a brought one) and the address once associated
    with ``vip_port_id`` (None for ``none``); ``association_opts`` are merged into the association's options."""
    floating = zone.floating
    if floating.mode == "none":
        return None, pulumi.Output.from_input(None)
    allocated = None
    if floating.mode == "byo":
        address: pulumi.Input[str] = floating.byo.address
    else:
        allocated = openstack.networking.FloatingIp(
            floating.name, pool=floating.network_name, tags=[zone.identity.tag],
            description=zone.identity.describe(f"{floating.name}: HA endpoint VIP of zone {zone.az}", floating.name),
            opts=opts)
        address = allocated.address
    association = openstack.networking.FloatingIpAssociate(
        floating.association_name, floating_ip=address, port_id=vip_port_id,
        opts=pulumi.ResourceOptions.merge(opts, association_opts) if association_opts else opts)
    return allocated, association.floating_ip

"""How the keepalived backend serves one availability zone: a VIP that the zone's members hold with VRRP.

Children of the zone:

* the VIP port (``<endpoint>-<az>-vip``): a Neutron port on the zone's subnet with no device, that only reserves the
  address (``zones.<az>.vipAddress``, else one Neutron picks) and carries the VIP security group and the floating IP;
  a change of address replaces it, deleting the old one first (the zone is down until its members run the new
  configuration: docs/keepalived.md);
* the zone's VRRP group (``<endpoint>-<az>-vrrp``): admits VRRP (IP protocol 112) from each of the zone's members and
  ``allowedCidrs`` on the listener ports (the clients reach the member that holds the VIP directly: there is no
  proxy in between);
* per member, a :class:`~.pairs.MemberVip`: the VIP in the member port's allowed address pairs and the VRRP group on
  it, added and removed without touching the port's other pairs and groups;
* the floating IP (allocated, or the user's own, associated only: never created or deleted), associated with the VIP
  port once the zone is ready, as the Octavia backend does;
* the zone's :class:`~.readiness.VipReadiness`.

The zone's outputs: ``vip_address``, ``vip_port_id``, ``floating_ip``, ``vrrp_group_id`` and ``keepalived``: per member
of the zone, its keepalived configuration (``config``), the same as a cloud-init fragment (``cloud_init``) and as a
static pod manifest with the KubeadmControlPlane ``files`` that install both (``static_pod``, ``kubeadm_files``).
"""

from __future__ import annotations

from typing import Any, Mapping

import pulumi
import pulumi_openstack as openstack

from ...core import predicates
from ...core.inputs import plain
from ...core.plan import ZonePlan
from ..floating_ip import floating_ip as floating_ip_of
from ..plugin import ZoneServing, after_checks, poll_inputs
from . import config
from .pairs import MemberVip
from .readiness import VipReadiness, VipReadinessInputs


def serve(zone: ZonePlan, vip_group_id: pulumi.Input[str], parent: pulumi.Resource,
          member_ports: Mapping[str, pulumi.Resource]) -> ZoneServing:
    """The zone's VIP port, VRRP group, address pairs, floating IP and readiness
    (:data:`ha_endpoint.backends.plugin.Serve`)."""
    return _KeepalivedZone(zone, vip_group_id, parent, member_ports).serving


def zone_members(zone: ZonePlan) -> list[Any]:
    """The zone's members (those in service), by name: every listener has the same ones."""
    seen: dict[str, Any] = {}
    for listener in zone.listeners:
        for member in listener.members:
            if member.in_service:
                seen.setdefault(member.member, member)
    return [seen[name] for name in sorted(seen)]


def vrrp_zone(zone: ZonePlan, vip: str, addresses: Mapping[str, str]) -> config.ZoneVrrp:
    """The zone as keepalived sees it (``addresses``: member name -> address, known): the first listener's member
    port is the tracked one."""
    listener = zone.listeners[0]
    return config.zone_vrrp(zone.endpoint, zone.az, vip,
                            [(member.member, addresses[member.member]) for member in zone_members(zone)],
                            listener.protocol, listener.member_port)


class _KeepalivedZone:
    """The resources of one zone (kept on the instance for tests and readers)."""

    def __init__(self, zone: ZonePlan, vip_group_id: pulumi.Input[str], parent: pulumi.Resource,
                 member_ports: Mapping[str, pulumi.Resource]):
        child = pulumi.ResourceOptions(parent=parent)
        prefix = f"{zone.endpoint}-{zone.az}"
        where = poll_inputs(zone.readiness.target, parent)
        members = zone_members(zone)
        # a new address is a new port: Neutron changes a port's fixed IP in place but leaves its floating IP on the
        # old address (measured, Neutron Zed); deleted first, since the new address may be the one it holds
        self.vip_port = openstack.networking.Port(
            f"{prefix}-vip", name=f"{prefix}-vip", network_id=after_checks(zone.preflight, zone.vip_subnet.network_id),
            fixed_ips=[openstack.networking.PortFixedIpArgs(subnet_id=zone.vip_subnet.id,
                                                            ip_address=zone.vip_address)],
            security_group_ids=[vip_group_id], admin_state_up=True, tags=list(zone.tags),
            description=zone.identity.describe(f"HA endpoint {zone.endpoint}: keepalived VIP of zone {zone.az}",
                                               f"{prefix}-vip"),
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(
                replace_on_changes=["fixedIps"], delete_before_replace=True)))
        # the given address is known before the port exists: the members' configuration does not wait for it
        vip = pulumi.Output.from_input(zone.vip_address) if zone.vip_address is not None else \
            self.vip_port.all_fixed_ips.apply(lambda ips: ips[0])
        self.group = openstack.networking.SecGroup(
            f"{prefix}-vrrp", name=f"{prefix}-vrrp", tags=list(zone.tags),
            description=f"HA endpoint {zone.endpoint} zone {zone.az}: VRRP between its members, clients on the "
                        "listener ports", opts=child)
        self.rules = [openstack.networking.SecGroupRule(
            f"{prefix}-vrrp-from-{member.member}", security_group_id=self.group.id, direction="ingress",
            ethertype="IPv4", protocol="vrrp", remote_ip_prefix=pulumi.Output.from_input(member.address).apply(
                lambda address: f"{address}/32"), description="VRRP from a member of the zone", opts=child)
            for member in members]
        for listener in zone.listeners:
            protocol = predicates.listener_rule_protocol(listener.protocol)
            for cidr in listener.allowed_cidrs:
                label = cidr if plain(cidr) else "allowed"
                self.rules.append(openstack.networking.SecGroupRule(
                    f"{prefix}-vrrp-{protocol}-{listener.member_port}-{label}", security_group_id=self.group.id,
                    direction="ingress", ethertype="IPv4", protocol=protocol, port_range_min=listener.member_port,
                    port_range_max=listener.member_port, remote_ip_prefix=cidr,
                    description="client -> listener on the VIP holder", opts=child))
        self.pairs = [MemberVip(
            f"{prefix}-{member.member}-vip", member=member.member,
            port_id=getattr(member_ports.get(member.member), "port_id", None), address=member.address,
            network_id=member.subnet.network_id, vip_address=vip, group_id=self.group.id, cloud=where.cloud,
            region=where.region, cloud_source=where.cloud_source,
            opts=pulumi.ResourceOptions(parent=parent, depends_on=self.rules or None)) for member in members]
        # associated at once: the readiness probes the zone through it (no driver races here, unlike Octavia's ovn
        # provider)
        self.floating_ip_resource, floating_ip = floating_ip_of(zone, self.vip_port.id, child)
        bootstrap = zone.publish == "bootstrap"
        probe = floating_ip.apply(lambda address: [address] if address else [])
        self.readiness = VipReadiness(zone.readiness_name, VipReadinessInputs.of_port(
            self.vip_port.id, probe=probe, listener_ports=[listener.port for listener in zone.listeners],
            **zone.readiness.gate_waits(zone.publish), cloud=where.cloud, region=where.region,
            cloud_source=where.cloud_source),
            opts=pulumi.ResourceOptions(parent=parent, depends_on=self.pairs or None))
        names = [member.member for member in members]
        keepalived = pulumi.Output.all(vip, *[member.address for member in members]).apply(
            lambda values: config.member_files(vrrp_zone(zone, values[0], dict(zip(names, values[1:])))))
        self.serving = ZoneServing(
            published_address=floating_ip if zone.floating.mode != "none" else vip,
            exists=self.vip_port, exists_label="VIP port created", readiness=self.readiness,
            ready=self.readiness.ready, requirement="VIP held and answering" if not bootstrap else "VIP port provisioned",
            not_ready_reason=self.readiness.not_ready_reason,
            outputs={"vip_address": vip, "vip_port_id": self.vip_port.id, "floating_ip": floating_ip,
                     "vrrp_group_id": self.group.id, "keepalived": keepalived})

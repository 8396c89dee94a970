"""One availability zone of the endpoint: :class:`EndpointZone`, built from a :class:`ha_endpoint.plan.ZonePlan`.

Children: the zone's Octavia load balancer (``availability_zone`` = the AZ, VIP on the zone's subnet); per listener
a listener, a pool, a health monitor and the members the plan placed there; the VIP security-group association;
the floating IP (allocated from the floating network, or the user's own one, which is associated only: no
``FloatingIp`` resource is ever declared for it, so it is never created or deleted); and the readiness gate.

The readiness seam: ``ready`` says whether this zone may be published in DNS and ``published_address`` is the
address to publish (the floating IP, or the VIP for an internal endpoint). See :mod:`ha_endpoint.gate` (the
zone's ``MemberReadiness`` and one ``MemberDrain`` per member, a no-op at ``readiness.drainSeconds`` 0).
"""

from __future__ import annotations

from typing import Optional

import pulumi
import pulumi_openstack as openstack

from . import contract
from .gate import member_drains, zone_gate
from .plan import ListenerPlan, ZonePlan


class EndpointZone(pulumi.ComponentResource):
    """One AZ's load balancer with its listeners, pools, monitors, members and floating IP."""

    loadbalancer_id: pulumi.Output[str]
    """Id of the zone's Octavia load balancer."""
    vip_address: pulumi.Output[str]
    """The load balancer's VIP on the zone's subnet."""
    vip_port_id: pulumi.Output[str]
    """Neutron port of the VIP (the floating IP and the VIP security group are attached to it)."""
    floating_ip: pulumi.Output[Optional[str]]
    """The zone's floating IP address (allocated or brought); None for an internal endpoint."""
    pool_ids: pulumi.Output[dict]
    """Listener port (as a string) -> pool id."""
    member_ids: pulumi.Output[dict]
    """Listener port (as a string) -> member name -> Octavia member id."""
    ready: pulumi.Output[bool]
    """Whether the zone's gate allows publishing it (see :mod:`ha_endpoint.gate`)."""
    published_address: pulumi.Output[str]
    """The address DNS gets for this zone when it is ready: the floating IP, else the VIP."""

    def __init__(self, name: str, zone: ZonePlan, vip_group_id: pulumi.Input[str],
                 opts: Optional[pulumi.ResourceOptions] = None):
        """Build zone ``zone.az`` from its own plan; ``vip_group_id`` is the endpoint's VIP security group."""
        super().__init__(contract.ZONE_TYPE, name, {"az": zone.az, "vipSubnetId": zone.vip_subnet.id}, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.loadbalancer = openstack.loadbalancer.LoadBalancer(
            zone.lb_name, name=zone.lb_name, availability_zone=zone.az, vip_subnet_id=zone.vip_subnet.id,
            loadbalancer_provider=zone.load_balancer_provider, tags=list(zone.tags),
            description=f"HA endpoint {zone.endpoint}: load balancer of zone {zone.az}", opts=child)
        lb = self.loadbalancer
        self.vip_association = openstack.networking.PortSecGroupAssociate(
            zone.vip_secgroup_association_name, port_id=lb.vip_port_id, security_group_ids=[vip_group_id],
            enforce=False, opts=child)
        self.pools: dict[int, openstack.loadbalancer.Pool] = {}
        self.monitors: dict[int, openstack.loadbalancer.Monitor] = {}
        self.members: dict[int, dict[str, openstack.loadbalancer.Member]] = {}
        for listener in zone.listeners:
            self._listener(listener, lb, zone, child)
        self.floating_ip_resource: Optional[openstack.networking.FloatingIp] = None
        self.floating_ip = self._floating_ip(zone, lb, child)
        self.loadbalancer_id = lb.id
        self.vip_address = lb.vip_address
        self.vip_port_id = lb.vip_port_id
        self.pool_ids = pulumi.Output.all(**{str(port): pool.id for port, pool in self.pools.items()})
        self.member_ids = pulumi.Output.all(**{
            str(port): pulumi.Output.all(**{member: resource.id for member, resource in members.items()})
            for port, members in self.members.items()})
        self.published_address = self.floating_ip if zone.floating.mode != "none" else lb.vip_address
        self.gate = zone_gate(zone, lb, self.pools, self.monitors, self.members, self)
        self.ready = self.gate.ready
        self.drains = member_drains(zone, self.pools, self.members, self)
        self.register_outputs({
            "loadbalancerId": self.loadbalancer_id, "vipAddress": self.vip_address, "vipPortId": self.vip_port_id,
            "floatingIp": self.floating_ip, "poolIds": self.pool_ids, "memberIds": self.member_ids,
            "ready": self.ready, "publishedAddress": self.published_address,
        })

    def _listener(self, listener: ListenerPlan, lb: openstack.loadbalancer.LoadBalancer, zone: ZonePlan,
                  child: pulumi.ResourceOptions) -> None:
        cidrs = {"allowed_cidrs": list(listener.allowed_cidrs)} if listener.allowed_cidrs else {}
        resource = openstack.loadbalancer.Listener(
            listener.listener_name, name=listener.listener_name, loadbalancer_id=lb.id, protocol=listener.protocol,
            protocol_port=listener.port, tags=list(zone.tags), opts=child, **cidrs)
        pool = openstack.loadbalancer.Pool(
            listener.pool_name, name=listener.pool_name, listener_id=resource.id, protocol=listener.pool_protocol,
            lb_method=listener.lb_method, opts=child)
        self.pools[listener.port] = pool
        if listener.monitor is not None:
            spec = listener.monitor
            http = {"url_path": spec.url_path, "expected_codes": spec.expected_codes} if spec.url_path else {}
            self.monitors[listener.port] = openstack.loadbalancer.Monitor(
                spec.name, name=spec.name, pool_id=pool.id, type=spec.type, delay=spec.delay, timeout=spec.timeout,
                max_retries=spec.max_retries, max_retries_down=spec.max_retries_down, opts=child, **http)
        self.members[listener.port] = {
            member.member: openstack.loadbalancer.Member(
                member.resource_name, name=member.member, pool_id=pool.id, address=member.address,
                protocol_port=member.protocol_port, subnet_id=member.subnet.id, weight=member.weight,
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(aliases=[pulumi.Alias(
                    name=member.legacy_name)])),
                **({"monitor_port": member.monitor_port} if member.monitor_port else {}))
            for member in listener.members}

    def _floating_ip(self, zone: ZonePlan, lb: openstack.loadbalancer.LoadBalancer,
                     child: pulumi.ResourceOptions) -> pulumi.Output[Optional[str]]:
        floating = zone.floating
        if floating.mode == "none":
            return pulumi.Output.from_input(None)
        if floating.mode == "byo":
            address: pulumi.Input[str] = floating.byo.address
        else:
            self.floating_ip_resource = openstack.networking.FloatingIp(
                floating.name, pool=floating.network_name,
                description=f"{floating.name}: HA endpoint VIP of zone {zone.az}",
                opts=child)
            address = self.floating_ip_resource.address
        self.floating_ip_association = openstack.networking.FloatingIpAssociate(
            floating.association_name, floating_ip=address, port_id=lb.vip_port_id, opts=child)
        return self.floating_ip_association.floating_ip

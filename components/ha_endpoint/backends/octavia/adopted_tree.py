"""How an adopted load balancer's tree is read with openstacksdk (:mod:`.adoption` says what for): the load balancer
by id or exact name, each listener with its default pool, that pool's monitor and members, the floating IP on its
VIP port; and the A record set at a name."""

from __future__ import annotations

from typing import Optional

import openstack.exceptions as os_exc

from ...core.cloud_facts import (AdoptedListener, AdoptedLoadBalancer, AdoptedMember, AdoptedRecord,
                                 FloatingIpFacts, PortFacts)
from ...core.errors import HaEndpointError


class NotAdoptable(HaEndpointError):
    """The load balancer named by ``adopt.loadBalancer`` does not exist, or the name matches several."""


def read_tree(conn, ref: str) -> AdoptedLoadBalancer:
    """The load balancer ``ref`` (id or exact name) with its listeners' trees and the floating IP on its VIP port
    (openstacksdk ``conn``); :class:`NotAdoptable` when there is none or several."""
    try:
        lb = conn.load_balancer.find_load_balancer(ref, ignore_missing=True)
    except os_exc.DuplicateResource:
        raise NotAdoptable(f"several load balancers are named '{ref}'; give the id of the one to adopt "
                           "(openstack loadbalancer list --name ...)") from None
    if lb is None:
        raise NotAdoptable(f"no load balancer '{ref}' was found (openstack loadbalancer list); give the name or id "
                           "of an existing one")
    listeners = []
    # openstacksdk's filter is load_balancer_id: an unknown keyword (loadbalancer_id) is dropped without a word and
    # lists every listener of the project (measured, openstacksdk of requirements.txt); each listener is also
    # checked to be this load balancer's, so that another load balancer's tree is never adopted
    for listener in conn.load_balancer.listeners(load_balancer_id=lb.id):
        if not any(ref.get("id") == lb.id for ref in listener.load_balancers or ()):
            continue
        pool = conn.load_balancer.get_pool(listener.default_pool_id) if listener.default_pool_id else None
        monitor = conn.load_balancer.get_health_monitor(pool.health_monitor_id) \
            if pool is not None and pool.health_monitor_id else None
        members = tuple(AdoptedMember(member.id, member.address, int(member.protocol_port), member.subnet_id or None,
                                      member.name or "")
                        for member in conn.load_balancer.members(pool.id)) if pool is not None else ()
        listeners.append(AdoptedListener(
            listener.id, int(listener.protocol_port), str(listener.protocol), pool.id if pool else None,
            str(pool.protocol) if pool else None, monitor.id if monitor else None,
            str(monitor.type) if monitor else None, members, listener.name or "", (pool.name or "") if pool else "",
            (monitor.name or "") if monitor else ""))
    floating = None
    for ip in conn.network.ips(port_id=lb.vip_port_id):
        floating = FloatingIpFacts(address=ip.floating_ip_address, id=ip.id, network_id=ip.floating_network_id,
                                   port=PortFacts(lb.vip_port_id, "", lb.id, False))
    return AdoptedLoadBalancer(ref=ref, id=lb.id, name=lb.name or "", vip_subnet_id=lb.vip_subnet_id,
                               vip_port_id=lb.vip_port_id, vip_address=lb.vip_address,
                               provider=str(lb.provider or ""), availability_zone=lb.availability_zone or None,
                               listeners=tuple(sorted(listeners, key=lambda found: found.port)),
                               floating_ip=floating)


def read_record(conn, dns_zone_id: str, fqdn: str) -> Optional[AdoptedRecord]:
    """The A record set ``fqdn`` of DNS zone ``dns_zone_id``, if there is one."""
    for recordset in conn.dns.recordsets(dns_zone_id, name=fqdn):
        if recordset.type == "A" and recordset.name == fqdn:
            return AdoptedRecord(recordset.id, dns_zone_id, tuple(sorted(recordset.records or ())))
    return None

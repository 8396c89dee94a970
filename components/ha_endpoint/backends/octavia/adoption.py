"""What a zone's ``adopt`` key takes over, asked at preview: the existing load balancer's tree and floating IP.

``zones.<az>.adopt: {loadBalancer: <name or id>}`` makes the zone take over a load balancer another tool made (CAPO's
``<cluster>-kubeapi``, one made by hand or by Terraform) instead of creating one. The ids Pulumi's ``import`` resource
option needs must be known when the program runs, so they are asked here, once, with openstacksdk through the
preview's catalog (the seam tests replace): the load balancer (by id, or by a name that must match exactly one), each
listener with its default pool, that pool's monitor and members, and the floating IP on the VIP port. With a DNS
name, also the record set that publishes it now when that record set holds the adopted addresses only (the
endpoint's record then takes it over rather than being refused as another owner's).

Nothing is written here; :mod:`ha_endpoint.core.checks` judges what was found (a difference Octavia cannot change in
place is refused unless ``allowReplacement``) and :mod:`.serving` imports it (docs/decisions/issue-50-adoption.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import openstack.exceptions as os_exc

from ...cloud.catalog import RECORDS_RETRY_SECONDS, NoCloudToAsk, current_catalog
from ...cloud.errors import CallFailed
from ...cloud.retry import CredentialsRefused, RetriesExhausted, call_with_retries
from ...core.args import EndpointArgs
from ...core.cloud_facts import (AdoptedListener, AdoptedLoadBalancer, AdoptedMember, AdoptedRecord,
                                 FloatingIpFacts, PortFacts)
from ...core.errors import Problem
from ...core.plan import PollTarget


class NotAdoptable(Exception):
    """The load balancer named by ``adopt.loadBalancer`` does not exist, or the name matches several."""


@dataclass(frozen=True)
class Adoption:
    """What the zones adopt (AZ -> load balancer), the record set the endpoint's name takes over, and what could not
    be asked or found (the preview fails)."""

    adopted: dict[str, AdoptedLoadBalancer] = field(default_factory=dict)
    record: Optional[AdoptedRecord] = None
    problems: list[Problem] = field(default_factory=list)


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
    for listener in conn.load_balancer.listeners(loadbalancer_id=lb.id):
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
                                   port_id=lb.vip_port_id, port=PortFacts(lb.vip_port_id, "", lb.id, False))
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


def adopted_from(args: EndpointArgs, target: PollTarget, root: str, dns_zone_id: Optional[str],
                 clock: Optional[Callable[[], float]] = None, sleep: Optional[Callable[[float], None]] = None,
                 timeout_seconds: Optional[float] = None) -> Adoption:
    """The Octavia backend's :attr:`ha_endpoint.backends.plugin.Backend.adopted`: every zone's ``adopt`` looked up
    (a failed call retried as the DNS records' are); a load balancer not found, several of one name, or a cloud that
    cannot be asked is a problem at ``zones.<az>.adopt.loadBalancer`` (nothing is adopted blind)."""
    wanted = {az: zone.adopt.load_balancer for az, zone in sorted(args.zones.items()) if zone.adopt is not None}
    if not wanted:
        return Adoption()
    from .checks import _OPENSTACK  # the real catalog, one connection per cloud (late: checks imports plugin types)

    catalog = current_catalog(_OPENSTACK)
    retry = dict(timeout_seconds=RECORDS_RETRY_SECONDS if timeout_seconds is None else timeout_seconds,
                 clock=clock or time.monotonic, sleep=sleep or time.sleep)
    adopted: dict[str, AdoptedLoadBalancer] = {}
    problems: list[Problem] = []
    for az, ref in wanted.items():
        path = f"{root}.zones.{az}.adopt.loadBalancer"
        try:
            adopted[az] = call_with_retries(lambda ref=ref: catalog.adoptable(target, ref), **retry)
        except NotAdoptable as error:
            problems.append(Problem(path, str(error)))
        except NoCloudToAsk as reason:
            problems.append(Problem(path, f"load balancer '{ref}' could not be looked up at preview ({reason}); "
                                          "a load balancer is adopted only once its tree is known"))
        except (CallFailed, RetriesExhausted, CredentialsRefused) as error:
            problems.append(Problem(path, f"load balancer '{ref}' could not be read at preview ({error}); run the "
                                          "preview again once the load-balancer service (Octavia) answers"))
    record = None
    dns = args.dns
    if adopted and dns is not None and dns_zone_id and isinstance(dns.record, str) and isinstance(dns.dns_zone, str):
        fqdn = f"{dns.record}.{dns.dns_zone}"
        try:
            record = call_with_retries(lambda: catalog.a_recordset(target, dns_zone_id, fqdn), **retry)
        except (NoCloudToAsk, CallFailed, RetriesExhausted, CredentialsRefused) as error:
            problems.append(Problem(f"{root}.dns.record", f"the record set {fqdn} could not be read at preview "
                                                          f"({error}); run the preview again once DNS answers"))
    return Adoption(adopted, record, problems)

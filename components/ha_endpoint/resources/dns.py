"""The endpoint's DNS records in Designate, from :class:`ha_endpoint.core.plan.DnsPlan`.

``record.zone`` is one A recordset whose records are the published addresses of the zones whose gate is ready
(:class:`ha_endpoint.resources.zone.EndpointZone`), sorted; with ``perZoneRecords`` each zone also gets ``record-az.zone`` with its own
address. Records depend on the zones' gates, so a zone enters DNS only after it is ready; a removed zone's address
leaves the recordset (an update) before its load balancer and floating IP are deleted (deletes run last).
"""

from __future__ import annotations

from typing import Optional, Sequence

import pulumi
import pulumi_openstack as openstack

from ..core.cloud_facts import ADOPTED_RECORD_TEXT
from ..core.errors import UserError
from ..core.identity import StackIdentity
from ..core.plan import DnsPlan
from .zone import EndpointZone


class NotPublishable(UserError):
    """The record cannot change: fewer zones than ``readiness.minReadyZones`` are ready, or none is (Designate refuses
    an empty recordset); the update stops before the record changes, the message names the zones and the fix."""


def published_addresses(pairs: Sequence[tuple[Optional[str], bool]]) -> list[str]:
    """The addresses of the ready zones, sorted and de-duplicated (pure: the seam's rule, unit-tested)."""
    return sorted({address for address, ready in pairs if ready and address})


def floor_problem(states: Sequence[tuple[str, bool, Optional[str]]], floor: int) -> Optional[str]:
    """Why the ready zones are below ``floor`` (``(az, ready, why not)`` per zone), naming each zone not ready and
    why; None when at least ``floor`` are ready (pure, unit-tested)."""
    ready = [az for az, is_ready, _ in states if is_ready]
    if len(ready) >= floor:
        return None
    missing = "; ".join(f"{az}: {why or 'not ready'}" for az, is_ready, why in states if not is_ready)
    return (f"only {len(ready)} of {len(states)} zones are ready ({', '.join(ready) or 'none'}), fewer than "
            f"readiness.minReadyZones ({floor}), so the update stops before DNS changes. Not ready: {missing}. Once "
            f"their members are ONLINE again run `pulumi up` again, or lower readiness.minReadyZones")


def _publish(values: list, zones: Sequence[EndpointZone], floor: int) -> list[str]:
    states = [(zone.az, ready, why) for zone, (_address, (ready, why)) in zip(zones, values)]
    problem = floor_problem(states, floor)
    if problem is not None:
        raise NotPublishable(problem)
    for az, ready, why in states:
        if not ready and why:
            pulumi.log.warn(f"zone {az} is not published: {why}")
    return published_addresses([(address, ready) for address, (ready, _why) in values])


def _verdict(zone: EndpointZone) -> pulumi.Output[tuple[bool, Optional[str]]]:
    """``(ready, why not)``. The reason is read only for a zone that is not ready: a ready zone's verdict is known in
    a preview whenever its ``ready`` is (a gate recorded before the reason existed has none in its state, and the
    engine treats a missing output as unknown in a preview: the record would show a change at every preview)."""
    reason = zone.not_ready_reason
    return zone.ready.apply(lambda ready: (True, None) if ready else reason.apply(lambda why: (False, why)))


def addresses_output(zones: Sequence[EndpointZone], floor: int = 0) -> pulumi.Output[list[str]]:
    """The published addresses as one output, computed from every zone's address and verdict; fewer than ``floor``
    ready zones raise :class:`NotPublishable`, and each zone left out with a reason is logged as a warning."""
    pairs = [pulumi.Output.all(zone.published_address, _verdict(zone)) for zone in zones]
    return pulumi.Output.all(*pairs).apply(lambda values: _publish([tuple(v) for v in values], zones, floor))


def create_records(plan: DnsPlan, zones: Sequence[EndpointZone], parent: pulumi.Resource, identity: StackIdentity,
                   floor: int = 0) -> tuple[openstack.dns.RecordSet, dict[str, openstack.dns.RecordSet]]:
    """The endpoint's recordset and, when asked, one recordset per zone; all parented to ``parent``, their
    descriptions carrying the stack's ``identity``; the endpoint's record needs ``floor`` ready zones."""
    gates = [zone.gate for zone in zones]
    # Designate keeps one recordset per (zone, name, type): replacing a record that keeps its name can only delete the
    # old one first (else 409 Duplicate RecordSet, tests/e2e/test_cloud_faults.py); a renamed record is created
    # before the old name is deleted, so that the old name answers until the new one does (plan.DnsPlan.delete_first).
    opts = pulumi.ResourceOptions(parent=parent, depends_on=gates,
                                  delete_before_replace=plan.resource_name in plan.delete_first)
    adopted = plan.adopted_record
    if adopted is not None:  # the adopted load balancer's record (docs/adoption.md): imported, left when we go
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(
            import_=f"{adopted.zone_id}/{adopted.id}", retain_on_delete=True))
    main = openstack.dns.RecordSet(
        plan.resource_name, zone_id=plan.dns_zone_id, name=plan.fqdn, type="A", ttl=plan.ttl,
        records=addresses_output(zones, floor).apply(lambda records: _non_empty(records, plan.fqdn)),
        description=identity.describe(ADOPTED_RECORD_TEXT if adopted is not None else
                                      "HA endpoint: one A record per ready availability zone", plan.resource_name),
        opts=opts)
    per_zone = {}
    by_az = {zone.az: zone for zone in zones}
    for az, resource_name, fqdn in plan.zone_records:
        zone = by_az[az]
        per_zone[az] = openstack.dns.RecordSet(
            resource_name, zone_id=plan.dns_zone_id,
            name=fqdn, type="A", ttl=plan.ttl,
            records=addresses_output([zone]).apply(lambda records, fqdn=fqdn: _non_empty(records, fqdn)),
            description=identity.describe(f"HA endpoint: availability zone {az} only", resource_name),
            opts=pulumi.ResourceOptions(parent=parent, depends_on=[zone.gate],
                                        delete_before_replace=resource_name in plan.delete_first))
    return main, per_zone


def _non_empty(records: list[str], fqdn: str) -> list[str]:
    if not records:
        raise NotPublishable(f"{fqdn}: no availability zone is ready, so there is no address to publish; see the "
                               "zones' readiness errors, or use dns.publish: bootstrap for the first node")
    return records

"""The readiness seam: when may a zone's address be published in DNS?

Each zone gets a :class:`ZoneGate` whose ``ready`` output DNS reads (see :mod:`ha_endpoint.dns`): records are computed
from per-zone ``(published_address, ready)`` pairs, so a zone's address is in DNS only when its gate says so, and the
records depend on the gate's resource.

* ``when-ready`` (default): the zone's ``MemberReadiness`` (:mod:`ha_endpoint.readiness.provider`, named
  ``contract.readiness_name``) waits until every member of every pool is ready as ``readiness.require`` says
  (``online``: provisioning ACTIVE and operating ONLINE, NO_MONITOR in unmonitored pools; ``provisioned``: ACTIVE),
  and DNS depends on it.
* ``bootstrap``: the zone is published as soon as its load balancer exists (the provider waits for ACTIVE on
  create); the readiness resource still runs, requiring ``provisioned`` only, but DNS does not wait for it.

Every member also gets a ``MemberDrain`` (:mod:`ha_endpoint.readiness.drain`), whatever ``readiness.drainSeconds``
is: deleting a member first sets its weight to 0 and waits that long; at 0 the drain's deletion does nothing. The
drains always exist so that changing drainSeconds is an in-place update of their ``drain_seconds``: were they
created only for drainSeconds > 0, lowering it to 0 would delete them with their old state, setting weight 0 on
members that stay in service.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi

from . import contract
from .plan import PollTarget, ReadinessPlan, ZonePlan
from .readiness.drain import MemberDrain
from .readiness.provider import MemberReadiness


@dataclass
class ZoneGate:
    """A zone's readiness: ``ready`` (Output[bool]), the resource DNS depends on, the readiness resource, kind."""

    ready: pulumi.Output[bool]
    publish_after: Optional[pulumi.Resource]
    readiness: MemberReadiness
    kind: str


@dataclass(frozen=True)
class PollInputs:
    """The ``cloud``/``region``/``cloud_source`` inputs of a gate or drain: the plan's :class:`PollTarget`, with an
    explicit provider's own ``cloud`` and ``region`` read from that provider (Outputs, known once it is configured)."""

    cloud: pulumi.Input[Optional[str]]
    region: pulumi.Input[Optional[str]]
    cloud_source: str


def poll_inputs(target: PollTarget, parent: pulumi.Resource) -> PollInputs:
    """Where the zone's gate and drains poll: the readiness settings' cloud, else the explicit OpenStack provider's
    (the one ``parent``'s children use), else the stack's (resolved by the dynamic provider from the stack
    configuration it is configured with: ``openstack:cloud`` / ``openstack:region``, then ``OS_CLOUD``)."""
    if target.source == "provider":
        provider = parent.get_provider(contract.MEMBER_TYPE)
        if provider is not None:
            return PollInputs(getattr(provider, "cloud", None), getattr(provider, "region", None), "provider")
    return PollInputs(target.cloud, target.region, target.source)


def zone_gate(zone: ZonePlan, lb: pulumi.CustomResource, pools: dict, monitors: dict, members: dict,
              parent: pulumi.Resource) -> ZoneGate:
    """The gate of one zone, from its own plan (``zone.readiness``).

    The gate depends on every member through its ``pools`` input (their ids) and on the monitors explicitly."""
    readiness: ReadinessPlan = zone.readiness
    bootstrap = zone.publish == "bootstrap"
    require = "provisioned" if bootstrap else readiness.require
    where = poll_inputs(readiness.target, parent)
    spec = {
        listener.pool_name: {
            "pool_id": pools[listener.port].id,
            "member_ids": [member.id for member in members.get(listener.port, {}).values()],
            "monitored": listener.port in monitors,
        }
        for listener in zone.listeners
    }
    gate = MemberReadiness(
        zone.readiness_name, loadbalancer_id=lb.id, pools=spec, require=require,
        timeout_seconds=readiness.timeout_seconds, poll_interval_seconds=readiness.poll_interval_seconds,
        cloud=where.cloud, region=where.region, cloud_source=where.cloud_source,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=list(monitors.values())))
    if bootstrap:
        return ZoneGate(lb.id.apply(lambda _: True), lb, gate, "bootstrap: load balancer ACTIVE")
    return ZoneGate(gate.ready, gate, gate, f"members {require}")


def member_drains(zone: ZonePlan, pools: dict, members: dict, parent: pulumi.Resource) -> list[MemberDrain]:
    """One MemberDrain per member resource, also at ``drain_seconds`` 0 (its deletion is then a no-op), so that a
    change of ``drain_seconds`` updates the drains instead of deleting (so running) them."""
    where = poll_inputs(zone.readiness.target, parent)
    return [MemberDrain(member.drain_name, pool_id=pools[listener.port].id,
                        member_id=members[listener.port][member.member].id,
                        drain_seconds=zone.readiness.drain_seconds, cloud=where.cloud, region=where.region,
                        cloud_source=where.cloud_source,
                        opts=pulumi.ResourceOptions(parent=parent, aliases=[
                            pulumi.Alias(name=member.legacy_name + "-drain")]))
            for listener in zone.listeners for member in listener.members]

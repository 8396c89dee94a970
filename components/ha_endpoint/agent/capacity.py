"""What the agent judges about pools, pure: which members count as capacity, and when a leaving member may be
deleted. The rules are the readiness gates' (:mod:`ha_endpoint.gates.model`): a member counts only when
provisioning ACTIVE and operating ONLINE (NO_MONITOR only in a pool without a health monitor), and in service
(admin state up).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from ..gates.model import LiveMember, is_online


@dataclass(frozen=True)
class PoolView:
    """One pool as listed in this pass: its zone, listener port, whether it is monitored, and every member."""

    az: str
    port: int
    pool_id: str
    monitored: bool
    members: tuple[LiveMember, ...]


def serving(member: LiveMember, monitored: bool) -> bool:
    """Whether ``member`` is capacity: in service, provisioning ACTIVE, operating ONLINE."""
    return member.admin_state_up and is_online(member.status, monitored)


def state(member: LiveMember, monitored: bool) -> str:
    """The member's state as the agent reports it: serving, joining, maintenance (taken out) or failed."""
    if member.provisioning_status == "ERROR":
        return "failed"
    if not member.admin_state_up:
        return "out"
    return "serving" if serving(member, monitored) else "joining"


def may_serve(member: LiveMember) -> bool:
    """Whether a member not serving now may still come to serve by itself: in service, and neither failed
    (provisioning ``ERROR``) nor judged down by its health monitor (operating ``ERROR``): a new machine's member
    being created or not yet checked. A member that is down (e.g. a static member whose server is gone) is not
    waited for."""
    return member.admin_state_up and "ERROR" not in (member.provisioning_status, member.operating_status)


def removable(leaving: LiveMember, pool: PoolView, pools: Iterable[PoolView], excluded: frozenset[str]) -> bool:
    """Whether ``leaving`` may be deleted from ``pool`` without taking capacity the endpoint needs: its zone's pool
    still has a serving member other than it (and other than ``excluded``, the ids of every member leaving now);
    or, when no other member of that pool may still come to serve (:func:`may_serve`: it was the zone's only live
    one), some other zone's pool of the same listener port has a serving member."""
    others = [m for m in pool.members if m.member_id != leaving.member_id and m.member_id not in excluded]
    if any(serving(m, pool.monitored) for m in others):
        return True
    if any(may_serve(m) for m in others):
        return False  # a member of the zone joining (a new machine's, not checked yet): wait for it
    return any(serving(m, other.monitored) and m.member_id not in excluded
               for other in pools if other.port == pool.port and other.pool_id != pool.pool_id
               for m in other.members)


def counts(pools: Iterable[PoolView], tag: str) -> Mapping[tuple[str, str], int]:
    """The agent's members per (zone, state), for the metrics."""
    found: dict[tuple[str, str], int] = {}
    for pool in pools:
        for member in pool.members:
            if tag in member.tags:
                key = (pool.az, state(member, pool.monitored))
                found[key] = found.get(key, 0) + 1
    return found

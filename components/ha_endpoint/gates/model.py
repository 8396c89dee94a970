"""Statuses, expectations and the readiness predicate the waiter reasons about.

Pure data: nothing here talks to a cloud. Octavia reports two statuses per object:

- ``provisioning_status``: the control plane's progress on the object (``ACTIVE``, ``PENDING_CREATE``,
  ``PENDING_UPDATE``, ``PENDING_DELETE``, ``DELETED``, ``ERROR``). ``ERROR`` is terminal.
- ``operating_status``: what the data plane observes (``ONLINE``, ``OFFLINE``, ``DEGRADED``, ``ERROR``,
  ``DRAINING``, ``NO_MONITOR``). ``NO_MONITOR`` means no health monitor judges the member.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional

ACTIVE = "ACTIVE"
ERROR = "ERROR"
DELETED = "DELETED"
ONLINE = "ONLINE"
NO_MONITOR = "NO_MONITOR"
DOWN = frozenset({"OFFLINE", "ERROR"})
"""Operating statuses of a member its health monitor keeps failing (the OVN provider says ERROR, amphorae OFFLINE or
ERROR)."""
DELETING = frozenset({"PENDING_DELETE", DELETED})
"""Provisioning statuses of a member on its way out: it will never become ready."""


class Requirement(str, enum.Enum):
    """What "ready" means for the members a readiness gate waits for.

    - ``online``: provisioning_status ``ACTIVE`` and operating_status ``ONLINE``; ``NO_MONITOR`` counts as online
      only for a pool without a health monitor (nothing will ever report ONLINE there).
    - ``provisioned``: provisioning_status ``ACTIVE`` suffices (bootstrap publication: the first control-plane
      node needs the endpoint name before it can become healthy).
    """

    ONLINE = "online"
    PROVISIONED = "provisioned"

    def describe(self) -> str:
        """Human wording of the requirement, used in messages."""
        if self is Requirement.ONLINE:
            return "provisioning ACTIVE and operating ONLINE"
        return "provisioning ACTIVE"


class _TwoStatuses:
    """What an Octavia object's two statuses read as in a message."""

    provisioning_status: str
    operating_status: str

    @property
    def label(self) -> str:
        """``"<provisioning>/<operating>"``, e.g. ``"ACTIVE/ONLINE"``."""
        return f"{self.provisioning_status}/{self.operating_status}"


@dataclass(frozen=True)
class MemberStatus(_TwoStatuses):
    """One pool member as Octavia's member listing reports it.

    Attributes:
        member_id: the Octavia member id.
        provisioning_status: e.g. ``ACTIVE``, ``PENDING_CREATE``, ``ERROR``.
        operating_status: e.g. ``ONLINE``, ``OFFLINE``, ``NO_MONITOR``, ``ERROR``.
    """

    member_id: str
    provisioning_status: str
    operating_status: str


@dataclass(frozen=True)
class LoadBalancerStatus(_TwoStatuses):
    """A load balancer's two statuses, reported in failure messages.

    Attributes:
        load_balancer_id: the Octavia load balancer id.
        provisioning_status: e.g. ``ACTIVE``, ``PENDING_UPDATE``, ``ERROR``.
        operating_status: e.g. ``ONLINE``, ``DEGRADED``, ``OFFLINE``.
    """

    load_balancer_id: str
    provisioning_status: str
    operating_status: str


@dataclass(frozen=True)
class PoolExpectation:
    """The members one pool must have ready.

    Attributes:
        pool_id: the Octavia pool id; one member listing per poll is made for it.
        member_ids: ids of the members to wait for (other members of the pool are ignored).
        monitored: whether the pool has a health monitor (decides whether ``NO_MONITOR`` counts as online).
        name: a logical name for messages (e.g. the plan's pool name); defaults to the pool id.
        hold_seconds: how long a member must have been ready without a break before it counts (0: at once). Octavia's
            OVN provider reports a new member ONLINE before its health monitor has checked it
            (:func:`ha_endpoint.core.predicates.online_hold_seconds`).
        check_seconds: how often the pool's health monitor checks a member (its delay; 0: unknown). A member's
            operating status changes only when it is checked, so while every member still waited for is holding,
            one poll per check sees every change, and the waiter polls no more often than that (:mod:`.waiter`).
    """

    pool_id: str
    member_ids: tuple[str, ...]
    monitored: bool
    name: str = ""
    hold_seconds: float = 0.0
    check_seconds: float = 0.0

    def holds(self, member_id: str) -> float:
        """How long ``member_id`` must have been ready without a break before it counts."""
        return self.hold_seconds

    @property
    def display(self) -> str:
        """``"<name> (<pool_id>)"`` or just the pool id when unnamed."""
        if self.name and self.name != self.pool_id:
            return f"{self.name} ({self.pool_id})"
        return self.pool_id


def is_ready(status: MemberStatus, requirement: Requirement, monitored: bool) -> bool:
    """Whether one member meets the requirement (see :class:`Requirement`)."""
    if status.provisioning_status != ACTIVE:
        return False
    if requirement is Requirement.PROVISIONED:
        return True
    if status.operating_status == ONLINE:
        return True
    return status.operating_status == NO_MONITOR and not monitored


def is_failed(status: MemberStatus) -> bool:
    """Whether the member's provisioning is terminally failed (``ERROR``)."""
    return status.provisioning_status == ERROR


def is_deleting(status: MemberStatus) -> bool:
    """Whether the member is being (or has been) deleted: ``PENDING_DELETE`` or ``DELETED``."""
    return status.provisioning_status in DELETING


def is_down(status: MemberStatus) -> bool:
    """Whether the member is provisioned but reported down: ACTIVE and operating OFFLINE or ERROR."""
    return status.provisioning_status == ACTIVE and status.operating_status in DOWN


def is_online(status: MemberStatus, monitored: bool) -> bool:
    """Whether the member serves: ACTIVE and ONLINE (or NO_MONITOR in an unmonitored pool)."""
    return is_ready(status, Requirement.ONLINE, monitored)


@dataclass(frozen=True)
class LiveMember:
    """One member of a pool as Octavia lists it (what a drain's watch and the member agent read).

    Attributes:
        member_id, address, protocol_port, name, weight: as listed.
        tags: its tags (the stack's identity tag; the member agent's tag on the members it adds).
        provisioning_status, operating_status: as listed.
        subnet_id, monitor_port, monitor_address, admin_state_up, backup: as listed.
    """

    member_id: str
    address: str
    protocol_port: int
    name: str = ""
    weight: int = 1
    tags: tuple[str, ...] = ()
    provisioning_status: str = ACTIVE
    operating_status: str = ONLINE
    subnet_id: Optional[str] = None
    monitor_port: Optional[int] = None
    monitor_address: Optional[str] = None
    admin_state_up: bool = True
    backup: bool = False

    @property
    def status(self) -> MemberStatus:
        return MemberStatus(self.member_id, self.provisioning_status, self.operating_status)

    @property
    def endpoint(self) -> str:
        """``address:port``, what Octavia keys a pool's members on."""
        return f"{self.address}:{self.protocol_port}"

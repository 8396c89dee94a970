"""A stateful in-memory Octavia for the member drains: pools of members keyed on address and port, a load
balancer that takes one write at a time, the ovn provider's drain behaviour, and time from a FakeClock.

What it does as Octavia does:

- a single member update (``PUT .../members/{id}``: weight, admin state) is one write of its own, recorded in
  ``member_updates``; 404 for a member the pool does not list;
- a write (member update or delete) while the load balancer is not ACTIVE answers **409** ("Load
  Balancer ... is immutable and cannot be updated");
- while it applies, the load balancer is PENDING_UPDATE for ``apply_seconds``; then created and updated members are
  ACTIVE, deleted ones gone;
- a created member is operating OFFLINE until its health monitor found it up ``online_after`` seconds after it
  became ACTIVE (ONLINE at once with ``ovn_early_online``, as Octavia's ovn provider reports it), or ERROR forever
  when its address is in ``dead``; a member administratively down is OFFLINE and serves nothing on either provider
  (amphora: its heartbeat reports it MAINT, Octavia lists OFFLINE; brought up again, its health monitor finds it up
  ``online_after`` seconds later); created admin down under the ovn provider it never enters the backends (OVN never
  health-checks it, so nothing overwrites its OFFLINE);
- with ``ovn_overwrite_after`` (the ovn provider 3.1.2, ha_endpoint.core.predicates.drains_admin_down): weight does
  nothing; a member set admin down is OFFLINE and out of the backends once applied, and that many seconds later its
  status is overwritten with ERROR (OVN dropped its health check); every later write to the pool rebuilds the
  backends from the statuses, taking back in every admin-down member not OFFLINE. Octavia lists that ERROR, unless
  ``ovn_lists_overwrite`` is false (its OFFLINE report arrived last: the listing stays OFFLINE). ``take_back``
  (address -> time) puts an admin-down member out of the backends back in at that time, listed ERROR (what one CI run
  saw ~20 s after a drain: the provider's API process and agent writing back each other's older status). The
  provider keeps its own status of each member (``provider_status``: the ``neutron:member_status`` map of
  ``OvnProviderHelper``), and it is that status the backends are rebuilt from (``_frame_vip_ips``: every member not
  OFFLINE): ONLINE once created in service, OFFLINE once set admin down, ERROR once overwritten. A member set admin
  **up** again keeps the status the provider last had for it and the backends are not rewritten
  (``member_update``: with a health monitor "trust on neutron:member_status as the last status valid"): one it held
  OFFLINE stays out of the backends and listed OFFLINE for good (OVN has no health check for it, so nothing reports
  it again); only a member deleted and created again is back. ``delete_member`` is the single-member delete
  (``DELETE .../members/{id}``), one write of its own.

Every change is recorded in ``timeline`` (time, and per pool the members with their statuses and weights), so a
test can assert what a client would have seen at any moment: how many members served, and in which order members
were drained and removed. ``faults[op]`` queues exceptions the next calls of ``op`` (``"list"``, ``"put"``,
``"get_lb"``) raise before they are served.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any, Optional

from gate_fakes import FakeClock, http_error
from openstack import exceptions as os_exc


@dataclass
class FakeMember:
    id: str
    address: str
    protocol_port: int
    name: str = ""
    weight: int = 1
    tags: list = field(default_factory=list)
    provisioning_status: str = "PENDING_CREATE"
    operating_status: str = "OFFLINE"
    subnet_id: Optional[str] = None
    monitor_port: Optional[int] = None
    monitor_address: Optional[str] = None
    is_admin_state_up: bool = True
    backup: bool = False
    online_at: Optional[float] = None
    ovn: bool = False
    in_backends: bool = True
    overwrite_at: Optional[float] = None
    overwritten: bool = False
    provider_status: Optional[str] = None

    @property
    def endpoint(self) -> tuple[str, int]:
        return self.address, self.protocol_port

    @property
    def serving(self) -> bool:
        """What a client notices: the load balancer sends it new connections. Amphora: ONLINE at a weight above 0.
        The ovn provider: among the OVN load balancer's backends (weight ignored; see ``ovn_overwrite_after``)."""
        if self.provisioning_status not in ("ACTIVE", "PENDING_UPDATE"):
            return False
        if self.ovn:
            return self.in_backends and self.operating_status != "OFFLINE"
        return self.operating_status == "ONLINE" and self.weight > 0 and self.is_admin_state_up


@dataclass(frozen=True)
class Snapshot:
    at: float
    lb: str
    pools: dict[str, tuple[FakeMember, ...]]

    def serving(self, pool_id: str) -> set[tuple[str, int]]:
        return {m.endpoint for m in self.pools[pool_id] if m.serving}

    def listed(self, pool_id: str) -> dict[tuple[str, int], FakeMember]:
        return {m.endpoint: m for m in self.pools[pool_id]}


class PoolOctavia:
    """One load balancer ``lb-1`` and its pools (see the module docstring)."""

    def __init__(self, clock: FakeClock, apply_seconds: float = 2.0, online_after: float = 3.0,
                 ovn_early_online: bool = False, ovn_overwrite_after: Optional[float] = None,
                 ovn_lists_overwrite: bool = True) -> None:
        self.clock = clock
        self.ovn_overwrite_after = ovn_overwrite_after
        self.ovn_lists_overwrite = ovn_lists_overwrite
        self.take_back: dict[str, float] = {}
        self.apply_seconds = apply_seconds
        self.online_after = online_after
        self.ovn_early_online = ovn_early_online
        self.lb_status = "ACTIVE"
        self.pools: dict[str, dict[str, FakeMember]] = {}
        self.dead: set[str] = set()
        self.faults: dict[str, list[Exception]] = {}
        self.member_updates: list[dict[str, Any]] = []
        self.member_deletes: list[dict[str, Any]] = []
        self.refused: list[tuple[float, str]] = []
        self.calls: list[str] = []
        self.timeline: list[Snapshot] = []
        self.connections: list[Any] = []
        self._applying: Optional[tuple[float, str, list]] = None
        self._ids = 0
        self.tokens = 0

    # ----- building ----------------------------------------------------------------------------------------------
    def add_pool(self, pool_id: str) -> None:
        self.pools.setdefault(pool_id, {})
        self._record()

    def add_member(self, pool_id: str, address: str, port: int = 6443, name: str = "", tags=(), weight: int = 1,
                   status: tuple[str, str] = ("ACTIVE", "ONLINE")) -> str:
        member = FakeMember(self._new_id(), address, port, name or address, weight, list(tags), *status,
                            ovn=self.ovn_overwrite_after is not None, provider_status=status[1])
        self.pools.setdefault(pool_id, {})[member.id] = member
        self._record()
        return member.id

    def seconds_served(self, address: str, after: float, pool_id: str = "p1", port: int = 6443) -> float:
        """How long after ``after`` a client could reach ``address`` (each frame of the timeline holds until the next;
        the last until now)."""
        self.advance()
        frames = self.timeline
        ends = [f.at for f in frames[1:]] + [self.clock.now]
        return sum(max(0.0, end - max(frame.at, after)) for frame, end in zip(frames, ends)
                   if (address, port) in frame.serving(pool_id))

    def members(self, pool_id: str) -> dict[tuple[str, int], FakeMember]:
        self.advance()
        return {m.endpoint: m for m in self.pools[pool_id].values()}

    def delete_out_of_band(self, pool_id: str, address: str, port: int = 6443) -> None:
        self.pools[pool_id] = {k: m for k, m in self.pools[pool_id].items() if m.endpoint != (address, port)}
        self._record()

    # ----- time --------------------------------------------------------------------------------------------------
    def _new_id(self) -> str:
        self._ids += 1
        return f"m-{self._ids:04d}"

    def advance(self) -> None:
        """Apply what is due by now: a write's end, health checks."""
        now = self.clock.now
        changed = False
        if self._applying is not None and now >= self._applying[0]:
            due, pool_id, _ = self._applying
            for member in list(self.pools[pool_id].values()):
                if member.provisioning_status == "PENDING_DELETE":
                    del self.pools[pool_id][member.id]
                elif member.provisioning_status == "PENDING_CREATE":
                    member.provisioning_status = "ACTIVE"
                    if member.is_admin_state_up:
                        member.online_at = due + self.online_after  # when its health monitor judges it
                        if self.ovn_early_online:
                            member.operating_status = "ONLINE"
                elif member.provisioning_status == "PENDING_UPDATE":
                    member.provisioning_status = "ACTIVE"
                    if member.ovn and not member.is_admin_state_up:
                        member.operating_status, member.overwritten = "OFFLINE", False
                        member.provider_status = "OFFLINE"
                    elif member.ovn and member.provider_status is not None:  # admin up: its last status, reported
                        member.operating_status = member.provider_status
                    elif not member.ovn and not member.is_admin_state_up:
                        member.operating_status, member.online_at = "OFFLINE", None
                    elif not member.ovn and member.operating_status == "OFFLINE" and member.online_at is None:
                        member.online_at = due + self.online_after
            for member in self.pools[pool_id].values():  # the provider rebuilds the backends from the statuses
                was = member.in_backends
                if member.ovn and member.provider_status is not None:
                    member.in_backends = member.provider_status != "OFFLINE"
                else:
                    member.in_backends = member.is_admin_state_up or member.overwritten or \
                        member.operating_status != "OFFLINE"
                if member.ovn and was and not member.in_backends:  # OVN drops its health check: reported failing
                    member.overwrite_at = due + self.ovn_overwrite_after
            self.lb_status = "ACTIVE"
            self._applying = None
            changed = True
        for pool in self.pools.values():
            for member in pool.values():
                back_at = self.take_back.get(member.address)
                if back_at is not None and now >= back_at and not member.in_backends:
                    del self.take_back[member.address]
                    member.in_backends, member.overwritten, member.operating_status = True, True, "ERROR"
                    member.provider_status = "ERROR"
                    changed = True
                if member.overwrite_at is not None and now >= member.overwrite_at:
                    member.overwritten, member.overwrite_at = True, None
                    member.provider_status = "ERROR"
                    if self.ovn_lists_overwrite:
                        member.operating_status = "ERROR"
                    changed = True
                if member.online_at is not None and now >= member.online_at:
                    member.operating_status = "ERROR" if member.address in self.dead else "ONLINE"
                    member.online_at = None
                    if member.provider_status is not None:
                        member.provider_status = member.operating_status
                    changed = True
        if changed:
            self._record()

    def _record(self) -> None:
        self.timeline.append(Snapshot(self.clock.now, self.lb_status, {
            pool_id: tuple(replace(m) for m in pool.values()) for pool_id, pool in self.pools.items()}))

    def _fault(self, op: str) -> None:
        pending = self.faults.get(op)
        if pending:
            raise pending.pop(0)

    # ----- the API -----------------------------------------------------------------------------------------------
    def list(self, pool_id: str) -> list[FakeMember]:
        self.advance()
        self.calls.append(f"GET {pool_id}")
        self._fault("list")
        if pool_id not in self.pools:
            raise http_error(404, os_exc.NotFoundException, f"Pool {pool_id} could not be found.")
        return [replace(m) for m in self.pools[pool_id].values()]

    def update_member(self, pool_id: str, member_id: str, attributes: dict[str, Any]) -> FakeMember:
        self.advance()
        self.calls.append(f"PUT {pool_id}/{member_id}")
        self._fault("put")
        if member_id not in self.pools.get(pool_id, {}):
            raise http_error(404, os_exc.NotFoundException, f"Member {member_id} could not be found.")
        if self.lb_status != "ACTIVE":
            self.refused.append((self.clock.now, "PUT member"))
            raise http_error(409, os_exc.ConflictException, "Load Balancer lb-1 is immutable and cannot be updated.")
        member = self.pools[pool_id][member_id]
        member.provisioning_status = "PENDING_UPDATE"
        member.weight = attributes.get("weight", member.weight)
        member.is_admin_state_up = attributes.get("admin_state_up", member.is_admin_state_up)
        self.lb_status = "PENDING_UPDATE"
        self._applying = (self.clock.now + self.apply_seconds, pool_id, [])
        self.member_updates.append({"at": self.clock.now, "pool": pool_id, "member": member_id, **attributes})
        self._record()
        return replace(member)

    def delete_member(self, pool_id: str, member_id: str) -> None:
        self.advance()
        self.calls.append(f"DELETE {pool_id}/{member_id}")
        self._fault("put")
        if member_id not in self.pools.get(pool_id, {}):
            raise http_error(404, os_exc.NotFoundException, f"Member {member_id} could not be found.")
        if self.lb_status != "ACTIVE":
            self.refused.append((self.clock.now, "DELETE member"))
            raise http_error(409, os_exc.ConflictException, "Load Balancer lb-1 is immutable and cannot be updated.")
        self.pools[pool_id][member_id].provisioning_status = "PENDING_DELETE"
        self.lb_status = "PENDING_UPDATE"
        self._applying = (self.clock.now + self.apply_seconds, pool_id, [])
        self.member_deletes.append({"at": self.clock.now, "pool": pool_id, "member": member_id})
        self._record()

    def get_lb(self) -> SimpleNamespace:
        self.advance()
        self.calls.append("GET lb")
        self._fault("get_lb")
        return SimpleNamespace(id="lb-1", provisioning_status=self.lb_status, operating_status="ONLINE")

    def connect(self, cloud: Optional[str] = None, region: Optional[str] = None) -> "_Connection":
        conn = _Connection(self)
        self.connections.append(conn)
        return conn


class _Proxy:
    """``conn.load_balancer`` as openstacksdk's proxy offers it, over a PoolOctavia."""

    def __init__(self, fake: PoolOctavia) -> None:
        self._fake = fake

    def members(self, pool_id: str, **_query: Any):
        return iter(self._fake.list(pool_id))

    def get_load_balancer(self, lb_id: str):
        return self._fake.get_lb()

    def update_member(self, member_id: str, pool_id: str, **attributes: Any):
        return self._fake.update_member(pool_id, member_id, attributes)

    def delete_member(self, member_id: str, pool_id: str, ignore_missing: bool = True):
        try:
            self._fake.delete_member(pool_id, member_id)
        except os_exc.NotFoundException:
            if not ignore_missing:
                raise


class _Connection:
    def __init__(self, fake: PoolOctavia) -> None:
        self.load_balancer = _Proxy(fake)
        self.session = SimpleNamespace(get_token=self._token)
        self._fake = fake
        self.closed = False

    def _token(self) -> str:
        self._fake.tokens += 1
        return f"token-{self._fake.tokens}"

    def close(self) -> None:
        self.closed = True

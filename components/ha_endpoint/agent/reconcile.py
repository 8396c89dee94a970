"""One reconcile pass of the agent: the served Machines made the members of their zones' pools (once their ready
condition says their API server is healthy), and the members of deleting Machines, once their zones keep capacity
without them, drained, removed and their hooks released, in that order.

A pass is level-triggered and keeps no state a replica could lose: what was done is read back from the pools (the
agent's tag, admin state) and the Machines (our hook, our draining-since annotation), so a pass interrupted anywhere
is finished by the next one, on this replica or on the one that takes over. Nothing is written from a view of the
Machines that is not current (:class:`~.kube.MachineCache` not synced), nor by a replica that does not lead; a
member is deleted only when its Machine is being deleted (or proven gone by a fresh list), once its zone keeps
capacity without it, or, taken out, to be created again in service (the ovn provider's way back); a hook is released only once the pools list none of the Machine's members.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..cloud.errors import CloudError
from ..core.errors import HaEndpointError, Problem
from ..core.outputs import ZoneOutputs
from ..gates.model import LiveMember
from ..watch.records import NotTheEndpoints
from .capacity import PoolView, counts, removable, serving, state
from .client import MemberClient
from .dns import AgentRecord
from .inputs import DRAINING_SINCE_ANNOTATION, HOOK_ANNOTATION, HOOK_OWNER, STATUS_ANNOTATION, agent_tag
from .kube import MachineApi, MachineCache
from .machines import MachineMember, MachineSource, members_from_machines
from .report import Metrics

RANK = ("serving", "joining", "maintenance", "draining", "removed", "problem")
"""States of the status annotation, the later the more a user must know (the annotation shows the latest)."""
PENDING_POLL = 0.5
"""Seconds between passes while a change is pending (a member not yet ACTIVE/ONLINE, PENDING_* or leaving, a hook
waiting): the cloud reports no change, so it is polled, fast only while something waits on it (else ``--interval``)."""
PENDING_WINDOW = 30.0
"""How long after the last change (a write of the agent's, a state of its members) a pending change is polled every
``PENDING_POLL``; then every ``--interval``: a member that does not come ONLINE (its server down), a deletion
waiting for a Machine's condition (which the watch reports) are not worth six listings a second."""


class NotLeading(HaEndpointError):
    """The Lease was lost during the pass: stop writing."""


@dataclass(frozen=True)
class AgentSettings:
    source: MachineSource
    zones: dict[str, ZoneOutputs]
    """The endpoint's zones by AZ, as its outputs give them: the pools members are written into."""
    member_subnets: dict[str, str] = field(default_factory=dict)
    """AZ -> the subnet of its members (``--member-subnet``); a zone not named: its load balancer's VIP subnet."""
    member_ports: dict[int, int] = field(default_factory=dict)
    """Listener port -> members' port, where they differ."""
    drain_seconds: float = 30.0
    hook_warn_after: float = 600.0


def timestamp(text: Any) -> Optional[float]:
    """An RFC 3339 time (``2026-12-02T05:00:00Z``) as seconds since the epoch; None for anything else."""
    if not isinstance(text, str) or len(text) > 40:
        return None
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class Reconciler:
    def __init__(self, settings: AgentSettings, cloud: MemberClient, kube: MachineApi, cache: MachineCache,
                 metrics: Metrics, clock: Callable[[], float], leading: Callable[[], bool],
                 log: Callable[[str], None] = print, record: Optional[AgentRecord] = None) -> None:
        self.settings, self.cloud, self.kube, self.cache, self.metrics = settings, cloud, kube, cache, metrics
        self.clock, self.leading, self.log, self.record = clock, leading, log, record
        self._out_of_dns_since: dict[tuple[str, str], float] = {}
        """(zone, Machine) -> when the zone was found or taken out of DNS for that Machine's leaving member."""
        self.tag = agent_tag(settings.source)
        self._orphan_since: dict[str, float] = {}
        self._told: set[tuple[str, str]] = set()
        self._status: dict[str, dict[str, str]] = {}
        self._coming: set[tuple[str, str]] = set()
        self._pending = False
        self._due: Optional[float] = None
        self._seen: tuple[tuple[str, str, bool, str, str], ...] = ()
        self._changed_at = float("-inf")

    def next_pass_in(self, interval: float) -> float:
        """Seconds until the next pass is due without a change of the Machines: ``interval``; ``PENDING_POLL`` while
        a change of the pools is pending, up to ``PENDING_WINDOW`` after the last change; at most until the
        earliest drain time of the last pass ends."""
        fast = self._pending and self.clock() - self._changed_at <= PENDING_WINDOW
        wait = min(interval, PENDING_POLL) if fast else interval
        if self._due is not None:
            wait = min(wait, max(0.0, self._due - self.clock()))
        return wait

    def _waiting(self, until: Optional[float] = None) -> None:
        """Something of this pass waits on the cloud (``until``: on the clock alone, up to then)."""
        if until is None:
            self._pending = True
        else:
            self._due = until if self._due is None else min(self._due, until)

    # -- the pass ---------------------------------------------------------------------------------------------

    def reconcile(self) -> bool:
        """One pass; True when it ran to the end."""
        started = self.clock()
        machines, synced = self.cache.snapshot()
        self.metrics.synced.set(int(synced))
        self.metrics.leader.set(int(self.leading()))
        if not synced:
            self.metrics.errors.labels(kind="unsynced").inc()
            return False
        if not self.leading():
            return False
        try:
            self._pass(machines)
            return True
        except NotLeading:
            self.log("lost the Lease during a pass; the new leader goes on from what is written")
            return False
        except CloudError as error:
            self.metrics.errors.labels(kind="cloud").inc()
            self.log(f"cloud: {error}")
            return False
        except Exception as error:  # the management API refused or did not answer a write
            self.metrics.errors.labels(kind="kubernetes").inc()
            self.log(f"kubernetes: {type(error).__name__}: {str(error)[:300]}")
            return False
        finally:
            self.metrics.reconcile.observe(max(0.0, self.clock() - started))

    def _pass(self, machines: list[dict[str, Any]]) -> None:
        source = self.settings.source
        members, problems = members_from_machines(machines, source)
        raw = {m["metadata"]["name"]: m for m in machines if isinstance(m, dict) and source.selects(m)
               and isinstance((m.get("metadata") or {}).get("name"), str)}
        self._status = {}
        self._coming: set[tuple[str, str]] = set()  # (pool id, Machine) of the served Machines not in maintenance
        self._pending, self._due = False, None
        served = []
        for member in members:
            if member.az not in self.settings.zones:
                problems.append(Problem(f"Machine {source.namespace}/{member.name}: spec.failureDomain",
                                        f"{member.az!r} is not a zone of the endpoint (it has "
                                        f"{', '.join(sorted(self.settings.zones))}); give the Machine a failure "
                                        "domain the endpoint serves, or add the zone to the endpoint"))
            else:
                served.append(member)
        for problem in problems:
            self._problem(problem, raw)
        self.metrics.problems.set(len(problems))
        pools = [PoolView(az, port, pool_id, self.cloud.monitored(pool_id), tuple(self.cloud.members(pool_id)))
                 for az, zone in sorted(self.settings.zones.items()) for port, pool_id in zone.pools]
        seen = tuple(sorted((pool.pool_id, m.member_id, m.admin_state_up, m.provisioning_status, m.operating_status)
                            for pool in pools for m in pool.members if self.tag in m.tags))
        if seen != self._seen:
            self._seen, self._changed_at = seen, self.clock()
        self.metrics.set_members(counts(pools, self.tag), sorted(self.settings.zones))
        wanted = {(m.az, m.name, m.address) for m in served if not m.deleting}
        # A Machine that is there but not served (a problem: no address for a while, a refused annotation) keeps
        # its members as they are: nothing is guessed, in either direction. A deleting one still leaves.
        kept = {name for name, machine in raw.items() if name not in {m.name for m in served}
                and not machine["metadata"].get("deletionTimestamp")}
        leaving = [(pool, live) for pool in pools for live in pool.members
                   if self.tag in live.tags and (pool.az, live.name, live.address) not in wanted
                   and live.name not in kept]
        for member in served:
            if not member.deleting:
                self._guarded(member.name, raw, lambda m=member: self._serve(m, raw[m.name], pools))
        excluded = frozenset(live.member_id for _, live in leaving)
        for pool, live in leaving:
            self._guarded(live.name, raw, lambda p=pool, lv=live: self._leave(p, lv, pools, excluded,
                                                                             raw.get(lv.name)))
        self._release_hooks(raw, pools)
        for name, machine in raw.items():
            self._write_status(machine)

    def _guarded(self, name: str, raw: dict[str, Any], action: Callable[[], None]) -> None:
        """``action`` for one Machine; a cloud failure (after the retries) is that Machine's, reported on it, and
        the pass goes on with the others."""
        try:
            action()
        except CloudError as error:
            self.metrics.errors.labels(kind="cloud").inc()
            self._say(name, "problem", f"cloud: {str(error)[:200]}")
            if name in raw:
                self._event(raw[name], "MemberFailed", f"{self.cloud.service}: {error}", warning=True, once=False)
            self.log(f"Machine {name}: {error}")

    # -- serving ----------------------------------------------------------------------------------------------

    def _serve(self, member: MachineMember, machine: dict[str, Any], pools: list[PoolView]) -> None:
        """``member``'s Machine carries our hook, and each pool of its zone holds its member as wanted: created (in
        service) once it is wanted in service, taken out (admin down) while it is not, and put back in service by
        deleting the member taken out and creating it again at the next pass: the ovn provider never puts a member
        it holds OFFLINE back in its backends when it is only set admin up (ha_endpoint.readiness.reconcile's
        ``recreating``: the same rule as ``up``'s), and a created member is monitored from its creation."""
        annotations = machine["metadata"].get("annotations") or {}
        if annotations.get(HOOK_ANNOTATION) != HOOK_OWNER:
            self._guard()
            self.cache.store(self.kube.annotate(member.name, {HOOK_ANNOTATION: HOOK_OWNER}))
        for pool in pools:
            if pool.az != member.az:
                continue
            port = self.settings.member_ports.get(pool.port, pool.port)
            mine = [m for m in pool.members if self.tag in m.tags and m.name == member.name
                    and m.address == member.address]
            live = mine[0] if mine else None
            up, why = self._in_service(member, live, pool, pools)
            if member.enabled:
                self._coming.add((pool.pool_id, member.name))
            if not up and why and member.enabled:
                self._event(machine, "WaitingForCondition", f"member kept out of the endpoint's pools until the "
                            f"Machine's condition {self.settings.source.ready_condition} is True: {why}; "
                            "KubeadmControlPlane sets it once the Machine's API server pod is healthy (Machines it "
                            "does not manage: give the agent --ready-condition with a condition they carry, or "
                            "none)")
            out = f"{pool.port} out ({member.maintenance_reason})" if not member.enabled else \
                f"{pool.port} out until {why}"
            if live is not None and live.provisioning_status == "PENDING_DELETE":
                self._waiting()
                self._say(member.name, "joining" if member.enabled else "maintenance",
                          f"{pool.port} deleting, to be created again in service" if up else out)
                continue
            if live is None:
                if not up:
                    self._say(member.name, "joining" if member.enabled else "maintenance", out)
                    continue
                taken = [m for m in pool.members if m.address == member.address and m.protocol_port == port]
                if taken:
                    self._say(member.name, "problem", f"{pool.port}: {member.address}:{port} is taken by member "
                              f"{taken[0].name or taken[0].member_id} (not the agent's: tags {list(taken[0].tags)}); "
                              "remove it from the endpoint's members[] first")
                    continue
                self._guard()
                called = self.clock()
                self.cloud.create(pool.pool_id, name=member.name, address=member.address, protocol_port=port,
                                  subnet_id=self.settings.member_subnets.get(pool.az), tags=[self.tag],
                                  admin_state_up=True)
                self._waiting()
                self.log(f"Machine {member.name}: member {member.address}:{port} created in {pool.az} "
                         f"(listener {pool.port}; the call took {self.clock() - called:.1f} s)")
                self._say(member.name, "joining", f"{pool.port} created")
                continue
            if live.admin_state_up and not up and not member.enabled and \
                    not removable(live, pool, pools, frozenset()):
                # maintenance as deletion: never the endpoint's last serving member of the listener
                self._waiting()
                self._say(member.name, "maintenance", f"{pool.port} in service ({member.maintenance_reason}), "
                          f"waiting for another ONLINE member before it is taken out")
            elif live.admin_state_up and not up:
                alone = not any(serving(m, pool.monitored) for m in pool.members if m.member_id != live.member_id)
                if not member.enabled and alone and not self._out_of_dns(pool, member.name, "maintenance"):
                    continue  # maintenance as deletion: a zone's only member leaves DNS first
                self._guard()
                called = self.clock()
                self.cloud.set_admin(pool.pool_id, live.member_id, False)
                self.log(f"Machine {member.name}: member taken out in {pool.az} (listener {pool.port}: "
                         f"{why or 'maintenance'}; the call took {self.clock() - called:.1f} s)")
                self._say(member.name, "joining" if member.enabled else "maintenance", out)
            elif not live.admin_state_up and up:
                self._guard()
                called = self.clock()
                self.cloud.delete(pool.pool_id, live.member_id)
                self._waiting()
                self.log(f"Machine {member.name}: member deleted in {pool.az} (listener {pool.port}), to be created "
                         f"again in service (the call took {self.clock() - called:.1f} s)")
                self._say(member.name, "joining", f"{pool.port} deleted, to be created again in service")
            elif not up:
                self._say(member.name, "joining" if member.enabled else "maintenance", out)
            else:
                what = state(live, pool.monitored)
                if what != "serving":
                    self._waiting()
                self._say(member.name, "serving" if what == "serving" else "joining",
                          f"{pool.port} {live.provisioning_status}/{live.operating_status}")

    def _in_service(self, member: MachineMember, live: Optional[LiveMember], pool: PoolView,
                    pools: list[PoolView]) -> tuple[bool, str]:
        """Whether ``member`` is wanted in service in ``pool``, and, when its ready condition keeps it out, why. The
        rule (docs/agent.md): out while in maintenance; in once the Machine's ready condition is True; out while it
        is False (KubeadmControlPlane saw the API server pod not healthy); while it is absent or Unknown, a member
        stays as it is (a new one: not created), except that when no member of the listener serves in any
        zone, it goes in: nothing is served that it could fail, and KubeadmControlPlane reaches the workload cluster
        through this endpoint to set the condition at all (the first machine; an endpoint that is down)."""
        if not member.enabled:
            return False, ""
        if member.ready is True:
            return True, ""
        if member.ready is False:
            return False, member.ready_detail
        if live is not None and live.admin_state_up:
            return True, ""
        nothing_serves = not any(serving(m, other.monitored) for other in pools if other.port == pool.port
                                 for m in other.members)
        return (True, "") if nothing_serves else (False, member.ready_detail)

    # -- leaving ----------------------------------------------------------------------------------------------

    def _leave(self, pool: PoolView, live: LiveMember, pools: list[PoolView], excluded: frozenset[str],
               machine: Optional[dict[str, Any]]) -> None:
        """Make before break: the member stays in service until its zone keeps capacity without it (another member
        of the zone serving; when none does, the zone's other Machines, not in maintenance, are waited for:
        KubeadmControlPlane's new machine; only a zone with no other Machine lets it go once another zone serves),
        then it is drained (admin down), and deleted once the drain time has passed."""
        name = live.name
        if live.provisioning_status == "PENDING_DELETE":
            self._waiting()  # until the pools list it no more: then the hook goes
            self._say(name, "draining", f"{pool.port} deleting")
            return
        kept = any(serving(m, pool.monitored) for m in pool.members
                   if m.member_id != live.member_id and m.member_id not in excluded)
        joining = [] if kept else sorted(other for pool_id, other in self._coming if pool_id == pool.pool_id)
        if joining or not removable(live, pool, pools, excluded):
            self._waiting()  # on the zone's (or the endpoint's) other members
            waits = f"{', '.join(joining)} to serve" if joining else "another ONLINE member"
            self._say(name, "draining", f"{pool.port} in service, waiting for {waits} in {pool.az}")
            return
        if live.admin_state_up and not kept and not self._out_of_dns(pool, name):
            return
        if live.admin_state_up:
            self._guard()
            called = self.clock()
            self.cloud.set_admin(pool.pool_id, live.member_id, False)
            self.log(f"member {name} ({live.address}) in {pool.az}: drained (admin down; the call took "
                     f"{self.clock() - called:.1f} s)")
            self._say(name, "draining", f"{pool.port} drained")
        since = self._drain_since(live, machine)  # starts at the admin down, in the same pass
        end = since + self.settings.drain_seconds
        if self.clock() < end:  # the status names the end, not a countdown: a status that changed at every pass
            # would be a patch, a watch event and another pass, in a loop
            self._waiting(until=end)
            shown = datetime.datetime.fromtimestamp(end, datetime.timezone.utc)
            self._say(name, "draining", f"{pool.port} drained, deleted after {shown:%H:%M:%S}Z (drain time)")
            return
        self._guard()
        called = self.clock()
        self.cloud.delete(pool.pool_id, live.member_id)
        self._waiting()
        self._orphan_since.pop(live.member_id, None)
        self.log(f"member {name} ({live.address}) in {pool.az}: deleted (listener {pool.port}; the call took "
                 f"{self.clock() - called:.1f} s)")
        self._say(name, "draining", f"{pool.port} deleted")

    def _out_of_dns(self, pool: PoolView, name: str, what: str = "draining") -> bool:
        """Whether the zone of ``pool``, whose only member is leaving, is out of the endpoint's A record for the
        record's TTL: taken out now if it is in it (never the record's last zone: then it waits for another zone to be
        published), then waited for, so that no client still resolves to it once its member is taken out. True at once
        for an endpoint without a record (or a zone without an address)."""
        record = self.record
        address = record.zone_addresses.get(pool.az) if record is not None else None
        if record is None or not address:
            return True
        try:
            held, ttl = record.read()
            if address in held:
                rest = [other for other in held if other != address]
                if not rest:
                    self._waiting()
                    self._say(name, what, f"{pool.port} in service: {pool.az} is the only zone in "
                              f"{record.fqdn}; waiting for another zone to be published before it is taken out")
                    return False
                self._guard()
                record.write(rest)
                self._out_of_dns_since[(pool.az, name)] = self.clock()
                self.log(f"member {name} in {pool.az}: the zone's only member is leaving; {address} taken out of "
                         f"{record.fqdn} (now {' '.join(rest)}); the member is taken out once its TTL ({ttl} s) has passed")
        except NotTheEndpoints as error:
            self._waiting()
            self._say(name, "problem", f"{pool.port} in service: {pool.az}'s only member may leave only once the "
                      f"zone is out of DNS, and {error}")
            return False
        # since when it is out for this member: found out already (the watcher took it out earlier, when is not
        # known), a full TTL from now; never shorter
        end = self._out_of_dns_since.setdefault((pool.az, name), self.clock()) + ttl
        if self.clock() < end:
            self._waiting(until=end)
            shown = datetime.datetime.fromtimestamp(end, datetime.timezone.utc)
            self._say(name, what, f"{pool.port} in service, {pool.az} out of DNS; taken out after {shown:%H:%M:%S}Z "
                      "(the record's TTL)")
            return False
        return True

    def _drain_since(self, live: LiveMember, machine: Optional[dict[str, Any]]) -> float:
        """When the drain time of ``live`` (admin down) started: kept on a deleting Machine (a replica taking over
        goes on from there); in memory for a member whose Machine is gone or stays. Now, written, when it had
        none (the pass that took it out; a replica that finds it out without a start: never shorter)."""
        deleting = machine is not None and machine["metadata"].get("deletionTimestamp")
        if deleting:
            text = (machine["metadata"].get("annotations") or {}).get(DRAINING_SINCE_ANNOTATION)
            try:
                return float(text) if text is not None else self._start_drain(live.name)
            except ValueError:
                return self._start_drain(live.name)
        return self._orphan_since.setdefault(live.member_id, self.clock())

    def _start_drain(self, name: str) -> float:
        self._guard()
        now = self.clock()
        self.cache.store(self.kube.annotate(name, {DRAINING_SINCE_ANNOTATION: f"{now:.3f}"}))
        self._say(name, "draining", f"drain time started ({self.settings.drain_seconds:.0f} s)")
        return now

    # -- hooks ------------------------------------------------------------------------------------------------

    def _release_hooks(self, raw: dict[str, dict[str, Any]], pools: list[PoolView]) -> None:
        now, waiting, too_long = self.clock(), 0, 0
        ours = {live.name for pool in pools for live in pool.members if self.tag in live.tags}
        for name, machine in raw.items():
            meta = machine["metadata"]
            if not meta.get("deletionTimestamp") or (meta.get("annotations") or {}).get(HOOK_ANNOTATION) is None:
                continue
            deleted_at = timestamp(meta.get("deletionTimestamp"))
            held = now - deleted_at if deleted_at is not None else 0.0
            if name in ours:  # its member is leaving: _leave says what that waits for
                waiting += 1
                if held > self.settings.hook_warn_after:
                    too_long += 1
                    self._event(machine, "HookHeldTooLong", f"our deletion hook holds this Machine for {held:.0f} s "
                                f"(more than {self.settings.hook_warn_after:.0f} s): "
                                f"{'; '.join(self._status.get(name, {}).values()) or 'draining'}; it is released "
                                "only once the member is out and its zone keeps an ONLINE member", warning=True)
                continue
            self._guard()
            self.cache.store(self.kube.annotate(name, {HOOK_ANNOTATION: None, DRAINING_SINCE_ANNOTATION: None,
                                                       STATUS_ANNOTATION: "removed: member deleted, hook released"}))
            self._status.pop(name, None)
            self._out_of_dns_since = {key: at for key, at in self._out_of_dns_since.items() if key[1] != name}
            self.metrics.hook_wait.observe(max(0.0, held))
            self._event(machine, "HookReleased", f"member removed from the endpoint's pools; deletion hook "
                        f"{HOOK_ANNOTATION} released after {held:.0f} s", once=False)
            self.log(f"Machine {name}: hook released after {held:.0f} s")
        self.metrics.hooks_waiting.set(waiting)
        self.metrics.hooks_held_too_long.set(too_long)

    # -- reporting --------------------------------------------------------------------------------------------

    def _say(self, name: str, what: str, detail: str) -> None:
        self._status.setdefault(name, {})[detail] = what

    def _write_status(self, machine: dict[str, Any]) -> None:
        meta = machine["metadata"]
        said = self._status.get(meta["name"])
        if not said or (meta.get("annotations") or {}).get(HOOK_ANNOTATION) is None and meta.get("deletionTimestamp"):
            return
        worst = max(said.values(), key=RANK.index)
        text = f"{worst}: {'; '.join(said)}"[:512]
        if (meta.get("annotations") or {}).get(STATUS_ANNOTATION) != text:
            self._guard()
            self.cache.store(self.kube.annotate(meta["name"], {STATUS_ANNOTATION: text}))
            self.log(f"Machine {meta['name']}: status {text}")

    def _problem(self, problem: Problem, raw: dict[str, dict[str, Any]]) -> None:
        name = problem.path.split(":")[0].rpartition("/")[2]
        self._say(name, "problem", problem.message)
        if name in raw:
            self._event(raw[name], "NotServed", str(problem), warning=True)

    def _event(self, machine: dict[str, Any], reason: str, message: str, warning: bool = False,
               once: bool = True) -> None:
        key = (str(machine["metadata"].get("uid") or machine["metadata"].get("name")), f"{reason}:{message}"
               if reason != "HookHeldTooLong" else reason)
        if once and key in self._told:
            return
        self._guard()
        self.kube.event(machine, reason, message, warning)
        self._told.add(key)

    def _guard(self) -> None:
        """Before every write: stop when not leading. A write is a change (the fast polls go on after it)."""
        if not self.leading():
            raise NotLeading()
        self._changed_at = self.clock()

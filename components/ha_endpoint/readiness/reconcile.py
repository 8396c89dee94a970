"""A member set's staged reconcile: the pool's members made what the set wants with Octavia's batch update, in
stages that keep make-before-break and drain (pure: the cloud, clock and sleep are injected).

Octavia's ``PUT /v2/lbaas/pools/{id}/members`` replaces a pool's whole member list in one load-balancer write (0.37 s
per member on the local cloud, against 1.76 s one by one). Done naively it would remove the leaving members in the
same write that adds their replacements, before these serve, and without a drain. So a change goes in three stages,
each one batch:

1. **make**: the new members and the changed ones, with ``additive_only`` (Octavia deletes nothing), each with the
   admin state its entry says (a member the configuration takes out: down); then wait until every wanted member in
   service is ready as ``require`` says (the readiness waiter, :mod:`.waiter`: provisioning ACTIVE and operating
   ONLINE by default; the ovn provider's early ONLINE held for the members just created; a member taken out is not
   waited for). A wanted member that does not become ready stops the update here: nothing has been removed. With
   ``admin_down`` (the ovn provider) and a monitored pool, each member this write took out is kept out of the
   backends as a drained one is (:mod:`.held_out`: set admin down again once the provider's ERROR is in, its weight
   kept). A member put back (listed admin down, wanted in service) under ``admin_down`` in a monitored pool is deleted
   first and created again by this batch (:meth:`_Reconcile.recreating`: the ovn provider never puts a member it
   holds OFFLINE back in its backends when it is only set admin up).
2. **drain** (``drain_seconds`` > 0 and members leaving): the leaving members at weight 0, ``additive_only``; once
   Octavia applied it, the grace. With ``admin_down`` (the ovn provider) each leaving member instead at weight 0 and
   admin state down in a single-member update of its own, repeated once the provider's ERROR is in, each applied
   before the next member's; then the grace, through which every leaving member is kept out of the backends (the one
   rule of :mod:`.held_out`, which MemberDrain follows too).
3. **break**: the pool's list as Octavia lists it now, minus the leaving members (a member the set cannot prove its
   own is written back as it is: never removed); then wait until the leaving members are gone.

Which members are the set's own (:func:`classify`): those whose id the set's state records, those carrying the set's
tag (created by an update of this set that was interrupted before its state was saved), and, at the address and port
of a wanted member only and when ``adopt`` says so, those carrying the stack's identity tag (created by the per-member
resources of a stack moving to the set, which went through ``memberUpdates: handover``: adopted as they are). A wanted
address and port taken by any other member is refused (:class:`~.errors.MemberSetConflict`; a member of the
per-member resources without the handover, :class:`~.errors.HandoverSkipped`) before anything is written.

Resuming: every update starts from what the pool lists, so an update interrupted in any stage is finished by the
next one (a member created but not recorded carries the set's tag; a leaving member at weight 0 is still the set's
own by its recorded id and is drained and removed again).

Writes are retried by the one retry policy (:func:`ha_endpoint.cloud.retry.call_with_retries`: 409 while the load
balancer is PENDING_*, 5xx, connection failures, an expired token); a stage whose deadline passes fails with
:class:`~.errors.MemberSetTimeout`, naming the stage and what was done before it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional, Protocol

from ..cloud.errors import TransientFetchError
from ..cloud.retry import Backoff, RetriesExhausted
from .errors import HandoverSkipped, ReadinessError, MemberSetConflict, MemberSetTimeout
from .held_out import OVERWRITTEN_WITHIN, POLL, Watch, hold_out
from .model import DELETING, LiveMember, LoadBalancerStatus, MemberStatus
from .retrying import retried
from .set_inputs import DesiredMember, SetInputs
from .waiter import wait_for_members

WRITE_BACKOFF = Backoff(0.5, 1.5, 5.0)
"""Between two tries of a write Octavia refused with 409 (it applies one write per load balancer at a time)."""

class SetSource(Protocol):
    """What a reconcile asks of the cloud (:class:`ha_endpoint.readiness.cloud.OctaviaStatusSource`)."""

    calls: int

    def list_members(self, pool_id: str) -> list[LiveMember]: ...

    def put_members(self, pool_id: str, members: list[dict[str, Any]], additive_only: bool) -> None: ...

    def drain_member(self, pool_id: str, member_id: str, admin_down: bool = False,
                     weight: Optional[int] = 0) -> bool: ...

    def remove_member(self, pool_id: str, member_id: str) -> bool: ...

    def fetch_pool(self, pool_id: str) -> list[MemberStatus]: ...

    def fetch_load_balancer(self, load_balancer_id: str) -> LoadBalancerStatus: ...

    def reauth(self) -> None: ...


@dataclass(frozen=True)
class Changes:
    """What the pool lists, sorted against what the set wants.

    Attributes:
        create: wanted members no live member stands for.
        update: wanted members whose own live member differs (name, weight, monitor port), with that member.
        kept: every wanted member with its own live member (updated or not).
        leaving: the set's own live members nobody wants any more.
        adopted: live members proven the stack's by its identity tag alone, taken as wanted members.
        foreign: live members the set cannot prove its own: never written, never removed.
    """

    create: tuple[DesiredMember, ...] = ()
    update: tuple[tuple[DesiredMember, LiveMember], ...] = ()
    kept: tuple[tuple[DesiredMember, LiveMember], ...] = ()
    leaving: tuple[LiveMember, ...] = ()
    adopted: tuple[LiveMember, ...] = ()
    foreign: tuple[LiveMember, ...] = ()


def owns(member: LiveMember, recorded: frozenset[str], set_tag: str) -> bool:
    """Whether ``member`` is provably the set's own: recorded in its state, or created by it (its tag)."""
    return member.member_id in recorded or set_tag in member.tags


def classify(inputs: SetInputs, live: list[LiveMember], recorded: frozenset[str], adopt: bool = False) -> Changes:
    """Sort the pool's live members against the wanted ones (see the module docstring); a member being deleted is
    already gone. ``adopt``: whether members carrying the stack's identity tag may be taken (the set went through
    the handover). Raises :class:`HandoverSkipped` when a wanted address and port holds such a member and ``adopt`` is
    false, :class:`MemberSetConflict` when one is taken by a foreign member."""
    present = [m for m in live if m.provisioning_status not in DELETING]
    by_endpoint = {m.endpoint: m for m in present}
    create, update, kept, adopted, conflicts, per_member = [], [], [], [], [], []
    for member in inputs.members:
        found = by_endpoint.get(member.endpoint)
        if found is None:
            create.append(member)
            continue
        if not owns(found, recorded, inputs.set_tag):
            if not inputs.identity_tag or inputs.identity_tag not in found.tags:
                conflicts.append((member, found))
                continue
            if not adopt:
                per_member.append(found)
                continue
            adopted.append(found)
        kept.append((member, found))
        if member.differs(found):
            update.append((member, found))
    if per_member and not conflicts:
        raise HandoverSkipped(
            f"pool {inputs.pool_name} ({inputs.pool_id}): the members at "
            + ", ".join(m.endpoint for m in per_member)
            + f" carry this stack's tag {inputs.identity_tag!r}: the stack's per-member resources (memberUpdates: "
              "per-member) created them, and this update would delete them with those resources after the member "
              "set took them over. Nothing was written. Fix: run one `pulumi up` with `memberUpdates: handover` "
              "first (it keeps them and retains those resources on delete), then set `memberUpdates: batch` and "
              "run `pulumi up` again.")
    if conflicts:
        raise MemberSetConflict(
            f"pool {inputs.pool_name} ({inputs.pool_id}): "
            + "; ".join(f"member {m.name} ({m.endpoint}) is wanted, but the pool's member {f.member_id} "
                        f"(name {f.name!r}, tags {sorted(f.tags)}) takes that address and port and is not this "
                        f"stack's (neither recorded by the member set nor tagged {inputs.identity_tag!r})"
                        for m, f in conflicts)
            + ". Nothing was written. Remove that member from the pool (openstack loadbalancer member delete), or "
              "change the wanted member's address or port, then run `pulumi up` again.")
    wanted = {m.endpoint for m in inputs.members}
    leaving = [m for m in present if m.endpoint not in wanted and owns(m, recorded, inputs.set_tag)]
    own_ids = {m.member_id for _, m in kept} | {m.member_id for m in leaving}
    foreign = [m for m in present if m.member_id not in own_ids]
    return Changes(tuple(create), tuple(update), tuple(kept), tuple(leaving), tuple(adopted), tuple(foreign))


@dataclass(frozen=True)
class SetResult:
    """What a reconcile ended with.

    Attributes:
        members: wanted member name -> its live member at the end.
        owned_ids: the members the set owns at the end (the wanted ones, and leaving ones it could not remove yet).
        ready: every wanted member met the requirement (false only with ``on_not_ready: unpublish``).
        not_ready_reason: why not.
        created, updated, adopted, drained, removed: members per kind of change.
        writes: batch updates Octavia accepted.
        api_calls: calls made (listings, writes, status polls).
        waited_seconds: the whole reconcile.
        stages: the stages that ran, in order (``make``, ``drain``, ``break``).
    """

    members: dict[str, LiveMember]
    owned_ids: tuple[str, ...]
    ready: bool = True
    not_ready_reason: Optional[str] = None
    created: int = 0
    updated: int = 0
    adopted: int = 0
    drained: int = 0
    removed: int = 0
    writes: int = 0
    api_calls: int = 0
    waited_seconds: float = 0.0
    stages: tuple[str, ...] = ()


@dataclass
class _Reconcile:
    inputs: SetInputs
    source: SetSource
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    not_ready: tuple[type[ReadinessError], ...]
    adopt: bool = False
    writes: int = 0
    stages: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)

    @property
    def pool(self) -> str:
        return f"pool {self.inputs.pool_name} ({self.inputs.pool_id})"

    def retried(self, action: Callable[[], Any], what: str) -> Any:
        """``action()`` under the one retry policy, for at most ``write_timeout_seconds``."""
        def exhausted(exc: RetriesExhausted) -> MemberSetTimeout:
            so_far = "; ".join(self.done) if self.done else "nothing was changed yet"
            return MemberSetTimeout(
                f"{self.pool}: {what} did not succeed within {self.inputs.write_timeout_seconds:g}s ({exc.attempts} "
                f"attempts, last: {exc.last}). Done before: {so_far}; no member was removed before its replacement "
                f"was ready. Wait until the load balancer {self.inputs.loadbalancer_id} is ACTIVE, then run `pulumi "
                f"up` again: the member set resumes from what the pool holds.")
        return retried(action, timeout_seconds=self.inputs.write_timeout_seconds, clock=self.clock, sleep=self.sleep,
                       backoff=WRITE_BACKOFF, reauth=self.source.reauth, refused=f"{self.pool}: {what}",
                       exhausted=exhausted)

    def listing(self) -> list[LiveMember]:
        return self.retried(lambda: self.source.list_members(self.inputs.pool_id), "listing its members")

    def put(self, entries: list[dict[str, Any]], additive_only: bool, what: str) -> None:
        self.retried(lambda: self.source.put_members(self.inputs.pool_id, entries, additive_only), what)
        self.writes += 1

    def settled(self, member_ids: set[str], gone: bool, what: str) -> list[LiveMember]:
        """The listing once Octavia applied the last write to ``member_ids``: none of them PENDING_* any more (or,
        with ``gone``, none of them listed)."""
        def check() -> list[LiveMember]:
            live = self.source.list_members(self.inputs.pool_id)
            waiting = [m for m in live if m.member_id in member_ids
                       and (gone or m.provisioning_status.startswith("PENDING_"))]
            if waiting:
                raise TransientFetchError(f"member {waiting[0].member_id} ({waiting[0].endpoint}) is still "
                                          f"{waiting[0].status.label}")
            return live
        return self.retried(check, what)

    def wanted(self, live: list[LiveMember]) -> dict[str, LiveMember]:
        """Wanted member name -> its live member; a wanted member Octavia does not list after the write fails."""
        by_endpoint = {m.endpoint: m for m in live if m.provisioning_status not in DELETING}
        missing = [m for m in self.inputs.members if m.endpoint not in by_endpoint]
        if missing:
            raise MemberSetTimeout(
                f"{self.pool}: Octavia accepted the batch update but does not list "
                + ", ".join(f"{m.name} ({m.endpoint})" for m in missing)
                + ". Run `pulumi up` again: the member set resumes from what the pool holds.")
        return {m.name: by_endpoint[m.endpoint] for m in self.inputs.members}

    def run(self, recorded: frozenset[str]) -> SetResult:
        start = self.clock()
        live = self.listing()
        changes = classify(self.inputs, live, recorded, self.adopt)
        before = {m.member_id for m in live}
        going = {m.member_id for m in live if m.provisioning_status in DELETING
                 and owns(m, recorded, self.inputs.set_tag)}  # removed by an update that was interrupted
        if self.inputs.admin_down and self.inputs.monitored:
            changes, live = self.recreating(changes, live)
        if changes.create or changes.update:
            self.stages.append("make")
            self.put([m.entry(self.inputs.create_tags) for m in changes.create]
                     + [wanted.update_of(found) for wanted, found in changes.update], True,
                     f"adding {len(changes.create)} and updating {len(changes.update)} members (one batch)")
            self.done.append(f"{len(changes.create)} members added, {len(changes.update)} updated")
            live = self.listing()
        members = self.wanted(live)
        taken_out = {found.member_id: found for wanted, found in changes.update
                     if not wanted.admin_state_up and found.admin_state_up}
        if taken_out and self.inputs.admin_down and self.inputs.monitored:
            self.keep_out(taken_out)
            live = self.listing()
            members = self.wanted(live)
        leaving = {m.member_id: m for m in changes.leaving}
        # members with the set's tag that its state does not record were created by a create or update of this set
        # that was interrupted after Octavia accepted its batch: never seen ready by the set, they are waited for,
        # and held, as if it had just created them (else a create run again, with nothing left to write, would count
        # a dead member ready: tests/unit/readiness/test_member_set.py)
        unseen = {m.member_id for m in members.values()
                  if m.member_id not in recorded and self.inputs.set_tag in m.tags}
        in_service = {m.name for m in self.inputs.members if m.admin_state_up}
        awaited = {name: m for name, m in members.items() if name in in_service}
        if awaited and (changes.create or changes.update or leaving or unseen):
            try:
                held = frozenset(m.member_id for m in awaited.values() if m.member_id not in before or
                                 m.member_id in unseen)
                waited = wait_for_members(
                    self.inputs.wait_spec(tuple(m.member_id for m in awaited.values()), held),
                    fetch_pool=self.source.fetch_pool, fetch_load_balancer=self.source.fetch_load_balancer,
                    clock=self.clock, sleep=self.sleep, reauth=self.source.reauth)
            except self.not_ready as exc:
                if not self.inputs.unpublishes:
                    raise
                return self.result(members, changes, start, leaving, ready=False, reason=str(exc))
            members = {name: replace(m, provisioning_status=waited.statuses[m.member_id].provisioning_status,
                                     operating_status=waited.statuses[m.member_id].operating_status)
                       if name in awaited else m for name, m in members.items()}
        out = {m.member_id for name, m in members.items() if name not in in_service
               and m.provisioning_status.startswith("PENDING_")}
        if out:  # not waited for, but listed as Octavia applied the write (not PENDING_*), as the others are
            members = {**members, **{name: m for name, m in self.wanted(self.settled(
                out, False, "waiting for Octavia to apply the members taken out")).items() if name not in in_service}}
        drained = 0
        if leaving and self.inputs.drain_seconds > 0:
            self.stages.append("drain")
            watches: list[Watch] = []
            if self.inputs.admin_down:
                watches = self.drain_one_by_one(leaving)
            else:
                self.put([m.entry(weight=0) for m in leaving.values()], True,
                         f"setting the weight of {len(leaving)} leaving members to 0 (one batch)")
                self.settled(set(leaving), False, "waiting for Octavia to apply the leaving members' weight 0")
            drained = len(leaving)
            self.done.append(f"{drained} leaving members drained")
            if watches and self.inputs.monitored:  # the grace, each leaving member kept out through it
                self.hold(watches, leaving, until=self.clock() + self.inputs.drain_seconds)
            else:
                self.sleep(self.inputs.drain_seconds)
        if leaving:
            self.stages.append("break")
            live = self.listing()
            remaining = [m for m in live if m.member_id not in leaving and m.provisioning_status not in DELETING]
            self.check_keeps_every_other(live, remaining, leaving)
            self.put([m.entry() for m in remaining], False,
                     f"removing {len(leaving)} leaving members (one batch with the {len(remaining)} that stay)")
            live = self.settled(set(leaving) | going, True, "waiting for the leaving members to be gone")
            members = self.wanted(live)
        elif going:
            members = self.wanted(self.settled(going, True, "waiting for the members being removed to be gone"))
        return self.result(members, changes, start, {}, drained=drained, removed=len(leaving))

    def recreating(self, changes: Changes, live: list[LiveMember]) -> tuple[Changes, list[LiveMember]]:
        """``admin_down`` (the ovn provider), monitored pool: every member put back (listed admin down, wanted in
        service) is deleted, one single-member delete each, and created again by the make stage's batch. Only set
        admin up, the ovn provider would keep it out for good: ovn-octavia-provider 3.1.2's
        ``OvnProviderHelper.member_update`` keeps, with a health monitor, the status it last held for the member
        (OFFLINE, as :mod:`.held_out` leaves it) and rewrites the OVN load balancer's backends only when that status
        leaves OFFLINE, which it then never does; OVN has no health check for a member out of the backends, so nothing
        reports it again. ``member_create``
        (``_add_member``) puts a member created admin up in the backends and gives it its health check. The member is
        out of service meanwhile: nothing a client notices. Returns the changes with those members to create, and the
        listing once they are gone."""
        back = [(wanted, found) for wanted, found in changes.update
                if wanted.admin_state_up and not found.admin_state_up]
        if not back:
            return changes, live
        self.stages.append("recreate")
        for wanted, found in back:
            if self.retried(lambda: self.source.remove_member(self.inputs.pool_id, found.member_id),
                            f"deleting member {found.member_id} ({found.endpoint}) to create it again in service"):
                self.writes += 1
            self.settled({found.member_id}, True,
                         f"waiting for member {found.member_id} ({found.endpoint}) to be gone")
        self.done.append(f"{len(back)} members put back deleted, to be created again")
        ids = {found.member_id for _, found in back}
        return replace(changes, create=changes.create + tuple(wanted for wanted, _ in back),
                       update=tuple(u for u in changes.update if u[1].member_id not in ids),
                       kept=tuple(k for k in changes.kept if k[1].member_id not in ids)), \
            [m for m in live if m.member_id not in ids]

    def drain_one_by_one(self, leaving: dict[str, LiveMember]) -> list[Watch]:
        """``admin_down`` (the ovn provider): each leaving member at weight 0 and administratively down in a write of
        its own and, when the pool has a health monitor, kept out of the load balancer's backends until the provider's
        ERROR over that drain is drained again (:mod:`.held_out`), before the next member is drained. A member gone
        meanwhile needs no drain. The watches of the drained members, for the grace."""
        watches: list[Watch] = []
        for member in sorted(leaving.values(), key=lambda m: m.endpoint):
            if not self.drain_out(member):
                continue
            watches.append(Watch(member.member_id, self.clock()))
            if self.inputs.monitored:
                self.hold(watches, leaving, until=watches[-1].drained_at + OVERWRITTEN_WITHIN + POLL,
                          until_drained_again=True)
        return watches

    def keep_out(self, taken_out: dict[str, LiveMember]) -> None:
        """``admin_down`` (the ovn provider), monitored pool: the members the make stage just took out (the
        configuration's ``enabled: false``) kept out of the backends as a drained member is (:mod:`.held_out`), each
        set admin down again, its weight kept, once the provider's ERROR over it is in: otherwise the provider's next
        rewrite of the backends (any later member write) would take it back."""
        now = self.clock()
        self.done.append(f"{len(taken_out)} members taken out")
        self.hold([Watch(member_id, now) for member_id in sorted(taken_out)], taken_out,
                  until=now + OVERWRITTEN_WITHIN + POLL, until_drained_again=True, weight=None)

    def hold(self, watches: list[Watch], leaving: dict[str, LiveMember], *, until: float,
             until_drained_again: bool = False, weight: Optional[int] = 0) -> None:
        """:func:`.held_out.hold_out` over the pool's listing, draining a leaving member again in a write of its own
        (``weight``: as :meth:`drain_out`)."""
        hold_out(watches, self.listing,
                 lambda watch, why: self.drain_out(leaving[watch.member_id], f"again: {why}", weight),
                 until=until, clock=self.clock, sleep=self.sleep, until_drained_again=until_drained_again)

    def drain_out(self, member: LiveMember, why: str = "", weight: Optional[int] = 0) -> bool:
        """One single-member update: ``member`` at weight 0 (``weight``; ``None``: its weight kept, a member the
        configuration takes out) and admin state down, then the wait until Octavia applied it. ``False`` when the
        member is gone."""
        how = f"weight {weight}, admin state down" if weight is not None else "admin state down"
        what = f"draining member {member.member_id} ({member.endpoint}: {how})"
        if not self.retried(lambda: self.source.drain_member(self.inputs.pool_id, member.member_id, admin_down=True,
                                                             weight=weight),
                            f"{what} {why}".strip()):
            return False
        self.writes += 1
        self.settled({member.member_id}, False, f"waiting for Octavia to apply the drain of {member.endpoint}")
        return True

    def check_keeps_every_other(self, live: list[LiveMember], remaining: list[LiveMember],
                                leaving: dict[str, LiveMember]) -> None:
        """The removing batch names every listed member but the set's own leaving ones: a member the set cannot
        prove its own is never removed, and an empty batch only ever goes to a pool of nothing but leaving members."""
        kept = {m.member_id for m in remaining}
        dropped = [m for m in live if m.member_id not in kept and m.provisioning_status not in DELETING]
        strangers = [m for m in dropped if m.member_id not in leaving]
        if strangers:  # cannot happen by construction; refuse rather than remove what is not ours
            raise MemberSetConflict(f"{self.pool}: refusing a batch update that would remove members the set does "
                                    f"not own: {', '.join(m.member_id for m in strangers)}")

    def result(self, members: dict[str, LiveMember], changes: Changes, start: float,
               still_leaving: dict[str, LiveMember], *, ready: bool = True, reason: Optional[str] = None,
               drained: int = 0, removed: int = 0) -> SetResult:
        owned = {m.member_id for m in members.values()} | set(still_leaving)
        return SetResult(members=members, owned_ids=tuple(sorted(owned)), ready=ready, not_ready_reason=reason,
                         created=len(changes.create), updated=len(changes.update), adopted=len(changes.adopted),
                         drained=drained, removed=removed, writes=self.writes, api_calls=self.source.calls,
                         waited_seconds=self.clock() - start, stages=tuple(self.stages))


def reconcile(inputs: SetInputs, recorded: frozenset[str], source: SetSource, *, clock: Callable[[], float],
              sleep: Callable[[float], None], not_ready: tuple[type[ReadinessError], ...] = (),
              adopt: bool = False) -> SetResult:
    """Make the pool's members ``inputs.members`` in the stages of the module docstring; ``recorded``: the member
    ids the set's state records as its own; ``adopt``: whether the stack's per-member members may be taken (the set
    went through the handover). With ``on_not_ready: unpublish``, a wait ending in one of ``not_ready`` ends the
    reconcile before anything is drained or removed, with ``ready`` false; otherwise it is raised."""
    return _Reconcile(inputs, source, clock, sleep, not_ready, adopt).run(recorded)

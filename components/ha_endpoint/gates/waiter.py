"""The readiness waiter: a pure polling loop with injected status fetchers, clock and sleep.

No I/O happens here. Each poll lists the members of every pool once (one call per pool, whatever the number of
members), checks the expected members against the requirement, and either opens the gate, fails at once on a
provisioning ERROR or on a member deleted behind the stack's back (missing from its pool's list, or PENDING_DELETE),
or sleeps per the backoff and polls again until the deadline. A member counts as ready once it was ready in
``stable_polls`` consecutive polls (default 2), so a member that flaps between ONLINE and ERROR does not open the
gate in a lucky poll. Polls start on a steady cadence (the time a poll takes is deducted from the following pause), so
the gate opens at most ``stable_polls`` intervals after the last member becomes ready for good. A pool's
``hold_seconds`` asks more: a member of it counts once it has also been ready in every poll for that long (the OVN
provider's ONLINE before the first health check, :class:`~.model.PoolExpectation`), counted between the starts of
polls: on the steady cadence the poll that starts when the hold ends opens the gate, whatever each listing took (a
hold counted to the end of a listing opened the gate one interval late whenever that listing was quicker than the
first: about half the time). The last poll happens at the deadline itself, so no chance is lost to a long sleep.

While every member still waited for has been ready in its ``stable_polls`` polls and only its hold is left, polls
come once per health check of its pool (``check_seconds``, the monitor's delay) instead of once per interval, and
one starts when the first hold ends: a member's operating status changes only when its monitor checks it, so a poll
per check sees every change, and the gate opens when it did before. Under ovn (a 20 s hold, checks every 3 s, 2
stable polls) that is 9 listings of a pool instead of 21.

A dead zone (``dead_after_seconds`` set): when every member waited for has been down (provisioning ACTIVE, operating
OFFLINE or ERROR: a health monitor keeps failing it) in every poll for that long, or the load balancer's provisioning is
ERROR, the wait ends with :class:`~.errors.ZoneDead` instead of waiting out the deadline. Unset (the default), a wait
ends only as above.

Fetch failures: :class:`~ha_endpoint.cloud.errors.TransientFetchError` is counted and retried within the deadline (a
failed poll neither counts towards nor breaks a member's streak of ready polls);
:class:`~ha_endpoint.cloud.errors.AuthExpired` re-authenticates (:func:`ha_endpoint.cloud.retry.reauthenticate`, the one
policy for rejected tokens) and retries at once; a refused re-authentication fails with :class:`~.errors.AuthFailed`;
any other exception propagates unchanged (the cloud layer turns terminal failures into :class:`~.errors.FetchFailed`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Mapping, Optional, Union

from ..cloud.errors import AuthExpired, TransientFetchError
from ..cloud.poll import AGAIN, NOT_YET, Signal, poll  # the one polling loop (its steady cadence)
from ..cloud.retry import MAX_AUTH_RETRIES, Backoff, CredentialsRefused, reauthenticate  # the one retry policy
from .errors import (
    AuthFailed,
    LoadBalancerReport,
    MemberFailed,
    MemberGone,
    NotReadyMember,
    ReadinessTimeout,
    ZoneDead,
)
from .model import (ERROR, LoadBalancerStatus, MemberStatus, PoolExpectation, Requirement, is_deleting, is_down,
                    is_failed, is_online, is_ready)

FetchPool = Callable[[str], Iterable[MemberStatus]]
"""Lists one pool's members (pool id -> statuses of every member in it): exactly one API call."""
FetchLoadBalancer = Callable[[str], LoadBalancerStatus]
"""Fetches a load balancer's statuses (load balancer id -> statuses); used only for failure messages."""
DEFAULT_STABLE_POLLS = 2
"""Consecutive polls a member must be ready in before it counts as ready."""
CLOCK_SLACK = 0.001
"""Seconds a hold may fall short by and still count: the starts of polls on a steady cadence are sums of floats
(a poll started 20 intervals after another may be 19.9999999 s after it). Far below any poll interval."""


@dataclass(frozen=True)
class WaitSpec:
    """What to wait for.

    Attributes:
        load_balancer_id: the load balancer the pools belong to (named in messages).
        pools: the pools and the members expected ready in each.
        requirement: ``online`` or ``provisioned`` (see :class:`~.model.Requirement`).
        timeout_seconds: the deadline, counted from the first poll.
        backoff: the delays between polls.
        max_auth_retries: how many re-authentications in a row are tried before :class:`~.errors.AuthFailed`.
        stable_polls: in how many consecutive polls a member must be ready before it counts (>= 1, default 2).
        dead_after_seconds: when set, how long every member must have been down before the zone counts as dead
            (:class:`~.errors.ZoneDead`); the load balancer's status is then fetched in each poll that does not
            open the gate (one more call), and its provisioning ERROR is a dead zone at once.
    """

    load_balancer_id: str
    pools: tuple[PoolExpectation, ...]
    requirement: Requirement = Requirement.ONLINE
    timeout_seconds: float = 600.0
    backoff: Backoff = Backoff()
    max_auth_retries: int = MAX_AUTH_RETRIES
    stable_polls: int = DEFAULT_STABLE_POLLS
    dead_after_seconds: Optional[float] = None

    def __post_init__(self) -> None:
        if isinstance(self.stable_polls, bool) or not isinstance(self.stable_polls, int) or self.stable_polls < 1:
            raise ValueError(f"stable_polls must be a whole number >= 1, got {self.stable_polls!r}")
        if self.dead_after_seconds is not None and not self.dead_after_seconds > 0:
            raise ValueError(f"dead_after_seconds must be > 0 or None, got {self.dead_after_seconds!r}")

    @property
    def member_count(self) -> int:
        """How many members are waited for."""
        return sum(len(p.member_ids) for p in self.pools)


@dataclass(frozen=True)
class WaitResult:
    """The outcome of a successful wait.

    Attributes:
        statuses: member id -> statuses at the poll that opened the gate.
        all_online: whether every member was also ACTIVE/ONLINE (differs from success in ``provisioned`` mode).
        waited_seconds: time from the first poll to the gate opening.
        polls: complete polls made (a poll interrupted by a fetch error is not complete).
        flaps: member id -> how many times it went from ready to not ready (only members that did).
        api_calls: member listings made (one per pool per poll attempt).
        transient_errors: fetch failures retried.
        reauths: re-authentications made.
    """

    statuses: Mapping[str, MemberStatus]
    all_online: bool
    waited_seconds: float
    polls: int
    api_calls: int
    transient_errors: int
    reauths: int
    flaps: Mapping[str, int] = field(default_factory=dict)


@dataclass
class _Wait:
    spec: WaitSpec
    fetch_pool: FetchPool
    fetch_load_balancer: FetchLoadBalancer
    reauth: Optional[Callable[[], None]]
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    last_seen: dict[str, dict[str, MemberStatus]] = field(default_factory=dict)
    streaks: dict[str, int] = field(default_factory=dict)
    ready_since: dict[str, float] = field(default_factory=dict)
    down_since: dict[str, float] = field(default_factory=dict)
    flaps: dict[str, int] = field(default_factory=dict)
    poll_started: float = 0.0
    polls: int = 0
    api_calls: int = 0
    transient_errors: int = 0
    last_transient: str = ""
    failing: bool = False
    auth_failures: int = 0
    reauths: int = 0

    def run(self) -> WaitResult:
        start = self.clock()

        def step() -> Union[WaitResult, Signal]:
            observed, retry_now = self._attempt()
            if observed is not None and self._all_stable():
                return self._result(observed, self.clock() - start)
            if observed is not None and self.spec.dead_after_seconds is not None:
                self._check_dead(self.clock())
            return AGAIN if retry_now else NOT_YET

        def timed_out() -> WaitResult:
            raise self._timeout()

        return poll(step, deadline=start + self.spec.timeout_seconds, clock=self.clock, sleep=self.sleep,
                    delays=self._pauses(), on_deadline=timed_out, steady=True)

    def _pauses(self) -> Iterator[float]:
        """The backoff's delays, each lengthened while only holds are left (:meth:`_pause`)."""
        for delay in self.spec.backoff.delays():
            yield self._pause(delay)

    def _pause(self, delay: float) -> float:
        """``delay``; or, when every member not counted yet has been ready in its ``stable_polls`` polls and only its
        hold is left, and its pool says how often its monitor checks it: one check (the shortest of theirs), never
        past the first hold's end. (A member still short of its stable polls is polled every ``delay``, so a large
        ``stable_polls`` opens the gate no later than before.)"""
        waiting = [(pool, m) for pool in self.spec.pools for m in pool.member_ids if not self._counts(pool, m)]
        if self.failing or not waiting or any(self.streaks.get(m, 0) < self.spec.stable_polls or not pool.check_seconds
                                              for pool, m in waiting):
            return delay
        first_end = min(self.ready_since[m] + pool.holds(m) for pool, m in waiting) - self.poll_started
        return max(delay, min(min(pool.check_seconds for pool, _ in waiting), first_end))

    def _attempt(self) -> tuple[Optional[dict[str, dict[str, MemberStatus]]], bool]:
        """One poll: (statuses per pool, False), or (None, retry at once?) when a fetch failed."""
        started = self.clock()
        try:
            observed = self._poll()
        except TransientFetchError as exc:
            self._note_transient(exc.reason)
            return None, False
        except AuthExpired as exc:
            return None, self._reauthenticate(exc.reason)
        self.polls += 1
        self.failing = False
        self.auth_failures = 0
        self.poll_started = started
        self._count_streaks(observed, started)
        self._count_down(observed, self.clock())
        return observed, False

    def _poll(self) -> dict[str, dict[str, MemberStatus]]:
        observed: dict[str, dict[str, MemberStatus]] = {}
        for pool in self.spec.pools:
            self.api_calls += 1
            listing = {s.member_id: s for s in self.fetch_pool(pool.pool_id)}
            observed[pool.pool_id] = listing
            self.last_seen[pool.pool_id] = listing
            for member_id in pool.member_ids:
                status = listing.get(member_id)
                if status is None or is_deleting(status):
                    raise MemberGone(pool, member_id, status, self._load_balancer_report())
                if is_failed(status):
                    raise MemberFailed(pool, status, self._load_balancer_report())
        return observed

    def _count_streaks(self, observed: dict[str, dict[str, MemberStatus]], started: float) -> None:
        """Lengthen the streak of every member ready in this poll (noting since when it is ready: the start of the
        first poll of its streak); end (and count a flap for) the others'."""
        for pool in self.spec.pools:
            for member_id in pool.member_ids:
                if is_ready(observed[pool.pool_id][member_id], self.spec.requirement, pool.monitored):
                    self.streaks[member_id] = self.streaks.get(member_id, 0) + 1
                    self.ready_since.setdefault(member_id, started)
                else:
                    if self.streaks.get(member_id):
                        self.flaps[member_id] = self.flaps.get(member_id, 0) + 1
                    self.streaks[member_id] = 0
                    self.ready_since.pop(member_id, None)

    def _count_down(self, observed: dict[str, dict[str, MemberStatus]], seen_at: float) -> None:
        """Note since when each member has been down without a break; a poll that finds it otherwise ends that."""
        for pool in self.spec.pools:
            for member_id in pool.member_ids:
                if is_down(observed[pool.pool_id][member_id]):
                    self.down_since.setdefault(member_id, seen_at)
                else:
                    self.down_since.pop(member_id, None)

    def _check_dead(self, now: float) -> None:
        """Raise :class:`ZoneDead` when every member has been down for ``dead_after_seconds``, or the load balancer's
        provisioning is ERROR."""
        report = self._load_balancer_report()
        if report.status is not None and report.status.provisioning_status == ERROR:
            raise ZoneDead(self._not_ready(), self.spec.member_count, report, load_balancer_failed=True)
        members = [m for pool in self.spec.pools for m in pool.member_ids]
        if members and all(m in self.down_since for m in members):
            down_for = now - max(self.down_since[m] for m in members)
            if down_for >= self.spec.dead_after_seconds:
                raise ZoneDead(self._not_ready(), self.spec.member_count, report, down_seconds=down_for)

    def _not_ready(self) -> list[NotReadyMember]:
        needed = self.spec.stable_polls
        not_ready = []
        for pool in self.spec.pools:
            listing = self.last_seen.get(pool.pool_id, {})
            for member_id in pool.member_ids:
                if not self._counts(pool, member_id):
                    since = self.ready_since.get(member_id)
                    not_ready.append(NotReadyMember(pool, member_id, listing.get(member_id),
                                                    self.streaks.get(member_id, 0), needed,
                                                    self.flaps.get(member_id, 0),
                                                    0.0 if since is None else self.clock() - since))
        return not_ready

    def _note_transient(self, reason: str) -> None:
        self.transient_errors += 1
        self.last_transient = reason
        self.failing = True

    def _reauthenticate(self, reason: str) -> bool:
        """Re-authenticate after a rejected token; True when the poll should be retried at once."""
        self.auth_failures += 1
        try:
            unreachable = reauthenticate(self.reauth, reason, self.auth_failures, self.spec.max_auth_retries)
        except CredentialsRefused as exc:
            raise AuthFailed(f"load balancer {self.spec.load_balancer_id}: {exc}") from None
        if unreachable is not None:
            self._note_transient(unreachable)
            return False
        self.reauths += 1
        return True

    def _all_stable(self) -> bool:
        return all(self._counts(pool, m) for pool in self.spec.pools for m in pool.member_ids)

    def _counts(self, pool: PoolExpectation, member_id: str) -> bool:
        """Ready in ``stable_polls`` polls in a row, and for the pool's ``hold_seconds`` (from the start of the first
        poll of the streak to the start of this one; :data:`CLOCK_SLACK` absorbs the float sums of a steady
        cadence)."""
        if self.streaks.get(member_id, 0) < self.spec.stable_polls:
            return False
        return self.poll_started - self.ready_since[member_id] >= pool.holds(member_id) - CLOCK_SLACK

    def _load_balancer_report(self) -> LoadBalancerReport:
        lb_id = self.spec.load_balancer_id
        try:
            return LoadBalancerReport(lb_id, status=self.fetch_load_balancer(lb_id))
        except (TransientFetchError, AuthExpired) as exc:
            return LoadBalancerReport(lb_id, error=exc.reason)
        except Exception as exc:  # a message must still be produced
            return LoadBalancerReport(lb_id, error=str(exc) or type(exc).__name__)

    def _timeout(self) -> ReadinessTimeout:
        return ReadinessTimeout(
            timeout_seconds=self.spec.timeout_seconds,
            requirement=self.spec.requirement,
            not_ready=self._not_ready(),
            total=self.spec.member_count,
            load_balancer=self._load_balancer_report(),
            transient_errors=self.transient_errors,
            last_transient=self.last_transient,
            failing_at_deadline=self.failing,
            reauths=self.reauths,
        )

    def _result(self, observed: dict[str, dict[str, MemberStatus]], waited: float) -> WaitResult:
        statuses: dict[str, MemberStatus] = {}
        online = True
        for pool in self.spec.pools:
            for member_id in pool.member_ids:
                status = observed[pool.pool_id][member_id]
                statuses[member_id] = status
                online = online and is_online(status, pool.monitored)
        return WaitResult(
            statuses=statuses,
            all_online=online,
            waited_seconds=waited,
            polls=self.polls,
            api_calls=self.api_calls,
            transient_errors=self.transient_errors,
            reauths=self.reauths,
            flaps=dict(self.flaps),
        )


def wait_for_members(
    spec: WaitSpec,
    *,
    fetch_pool: FetchPool,
    fetch_load_balancer: FetchLoadBalancer,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    reauth: Optional[Callable[[], None]] = None,
) -> WaitResult:
    """Wait until every expected member meets ``spec.requirement``.

    Returns a :class:`WaitResult` once every member was ready in ``spec.stable_polls`` consecutive polls. Raises
    :class:`~.errors.MemberFailed` at the first poll that shows an expected member in provisioning ERROR,
    :class:`~.errors.MemberGone` at the first poll where one is missing from its pool's list or PENDING_DELETE,
    :class:`~.errors.ReadinessTimeout` when the deadline passes (naming every member not ready, its statuses and the
    load balancer's), :class:`~.errors.ZoneDead` when ``spec.dead_after_seconds`` is set and the zone is dead (see the
    module docstring), :class:`~.errors.AuthFailed` when re-authentication is refused or does not help, and lets
    terminal fetch errors (:class:`~.errors.FetchFailed`) propagate.
    """
    return _Wait(spec, fetch_pool, fetch_load_balancer, reauth, clock, sleep).run()

"""The readiness waiter: a pure polling loop with injected status fetchers, clock and sleep.

No I/O happens here. Each poll lists the members of every pool once (one call per pool, whatever the number of
members), checks the expected members against the requirement, and either opens the gate, fails at once on a
provisioning ERROR, or sleeps per the backoff and polls again until the deadline. Polls start on a steady cadence
(the time a poll takes is deducted from the following pause), so the gate opens at most one interval after the last
member becomes ready. The last poll happens at the deadline itself, so no chance is lost to a long sleep.

Fetch failures: :class:`~.errors.TransientFetchError` is counted and retried within the deadline;
:class:`~.errors.AuthExpired` calls ``reauth`` and retries at once (at most ``max_auth_retries`` times in a row);
any other exception propagates unchanged (the cloud layer turns terminal failures into
:class:`~.errors.FetchFailed`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Mapping, Optional

from ..retry import Backoff  # the one retry policy's backoff (re-exported here)
from .errors import (
    AuthExpired,
    AuthFailed,
    LoadBalancerReport,
    MemberFailed,
    NotReadyMember,
    ReadinessTimeout,
    TransientFetchError,
)
from .model import LoadBalancerStatus, MemberStatus, PoolExpectation, Requirement, is_failed, is_online, is_ready

FetchPool = Callable[[str], Iterable[MemberStatus]]
"""Lists one pool's members (pool id -> statuses of every member in it): exactly one API call."""
FetchLoadBalancer = Callable[[str], LoadBalancerStatus]
"""Fetches a load balancer's statuses (load balancer id -> statuses); used only for failure messages."""
MIN_PAUSE_FRACTION = 0.1
"""Even after a fetch slower than the interval, pause this fraction of it: a slow API is not polled back to back."""


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
    """

    load_balancer_id: str
    pools: tuple[PoolExpectation, ...]
    requirement: Requirement = Requirement.ONLINE
    timeout_seconds: float = 600.0
    backoff: Backoff = Backoff()
    max_auth_retries: int = 3

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


def _pause(delay: float, spent: float) -> float:
    """The sleep that starts the next poll ``delay`` after the last one started (polls keep a steady cadence, so
    fetch time does not add to the gate's latency); at least a tenth of the delay when a fetch was slow."""
    return max(delay - spent, delay * MIN_PAUSE_FRACTION)


@dataclass
class _Wait:
    spec: WaitSpec
    fetch_pool: FetchPool
    fetch_load_balancer: FetchLoadBalancer
    reauth: Optional[Callable[[], None]]
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    last_seen: dict[str, dict[str, MemberStatus]] = field(default_factory=dict)
    polls: int = 0
    api_calls: int = 0
    transient_errors: int = 0
    last_transient: str = ""
    failing: bool = False
    auth_failures: int = 0
    reauths: int = 0

    def run(self) -> WaitResult:
        start = self.clock()
        deadline = start + self.spec.timeout_seconds
        delays = self.spec.backoff.delays()
        while True:
            poll_start = self.clock()
            observed, retry_now = self._attempt()
            if observed is not None and self._all_ready(observed):
                return self._result(observed, self.clock() - start)
            now = self.clock()
            if now >= deadline:
                raise self._timeout()
            if not retry_now:
                self.sleep(min(_pause(next(delays), now - poll_start), deadline - now))

    def _attempt(self) -> tuple[Optional[dict[str, dict[str, MemberStatus]]], bool]:
        """One poll: (statuses per pool, False), or (None, retry at once?) when a fetch failed."""
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
                if status is not None and is_failed(status):
                    raise MemberFailed(pool, status, self._load_balancer_report())
        return observed

    def _note_transient(self, reason: str) -> None:
        self.transient_errors += 1
        self.last_transient = reason
        self.failing = True

    def _reauthenticate(self, reason: str) -> bool:
        """Re-authenticate after a rejected token; True when the poll should be retried at once."""
        self.auth_failures += 1
        if self.reauth is None or self.auth_failures > self.spec.max_auth_retries:
            raise AuthFailed(
                f"load balancer {self.spec.load_balancer_id}: the cloud rejected the credentials "
                f"{self.auth_failures} times in a row ({reason}); check OS_CLOUD / clouds.yaml and that the "
                f"user can read Octavia pools"
            )
        try:
            self.reauth()
        except TransientFetchError as exc:
            self._note_transient(f"re-authentication: {exc.reason}")
            return False
        self.reauths += 1
        return True

    def _all_ready(self, observed: dict[str, dict[str, MemberStatus]]) -> bool:
        requirement = self.spec.requirement
        for pool in self.spec.pools:
            listing = observed[pool.pool_id]
            for member_id in pool.member_ids:
                status = listing.get(member_id)
                if status is None or not is_ready(status, requirement, pool.monitored):
                    return False
        return True

    def _load_balancer_report(self) -> LoadBalancerReport:
        lb_id = self.spec.load_balancer_id
        try:
            return LoadBalancerReport(lb_id, status=self.fetch_load_balancer(lb_id))
        except (TransientFetchError, AuthExpired) as exc:
            return LoadBalancerReport(lb_id, error=exc.reason)
        except Exception as exc:  # a message must still be produced
            return LoadBalancerReport(lb_id, error=str(exc) or type(exc).__name__)

    def _timeout(self) -> ReadinessTimeout:
        not_ready = []
        for pool in self.spec.pools:
            listing = self.last_seen.get(pool.pool_id)
            for member_id in pool.member_ids:
                status = None if listing is None else listing.get(member_id)
                if status is None or not is_ready(status, self.spec.requirement, pool.monitored):
                    not_ready.append(NotReadyMember(pool, member_id, status, pool_listed=listing is not None))
        return ReadinessTimeout(
            timeout_seconds=self.spec.timeout_seconds,
            requirement=self.spec.requirement,
            not_ready=not_ready,
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

    Returns a :class:`WaitResult` when the gate opens. Raises :class:`~.errors.MemberFailed` at the first poll that
    shows an expected member in provisioning ERROR, :class:`~.errors.ReadinessTimeout` when the deadline passes
    (naming every member not ready, its statuses and the load balancer's), :class:`~.errors.AuthFailed` when
    re-authentication does not help, and lets terminal fetch errors (:class:`~.errors.FetchFailed`) propagate.
    """
    return _Wait(spec, fetch_pool, fetch_load_balancer, reauth, clock, sleep).run()

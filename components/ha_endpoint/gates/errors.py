"""Exceptions of the readiness gate and the exact wording of their messages.

The signals a status source raises and the waiter handles are the cloud layer's
(:class:`ha_endpoint.cloud.errors.TransientFetchError`, retried within the deadline, and
:class:`ha_endpoint.cloud.errors.AuthExpired`, re-authenticate then retry). Failures the gate reports (subclasses of
:class:`ReadinessError`): :class:`MemberFailed` (a member's provisioning is in ERROR, terminal), :class:`MemberGone` (a
member was deleted behind the stack's back: missing from its pool's member list, or PENDING_DELETE),
:class:`ReadinessTimeout` (the deadline passed; names every member not ready), :class:`FetchFailed` (a status fetch
failed in a way retrying cannot fix, e.g. 403 or the pool is gone) and :class:`AuthFailed` (re-authentication was
refused or did not help).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from ..cloud.errors import CallFailed
from ..core.errors import HaEndpointError
from .model import LoadBalancerStatus, MemberStatus, NO_MONITOR, PoolExpectation, Requirement


class ReadinessError(HaEndpointError):
    """Base class of every failure the readiness gate reports."""


class FetchFailed(ReadinessError, CallFailed):
    """A status fetch failed in a way that retrying cannot fix (403, 404, bad request, missing endpoint)."""


class AuthFailed(ReadinessError):
    """Re-authentication was refused, or did not make the cloud accept requests again (the message says which and
    how to fix the credentials)."""


@dataclass(frozen=True)
class LoadBalancerReport:
    """The load balancer's statuses as far as they could be fetched for a failure message.

    Attributes:
        load_balancer_id: the load balancer id.
        status: its statuses, or ``None`` when fetching them failed.
        error: why fetching them failed, when it did.
    """

    load_balancer_id: str
    status: Optional[LoadBalancerStatus] = None
    error: str = ""

    def sentence(self) -> str:
        """``"Load balancer <id> is <prov>/<oper>."`` or ``"... status unavailable (<why>)."``."""
        if self.status is not None:
            return f"Load balancer {self.load_balancer_id} is {self.status.label}."
        return f"Load balancer {self.load_balancer_id} status unavailable ({self.error or 'not fetched'})."


@dataclass(frozen=True)
class NotReadyMember:
    """One member that did not meet the requirement, with what was last seen of it.

    Attributes:
        pool: the pool it was expected in.
        member_id: the member id.
        status: its last seen statuses; ``None`` when it was never observed (every listing failed).
        streak: in how many consecutive polls, up to the last, it was ready.
        stable_polls: in how many consecutive polls it had to be ready.
        flaps: how many times it went from ready to not ready.
    """

    pool: PoolExpectation
    member_id: str
    status: Optional[MemberStatus]
    streak: int = 0
    stable_polls: int = 1
    flaps: int = 0
    ready_for: float = 0.0
    """How long it had been ready without a break (0 when it was not ready at the last poll)."""

    def phrase(self) -> str:
        """``"member <id> in pool <pool> is <prov>/<oper>"`` (or why there is no status, or why ready is not
        enough yet), and how often it flapped."""
        head = f"member {self.member_id} in pool {self.pool.display}"
        if self.status is None:
            return f"{head} was never observed"
        text = f"{head} is {self.status.label}"
        hold = self.pool.holds(self.member_id)
        if self.streak >= self.stable_polls and hold:
            text += (f" but only for {self.ready_for:.0f}s of the {hold:.0f}s its pool's monitor "
                     f"needs to fail a member that does not serve (the ovn provider reports a new member ONLINE "
                     f"before checking it)")
        elif self.streak:
            text += (f" but was ready in only the last {_plural(self.streak, 'poll')} of the {self.stable_polls} "
                     f"consecutive polls required")
        elif self.pool.monitored and self.status.operating_status == NO_MONITOR:
            text += " (the pool has a health monitor, so NO_MONITOR does not count)"
        if self.flaps:
            text += f" (it went from ready to not ready {_plural(self.flaps, 'time')})"
        return text


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


class MemberFailed(ReadinessError):
    """A member's provisioning_status is ERROR: terminal, reported at once.

    Attributes:
        pool: the pool the member is in.
        status: the member's statuses.
        load_balancer: the load balancer's statuses for context.
    """

    def __init__(self, pool: PoolExpectation, status: MemberStatus, load_balancer: LoadBalancerReport) -> None:
        self.pool = pool
        self.status = status
        self.load_balancer = load_balancer
        super().__init__(
            f"member {status.member_id} in pool {pool.display} failed: it is {status.label} and provisioning "
            f"ERROR is terminal. {load_balancer.sentence()} Delete or replace the member (the load-balancer "
            f"service's worker log says why it failed) and run the update again."
        )

    @property
    def member_id(self) -> str:
        """The failed member's id."""
        return self.status.member_id


class MemberGone(ReadinessError):
    """A member the gate waits for was deleted behind the stack's back: it is no longer in its pool's member list,
    or it is being deleted (PENDING_DELETE). Terminal, reported at once: it will never become ready.

    Attributes:
        pool: the pool it was expected in.
        member_id: the member id.
        status: its statuses when it is being deleted; ``None`` when it is no longer listed.
        load_balancer: the load balancer's statuses for context.
    """

    def __init__(self, pool: PoolExpectation, member_id: str, status: Optional[MemberStatus],
                 load_balancer: LoadBalancerReport) -> None:
        self.pool = pool
        self.member_id = member_id
        self.status = status
        self.load_balancer = load_balancer
        head = f"member {member_id} in pool {pool.display}"
        if status is None:
            what = f"{head} is gone: it is no longer in the pool's member list, so something outside this stack " \
                   f"deleted it."
            wait = ""
        else:
            what = f"{head} is being deleted ({status.label}) by something outside this stack."
            wait = "wait until it is gone, "
        super().__init__(
            f"{what} {load_balancer.sentence()} It will never become ready: {wait}run `pulumi refresh` so that the "
            f"stack forgets it, then `pulumi up` to create it again."
        )


class ReadinessTimeout(ReadinessError):
    """The deadline passed before every member met the requirement.

    Attributes:
        not_ready: every member not ready, with its last seen statuses.
        total: how many members were waited for.
        load_balancer: the load balancer's statuses at the deadline.
        transient_errors: how many status fetches failed transiently and were retried.
        last_transient: the last transient failure's reason.
        failing_at_deadline: whether the fetches were still failing at the deadline (then they are the cause).
        reauths: how many times the waiter re-authenticated.
    """

    def __init__(
        self,
        *,
        timeout_seconds: float,
        requirement: Requirement,
        not_ready: Sequence[NotReadyMember],
        total: int,
        load_balancer: LoadBalancerReport,
        transient_errors: int = 0,
        last_transient: str = "",
        failing_at_deadline: bool = False,
        reauths: int = 0,
    ) -> None:
        self.not_ready = tuple(not_ready)
        self.total = total
        self.load_balancer = load_balancer
        self.transient_errors = transient_errors
        self.last_transient = last_transient
        self.failing_at_deadline = failing_at_deadline
        self.reauths = reauths
        message = (
            f"load balancer {load_balancer.load_balancer_id}: {len(self.not_ready)} of {_plural(total, 'member')} "
            f"not ready after {timeout_seconds:g}s (requirement: {requirement.describe()}): "
            + "; ".join(m.phrase() for m in self.not_ready)
            + f". {load_balancer.sentence()}"
        )
        if transient_errors and failing_at_deadline:
            message += (
                f" Status fetches were still failing at the deadline ({_plural(transient_errors, 'transient error')}"
                f" retried, last: {last_transient})."
            )
        elif transient_errors:
            message += f" {_plural(transient_errors, 'transient error')} retried (last: {last_transient})."
        if reauths:
            message += f" Re-authenticated {_plural(reauths, 'time')}."
        super().__init__(message)

    @property
    def member_ids(self) -> tuple[str, ...]:
        """Ids of the members that were not ready."""
        return tuple(m.member_id for m in self.not_ready)


class ZoneDead(ReadinessError):
    """The zone is clearly dead (a wait with ``dead_after_seconds``): every member waited for has been down (ACTIVE,
    operating OFFLINE or ERROR) in every poll for that long, or the load balancer's provisioning is ERROR. Reported
    before the deadline: waiting longer would not make the zone serve.

    Attributes:
        not_ready: every member not ready, with its last seen statuses.
        total: how many members were waited for.
        load_balancer: the load balancer's statuses.
        down_seconds: how long every member had been down (``None`` when the load balancer's ERROR decided).
        load_balancer_failed: whether the load balancer's provisioning ERROR decided.
    """

    def __init__(self, not_ready: Sequence[NotReadyMember], total: int, load_balancer: LoadBalancerReport, *,
                 down_seconds: Optional[float] = None, load_balancer_failed: bool = False) -> None:
        self.not_ready = tuple(not_ready)
        self.total = total
        self.load_balancer = load_balancer
        self.down_seconds = down_seconds
        self.load_balancer_failed = load_balancer_failed
        if load_balancer_failed:
            why = "its provisioning is ERROR"
        else:
            why = f"every member has been down for {down_seconds:.0f}s"
        members = "; ".join(m.phrase() for m in self.not_ready) or f"{_plural(total, 'member')} waited for"
        super().__init__(f"load balancer {load_balancer.load_balancer_id}: the zone is dead ({why}): {members}. "
                         f"{load_balancer.sentence()}")

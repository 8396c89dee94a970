"""One retry policy: how every wait and every write of the endpoint retries a failing cloud call.

Which failures are worth retrying is decided once, in :func:`ha_endpoint.cloud.connection.classify` (HTTP 408, 409 --
Octavia's PENDING_* objects are immutable --, 429, 5xx, connection failures and timeouts, a service that cannot be
discovered or answers something that is not JSON, openstacksdk's generic errors and OS errors are transient; 401
means re-authenticate, then retry; anything else is reported at once), and raised as the categories of
:mod:`ha_endpoint.cloud.errors`. This module says how long and how often: a :class:`Backoff`,
:func:`reauthenticate` (what a rejected token leads to) and :func:`call_with_retries`, the retry the member drain and
recovery use, over the one polling loop (:func:`ha_endpoint.cloud.poll.poll`); the readiness waiter's polls use the
same loop, classification, backoff and re-authentication. Pure: clock and sleep are injected.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Optional, TypeVar, Union

from .errors import AuthExpired, CloudError, TransientFetchError
from .poll import NOT_YET, Signal, poll

T = TypeVar("T")
READ_RETRY_SECONDS = 60.0
"""How long a read the cloud fails transiently is retried before the cloud's failure is reported: the preview's
catalog and DNS records, the program's lookups, adoption's reads. A CI run's `pulumi up` started as Keystone came back
met Designate's `503 ... The Keystone service is temporarily unavailable` and failed at once without it (2026-12-03)."""
MAX_AUTH_RETRIES = 3
"""Re-authentications tried in a row before the credentials count as refused."""


@dataclass(frozen=True)
class Backoff:
    """Delays between attempts (or polls).

    Attributes:
        initial_seconds: the first delay, default 1 s.
        factor: growth per attempt, default 1.25 (as Cluster API Provider OpenStack).
        max_seconds: the ceiling; default 1 s.
    """

    initial_seconds: float = 1.0
    factor: float = 1.25
    max_seconds: float = 1.0

    def __post_init__(self) -> None:
        if not self.initial_seconds > 0:
            raise ValueError(f"poll interval must be > 0 seconds, got {self.initial_seconds}")
        if not self.factor >= 1:
            raise ValueError(f"backoff factor must be >= 1, got {self.factor}")
        if not self.max_seconds >= self.initial_seconds:
            raise ValueError(
                f"maximum poll interval ({self.max_seconds}s) must be >= the poll interval ({self.initial_seconds}s)"
            )

    def delays(self) -> Iterator[float]:
        """Infinite sequence of delays: initial, initial x factor, ... capped at max_seconds."""
        delay = self.initial_seconds
        while True:
            yield min(delay, self.max_seconds)
            delay = min(delay * self.factor, self.max_seconds)


READ_BACKOFF = Backoff(1.0, 1.25, 5.0)
"""The delays between those reads' attempts."""


class RetriesExhausted(CloudError):
    """The call kept failing transiently until the deadline: ``attempts`` made, ``last`` failure."""

    def __init__(self, attempts: int, last: str):
        super().__init__(f"{attempts} attempts, last: {last}")
        self.attempts = attempts
        self.last = last


CREDENTIALS_FIX = (
    "check the clouds.yaml entry the stack uses (openstack:cloud, readiness.cloud or OS_CLOUD): the password or "
    "application credential, the project and domain names, and that the user still has the member and "
    "load-balancer_member roles in the project; then run `pulumi up` again"
)
"""How to fix credentials the cloud refuses: the end of every :class:`CredentialsRefused` message."""


class CredentialsRefused(CloudError):
    """Re-authenticating did not help (or was not possible): the cloud refuses the credentials.

    Attributes:
        reason: what was refused, e.g. ``"re-authenticating ... was refused too (HTTP 401 Unauthorized)"``.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(f"{reason}; {CREDENTIALS_FIX}")
        self.reason = reason


def reauthenticate(reauth: Optional[Callable[[], None]], rejected: str, failures: int,
                   max_retries: int = MAX_AUTH_RETRIES) -> Optional[str]:
    """What a rejected token (the ``failures``-th in a row, described by ``rejected``) leads to: ``reauth()``.

    Returns ``None`` when a new token was issued (retry at once), or the reason Keystone could not be reached
    (a transient failure: retry after the backoff, within the deadline). Raises :class:`CredentialsRefused` when
    there is no way to re-authenticate, after ``max_retries`` rejections in a row, or when the re-authentication is
    itself refused (401, or Keystone's 404 for a user or project that no longer exists).
    """
    if reauth is None or failures > max_retries:
        raise CredentialsRefused(f"the cloud rejected the credentials {failures} times in a row ({rejected})")
    try:
        reauth()
    except TransientFetchError as exc:
        return f"re-authentication: {exc.reason}"
    except AuthExpired as exc:
        if exc.reason == rejected:  # keystoneauth had already tried to re-authenticate and met the same refusal
            raise CredentialsRefused(f"the cloud refused to re-authenticate ({exc.reason})") from None
        raise CredentialsRefused(
            f"the cloud rejected the token ({rejected}) and refused the re-authentication too ({exc.reason})"
        ) from None
    return None


@dataclass
class Attempts:
    """How a :func:`call_with_retries` went: attempts made and the last transient failure."""

    count: int = 0
    last: str = ""


def call_with_retries(action: Callable[[], T], *, timeout_seconds: float, clock: Callable[[], float],
                      sleep: Callable[[float], None], backoff: Backoff = READ_BACKOFF,
                      reauth: Optional[Callable[[], None]] = None,
                      attempts: Optional[Attempts] = None) -> T:
    """``action()``, retried on :class:`TransientFetchError` (after the backoff's delay) and on
    :class:`AuthExpired` (after :func:`reauthenticate`) until ``timeout_seconds``; then :class:`RetriesExhausted`.
    :class:`CredentialsRefused` when re-authentication is refused; other errors propagate at once."""
    tally = attempts if attempts is not None else Attempts()
    auth_failures = 0

    def attempt() -> Union[T, Signal]:
        nonlocal auth_failures
        tally.count += 1
        try:
            return action()
        except TransientFetchError as exc:
            tally.last = exc.reason
            return NOT_YET
        except AuthExpired as exc:
            auth_failures += 1
            unreachable = reauthenticate(reauth, exc.reason, auth_failures)
            if unreachable is not None:
                tally.last = unreachable
                return NOT_YET
        return attempt()  # a new token: at once (reauthenticate refuses after max_retries rejections in a row)

    def exhausted() -> T:
        raise RetriesExhausted(tally.count, tally.last)

    return poll(attempt, deadline=clock() + timeout_seconds, clock=clock, sleep=sleep, delays=backoff.delays(),
                on_deadline=exhausted)

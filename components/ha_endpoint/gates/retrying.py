"""The one retry policy (:func:`ha_endpoint.cloud.retry.call_with_retries`) as the readiness resources report its
end: credentials refused become :class:`~.errors.AuthFailed`, a deadline passed becomes each resource's own error,
worded by the caller (what was being done, and what was done before)."""

from __future__ import annotations

from typing import Callable, Optional, TypeVar

from ..cloud.retry import Attempts, Backoff, CredentialsRefused, RetriesExhausted, call_with_retries
from .errors import AuthFailed, ReadinessError

T = TypeVar("T")


def retried(action: Callable[[], T], *, timeout_seconds: float, clock: Callable[[], float],
            sleep: Callable[[float], None], backoff: Backoff, reauth: Optional[Callable[[], None]], refused: str,
            exhausted: Callable[[RetriesExhausted], ReadinessError], attempts: Optional[Attempts] = None) -> T:
    """``action()`` retried on transient failures until ``timeout_seconds``; raises ``AuthFailed("<refused>:
    <why>")`` when the cloud refuses to re-authenticate, ``exhausted(<the last attempt>)`` at the deadline."""
    try:
        return call_with_retries(action, timeout_seconds=timeout_seconds, clock=clock, sleep=sleep, backoff=backoff,
                                 reauth=reauth, attempts=attempts if attempts is not None else Attempts())
    except CredentialsRefused as exc:
        raise AuthFailed(f"{refused}: {exc}") from None
    except RetriesExhausted as exc:
        raise exhausted(exc) from None


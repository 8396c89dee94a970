"""The one retry policy (:func:`ha_endpoint.cloud.retry.call_with_retries`) as the readiness resources report its
end: credentials refused become :class:`~.errors.AuthFailed`, a deadline passed becomes each resource's own error,
worded by the caller (what was being done, and what was done before); and the pacing of the retried calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, TypeVar

from ..cloud.retry import Attempts, Backoff, CredentialsRefused, RetriesExhausted, call_with_retries
from .errors import AuthFailed, ReadinessError

T = TypeVar("T")


@dataclass(frozen=True)
class Pacing:
    """How a resource's retried cloud calls are paced: the ``clock`` and ``sleep`` they wait on (tests give fakes),
    what re-authenticates after a rejected token (``reauth``; None: nothing does) and the ``backoff`` between
    attempts (default: 1 s growing by 1.25 up to 5 s)."""

    clock: Callable[[], float]
    sleep: Callable[[float], None]
    reauth: Optional[Callable[[], None]] = None
    backoff: Backoff = Backoff(1.0, 1.25, 5.0)


def retried(action: Callable[[], T], *, timeout_seconds: float, pacing: Pacing, refused: str,
            exhausted: Callable[[RetriesExhausted], ReadinessError], attempts: Optional[Attempts] = None) -> T:
    """``action()`` retried on transient failures until ``timeout_seconds``, paced by ``pacing``; raises
    ``AuthFailed("<refused>: <why>")`` when the cloud refuses to re-authenticate, ``exhausted(<the last attempt>)``
    at the deadline."""
    try:
        return call_with_retries(action, timeout_seconds=timeout_seconds, clock=pacing.clock, sleep=pacing.sleep,
                                 backoff=pacing.backoff, reauth=pacing.reauth,
                                 attempts=attempts if attempts is not None else Attempts())
    except CredentialsRefused as exc:
        raise AuthFailed(f"{refused}: {exc}") from None
    except RetriesExhausted as exc:
        raise exhausted(exc) from None


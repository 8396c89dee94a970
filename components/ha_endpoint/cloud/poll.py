"""The one polling loop: a step called again and again, with pauses between, until it gives a result or a deadline
passes.

Every wait of the package is this loop: the retry of one cloud call (:func:`ha_endpoint.cloud.retry.call_with_retries`),
the readiness gate's polls (:mod:`ha_endpoint.gates.waiter`) and the watch over drained members
(:mod:`ha_endpoint.gates.held_out`). What a step does, and what the deadline means (an error, or simply the end), is
the caller's; how long to pause and when to stop is said once here. Pure: clock and sleep are injected.
"""

from __future__ import annotations

from typing import Callable, Iterable, TypeVar, Union

T = TypeVar("T")


class Signal:
    """What a step returns when it has no result yet (see :data:`NOT_YET` and :data:`AGAIN`)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


NOT_YET = Signal("NOT_YET")
"""No result yet: pause (the next delay), then call the step again."""
AGAIN = Signal("AGAIN")
"""No result yet, but call the step again at once, without a pause (e.g. after a new token); the deadline still ends
the wait."""
MIN_PAUSE_FRACTION = 0.1
"""With ``steady``: even after a step slower than the delay, pause this fraction of it (a slow API is not polled back
to back)."""


def steady_pause(delay: float, spent: float) -> float:
    """The pause that starts the next step ``delay`` after the last one started (fetch time does not add to the
    cadence); at least :data:`MIN_PAUSE_FRACTION` of the delay when a step was slow."""
    return max(delay - spent, delay * MIN_PAUSE_FRACTION)


def poll(step: Callable[[], Union[T, Signal]], *, deadline: float, clock: Callable[[], float],
         sleep: Callable[[float], None], delays: Iterable[float], on_deadline: Callable[[], T],
         steady: bool = False) -> T:
    """Call ``step`` until it returns a result (anything but :data:`NOT_YET` or :data:`AGAIN`, ``None`` included),
    and return it.

    After a step without a result: when ``clock()`` has reached ``deadline``, return ``on_deadline()`` (which may
    raise); else, after :data:`NOT_YET`, sleep the next of ``delays`` (with ``steady``, less the time the step took:
    :func:`steady_pause`), never past the deadline, so that the last step happens at the deadline itself. Exceptions
    from ``step`` propagate at once.
    """
    pauses = iter(delays)
    while True:
        started = clock() if steady else 0.0
        outcome = step()
        if not isinstance(outcome, Signal):
            return outcome
        now = clock()
        if now >= deadline:
            return on_deadline()
        if outcome is NOT_YET:
            delay = next(pauses)
            sleep(min(steady_pause(delay, now - started) if steady else delay, deadline - now))

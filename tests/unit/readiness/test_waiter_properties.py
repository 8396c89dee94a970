"""Property: for any per-poll status sequence, the gate opens exactly when every member is ready at some poll
made before the deadline, fails at once at the first poll showing a provisioning ERROR, and otherwise times out
after polling right up to the deadline."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ha_endpoint.readiness.errors import MemberFailed, ReadinessTimeout
from ha_endpoint.readiness.model import MemberStatus, PoolExpectation, Requirement, is_ready
from ha_endpoint.readiness.waiter import Backoff, WaitSpec, wait_for_members
from readiness_fakes import FakeClock, ScriptedSource, transient

PROVISIONING = ["ACTIVE", "ACTIVE", "PENDING_CREATE", "PENDING_UPDATE", "ERROR"]
OPERATING = ["ONLINE", "ONLINE", "OFFLINE", "NO_MONITOR", "ERROR", "DRAINING"]


@st.composite
def scenarios(draw):
    pools = []
    for p in range(draw(st.integers(1, 3))):
        members = tuple(f"p{p}m{i}" for i in range(draw(st.integers(1, 4))))
        pools.append(PoolExpectation(f"pool-{p}", members, draw(st.booleans()), f"pool{p}"))
    members = [m for pool in pools for m in pool.member_ids]
    status = st.tuples(st.sampled_from(PROVISIONING), st.sampled_from(OPERATING))
    frame = st.one_of(
        st.builds(lambda: transient("HTTP 503 Service Unavailable")),
        st.fixed_dictionaries({}, optional={m: status for m in members}),
        st.fixed_dictionaries({m: status for m in members}),
    )
    frames = draw(st.lists(frame, min_size=1, max_size=12))
    initial = draw(st.sampled_from([0.1, 0.5, 1.0, 2.0]))
    backoff = Backoff(initial, draw(st.sampled_from([1.0, 1.25, 2.0])), initial * draw(st.sampled_from([1, 2, 5])))
    timeout = draw(st.sampled_from([0.0, 0.5, 1.0, 3.0, 7.5, 20.0]))
    requirement = draw(st.sampled_from(list(Requirement)))
    return tuple(pools), frames, backoff, timeout, requirement


def poll_schedule(backoff: Backoff, deadline: float) -> list[float]:
    """The times at which the waiter polls when nothing opens the gate: from 0 up to the deadline itself."""
    times, t, delays = [0.0], 0.0, backoff.delays()
    while not t >= deadline:
        t += min(next(delays), deadline - t)
        times.append(t)
    return times


def expected_outcome(pools, frames, requirement, n_polls):
    """("ready" | "failed" | "timeout", index of the deciding poll)."""
    for k in range(n_polls):
        frame = frames[min(k, len(frames) - 1)]
        if isinstance(frame, Exception):
            continue
        seen = {m: MemberStatus(m, *frame[m]) for m in frame}
        if any(s.provisioning_status == "ERROR" for s in seen.values()):
            return "failed", k
        if all(m in seen and is_ready(seen[m], requirement, p.monitored) for p in pools for m in p.member_ids):
            return "ready", k
    return "timeout", n_polls - 1


@settings(max_examples=400, deadline=None)
@given(scenarios())
def test_gate_opens_exactly_when_all_members_are_ready_at_a_poll_before_the_deadline(scenario):
    pools, frames, backoff, timeout, requirement = scenario
    clock = FakeClock()
    source = ScriptedSource(frames, {p.pool_id: p.member_ids for p in pools}, clock)
    schedule = poll_schedule(backoff, timeout)
    expected, k = expected_outcome(pools, frames, requirement, len(schedule))
    try:
        result = wait_for_members(
            WaitSpec("lb-1", pools, requirement, timeout, backoff),
            fetch_pool=source.fetch_pool, fetch_load_balancer=source.fetch_load_balancer,
            clock=clock, sleep=clock.sleep,
        )
        outcome = "ready"
        assert result.waited_seconds == schedule[k]
        assert result.api_calls <= len(pools) * (k + 1)
    except MemberFailed:
        outcome = "failed"
    except ReadinessTimeout as exc:
        outcome = "timeout"
        assert len(exc.not_ready) >= 1
    assert outcome == expected
    assert source.poll_times == schedule[: k + 1]
    assert all(t <= timeout for t in source.poll_times)
    assert all(s <= backoff.max_seconds for s in clock.sleeps)

"""Property: for any per-poll status sequence, the gate opens exactly when every member has been ready in
``stable_polls`` consecutive polls made before the deadline, fails at once at the first poll showing a provisioning
ERROR or a member gone (missing from its pool's list, or PENDING_DELETE), and otherwise times out after polling right
up to the deadline."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.budget import examples

from ha_endpoint.gates.errors import MemberFailed, MemberGone, ReadinessTimeout, ZoneDead
from ha_endpoint.gates.model import MemberStatus, PoolExpectation, Requirement, is_down, is_ready
from ha_endpoint.gates.waiter import Backoff, WaitSpec, wait_for_members
from gate_fakes import FakeClock, ScriptedSource, transient

PROVISIONING = ["ACTIVE", "ACTIVE", "ACTIVE", "PENDING_CREATE", "PENDING_UPDATE", "ERROR", "PENDING_DELETE"]
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
        st.fixed_dictionaries({m: status for m in members}),
    )
    frames = draw(st.lists(frame, min_size=1, max_size=12))
    initial = draw(st.sampled_from([0.1, 0.5, 1.0, 2.0]))
    backoff = Backoff(initial, draw(st.sampled_from([1.0, 1.25, 2.0])), initial * draw(st.sampled_from([1, 2, 5])))
    timeout = draw(st.sampled_from([0.0, 0.5, 1.0, 3.0, 7.5, 20.0]))
    requirement = draw(st.sampled_from(list(Requirement)))
    stable_polls = draw(st.integers(1, 3))
    return tuple(pools), frames, backoff, timeout, requirement, stable_polls


def poll_schedule(backoff: Backoff, deadline: float) -> list[float]:
    """The times at which the waiter polls when nothing opens the gate: from 0 up to the deadline itself."""
    times, t, delays = [0.0], 0.0, backoff.delays()
    while not t >= deadline:
        t += min(next(delays), deadline - t)
        times.append(t)
    return times


def expected_outcome(pools, frames, requirement, stable_polls, n_polls):
    """("ready" | "failed" | "gone" | "timeout", index of the deciding poll). The first member (pools in order, then
    members in order) that is missing, PENDING_DELETE or in ERROR decides a failing poll."""
    streak = {m: 0 for p in pools for m in p.member_ids}
    for k in range(n_polls):
        frame = frames[min(k, len(frames) - 1)]
        if isinstance(frame, Exception):
            continue
        for pool in pools:
            for m in pool.member_ids:
                if m not in frame or frame[m][0] == "PENDING_DELETE":
                    return "gone", k
                if frame[m][0] == "ERROR":
                    return "failed", k
        for pool in pools:
            for m in pool.member_ids:
                streak[m] = streak[m] + 1 if is_ready(MemberStatus(m, *frame[m]), requirement, pool.monitored) else 0
        if all(n >= stable_polls for n in streak.values()):
            return "ready", k
    return "timeout", n_polls - 1


@settings(max_examples=examples(400), deadline=None)
@given(scenarios())
def test_gate_opens_exactly_when_all_members_were_ready_in_stable_polls_polls_before_the_deadline(scenario):
    pools, frames, backoff, timeout, requirement, stable_polls = scenario
    clock = FakeClock()
    source = ScriptedSource(frames, {p.pool_id: p.member_ids for p in pools}, clock)
    schedule = poll_schedule(backoff, timeout)
    expected, k = expected_outcome(pools, frames, requirement, stable_polls, len(schedule))
    try:
        result = wait_for_members(
            WaitSpec("lb-1", pools, requirement, timeout, backoff, stable_polls=stable_polls),
            fetch_pool=source.fetch_pool, fetch_load_balancer=source.fetch_load_balancer,
            clock=clock, sleep=clock.sleep,
        )
        outcome = "ready"
        assert result.waited_seconds == schedule[k]
        assert result.api_calls <= len(pools) * (k + 1)
    except MemberFailed:
        outcome = "failed"
    except MemberGone:
        outcome = "gone"
    except ReadinessTimeout as exc:
        outcome = "timeout"
        assert len(exc.not_ready) >= 1
    assert outcome == expected
    assert source.poll_times == schedule[: k + 1]
    assert all(t <= timeout for t in source.poll_times)
    assert all(s <= backoff.max_seconds for s in clock.sleeps)


# The dead-zone rule (dead_after_seconds: the gates of readiness.onZoneNotReady: unpublish)

ALIVE_OPERATING = ["ONLINE", "OFFLINE", "ERROR", "ERROR", "NO_MONITOR"]


@st.composite
def dead_zone_scenarios(draw):
    members = tuple(f"m{i}" for i in range(draw(st.integers(1, 3))))
    pool = PoolExpectation("pool-0", members, True, "pool0")
    status = st.tuples(st.sampled_from(["ACTIVE", "ACTIVE", "ACTIVE", "PENDING_CREATE"]),
                       st.sampled_from(ALIVE_OPERATING))
    frames = draw(st.lists(st.fixed_dictionaries({m: status for m in members}), min_size=1, max_size=25))
    dead_after = draw(st.sampled_from([1.0, 2.5, 5.0, 8.0]))
    return (pool,), frames, dead_after


@settings(max_examples=examples(400), deadline=None)
@given(dead_zone_scenarios())
def test_a_zone_is_dead_exactly_when_every_member_was_down_in_every_poll_for_dead_after_seconds(scenario):
    """Polls every second (fixed backoff), a 20 s deadline: the zone is dead at the first poll where every member has
    been down (ACTIVE, OFFLINE or ERROR) in each poll since a poll at least ``dead_after`` seconds earlier, unless the
    gate opens first; never earlier, and never later than that poll."""
    pools, frames, dead_after = scenario
    members = pools[0].member_ids
    clock = FakeClock()
    source = ScriptedSource(frames, {pools[0].pool_id: members}, clock)
    down_since: dict[str, float] = {}
    streak = {m: 0 for m in members}
    expected, at = "timeout", 20.0
    for k in range(21):
        frame = frames[min(k, len(frames) - 1)]
        for m in members:
            status = MemberStatus(m, *frame[m])
            streak[m] = streak[m] + 1 if is_ready(status, Requirement.ONLINE, True) else 0
            if is_down(status):
                down_since.setdefault(m, float(k))
            else:
                down_since.pop(m, None)
        if all(n >= 1 for n in streak.values()):
            expected, at = "ready", float(k)
            break
        if len(down_since) == len(members) and k - max(down_since.values()) >= dead_after:
            expected, at = "dead", float(k)
            break
    try:
        wait_for_members(WaitSpec("lb-1", pools, Requirement.ONLINE, 20.0, Backoff(1.0, 1.0, 1.0), stable_polls=1,
                                  dead_after_seconds=dead_after),
                         fetch_pool=source.fetch_pool, fetch_load_balancer=source.fetch_load_balancer,
                         clock=clock, sleep=clock.sleep)
        outcome = "ready"
    except ZoneDead as exc:
        outcome = "dead"
        assert exc.down_seconds is not None and exc.down_seconds >= dead_after
    except ReadinessTimeout:
        outcome = "timeout"
    assert (outcome, clock.now) == (expected, at)

"""The pure waiter driven by scripted status sequences and a fake clock: what a user sees when members are slow,
down, failed, or the API misbehaves."""

from __future__ import annotations

import pytest

from ha_endpoint.cloud.errors import AuthExpired
from ha_endpoint.gates.errors import (AuthFailed, FetchFailed, MemberFailed, MemberGone,
                                          ReadinessTimeout, ZoneDead)
from ha_endpoint.gates.model import LoadBalancerStatus, MemberStatus, PoolExpectation, Requirement
from ha_endpoint.gates.waiter import Backoff, WaitSpec, wait_for_members
from gate_fakes import FakeClock, ScriptedSource, expired, transient

A, O = "ACTIVE", "ONLINE"
POOL = PoolExpectation("pool-a", ("m1", "m2", "m3"), monitored=True, name="api")
ALL_ONLINE = {"m1": (A, O), "m2": (A, O), "m3": (A, O)}


def run(frames, *, pools=(POOL,), requirement=Requirement.ONLINE, timeout=10.0, backoff=Backoff(), lb=None,
        stable_polls=1, reauth_failures=(), dead_after=None):
    """Wait over scripted frames. ``stable_polls`` is 1 here unless a test is about stability (the product default,
    2, is tested below), so that each test counts the polls of the behaviour it is about."""
    clock = FakeClock()
    source = ScriptedSource(frames, {p.pool_id: p.member_ids for p in pools}, clock)
    source.reauth_failures = list(reauth_failures)
    if lb is not None:
        source.lb = lb
    spec = WaitSpec("lb-1", tuple(pools), requirement, timeout, backoff, stable_polls=stable_polls,
                    dead_after_seconds=dead_after)
    outcome = {"clock": clock, "source": source}
    try:
        outcome["result"] = wait_for_members(
            spec,
            fetch_pool=source.fetch_pool,
            fetch_load_balancer=source.fetch_load_balancer,
            reauth=source.reauth,
            clock=clock,
            sleep=clock.sleep,
        )
    except Exception as exc:  # the test inspects it
        outcome["error"] = exc
    return outcome


def test_gate_opens_at_the_first_poll_where_every_member_is_active_and_online():
    pending = {"m1": (A, O), "m2": ("PENDING_CREATE", "OFFLINE"), "m3": (A, "OFFLINE")}
    out = run([pending, pending, ALL_ONLINE])
    result = out["result"]
    assert result.polls == 3 and result.api_calls == 3
    assert result.waited_seconds == 2.0
    assert {m: s.label for m, s in result.statuses.items()} == {m: "ACTIVE/ONLINE" for m in ("m1", "m2", "m3")}
    assert result.all_online and result.transient_errors == 0 and result.reauths == 0
    assert out["source"].lb_calls == 0, "the load balancer is fetched only for failure messages"


def test_timeout_names_every_member_not_ready_with_its_statuses_and_the_load_balancers():
    frame = {"m1": (A, O), "m2": (A, "OFFLINE"), "m3": ("PENDING_CREATE", "OFFLINE")}
    out = run([frame], lb=LoadBalancerStatus("lb-1", "PENDING_UPDATE", "DEGRADED"))
    error = out["error"]
    assert isinstance(error, ReadinessTimeout)
    assert str(error) == (
        "load balancer lb-1: 2 of 3 members not ready after 10s (requirement: provisioning ACTIVE and operating "
        "ONLINE): member m2 in pool api (pool-a) is ACTIVE/OFFLINE; member m3 in pool api (pool-a) is "
        "PENDING_CREATE/OFFLINE. Load balancer lb-1 is PENDING_UPDATE/DEGRADED."
    )
    assert error.member_ids == ("m2", "m3")
    assert out["source"].poll_times[-1] == 10.0, "the last poll happens at the deadline"


def test_a_member_deleted_out_of_band_fails_at_once_naming_it():
    pending = {"m1": (A, O), "m2": (A, O), "m3": ("PENDING_CREATE", "OFFLINE")}
    out = run([pending, {"m1": (A, O), "m2": (A, O)}, ALL_ONLINE], timeout=600)
    error = out["error"]
    assert isinstance(error, MemberGone) and error.member_id == "m3"
    assert str(error) == (
        "member m3 in pool api (pool-a) is gone: it is no longer in the pool's member list, so something outside "
        "this stack deleted it. Load balancer lb-1 is ACTIVE/ONLINE. It will never become ready: run `pulumi "
        "refresh` so that the stack forgets it, then `pulumi up` to create it again."
    )
    assert out["clock"].now == 1.0 and len(out["source"].poll_times) == 2, "at the first poll that shows it"


@pytest.mark.parametrize("provisioning", ["PENDING_DELETE", "DELETED"])
def test_a_member_being_deleted_out_of_band_fails_at_once_naming_it(provisioning):
    frame = {"m1": (A, O), "m2": (provisioning, O), "m3": (A, O)}
    out = run([frame], timeout=600, lb=LoadBalancerStatus("lb-1", "PENDING_UPDATE", "ONLINE"))
    assert isinstance(out["error"], MemberGone) and out["clock"].now == 0
    assert str(out["error"]) == (
        f"member m2 in pool api (pool-a) is being deleted ({provisioning}/ONLINE) by something outside this stack. "
        "Load balancer lb-1 is PENDING_UPDATE/ONLINE. It will never become ready: wait until it is gone, run "
        "`pulumi refresh` so that the stack forgets it, then `pulumi up` to create it again."
    )


def test_a_flapping_member_counts_only_after_stable_polls_consecutive_ready_polls():
    flapping = {"m1": (A, O), "m2": (A, O), "m3": (A, "ERROR")}
    out = run([ALL_ONLINE, flapping, ALL_ONLINE, flapping, ALL_ONLINE, ALL_ONLINE, ALL_ONLINE], stable_polls=3,
              timeout=60)
    result = out["result"]
    assert result.polls == 7 and result.waited_seconds == 6.0, "opens at the third ready poll in a row"
    assert result.flaps == {"m3": 2}


def test_the_default_is_two_consecutive_ready_polls():
    assert WaitSpec("lb-1", (POOL,)).stable_polls == 2
    clock = FakeClock()
    flapping = {"m1": (A, O), "m2": (A, O), "m3": (A, "ERROR")}
    source = ScriptedSource([ALL_ONLINE, flapping, ALL_ONLINE, ALL_ONLINE], {"pool-a": POOL.member_ids}, clock)
    result = wait_for_members(WaitSpec("lb-1", (POOL,)), fetch_pool=source.fetch_pool,
                              fetch_load_balancer=source.fetch_load_balancer, clock=clock, sleep=clock.sleep)
    assert result.polls == 4 and source.poll_times == [0.0, 1.0, 2.0, 3.0]


def test_a_member_still_flapping_at_the_deadline_is_named_with_its_streak_and_flaps():
    flapping = {"m1": (A, O), "m2": (A, O), "m3": (A, "ERROR")}
    out = run([ALL_ONLINE, flapping, ALL_ONLINE, flapping, ALL_ONLINE], stable_polls=2, timeout=4)
    assert str(out["error"]) == (
        "load balancer lb-1: 1 of 3 members not ready after 4s (requirement: provisioning ACTIVE and operating "
        "ONLINE): member m3 in pool api (pool-a) is ACTIVE/ONLINE but was ready in only the last 1 poll of the 2 "
        "consecutive polls required (it went from ready to not ready 2 times). Load balancer lb-1 is ACTIVE/ONLINE."
    )


def test_a_failed_poll_neither_counts_towards_nor_breaks_a_streak():
    out = run([ALL_ONLINE, transient("HTTP 503 Service Unavailable"), ALL_ONLINE], stable_polls=2)
    result = out["result"]
    assert result.polls == 2 and result.transient_errors == 1 and result.flaps == {}


def test_stable_polls_must_be_a_whole_number_of_at_least_one():
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match=r"^stable_polls must be a whole number >= 1, got "):
            WaitSpec("lb-1", (POOL,), stable_polls=bad)


def test_provisioning_error_fails_at_once_naming_the_member():
    pending = {"m1": (A, O), "m2": ("PENDING_CREATE", "OFFLINE"), "m3": (A, O)}
    failed = {"m1": (A, O), "m2": ("ERROR", "OFFLINE"), "m3": (A, O)}
    out = run([pending, failed, ALL_ONLINE], timeout=600)
    error = out["error"]
    assert isinstance(error, MemberFailed) and error.member_id == "m2"
    assert str(error) == (
        "member m2 in pool api (pool-a) failed: it is ERROR/OFFLINE and provisioning ERROR is terminal. "
        "Load balancer lb-1 is ACTIVE/ONLINE. Delete or replace the member (the load-balancer service's worker log "
        "says why it failed) and run the update again."
    )
    assert out["clock"].now == 1.0 and len(out["source"].poll_times) == 2


def test_operating_error_is_not_terminal_a_member_can_come_back_online():
    down = {"m1": (A, O), "m2": (A, "ERROR"), "m3": (A, O)}
    out = run([down, down, ALL_ONLINE])
    assert out["result"].polls == 3


@pytest.mark.parametrize("reason", ["HTTP 409 Conflict", "HTTP 503 Service Unavailable", "ConnectFailure: refused"])
def test_transient_fetch_errors_are_retried_and_counted(reason):
    out = run([transient(reason), transient(reason), ALL_ONLINE])
    result = out["result"]
    assert result.polls == 1 and result.transient_errors == 2 and result.api_calls == 3
    assert out["clock"].sleeps == [1.0, 1.0]


def test_timeout_caused_by_failing_fetches_says_so():
    out = run([{"m1": (A, O), "m2": (A, O), "m3": (A, "OFFLINE")}, transient("HTTP 503 Service Unavailable")],
              timeout=3)
    assert str(out["error"]) == (
        "load balancer lb-1: 1 of 3 members not ready after 3s (requirement: provisioning ACTIVE and operating "
        "ONLINE): member m3 in pool api (pool-a) is ACTIVE/OFFLINE. Load balancer lb-1 is ACTIVE/ONLINE. Status "
        "fetches were still failing at the deadline (3 transient errors retried, last: HTTP 503 Service "
        "Unavailable)."
    )


def test_timeout_when_no_fetch_ever_succeeded():
    out = run([transient("ConnectFailure: connection refused")], timeout=1)
    assert str(out["error"]) == (
        "load balancer lb-1: 3 of 3 members not ready after 1s (requirement: provisioning ACTIVE and operating "
        "ONLINE): member m1 in pool api (pool-a) was never observed; member m2 in pool api (pool-a) was never "
        "observed; member m3 in pool api (pool-a) was never observed. Load balancer lb-1 is ACTIVE/ONLINE. Status "
        "fetches were still failing at the deadline (2 transient errors retried, last: ConnectFailure: connection "
        "refused)."
    )


def test_recovered_transient_errors_are_reported_but_not_blamed():
    offline = {"m1": (A, O), "m2": (A, O), "m3": (A, "OFFLINE")}
    out = run([transient("HTTP 409 Conflict"), offline], timeout=2)
    assert str(out["error"]).endswith(
        "Load balancer lb-1 is ACTIVE/ONLINE. 1 transient error retried (last: HTTP 409 Conflict)."
    )


def test_expired_token_reauthenticates_and_retries_at_once():
    out = run([{"m1": (A, O), "m2": (A, O), "m3": (A, "OFFLINE")}, expired(), ALL_ONLINE])
    result = out["result"]
    assert result.reauths == 1 and out["source"].reauths == 1
    assert out["clock"].sleeps == [1.0], "the retry after re-authentication does not sleep"
    assert out["source"].poll_times == [0.0, 1.0, 1.0]


FIX = ("check the clouds.yaml entry the stack uses (openstack:cloud, readiness.cloud or OS_CLOUD): the password or "
       "application credential, the project and domain names, and that the user still has the member and "
       "load-balancer_member roles in the project; then run `pulumi up` again")


def test_repeated_auth_rejection_fails_with_a_fix():
    out = run([expired()], timeout=600)
    error = out["error"]
    assert isinstance(error, AuthFailed)
    assert str(error) == (
        f"load balancer lb-1: the cloud rejected the credentials 4 times in a row (HTTP 401 Unauthorized); {FIX}"
    )
    assert out["source"].reauths == 3


@pytest.mark.parametrize("refusal", [
    "HTTP 401 Unauthorized: The request you have made requires authentication.",
    "HTTP 404 Not Found: Could not find project: ha-endpoint.",  # Keystone: the project (or user) is gone
])
def test_a_refused_re_authentication_fails_at_once_with_a_fix(refusal):
    offline = {"m1": (A, O), "m2": (A, O), "m3": (A, "OFFLINE")}
    out = run([offline, expired(), ALL_ONLINE], timeout=600, reauth_failures=[AuthExpired(refusal)])
    error = out["error"]
    assert isinstance(error, AuthFailed)
    assert str(error) == (
        f"load balancer lb-1: the cloud rejected the token (HTTP 401 Unauthorized) and refused the "
        f"re-authentication too ({refusal}); {FIX}"
    )
    assert error.__cause__ is None and error.__suppress_context__, "no chained traceback"
    assert out["clock"].now == 1.0, "at once, not at the deadline"


def test_keystone_unreachable_while_re_authenticating_is_transient_within_the_deadline():
    unreachable = transient("DiscoveryFailure (the service did not answer): ConnectFailure: Unable to establish "
                            "connection to http://127.0.0.1:5000")
    out = run([expired(), expired(), ALL_ONLINE], reauth_failures=[unreachable])
    result = out["result"]
    assert result.transient_errors == 1 and result.reauths == 1 and out["source"].reauths == 2
    assert out["clock"].sleeps == [1.0], "Keystone unreachable: wait a poll interval, then try again"


def test_keystone_unreachable_until_the_deadline_is_reported_in_the_timeout():
    unreachable = transient("DiscoveryFailure (the service did not answer): ConnectFailure: refused")
    out = run([expired()], timeout=2, reauth_failures=[unreachable] * 10)
    assert str(out["error"]).endswith(
        "Load balancer lb-1 is ACTIVE/ONLINE. Status fetches were still failing at the deadline (3 transient errors "
        "retried, last: re-authentication: DiscoveryFailure (the service did not answer): ConnectFailure: refused)."
    )


def test_terminal_fetch_errors_propagate():
    out = run([FetchFailed("listing the members of pool pool-a failed: HTTP 404 Not Found")])
    assert isinstance(out["error"], FetchFailed) and out["clock"].now == 0


def test_no_monitor_counts_only_in_a_pool_without_a_health_monitor():
    frame = {"m1": (A, "NO_MONITOR"), "m2": (A, "NO_MONITOR"), "m3": (A, "NO_MONITOR")}
    unmonitored = PoolExpectation("pool-a", ("m1", "m2", "m3"), monitored=False, name="api")
    assert run([frame], pools=(unmonitored,))["result"].all_online
    error = run([frame], timeout=1)["error"]
    assert "member m1 in pool api (pool-a) is ACTIVE/NO_MONITOR (the pool has a health monitor, so NO_MONITOR " \
           "does not count)" in str(error)


def test_provisioned_requirement_needs_only_active():
    frame = {"m1": (A, "OFFLINE"), "m2": (A, "NO_MONITOR"), "m3": (A, O)}
    result = run([frame], requirement=Requirement.PROVISIONED)["result"]
    assert result.polls == 1 and not result.all_online
    pending = {"m1": (A, "OFFLINE"), "m2": ("PENDING_UPDATE", "OFFLINE"), "m3": (A, O)}
    error = run([pending], requirement=Requirement.PROVISIONED, timeout=1)["error"]
    assert str(error).startswith(
        "load balancer lb-1: 1 of 3 members not ready after 1s (requirement: provisioning ACTIVE): member m2"
    )


def test_one_listing_per_pool_per_poll_and_every_pool_must_be_ready():
    pools = (PoolExpectation("p1", ("a",), True, "api"), PoolExpectation("p2", ("b",), False, "etcd"))
    out = run([{"a": (A, O), "b": (A, "OFFLINE")}, {"a": (A, O), "b": (A, "NO_MONITOR")}], pools=pools)
    assert out["source"].calls == ["p1", "p2", "p1", "p2"]
    assert out["result"].api_calls == 4


def test_backoff_grows_by_a_quarter_up_to_the_ceiling_and_never_sleeps_past_the_deadline():
    frame = {"m1": (A, "OFFLINE"), "m2": (A, O), "m3": (A, O)}
    out = run([frame], timeout=10, backoff=Backoff(1.0, 1.25, 2.0))
    assert out["clock"].sleeps == [1.0, 1.25, 1.5625, 1.953125, 2.0, 2.0, 0.234375]
    assert out["clock"].now == 10.0


@pytest.mark.parametrize("stable_polls", [1, 2, 3])
@pytest.mark.parametrize("online_at", [0.3, 5.0, 5.99, 17.5])
def test_gate_opens_within_stable_polls_intervals_of_the_last_member_going_online(online_at, stable_polls):
    clock = FakeClock()
    source = ScriptedSource([ALL_ONLINE], {"pool-a": ("m1", "m2", "m3")}, clock)

    def fetch(pool_id):
        if clock.now < online_at:
            return [s if s.member_id != "m3" else type(s)("m3", A, "OFFLINE") for s in source.fetch_pool(pool_id)]
        return source.fetch_pool(pool_id)

    result = wait_for_members(
        WaitSpec("lb-1", (POOL,), Requirement.ONLINE, 60, Backoff(), stable_polls=stable_polls),
        fetch_pool=fetch, fetch_load_balancer=source.fetch_load_balancer, clock=clock, sleep=clock.sleep,
    )
    assert stable_polls - 1 <= result.waited_seconds - online_at <= stable_polls * 1.0


def test_backoff_rejects_a_ceiling_below_the_start():
    with pytest.raises(ValueError, match=r"maximum poll interval \(0.5s\) must be >= the poll interval \(1.0s\)"):
        Backoff(1.0, 1.25, 0.5)


def test_polls_keep_a_steady_cadence_whatever_a_fetch_costs():
    clock = FakeClock()
    offline = {"m1": (A, "OFFLINE"), "m2": (A, O), "m3": (A, O)}
    source = ScriptedSource([offline, offline, offline, ALL_ONLINE], {"pool-a": ("m1", "m2", "m3")}, clock)
    costs = iter([0.25, 1.5, 0.25, 0.25])

    def slow_fetch(pool_id):
        statuses = source.fetch_pool(pool_id)
        clock.now += next(costs)
        return statuses

    wait_for_members(WaitSpec("lb-1", (POOL,), Requirement.ONLINE, 60, Backoff(), stable_polls=1),
                     fetch_pool=slow_fetch, fetch_load_balancer=source.fetch_load_balancer, clock=clock,
                     sleep=clock.sleep)
    assert clock.sleeps == [0.75, 0.1, 0.75], "a fetch slower than the interval still gets a tenth of it"
    assert source.poll_times == [0.0, 1.0, 2.6, 3.6]


# A dead zone (dead_after_seconds, the gates of on_not_ready: unpublish)

ALL_DOWN = {"m1": (A, "ERROR"), "m2": (A, "OFFLINE"), "m3": (A, "ERROR")}


def test_a_zone_whose_members_all_stay_down_is_dead_after_dead_after_seconds_not_at_the_deadline():
    out = run([ALL_DOWN], timeout=600, dead_after=20)
    error = out["error"]
    assert isinstance(error, ZoneDead) and not error.load_balancer_failed
    assert 20 <= out["clock"].now <= 21, "recognised once every member was down for 20 s, not after 600 s"
    assert str(error).startswith("load balancer lb-1: the zone is dead (every member has been down for 20s): "
                                 "member m1 in pool api (pool-a) is ACTIVE/ERROR; ")
    assert str(error).endswith("Load balancer lb-1 is ACTIVE/ONLINE.")


def test_one_member_coming_up_meanwhile_keeps_the_zone_alive_and_restarts_the_count():
    flicker = {**ALL_DOWN, "m2": (A, O)}
    # down 0-9 s, m2 online at 10 s, everything down again from 11 s: dead at 31 s at the earliest
    out = run([ALL_DOWN] * 10 + [flicker] + [ALL_DOWN], timeout=600, dead_after=20)
    assert isinstance(out["error"], ZoneDead)
    assert out["clock"].now >= 31


def test_members_still_being_created_or_not_judged_yet_are_not_dead_the_wait_times_out_as_before():
    pending = {"m1": ("PENDING_CREATE", "OFFLINE"), "m2": (A, "NO_MONITOR"), "m3": (A, "ERROR")}
    out = run([pending], timeout=60, dead_after=20)
    assert isinstance(out["error"], ReadinessTimeout)


def test_a_load_balancer_in_provisioning_error_is_a_dead_zone_at_once():
    out = run([ALL_DOWN], timeout=600, dead_after=300, lb=LoadBalancerStatus("lb-1", "ERROR", "OFFLINE"))
    error = out["error"]
    assert isinstance(error, ZoneDead) and error.load_balancer_failed
    assert out["clock"].now == 0.0
    assert "the zone is dead (its provisioning is ERROR)" in str(error)


def test_without_dead_after_seconds_a_down_zone_waits_out_the_deadline_and_the_load_balancer_is_never_polled():
    out = run([ALL_DOWN], timeout=60)
    assert isinstance(out["error"], ReadinessTimeout) and out["clock"].now == 60
    assert out["source"].lb_calls == 1, "once, for the timeout's message"


def test_a_zone_that_comes_up_before_it_is_dead_opens_the_gate():
    out = run([ALL_DOWN] * 5 + [ALL_ONLINE], timeout=600, dead_after=20)
    assert out["result"].polls == 6


# hold_seconds: the OVN provider's ONLINE before the first health check (predicates.online_hold_seconds)

HELD = PoolExpectation("pool-a", ("m1",), monitored=True, name="api", hold_seconds=20)


def test_a_new_members_optimistic_online_is_held_until_the_monitor_had_time_to_fail_it():
    """Measured on the OVN provider: a member whose server serves nothing is ONLINE for ~15 s after its create, then
    ERROR. Held for 20 s, it never counts; without the hold the gate opened on the optimistic ONLINE."""
    optimistic = [{"m1": (A, O)}] * 15 + [{"m1": (A, "ERROR")}]
    out = run(optimistic, pools=(HELD,), timeout=60, stable_polls=2, backoff=Backoff(1, 1, 1))
    assert isinstance(out["error"], ReadinessTimeout)
    unheld = PoolExpectation("pool-a", ("m1",), monitored=True, name="api")
    assert run(optimistic, pools=(unheld,), timeout=60, stable_polls=2, backoff=Backoff(1, 1, 1))["result"].polls == 2


def test_a_member_online_for_the_whole_hold_opens_the_gate_then():
    out = run([{"m1": (A, "ERROR")}] * 3 + [{"m1": (A, O)}], pools=(HELD,), timeout=60, stable_polls=2,
              backoff=Backoff(1, 1, 1))
    assert out["result"].waited_seconds == 23.0  # ONLINE from 3 s, counted at 23 s


def test_the_hold_is_named_when_the_gate_times_out_during_it():
    error = run([{"m1": (A, O)}], pools=(HELD,), timeout=5, stable_polls=2, backoff=Backoff(1, 1, 1))["error"]
    assert isinstance(error, ReadinessTimeout) and error.member_ids == ("m1",)
    assert "member m1 in pool api (pool-a) is ACTIVE/ONLINE but only for 5s of the 20s its pool's monitor needs to " \
           "fail a member that does not serve (the ovn provider reports a new member ONLINE before checking it)" \
           in str(error)


def test_the_hold_ends_at_the_poll_that_starts_when_it_ends_whatever_each_listing_took():
    """The hold is counted between the starts of polls: a first listing slower than the later ones (0.3 s, then
    0.1 s) once made the gate wait one more interval (21.1 s: 20 s counted from the end of the first listing), about
    half the time on a real cloud."""
    clock = FakeClock()
    source = ScriptedSource([{"m1": (A, O)}], {"pool-a": ("m1",)}, clock)
    listing, starts = source.fetch_pool, []

    def slow_then_quick(pool_id):
        starts.append(clock.now)
        clock.now += 0.3 if not source.calls else 0.1
        return listing(pool_id)

    spec = WaitSpec("lb-1", (HELD,), Requirement.ONLINE, 60, Backoff(1, 1, 1), stable_polls=2)
    result = wait_for_members(spec, fetch_pool=slow_then_quick, fetch_load_balancer=source.fetch_load_balancer,
                              clock=clock, sleep=clock.sleep)
    assert starts[-1] == pytest.approx(20.0) and result.waited_seconds == pytest.approx(20.1)
    assert result.polls == 21


# check_seconds: during a hold the gate polls once per health check (the monitor's delay), and at the hold's end

CHECKED = PoolExpectation("pool-a", ("m1",), monitored=True, name="api", hold_seconds=20, check_seconds=3)


def wait_on_a_monitor(status_at, *, pool=CHECKED, timeout=60.0, stable_polls=2):
    """Wait on a member whose operating status is the monitor's verdict at its last check (checks every 3 s from
    0.5 s, as a real monitor's are not in step with the polls): ``status_at(check_time)``."""
    clock = FakeClock()
    starts = []

    def listing(pool_id):
        starts.append(clock.now)
        checked = max(0.5, 0.5 + 3 * ((clock.now - 0.5) // 3))
        return [MemberStatus("m1", A, status_at(checked))]

    spec = WaitSpec("lb-1", (pool,), Requirement.ONLINE, timeout, Backoff(1, 1, 1), stable_polls=stable_polls)
    try:
        return wait_for_members(spec, fetch_pool=listing, fetch_load_balancer=lambda _: None, clock=clock,
                                sleep=clock.sleep), starts
    except ReadinessTimeout as error:
        return error, starts


def test_during_a_hold_the_gate_polls_once_per_check_and_opens_when_the_hold_ends():
    """Under ovn (20 s hold, checks every 3 s, 2 stable polls): 9 listings instead of 21, and the gate opens at 20 s
    as before."""
    result, starts = wait_on_a_monitor(lambda _: O)
    assert result.waited_seconds == pytest.approx(20.0)
    assert starts == pytest.approx([0, 1, 4, 7, 10, 13, 16, 19, 20])
    unchecked, every_second = wait_on_a_monitor(lambda _: O, pool=HELD)
    assert unchecked.waited_seconds == pytest.approx(20.0) and len(every_second) == 21


@pytest.mark.parametrize("failed_check", [0.5 + 3 * k for k in range(7)])
def test_a_member_failed_by_one_check_during_the_hold_is_seen_and_its_hold_starts_again(failed_check):
    """One failed check, whichever of the hold's checks it is: a poll sees it (a status lasts a check, and the polls
    come once per check: any longer pause misses one of them), the member's hold starts again when it is back, and
    the gate opens only 20 s after that."""
    result, starts = wait_on_a_monitor(lambda at: "ERROR" if at == failed_check else O)
    back = failed_check + 3
    assert any(failed_check <= start < back for start in starts)
    assert result.waited_seconds >= back + 20 - 3


def test_a_member_that_fails_for_good_during_the_hold_never_counts():
    error, _ = wait_on_a_monitor(lambda at: O if at < 15 else "ERROR", timeout=60)
    assert isinstance(error, ReadinessTimeout) and error.member_ids == ("m1",)


def test_members_not_ready_yet_are_polled_every_interval_even_while_another_holds():
    """Only holds are waited for at the monitor's cadence: a member not ready yet is polled each second."""
    clock = FakeClock()
    pool = PoolExpectation("pool-a", ("m1", "m2"), monitored=True, name="api", hold_seconds=20, check_seconds=3)
    source = ScriptedSource([{"m1": (A, O), "m2": ("PENDING_CREATE", "OFFLINE")}] * 5 + [{"m1": (A, O), "m2": (A, O)}],
                            {"pool-a": ("m1", "m2")}, clock)
    spec = WaitSpec("lb-1", (pool,), Requirement.ONLINE, 60, Backoff(1, 1, 1), stable_polls=2)
    result = wait_for_members(spec, fetch_pool=source.fetch_pool, fetch_load_balancer=source.fetch_load_balancer,
                              clock=clock, sleep=clock.sleep)
    assert source.poll_times[:6] == [0, 1, 2, 3, 4, 5]
    assert result.waited_seconds == pytest.approx(25.0)
    assert len(source.poll_times) < 26 - 10


def test_a_member_short_of_its_stable_polls_is_polled_every_interval_so_the_gate_opens_no_later():
    """stablePolls 30 under a 20 s hold: the polls it needs come every second, as before the hold's cadence (the gate
    opens at 29 s, when the 30th poll sees it), not every 3 s (which would open it at about 89 s)."""
    result, starts = wait_on_a_monitor(lambda _: O, stable_polls=30)
    assert result.waited_seconds == pytest.approx(29.0) and len(starts) == 30

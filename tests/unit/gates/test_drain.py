"""MemberDrain: deleting it sets the member's weight to 0 (admin down too under ovn; retrying 409 while the load balancer is PENDING_*),
waits the grace, and only then lets the engine delete the member."""

from __future__ import annotations

import base64

import dill
import pytest
from pulumi.dynamic.dynamic import serialize_provider

import traceback

from openstack import exceptions as os_exc

from ha_endpoint.backends.octavia import status
from ha_endpoint.gates import drain
from ha_endpoint.gates.drain import DrainTimeout, MemberDrainProvider, drain_member
from ha_endpoint.gates.retrying import Pacing
from ha_endpoint.cloud.connection import describe
from ha_endpoint.cloud.errors import AuthExpired
from ha_endpoint.gates.errors import AuthFailed
from octavia_pool_fake import PoolOctavia
from gate_fakes import FakeClock, FakeCloud, conflict, expired, http_error, transient

FIX = ("check the clouds.yaml entry the stack uses (openstack:cloud, readiness.cloud or OS_CLOUD): the password or "
       "application credential, the project and domain names, and that the user still has the member and "
       "load-balancer_member roles in the project; then run `pulumi up` again")


def scripted(outcomes):
    """A take_out callable returning/raising the scripted outcomes in turn."""
    calls = []

    def set_weight_zero():
        calls.append(1)
        outcome = outcomes[min(len(calls), len(outcomes)) - 1]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    return set_weight_zero, calls


def test_conflicts_are_retried_with_backoff_then_the_grace_is_waited():
    clock = FakeClock()
    fn, calls = scripted([transient("HTTP 409 Conflict"), transient("HTTP 409 Conflict"), True])
    result = drain_member(fn, member_id="m1", drain_seconds=30, timeout_seconds=60, pacing=Pacing(clock, clock.sleep))
    assert clock.sleeps == [1.0, 1.25, 30]
    assert result.drained and result.attempts == 3 and result.waited_seconds == 32.25


def test_a_member_already_gone_needs_no_grace():
    clock = FakeClock()
    fn, _ = scripted([False])
    result = drain_member(fn, member_id="m1", drain_seconds=30, timeout_seconds=60, pacing=Pacing(clock, clock.sleep))
    assert not result.drained and clock.sleeps == []


def test_conflicts_past_the_timeout_fail_and_keep_the_member():
    clock = FakeClock()
    fn, calls = scripted([transient("HTTP 409 Conflict")])
    with pytest.raises(DrainTimeout) as caught:
        drain_member(fn, member_id="m1", drain_seconds=30, timeout_seconds=3, pacing=Pacing(clock, clock.sleep))
    assert str(caught.value) == (
        "member m1: could not set its weight to 0 within 3s (4 attempts, last: HTTP 409 Conflict); the member was "
        "not deleted. Wait for its load balancer to leave PENDING_* and run the update again."
    )


def test_an_expired_token_reauthenticates():
    clock = FakeClock()
    fn, calls = scripted([expired(), True])
    reauths = []
    drain_member(fn, member_id="m1", drain_seconds=0, timeout_seconds=3,
                 pacing=Pacing(clock, clock.sleep, reauth=lambda: reauths.append(1)))
    assert reauths == [1] and len(calls) == 2
    fn, _ = scripted([expired()])
    with pytest.raises(AuthFailed):
        drain_member(fn, member_id="m1", drain_seconds=0, timeout_seconds=3,
                     pacing=Pacing(clock, clock.sleep, reauth=lambda: None))


@pytest.fixture
def fake(monkeypatch):
    cloud_ = FakeCloud()
    clock = FakeClock()
    monkeypatch.setattr(status, "connect", cloud_.connect)
    monkeypatch.setattr(drain, "_now", clock)
    monkeypatch.setattr(drain, "_sleep", clock.sleep)
    cloud_.clock = clock
    return cloud_


def bag(**overrides):
    props = {"pool_id": "p1", "member_id": "p1-m000", "drain_seconds": 20, "timeout_seconds": 60, "cloud": None,
             "__provider": "x"}
    props.update(overrides)
    return props


def test_delete_sets_weight_zero_then_waits_the_grace(fake):
    fake.set_members("p1", 1)
    fake.schedule["update"] = [conflict(), http_error(503)]
    MemberDrainProvider().delete("drain-p1-m000", bag())
    assert [c[2] for c in fake.update_calls] == [{"weight": 0}] * 3
    assert fake.pools["p1"]["p1-m000"][2] == 0
    assert fake.clock.sleeps == [1.0, 1.25, 20]
    assert fake.connections[0].closed


def test_a_drain_recorded_without_admin_down_drains_by_weight_alone_and_never_lists_the_pool(fake):
    fake.set_members("p1", 1)
    MemberDrainProvider().delete("drain-p1-m000", bag())
    assert [c[2] for c in fake.update_calls] == [{"weight": 0}]
    assert fake.clock.sleeps == [20]


@pytest.fixture
def ovn(monkeypatch):
    """Octavia with the ovn provider (tests/unit/gates/octavia_pool_fake.py): weight ignored, an admin-down
    member's OFFLINE overwritten with ERROR 1.5 s after it left the backends, taken back by the pool's next write."""
    clock = FakeClock()
    fake = PoolOctavia(clock, ovn_early_online=True, ovn_overwrite_after=1.5)
    for address in ("10.10.1.10", "10.10.1.11", "10.10.1.12"):
        fake.add_member("p1", address)
    monkeypatch.setattr(status, "connect", fake.connect)
    monkeypatch.setattr(drain, "_now", clock)
    monkeypatch.setattr(drain, "_sleep", clock.sleep)
    return fake


def test_an_ovn_drain_sets_admin_down_and_drains_again_once_the_provider_overwrote_it(ovn):
    """``admin_down`` (the component sets it under the ovn provider): weight 0 and admin state down; the provider's
    ERROR over that drain (which its next write would act on) is drained again; the grace is waited in full, and the
    member never serves again once the first drain applied."""
    member = ovn.members("p1")[("10.10.1.10", 6443)].id
    start = ovn.clock.now
    MemberDrainProvider().delete(f"drain-{member}", bag(member_id=member, admin_down=True))
    updates = ovn.member_updates
    assert [(u["member"], u["weight"], u["admin_state_up"]) for u in updates] == [(member, 0, False)] * 2
    assert updates[1]["at"] - updates[0]["at"] < ovn.apply_seconds + 1.5 + 2  # at the look after the ERROR
    assert ovn.seconds_served("10.10.1.10", start + ovn.apply_seconds) == 0
    assert 20 <= ovn.clock.now - start <= 20 + 1.0
    other = ovn.members("p1")[("10.10.1.11", 6443)].id
    ovn.update_member("p1", other, {"weight": 0, "admin_state_up": False})  # the pool's next write: another drain
    ovn.clock.sleep(ovn.apply_seconds)
    assert not ovn.members("p1")[("10.10.1.10", 6443)].serving


def test_an_ovn_drain_takes_back_out_a_member_the_provider_put_back_during_the_grace(ovn):
    """A drained member back among the backends in the middle of its grace (listed ERROR, as one CI run saw ~20 s after
    a drain) is drained again at the next look: it serves for at most a look and a write, not until it is deleted."""
    member = ovn.members("p1")[("10.10.1.10", 6443)].id
    start = ovn.clock.now
    ovn.take_back["10.10.1.10"] = start + 12
    MemberDrainProvider().delete(f"drain-{member}", bag(member_id=member, admin_down=True, drain_seconds=30))
    served = ovn.seconds_served("10.10.1.10", start + 12)
    assert 0 < served <= 1.0 + ovn.apply_seconds  # seen at the next look, out once applied
    assert len(ovn.member_updates) >= 3 and ovn.member_updates[-1]["at"] < start + 30
    ovn.advance()
    assert not ovn.members("p1")[("10.10.1.10", 6443)].serving


def test_an_ovn_drain_whose_grace_is_shorter_than_the_overwrite_waits_no_longer_than_its_grace(ovn):
    member = ovn.members("p1")[("10.10.1.10", 6443)].id
    start = ovn.clock.now
    MemberDrainProvider().delete(f"drain-{member}", bag(member_id=member, admin_down=True, drain_seconds=1))
    assert ovn.clock.now - start <= 1 + 1.0


def test_admin_down_is_checked_and_its_change_is_an_update_not_a_replacement():
    p = MemberDrainProvider()
    assert [(f.property, f.reason) for f in p.check({}, bag(admin_down="yes")).failures] == [
        ("admin_down", "must be true or false, got 'yes'")]
    assert p.diff("d", bag(), bag(admin_down=False)).changes is False
    updated = p.diff("d", bag(), bag(admin_down=True))
    assert updated.changes and updated.replaces == []


def test_delete_of_a_vanished_member_is_quick(fake):
    MemberDrainProvider().delete("drain-x", bag(member_id="gone"))
    assert fake.clock.sleeps == []


def test_zero_grace_never_touches_the_member(fake):
    fake.set_members("p1", 1)
    MemberDrainProvider().delete("drain-p1-m000", bag(drain_seconds=0))
    assert fake.connections == [] and fake.pools["p1"]["p1-m000"][2] == 1


def test_create_update_read_make_no_api_call(fake):
    p = MemberDrainProvider()
    created = p.create(bag())
    assert created.id == "drain-p1-m000" and "__provider" not in created.outs
    p.update(created.id, bag(), bag(drain_seconds=5))
    p.read(created.id, bag())
    assert fake.connections == []


def test_diff_replaces_when_the_member_changes_and_updates_the_grace():
    p = MemberDrainProvider()
    assert p.diff("d", bag(), bag()).changes is False
    replaced = p.diff("d", bag(), bag(member_id="p1-m001"))
    assert replaced.changes and replaced.replaces == ["member_id"] and replaced.delete_before_replace is False
    updated = p.diff("d", bag(), bag(drain_seconds=5))
    assert updated.changes and updated.replaces == []


def test_check_rejects_negative_grace():
    failures = MemberDrainProvider().check({}, bag(drain_seconds=-1)).failures
    assert [(f.property, f.reason) for f in failures] == [
        ("drain_seconds", "must be a number of seconds >= 0, got -1")
    ]


def test_drain_provider_pickles_by_reference():
    raw = base64.b64decode(serialize_provider(MemberDrainProvider()))
    assert b"ha_endpoint.gates.drain" in raw and len(raw) < 200
    assert isinstance(dill.loads(raw), MemberDrainProvider)


def test_a_refused_re_authentication_fails_the_drain_at_once_with_a_fix():
    clock = FakeClock()
    fn, calls = scripted([expired(), True])

    def refused():
        raise AuthExpired("HTTP 404 Not Found: Could not find user: ha-endpoint.")

    with pytest.raises(AuthFailed) as caught:
        drain_member(fn, member_id="m1", drain_seconds=30, timeout_seconds=300,
                     pacing=Pacing(clock, clock.sleep, reauth=refused))
    assert str(caught.value) == (
        "draining member m1: the cloud rejected the token (HTTP 401 Unauthorized) and refused the re-authentication "
        f"too (HTTP 404 Not Found: Could not find user: ha-endpoint.); {FIX}"
    )
    assert len(calls) == 1 and clock.now == 0


def test_keystone_unreachable_while_re_authenticating_is_retried_within_the_drain_timeout():
    clock = FakeClock()
    fn, calls = scripted([expired(), expired(), True])
    outcomes = [transient("DiscoveryFailure (the service did not answer): ConnectFailure: refused"), None]

    def reauth():
        outcome = outcomes.pop(0)
        if outcome is not None:
            raise outcome

    result = drain_member(fn, member_id="m1", drain_seconds=5, timeout_seconds=60,
                          pacing=Pacing(clock, clock.sleep, reauth=reauth))
    assert result.drained and len(calls) == 3 and clock.sleeps == [1.0, 5]


@pytest.mark.parametrize("failure", [OSError(104, "Connection reset by peer"),
                                     os_exc.SDKException("Error fetching endpoint")])
def test_sdk_and_os_errors_are_retried_until_the_drain_timeout_and_named(fake, failure):
    fake.set_members("p1", 1)
    fake.schedule["update"] = [failure] * 100
    with pytest.raises(DrainTimeout) as caught:
        MemberDrainProvider().delete("drain-p1-m000", bag(timeout_seconds=4))
    assert str(caught.value) == (
        f"member p1-m000: could not set its weight to 0 within 4s (5 attempts, last: {describe(failure)}); the "
        "member was not deleted. Wait for its load balancer to leave PENDING_* and run the update again."
    )
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_a_member_being_deleted_out_of_band_needs_no_drain(fake):
    """PENDING_DELETE members answer 409 to the weight update until they are gone (404): then nothing is left to
    drain, so no grace is waited and the delete goes on."""
    fake.set_members("p1", 1)
    gone = http_error(404, os_exc.NotFoundException, "Member p1-m000 not found.")
    fake.schedule["update"] = [conflict(), conflict(), gone]
    MemberDrainProvider().delete("drain-p1-m000", bag(drain_seconds=30))
    assert len(fake.update_calls) == 3 and fake.clock.sleeps == [1.0, 1.25]


def test_a_drain_failure_reaches_the_user_without_chained_tracebacks(fake):
    fake.set_members("p1", 1)
    fake.schedule["update"] = [conflict()] * 100
    try:
        MemberDrainProvider().delete("drain-p1-m000", bag(timeout_seconds=2))
    except DrainTimeout:
        report = traceback.format_exc()
    lines = report.splitlines()
    assert report.count("Traceback") == 1 and lines[-1].startswith("ha_endpoint.gates.drain.DrainTimeout: member")
    assert [line.rsplit(" in ", 1)[1] for line in lines if line.startswith("  File ")] == [
        "test_a_drain_failure_reaches_the_user_without_chained_tracebacks", "delete"]


def test_an_ovn_drain_whose_pool_is_deleted_in_its_grace_ends_with_the_grace_and_no_error(ovn, monkeypatch):
    """The pool deleted out of band while the drain watches its member: nothing is left to keep out; the grace ends as
    configured (the member's own delete then finds it gone)."""
    member = ovn.members("p1")[("10.10.1.10", 6443)].id
    start, advance = ovn.clock.now, ovn.advance

    def advance_then_delete_the_pool():
        advance()
        if ovn.clock.now >= start + 8:
            ovn.pools.pop("p1", None)

    monkeypatch.setattr(ovn, "advance", advance_then_delete_the_pool)
    MemberDrainProvider().delete(f"drain-{member}", bag(member_id=member, admin_down=True))
    assert 20 <= ovn.clock.now - start <= 20 + 1.0


@pytest.mark.parametrize("drain_seconds", [0, 20])
def test_under_ovn_a_member_taken_out_is_kept_out_of_the_backends_by_its_drain(ovn, drain_seconds):
    """Issue 46, per-member under the ovn provider: the member resource writes a member the configuration takes out
    (``enabled: false``) admin down, and its drain, updated to record ``taken_out``, keeps it out: admin down once more
    (its weight kept) once the provider's ERROR over it is in, so that the pool's next write does not take it back.
    Whatever the grace (0 too); deleting the drain later drains as before."""
    member = ovn.members("p1")[("10.10.1.10", 6443)].id
    ovn.update_member("p1", member, {"admin_state_up": False})  # the member resource's write
    ovn.clock.sleep(ovn.apply_seconds)
    start = ovn.clock.now
    olds = bag(member_id=member, admin_down=True, drain_seconds=drain_seconds)
    provider = MemberDrainProvider()
    news = {**olds, "taken_out": True}
    assert provider.diff(f"drain-{member}", olds, news).changes
    provider.update(f"drain-{member}", olds, news)
    updates = [u for u in ovn.member_updates if u["at"] >= start]
    assert updates and all((u["member"], u.get("weight"), u["admin_state_up"]) == (member, None, False)
                           for u in updates)
    assert any(u["at"] >= start + 1.5 for u in updates)  # again once the provider's ERROR was in
    assert ovn.clock.now - start <= 5.0 + 2 * 1.0 + ovn.apply_seconds
    ovn.clock.sleep(ovn.apply_seconds)  # its last write applied
    other = ovn.members("p1")[("10.10.1.11", 6443)].id
    ovn.update_member("p1", other, {"weight": 2})  # the pool's next write rebuilds the backends
    ovn.clock.sleep(ovn.apply_seconds + 5)
    assert ovn.seconds_served("10.10.1.10", start + ovn.apply_seconds) == 0
    assert ovn.members("p1")[("10.10.1.10", 6443)].weight == 1
    again = len(ovn.member_updates)
    provider.update(f"drain-{member}", news, news)  # recorded taken out already: nothing to do
    assert len(ovn.member_updates) == again

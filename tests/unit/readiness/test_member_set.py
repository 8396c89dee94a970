"""MemberSet against a stateful Octavia (octavia_batch_fake): what a client of the pool notices while the set adds,
rotates, drains and removes members with batch updates, and how it recovers from faults and interruptions."""

from __future__ import annotations

import pytest

from ha_endpoint.core import contract
from ha_endpoint.readiness import cloud, member_set
from ha_endpoint.readiness.errors import (FetchFailed, HandoverSkipped, MemberSetConflict, MemberSetTimeout,
                                         ReadinessTimeout)
from ha_endpoint.readiness.held_out import POLL as OVERWRITTEN_POLL
from ha_endpoint.readiness.member_set import MemberSetProvider
from octavia_batch_fake import BatchOctavia, Killed
from readiness_fakes import FakeClock, http_error

IDENTITY = "ha-endpoint:stack=ha-endpoint/dev"
POOL_NAME = "ep-az1-6443-pool"
SET_TAG = contract.member_set_tag(POOL_NAME)
OLD = [f"10.10.1.{n}" for n in range(10, 40)]
NEW = [f"10.10.1.{n}" for n in range(110, 140)]


@pytest.fixture
def octavia(monkeypatch):
    clock = FakeClock()
    fake = BatchOctavia(clock)
    fake.add_pool("p1")
    monkeypatch.setattr(cloud, "connect", fake.connect)
    monkeypatch.setattr(member_set, "_now", clock)
    monkeypatch.setattr(member_set, "_sleep", clock.sleep)
    return fake


def bag(addresses, **overrides):
    props = {"loadbalancer_id": "lb-1", "pool_id": "p1", "pool_name": POOL_NAME,
             "members": [{"name": f"n-{a}", "address": a, "protocol_port": 6443, "weight": 1} for a in addresses],
             "tags": ["production", IDENTITY], "identity_tag": IDENTITY, "monitored": True, "hold_seconds": 0,
             "require": "online", "timeout_seconds": 600, "poll_interval_seconds": 1.0, "stable_polls": 2,
             "on_not_ready": "fail", "dead_after_seconds": 60, "drain_seconds": 0, "write_timeout_seconds": 300,
             "cloud": None, "region": None, "cloud_source": "stack", "__provider": "x"}
    props.update(overrides)
    return props


def up(octavia, addresses, olds=None, **overrides):
    """A create (no ``olds``) or an update, as the engine sends it; the new state."""
    provider, news = MemberSetProvider(), bag(addresses, **overrides)
    if olds is None:
        return {**provider.create(news).outs, "__provider": "x"}
    assert provider.diff("id", olds, news).changes
    return {**provider.update("id", olds, news).outs, "__provider": "x"}


def endpoints(addresses):
    return {(a, 6443) for a in addresses}


def since(octavia, at):
    return [s for s in octavia.timeline if s.at >= at]


def test_a_create_adds_every_member_in_one_batch_and_returns_once_they_are_online(octavia):
    state = up(octavia, OLD)
    assert len(octavia.puts) == 1 and octavia.puts[0]["created"] == 30 and octavia.puts[0]["additive_only"]
    assert all(set(e["tags"]) == {"production", IDENTITY, SET_TAG} for e in octavia.puts[0]["entries"])
    assert set(state["statuses"].values()) == {"ACTIVE/ONLINE"} and len(state["member_ids"]) == 30
    assert octavia.timeline[-1].serving("p1") == endpoints(OLD)  # nothing returned before every member served
    assert sorted(state["owned_ids"]) == sorted(state["member_ids"].values())
    assert state["last_change"]["writes"] == 1 and state["last_change"]["stages"] == ["make"]


def test_a_full_rotation_keeps_every_wanted_member_serving_and_drains_before_it_removes(octavia):
    olds = up(octavia, OLD, drain_seconds=20)
    start = octavia.clock.now
    state = up(octavia, NEW, olds, drain_seconds=20)
    frames = since(octavia, start)
    # a client never had fewer than the 30 members the pool must have serving it
    assert min(len(frame.serving("p1")) for frame in frames) >= 30
    # no old member left (or was being deleted) before every new one served
    for frame in frames:
        listed = frame.listed("p1")
        if any(e not in listed or listed[e].provisioning_status == "PENDING_DELETE" for e in endpoints(OLD)):
            assert endpoints(NEW) <= frame.serving("p1")
    # every old member had weight 0 for the whole grace before it was being deleted
    for address in OLD:
        drained = next(f.at for f in frames if f.listed("p1")[(address, 6443)].weight == 0)
        deleting = next(f.at for f in frames if (address, 6443) not in f.listed("p1")
                        or f.listed("p1")[(address, 6443)].provisioning_status == "PENDING_DELETE")
        assert deleting - drained >= 20
    assert [(p["additive_only"], p["created"], len(p["deleted"])) for p in octavia.puts[1:]] == [
        (True, 30, 0), (True, 0, 0), (False, 0, 30)]
    assert set(octavia.members("p1")) == endpoints(NEW)
    assert state["last_change"]["stages"] == ["make", "drain", "break"] and state["last_change"]["removed"] == 30


def test_without_a_drain_the_leaving_members_are_removed_in_one_batch_after_the_new_ones_serve(octavia):
    olds = up(octavia, OLD[:3])
    start = octavia.clock.now
    up(octavia, NEW[:3], olds)
    assert [p["additive_only"] for p in octavia.puts[1:]] == [True, False]
    frames = since(octavia, start)
    assert min(len(frame.serving("p1")) for frame in frames) >= 3


def ovn_fake(monkeypatch, lists_overwrite: bool = True) -> BatchOctavia:
    """The fake as the ovn provider behaves: weight ignored, an admin-down member's OFFLINE overwritten with ERROR
    1.5 s after it left the backends, and taken back by the next write to the pool."""
    clock = FakeClock()
    fake = BatchOctavia(clock, ovn_early_online=True, ovn_overwrite_after=1.5, ovn_lists_overwrite=lists_overwrite)
    fake.add_pool("p1")
    monkeypatch.setattr(cloud, "connect", fake.connect)
    monkeypatch.setattr(member_set, "_now", clock)
    monkeypatch.setattr(member_set, "_sleep", clock.sleep)
    return fake


@pytest.fixture
def ovn(monkeypatch):
    return ovn_fake(monkeypatch)


def out_for_good(octavia, start, addresses):
    """Address -> whether, once its first drain was applied, the member never served again."""
    frames = since(octavia, start)
    result = {}
    for address in addresses:
        drained = [i for i, f in enumerate(frames) if (address, 6443) in f.listed("p1")
                   and not f.listed("p1")[(address, 6443)].is_admin_state_up
                   and f.listed("p1")[(address, 6443)].provisioning_status == "ACTIVE"]
        result[address] = bool(drained) and not any((address, 6443) in f.serving("p1") for f in frames[drained[0]:])
    return result


def test_under_ovn_each_leaving_member_is_drained_and_kept_out_before_the_grace(ovn):
    """``admin_down`` (the ovn provider): each leaving member at weight 0 and admin down in a single-member update;
    once the provider overwrote its OFFLINE with ERROR, the same drain again (else the next write would take it back
    among the backends); then the grace, then one batch removes them. No leaving member serves again once drained,
    and a client never has fewer than the wanted members serving."""
    olds = up(ovn, OLD[:5], drain_seconds=20, admin_down=True)
    start = ovn.clock.now
    state = up(ovn, NEW[:5], olds, drain_seconds=20, admin_down=True)
    assert out_for_good(ovn, start, OLD[:5]) == {address: True for address in OLD[:5]}
    updates = ovn.member_updates
    assert [(u["weight"], u["admin_state_up"]) for u in updates] == [(0, False)] * 10
    assert sorted(u["member"] for u in updates) == sorted(list(olds["member_ids"].values()) * 2)
    assert not ovn.refused, "each drain was applied before the next write"
    assert [(p["additive_only"], p["created"], len(p["deleted"])) for p in ovn.puts[1:]] == [
        (True, 5, 0), (False, 0, 5)]
    removing = next(p["at"] for p in ovn.puts[1:] if not p["additive_only"])
    assert removing - max(u["at"] for u in updates) >= 20
    for first, again in zip(updates[::2], updates[1::2]):  # again once Octavia listed the ERROR, before the deadline
        assert first["member"] == again["member"] and again["at"] - first["at"] < ovn.apply_seconds + 5.0
    assert min(len(frame.serving("p1")) for frame in since(ovn, start)) >= 5
    assert set(ovn.members("p1")) == endpoints(NEW[:5])
    assert state["last_change"]["writes"] == 12 and state["last_change"]["drained"] == 5
    assert state["admin_down"] is True


def test_under_ovn_a_drained_member_is_kept_out_when_octavia_never_lists_the_providers_error(monkeypatch):
    """The provider's ERROR reached Octavia before the drain's OFFLINE (seen on the local cloud): the listing stays
    OFFLINE while the provider holds ERROR. The second drain comes at the deadline, and still keeps every member out."""
    fake = ovn_fake(monkeypatch, lists_overwrite=False)
    olds = up(fake, OLD[:3], drain_seconds=20, admin_down=True)
    start = fake.clock.now
    up(fake, NEW[:3], olds, drain_seconds=20, admin_down=True)
    assert out_for_good(fake, start, OLD[:3]) == {address: True for address in OLD[:3]}
    updates = fake.member_updates
    assert all(again["at"] - first["at"] >= 5.0 for first, again in zip(updates[::2], updates[1::2]))


def test_under_ovn_without_keeping_them_out_the_next_write_takes_a_drained_member_back(ovn, monkeypatch):
    """What the second drain is for, on the same fake: without it the provider's ERROR lands after the drain and the
    next member's drain puts the first one back among the backends."""
    from ha_endpoint.readiness import held_out
    monkeypatch.setattr(held_out.Watch, "look", lambda self, listed, now: None)
    olds = up(ovn, OLD[:3], drain_seconds=20, admin_down=True)
    start = ovn.clock.now
    up(ovn, NEW[:3], olds, drain_seconds=20, admin_down=True)
    assert not all(out_for_good(ovn, start, OLD[:3]).values())


@pytest.mark.parametrize("rule", [True, False])
def test_under_ovn_a_leaving_member_taken_back_during_the_grace_is_drained_again_at_the_next_look(
        ovn, monkeypatch, rule):
    """Through the grace every leaving member is watched (ha_endpoint.readiness.held_out): one the provider put back
    among the backends (listed ERROR, as one CI run saw ~20 s after a drain) is drained again at the next look and
    serves for at most a look and a write; without the rule it serves until the removing batch."""
    if not rule:
        from ha_endpoint.readiness import held_out
        monkeypatch.setattr(held_out.Watch, "look", lambda self, listed, now: None)
    olds = up(ovn, OLD[:3], drain_seconds=60, admin_down=True)
    start = ovn.clock.now
    ovn.take_back[OLD[1]] = start + 45  # the drains are done by then; the grace lasts until ~start + 75
    up(ovn, NEW[:3], olds, drain_seconds=60, admin_down=True)
    served = ovn.seconds_served(OLD[1], start + 45)
    removing = next(p["at"] for p in ovn.puts[1:] if not p["additive_only"])
    assert removing > start + 60
    if rule:
        assert 0 < served <= OVERWRITTEN_POLL + ovn.apply_seconds
        assert any(u["member"] == olds["member_ids"][f"n-{OLD[1]}"] and u["at"] > start + 45
                   for u in ovn.member_updates)
    else:
        assert served >= removing - (start + 45) - 1
    assert set(ovn.members("p1")) == endpoints(NEW[:3])


def test_under_ovn_an_interrupted_drain_is_resumed_and_every_leaving_member_kept_out(ovn):
    olds = up(ovn, OLD[:4], drain_seconds=10, admin_down=True)
    source = cloud.OctaviaStatusSource(None, None)
    source.drain_member("p1", olds["member_ids"][f"n-{OLD[0]}"], admin_down=True)  # drained by the killed update
    ovn.clock.sleep(ovn.apply_seconds + 2)                                            # (the provider's ERROR)
    source.drain_member("p1", olds["member_ids"][f"n-{OLD[0]}"], admin_down=True)  # and kept out
    ovn.clock.sleep(ovn.apply_seconds)
    start = ovn.clock.now
    up(ovn, NEW[:4], olds, drain_seconds=10, admin_down=True)
    assert len(ovn.member_updates) == 2 + 4 * 2  # every leaving member drained and kept out by the resuming update
    assert out_for_good(ovn, start, OLD[:4]) == {address: True for address in OLD[:4]}
    assert set(ovn.members("p1")) == endpoints(NEW[:4])


def test_a_wanted_member_left_admin_down_by_an_interrupted_drain_is_brought_back_up(octavia):
    olds = up(octavia, OLD[:3], drain_seconds=10)
    member_id = olds["member_ids"][f"n-{OLD[0]}"]
    octavia.update_member("p1", member_id, {"weight": 0, "admin_state_up": False})
    octavia.clock.sleep(octavia.apply_seconds)
    state = up(octavia, OLD[:3], {**olds, "weights": {**olds["weights"], f"n-{OLD[0]}": 0}}, drain_seconds=10)
    listed = octavia.members("p1")[(OLD[0], 6443)]
    assert listed.id == member_id and listed.weight == 1 and listed.is_admin_state_up  # updated, not recreated
    assert octavia.timeline[-1].serving("p1") == endpoints(OLD[:3])
    assert state["last_change"]["updated"] == 1


def test_a_set_recorded_before_admin_down_existed_shows_no_change_and_a_bad_value_is_refused(octavia):
    olds = up(octavia, OLD[:3], drain_seconds=10)
    assert "admin_down" not in olds or olds["admin_down"] is None
    assert not MemberSetProvider().diff("id", olds, bag(OLD[:3], drain_seconds=10)).changes
    assert MemberSetProvider().diff("id", olds, bag(OLD[:3], drain_seconds=10, admin_down=True)).changes
    failures = MemberSetProvider().check({}, bag(OLD[:1], admin_down="yes")).failures
    assert [(f.property, f.reason) for f in failures] == [("admin_down", "must be true or false, got 'yes'")]


def test_a_409_in_the_middle_of_a_stage_is_retried_and_the_rotation_completes(octavia):
    olds = up(octavia, OLD[:5], drain_seconds=10)
    octavia.busy = {octavia.put_attempts + 2: 7.0}  # another writer lands just before the drain's batch
    up(octavia, NEW[:5], olds, drain_seconds=10)
    assert octavia.refused, "the drain's batch met the other writer's PENDING_UPDATE"
    assert set(octavia.members("p1")) == endpoints(NEW[:5])
    removing = [p for p in octavia.puts if not p["additive_only"]]
    assert len(removing) == 1 and len(octavia.puts) == 4


def test_5xx_and_dropped_connections_are_retried(octavia):
    octavia.faults["put"] = [http_error(503), ConnectionResetError("reset by peer")]
    octavia.faults["list"] = [http_error(502)]
    state = up(octavia, OLD[:3])
    assert set(state["statuses"].values()) == {"ACTIVE/ONLINE"}
    assert len(octavia.puts) == 1


def test_a_load_balancer_stuck_in_pending_update_fails_the_stage_precisely_with_nothing_removed(octavia):
    olds = up(octavia, OLD[:3], write_timeout_seconds=30)
    octavia.busy = {octavia.put_attempts + 2: 10_000.0}  # stuck before the removing batch
    with pytest.raises(MemberSetTimeout) as caught:
        up(octavia, NEW[:3], olds, write_timeout_seconds=30)
    message = str(caught.value)
    assert "removing 3 leaving members" in message and "within 30s" in message and "HTTP 409" in message
    assert "3 members added" in message and "resumes from what the pool holds" in message
    assert endpoints(OLD[:3] + NEW[:3]) == set(octavia.members("p1"))


def test_a_refused_batch_is_reported_at_once_naming_the_pool_and_the_answer(octavia):
    octavia.faults["put"] = [http_error(400, details="Invalid input for field/attribute address.")]
    with pytest.raises(FetchFailed) as caught:
        up(octavia, OLD[:3])
    assert "updating the members of pool p1 in one batch failed: HTTP 400" in str(caught.value)
    assert "Invalid input for field/attribute address." in str(caught.value)


@pytest.mark.parametrize("killed_after", [1, 2, 3])
def test_an_interrupted_rotation_is_finished_by_the_next_update(octavia, killed_after):
    """Killed after the make (1), the drain (2) or the break (3) batch was accepted: the engine keeps the old state;
    the next update finishes the rotation from what the pool holds, creating nothing twice and keeping the drain."""
    olds = up(octavia, OLD[:5], drain_seconds=10)
    first = len(octavia.puts)
    octavia.kill_after_puts = first + killed_after
    with pytest.raises(Killed):
        up(octavia, NEW[:5], olds, drain_seconds=10)
    start = octavia.clock.now
    state = up(octavia, NEW[:5], olds, drain_seconds=10)  # the engine still holds olds
    assert set(octavia.members("p1")) == endpoints(NEW[:5])
    assert sum(p["created"] for p in octavia.puts[first:]) == 5  # every new member created once
    assert sorted(state["member_ids"]) == sorted(f"n-{a}" for a in NEW[:5])
    assert min(len(f.serving("p1")) for f in since(octavia, start)) >= 5
    for address in OLD[:5]:  # the drain's grace held across the interruption
        frames = [f for f in octavia.timeline if (address, 6443) in f.listed("p1")]
        zero = next(f.at for f in frames if f.listed("p1")[(address, 6443)].weight == 0)
        deleting = next(f.at for f in frames if f.listed("p1")[(address, 6443)].provisioning_status
                        == "PENDING_DELETE")
        assert deleting - zero >= 10


def test_a_member_that_never_comes_online_stops_the_rotation_before_anything_is_removed(octavia):
    olds = up(octavia, OLD[:3])
    octavia.dead.add(NEW[1])
    with pytest.raises(ReadinessTimeout) as caught:
        up(octavia, NEW[:3], olds, timeout_seconds=60)
    assert "is ACTIVE/ERROR" in str(caught.value)
    listed = octavia.members("p1")
    assert endpoints(OLD[:3]) <= set(listed) and all(listed[e].weight == 1 for e in endpoints(OLD[:3]))


def test_unpublish_records_the_set_not_ready_keeps_the_old_members_and_retries_at_the_next_update(octavia):
    olds = up(octavia, OLD[:3], on_not_ready="unpublish", timeout_seconds=60)
    octavia.dead.add(NEW[0])
    state = up(octavia, NEW[:3], olds, on_not_ready="unpublish", timeout_seconds=60)
    assert state["ready"] is False and "not ready after 60s" in state["not_ready_reason"]
    assert endpoints(OLD[:3] + NEW[:3]) == set(octavia.members("p1"))
    assert set(olds["owned_ids"]) <= set(state["owned_ids"])  # the old ones are still its own, to remove later
    octavia.dead.clear()
    octavia.pools["p1"][state["member_ids"][f"n-{NEW[0]}"]].online_at = octavia.clock.now
    final = up(octavia, NEW[:3], state, on_not_ready="unpublish", timeout_seconds=60)
    assert final["ready"] is True and set(octavia.members("p1")) == endpoints(NEW[:3])


def test_delete_removes_only_the_sets_own_members_and_writes_back_a_foreign_one(octavia):
    state = up(octavia, OLD[:3], drain_seconds=5)
    foreign = octavia.add_member("p1", "10.10.1.200", name="by-hand", weight=3)
    MemberSetProvider().delete("id", state)
    listed = octavia.members("p1")
    assert set(listed) == {("10.10.1.200", 6443)} and listed[("10.10.1.200", 6443)].id == foreign
    assert listed[("10.10.1.200", 6443)].weight == 3  # written back as it was, not reset to Octavia's default
    removing = octavia.puts[-1]
    assert not removing["additive_only"] and [e["address"] for e in removing["entries"]] == ["10.10.1.200"]


def test_a_wanted_address_taken_by_a_member_that_is_not_the_stacks_is_refused_before_any_write(octavia):
    octavia.add_member("p1", OLD[0], name="by-hand")
    with pytest.raises(MemberSetConflict) as caught:
        up(octavia, OLD[:3])
    assert f"{OLD[0]}:6443" in str(caught.value) and "Nothing was written" in str(caught.value)
    assert octavia.puts == []


def test_members_of_the_per_member_resources_are_adopted_without_a_write_after_the_handover(octavia):
    """The upgrade: the handover update's set writes and reads nothing; the batch update after it takes the members
    created by per-member resources (tagged with the stack's identity) as they are."""
    ids = [octavia.add_member("p1", a, name=f"n-{a}", tags=["production", IDENTITY]) for a in OLD[:3]]
    calls = len(octavia.calls)
    handed = up(octavia, [], handover=True)
    assert len(octavia.calls) == calls and handed["handed_over"] is True and handed["owned_ids"] == []
    assert MemberSetProvider().read("id", handed).outs["handed_over"] is True
    state = up(octavia, OLD[:3], handed)
    assert octavia.puts == [] and sorted(state["member_ids"].values()) == sorted(ids)
    assert state["last_change"]["adopted"] == 3 and state["handed_over"] is True
    state = up(octavia, OLD[:2], state)  # adopted: the set's own from now on
    assert set(octavia.members("p1")) == endpoints(OLD[:2])


def test_straight_from_per_member_to_batch_is_refused_before_any_write(octavia):
    """Without the handover, the engine would delete the adopted members with their per-member resources: the set
    refuses, naming the members and the fix, and writes nothing."""
    for a in OLD[:3]:
        octavia.add_member("p1", a, name=f"n-{a}", tags=["production", IDENTITY])
    with pytest.raises(HandoverSkipped) as caught:
        up(octavia, OLD[:3])
    message = str(caught.value)
    assert f"{OLD[0]}:6443" in message and "memberUpdates: handover" in message and "Nothing was written" in message
    assert octavia.puts == [] and set(octavia.members("p1")) == endpoints(OLD[:3])
    born_batch = up(octavia, [NEW[0]], None)  # a set created under batch never adopts, even on a later update
    with pytest.raises(HandoverSkipped):
        up(octavia, [NEW[0], OLD[0]], born_batch)


def test_a_set_recorded_before_the_handover_input_existed_shows_no_change(octavia):
    state = up(octavia, OLD[:3])
    del state["handover"], state["handed_over"]
    assert not MemberSetProvider().diff("id", state, bag(OLD[:3])).changes
    assert MemberSetProvider().diff("id", state, bag(OLD[:3], handover=True)).changes  # the flag alone changes it


def test_a_handover_set_deletes_nothing_and_a_set_that_owns_members_cannot_go_back_to_handover(octavia):
    octavia.add_member("p1", OLD[0], name="kept", tags=[IDENTITY])
    handed = up(octavia, [], handover=True)
    MemberSetProvider().delete("id", handed)
    assert octavia.puts == [] and set(octavia.members("p1")) == endpoints(OLD[:1])
    owning = up(octavia, [NEW[0]])
    with pytest.raises(MemberSetConflict) as caught:
        up(octavia, [], owning, handover=True)
    assert "moving back from batch is not supported" in str(caught.value)
    assert set(octavia.members("p1")) == endpoints(OLD[:1] + NEW[:1])


def test_refresh_sees_a_member_removed_out_of_band_and_the_next_update_creates_it_again(octavia):
    state = up(octavia, OLD[:3])
    octavia.delete_out_of_band("p1", OLD[1])
    provider = MemberSetProvider()
    refreshed = {**provider.read("id", state).outs, "__provider": "x"}
    assert f"n-{OLD[1]}" not in refreshed["member_ids"]
    assert not provider.diff("id", state, bag(OLD[:3])).changes  # without a refresh nothing is known
    state = up(octavia, OLD[:3], refreshed)
    assert octavia.puts[-1]["created"] == 1 and octavia.puts[-1]["updated"] == 0
    assert set(octavia.members("p1")) == endpoints(OLD[:3])


def test_refresh_sees_a_weight_changed_out_of_band(octavia):
    state = up(octavia, OLD[:3])
    octavia.pools["p1"][state["member_ids"][f"n-{OLD[0]}"]].weight = 0
    refreshed = {**MemberSetProvider().read("id", state).outs, "__provider": "x"}
    assert MemberSetProvider().diff("id", refreshed, bag(OLD[:3])).changes


def test_a_pool_gone_makes_the_set_gone_on_refresh_and_its_delete_a_no_op(octavia):
    state = up(octavia, OLD[:3])
    del octavia.pools["p1"]
    assert MemberSetProvider().read("id", state).id == ""
    MemberSetProvider().delete("id", state)


def test_under_ovn_a_new_member_online_before_its_check_is_held_and_the_kept_ones_are_not(octavia):
    octavia.ovn_early_online = True  # the ovn provider: ONLINE as soon as created, judged by its monitor later
    olds = up(octavia, OLD[:3], hold_seconds=20)
    start = octavia.clock.now
    olds = up(octavia, OLD[:2], olds, hold_seconds=20)  # a removal only: the kept members were judged before
    assert octavia.clock.now - start < 20
    octavia.dead.add(NEW[0])
    with pytest.raises(ReadinessTimeout) as caught:
        up(octavia, [NEW[0]], olds, hold_seconds=20, timeout_seconds=40)
    assert "ACTIVE/ERROR" in str(caught.value)
    assert endpoints(OLD[:2]) <= set(octavia.members("p1"))  # the early ONLINE removed nothing


def test_a_member_an_interrupted_update_created_and_nobody_wants_any_more_is_the_sets_and_removed(octavia):
    olds = up(octavia, OLD[:3])
    octavia.kill_after_puts = len(octavia.puts) + 1
    with pytest.raises(Killed):
        up(octavia, OLD[:3] + NEW[:1], olds)  # created, never recorded
    up(octavia, OLD[:3], {**olds, "members": bag(OLD[:3] + NEW[:1])["members"]})  # the config changed back
    assert set(octavia.members("p1")) == endpoints(OLD[:3])


@pytest.mark.parametrize("ovn_early_online", [False, True])
def test_members_an_interrupted_create_made_are_waited_for_and_held_when_the_create_runs_again(octavia,
                                                                                              ovn_early_online):
    """A create killed once Octavia accepted its batch: the members exist with the set's tag, the engine recorded
    nothing and runs the create again, which has nothing to write. Those members were never seen ready, so it waits
    for them (and, under ovn, holds their early ONLINE) as if it had just created them: a dead one fails the create
    instead of being counted ready (the ``unseen`` rule of ha_endpoint.readiness.reconcile)."""
    octavia.ovn_early_online = ovn_early_online
    octavia.dead.add(OLD[1])
    octavia.kill_after_puts = len(octavia.puts) + 1
    with pytest.raises(Killed):
        up(octavia, OLD[:3], hold_seconds=20)
    written = len(octavia.puts)
    with pytest.raises(ReadinessTimeout) as caught:
        up(octavia, OLD[:3], hold_seconds=20, timeout_seconds=40)
    dead = next(m.id for m in octavia.pools["p1"].values() if m.address == OLD[1])
    assert f"member {dead} in pool {POOL_NAME} (p1) is ACTIVE/ERROR" in str(caught.value)
    assert len(octavia.puts) == written  # nothing written again: the members were created once
    octavia.dead.clear()
    octavia.pools["p1"][dead].online_at = octavia.clock.now
    start = octavia.clock.now
    state = up(octavia, OLD[:3], hold_seconds=20)
    assert set(state["statuses"].values()) == {"ACTIVE/ONLINE"} and len(octavia.puts) == written
    assert octavia.clock.now - start >= (20 if ovn_early_online else 0)


def test_a_member_of_the_stack_the_set_never_owned_and_nobody_wants_is_left_alone(octavia):
    """Tagged with the stack's identity but neither recorded nor created by this set: not provably the set's own."""
    stranger = octavia.add_member("p1", "10.10.1.250", name="other", tags=[IDENTITY])
    olds = up(octavia, OLD[:3])
    up(octavia, OLD[:2], olds)
    listed = octavia.members("p1")
    assert listed[("10.10.1.250", 6443)].id == stranger and set(listed) == endpoints(OLD[:2]) | {("10.10.1.250", 6443)}


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_the_batch_goes_to_octavia_as_its_api_says_through_the_real_openstacksdk(monkeypatch):
    """``PUT /v2/lbaas/pools/{id}/members`` with ``{"members": [...]}``, ``additive_only=true`` for the stages that
    must delete nothing; Octavia's 409 (PENDING_UPDATE) is a transient failure, a missing pool a precise one."""
    from octavia_http_fake import FakeOctaviaHTTP
    from ha_endpoint.cloud.errors import TransientFetchError

    with FakeOctaviaHTTP() as api:
        monkeypatch.setattr(cloud, "connect", api.connect)
        api.add_members("p1", 1)
        source = cloud.OctaviaStatusSource()
        entry = {"address": "10.10.1.10", "protocol_port": 6443, "name": "cp-0", "weight": 1, "tags": [IDENTITY]}
        source.put_members("p1", [entry], additive_only=True)
        source.put_members("p1", [], additive_only=False)
        assert [(b["pool"], b["query"], b["body"]) for b in api.batches] == [
            ("p1", {"additive_only": ["true"]}, {"members": [entry]}), ("p1", {}, {"members": []})]
        assert api.requests[-1] == "PUT /v2/lbaas/pools/p1/members"
        api.failures.append(409)
        with pytest.raises(TransientFetchError, match="HTTP 409"):
            source.put_members("p1", [entry], additive_only=True)
        with pytest.raises(FetchFailed, match="updating the members of pool gone in one batch failed: HTTP 404"):
            source.put_members("gone", [entry], additive_only=True)
        source.close()


def test_the_provider_is_stored_as_a_reference_to_its_class_holding_no_credentials():
    import base64

    import dill
    from pulumi.dynamic.dynamic import serialize_provider

    raw = base64.b64decode(serialize_provider(MemberSetProvider()))
    assert b"ha_endpoint.readiness.member_set" in raw and len(raw) < 200
    assert isinstance(dill.loads(raw), MemberSetProvider)
    assert MemberSetProvider.serialize_as_secret_always is False


@pytest.mark.parametrize("change, failure", [
    ({"members": [{"name": "a", "address": "10.0.0.1", "protocol_port": 6443},
                  {"name": "b", "address": "10.0.0.1", "protocol_port": 6443}]}, "members[1]"),
    ({"members": [{"name": "a", "address": "not-an-ip", "protocol_port": 6443}]}, "members[0].address"),
    ({"members": [{"name": "a", "address": "10.0.0.1", "protocol_port": 70000}]}, "members[0].protocol_port"),
    ({"drain_seconds": -1}, "drain_seconds"),
])
def test_bad_inputs_are_refused_at_preview_naming_the_input(change, failure):
    result = MemberSetProvider().check({}, bag(OLD[:1], **change))
    assert [f.property for f in result.failures] == [failure]


def taking_out(addresses, out, **overrides):
    """The bag of ``addresses`` with the members at ``out`` taken out (``enabled: false``: ``admin_state_up`` false)."""
    props = bag(addresses, **overrides)
    for entry in props["members"]:
        if entry["address"] in out:
            entry["admin_state_up"] = False
    return props


def up_taking_out(octavia, addresses, out, olds=None, **overrides):
    provider, news = MemberSetProvider(), taking_out(addresses, out, **overrides)
    if olds is None:
        return {**provider.create(news).outs, "__provider": "x"}
    assert provider.diff("id", olds, news).changes
    return {**provider.update("id", olds, news).outs, "__provider": "x"}


def test_a_member_taken_out_is_written_admin_down_and_not_waited_for(octavia):
    """Issue 46: the entry of a member the configuration takes out creates it administratively down (it never
    serves), and the set returns once the members in service are ready, without waiting for its ONLINE."""
    octavia.online_after = 30.0
    state = up_taking_out(octavia, OLD[:3], {OLD[2]})
    entries = {e["address"]: e for e in octavia.puts[0]["entries"]}
    assert entries[OLD[2]]["admin_state_up"] is False and "admin_state_up" not in entries[OLD[0]]
    assert state["statuses"] == {f"n-{OLD[0]}": "ACTIVE/ONLINE", f"n-{OLD[1]}": "ACTIVE/ONLINE",
                                 f"n-{OLD[2]}": "ACTIVE/OFFLINE"}
    assert state["taken_out"] == [f"n-{OLD[2]}"]
    assert not any((OLD[2], 6443) in frame.serving("p1") for frame in octavia.timeline)
    assert octavia.clock.now < 60  # returned once the two in service were ONLINE, never waiting for the third


def test_the_configuration_decides_each_members_admin_state(octavia):
    """Issue 46: the configuration is the source of truth for the admin state. A member in service that someone set
    admin down by hand is brought up; one the configuration takes out that someone brought up is set down again; and
    a refresh that sees either makes the next `up` an update."""
    olds = up_taking_out(octavia, OLD[:3], {OLD[2]})
    octavia.update_member("p1", olds["member_ids"][f"n-{OLD[0]}"], {"admin_state_up": False})
    octavia.clock.sleep(octavia.apply_seconds)
    octavia.update_member("p1", olds["member_ids"][f"n-{OLD[2]}"], {"admin_state_up": True})
    octavia.clock.sleep(octavia.apply_seconds + 10)
    refreshed = {**MemberSetProvider().read("id", olds).outs, "__provider": "x"}
    assert refreshed["taken_out"] == [f"n-{OLD[0]}"]
    state = up_taking_out(octavia, OLD[:3], {OLD[2]}, refreshed)
    listed = octavia.members("p1")
    assert listed[(OLD[0], 6443)].is_admin_state_up and not listed[(OLD[2], 6443)].is_admin_state_up
    assert state["taken_out"] == [f"n-{OLD[2]}"] and state["last_change"]["updated"] == 2
    assert octavia.timeline[-1].serving("p1") == endpoints(OLD[:2])


@pytest.mark.parametrize("rule", [True, False])
def test_under_ovn_a_member_taken_out_stays_out_when_later_writes_rebuild_the_backends(ovn, monkeypatch, rule):
    """Issue 46 under the ovn provider: a member in service taken out by an update leaves the backends (admin down:
    the provider ignores the weight) and, set admin down once more after the provider's ERROR (its weight kept), stays
    out when the next member write rebuilds the backends. Without that second write (``rule`` false), the next write
    takes it back."""
    if not rule:
        from ha_endpoint.readiness import held_out
        monkeypatch.setattr(held_out.Watch, "look", lambda self, listed, now: None)
    olds = up(ovn, OLD[:3], admin_down=True)
    start = ovn.clock.now
    olds = up_taking_out(ovn, OLD[:3], {OLD[1]}, olds, admin_down=True)
    up_taking_out(ovn, OLD[:3] + NEW[:1], {OLD[1]}, olds, admin_down=True)  # a later write: a member added
    assert out_for_good(ovn, start, [OLD[1]]) == {OLD[1]: rule}
    if rule:
        assert [(u["member"], u.get("weight"), u["admin_state_up"]) for u in ovn.member_updates] == [
            (olds["member_ids"][f"n-{OLD[1]}"], None, False)]  # its weight kept
        assert ovn.members("p1")[(OLD[1], 6443)].weight == 1


def test_under_ovn_a_member_put_back_is_created_again_serves_and_is_waited_for(ovn):
    """Issue 46, the way back: a member taken out (and kept out past the provider's ERROR) put back with ``enabled:
    true``. The ovn provider keeps a member it holds OFFLINE out of the backends when it is only set admin up again
    (``OvnProviderHelper.member_update`` with a health monitor), so the set deletes it and creates it again: it is
    listed admin up and ONLINE, serves, and was held and waited for as a new member; the others never stopped."""
    olds = up(ovn, OLD[:3], admin_down=True, hold_seconds=10)
    olds = up_taking_out(ovn, OLD[:3], {OLD[1]}, olds, admin_down=True, hold_seconds=10)
    ovn.clock.sleep(30)
    assert ovn.members("p1")[(OLD[1], 6443)].operating_status in ("OFFLINE", "ERROR")
    out_id = olds["member_ids"][f"n-{OLD[1]}"]
    start = ovn.clock.now
    state = up(ovn, OLD[:3], olds, admin_down=True, hold_seconds=10)
    listed = ovn.members("p1")[(OLD[1], 6443)]
    assert (listed.is_admin_state_up, listed.provisioning_status, listed.operating_status) == (True, "ACTIVE",
                                                                                                  "ONLINE")
    assert state["member_ids"][f"n-{OLD[1]}"] == listed.id != out_id and state["taken_out"] == []
    assert state["statuses"][f"n-{OLD[1]}"] == "ACTIVE/ONLINE" and listed.id in state["owned_ids"]
    assert [d["member"] for d in ovn.member_deletes] == [out_id]
    assert ovn.timeline[-1].serving("p1") == endpoints(OLD[:3])
    assert ovn.clock.now - start >= 10  # its early ONLINE held, as a new member's
    assert all({(OLD[0], 6443), (OLD[2], 6443)} <= frame.serving("p1") for frame in since(ovn, start))
    ovn.clock.sleep(60)
    assert (OLD[1], 6443) in ovn.members("p1") and ovn.timeline[-1].serving("p1") == endpoints(OLD[:3])


def test_under_ovn_only_setting_a_member_put_back_admin_up_leaves_it_out_for_good(ovn, monkeypatch):
    """What the provider does to a member it holds OFFLINE that is only set admin up again (the fake as it behaves,
    and what the set avoids): listed OFFLINE and out of the backends however long one waits."""
    olds = up(ovn, OLD[:3], admin_down=True)
    olds = up_taking_out(ovn, OLD[:3], {OLD[1]}, olds, admin_down=True)
    ovn.clock.sleep(30)
    ovn.update_member("p1", olds["member_ids"][f"n-{OLD[1]}"], {"admin_state_up": True})
    ovn.clock.sleep(120)
    listed = ovn.members("p1")[(OLD[1], 6443)]
    assert (listed.is_admin_state_up, listed.operating_status) == (True, "OFFLINE")
    assert (OLD[1], 6443) not in ovn.timeline[-1].serving("p1")

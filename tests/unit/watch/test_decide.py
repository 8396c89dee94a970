"""The watcher's rules as properties (components/ha_endpoint/watch/decide.py): stable polls, the published set,
fail-open; and the record's addresses."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ha_endpoint.watch.decide import Action, Health, Streak, Thresholds, decide, record_addresses
from tests.budget import examples

ZONES = ["az1", "az2", "az3", "az4"]
UP, DOWN = Health(True, "1/1 members ONLINE"), Health(False, "no ONLINE member in pool 6443")

polls = st.lists(st.booleans(), max_size=8)
thresholds = st.builds(Thresholds, st.integers(1, 4), st.integers(1, 4))


def streak_of(history: list[bool]) -> Streak:
    streak = Streak()
    for healthy in history:
        streak = streak.after(UP if healthy else DOWN)
    return streak


@st.composite
def situations(draw):
    zones = draw(st.lists(st.sampled_from(ZONES), min_size=1, max_size=4, unique=True))
    streaks = {zone: streak_of(draw(polls)) for zone in zones}
    addresses = {zone: draw(st.one_of(st.none(), st.just(f"172.24.4.{10 + ZONES.index(zone)}"))) for zone in zones}
    published = frozenset(draw(st.sets(st.sampled_from(zones))))
    return published, streaks, addresses, draw(thresholds)


@settings(max_examples=examples(400), deadline=None)
@given(situations())
def test_a_zone_leaves_only_stably_unhealthy_and_comes_back_only_stably_healthy_with_an_address(situation):
    published, streaks, addresses, limits = situation
    following, _ = decide(published, streaks, addresses, limits)
    for zone in published - following:
        assert limits.stably(streaks[zone]) is False
    for zone in following - published:
        assert limits.stably(streaks[zone]) is True and addresses[zone]


@settings(max_examples=examples(400), deadline=None)
@given(situations())
def test_the_last_published_zone_is_never_removed_fail_open(situation):
    published, streaks, addresses, limits = situation
    following, actions = decide(published, streaks, addresses, limits)
    if published:
        assert following
    if any(action.kind == "fail-open" for action in actions):
        assert following == published and all(action.kind == "fail-open" for action in actions)


@settings(max_examples=examples(400), deadline=None)
@given(situations())
def test_the_actions_are_exactly_the_changes_and_a_second_decision_changes_nothing(situation):
    published, streaks, addresses, limits = situation
    following, actions = decide(published, streaks, addresses, limits)
    changed = {(action.kind, action.zone) for action in actions if action.kind != "fail-open"}
    assert changed == {("remove", zone) for zone in published - following} | \
        {("restore", zone) for zone in following - published}
    again, more = decide(following, streaks, addresses, limits)
    assert again == following and not [action for action in more if action.kind != "fail-open"]


@settings(max_examples=examples(300), deadline=None)
@given(polls, thresholds)
def test_one_poll_of_the_other_kind_restarts_the_count(history, limits):
    streak = streak_of(history)
    flipped = streak.after(DOWN if streak.healthy else UP)
    assert flipped.count == 1 and flipped.healthy is not streak.healthy
    if streak.healthy is not None:
        expected = streak.count >= (limits.healthy_polls if streak.healthy else limits.unhealthy_polls)
        assert (limits.stably(streak) is not None) is expected


def test_a_lost_zone_leaves_after_the_unhealthy_polls_and_returns_after_the_healthy_ones():
    limits, addresses = Thresholds(unhealthy_polls=3, healthy_polls=2), {z: f"172.24.4.{n}" for n, z in
                                                                          enumerate(ZONES[:3], 10)}
    published = frozenset(ZONES[:3])
    streaks = {zone: streak_of([True]) for zone in published}
    log = []
    for poll, az2 in enumerate([False, False, False, True, True]):
        streaks["az2"] = streaks["az2"].after(UP if az2 else DOWN)
        published, actions = decide(published, streaks, addresses, limits)
        log += [(poll, action.line()) for action in actions]
    assert log == [(2, "removing zone az2: no ONLINE member in pool 6443"), (4, "restoring zone az2: 1/1 members ONLINE")]
    assert record_addresses(published, addresses) == ["172.24.4.10", "172.24.4.11", "172.24.4.12"]


def test_when_every_zone_is_down_the_record_keeps_them_all():
    limits, addresses = Thresholds(1, 1), {"az1": "172.24.4.10", "az2": "172.24.4.11"}
    down = {zone: streak_of([False]) for zone in addresses}
    following, actions = decide(frozenset(addresses), down, addresses, limits)
    assert following == frozenset(addresses)
    assert [action.line() for action in actions] == [
        "keeping zone az1: no ONLINE member in pool 6443 (every published zone is unhealthy: failing open)",
        "keeping zone az2: no ONLINE member in pool 6443 (every published zone is unhealthy: failing open)"]


def test_thresholds_below_one_are_refused():
    with pytest.raises(ValueError, match="at least 1"):
        Thresholds(unhealthy_polls=0)
    assert Action("remove", "az1", "gone").line() == "removing zone az1: gone"

"""The failover figures (tests/e2e/failover.py) that the e2e asserts and the README's table prints: what counts as
a lost request, the longest time without an answer, a request still waiting at the loop's end, the goal's verdict."""

from tests.e2e.failover import Figures, Request, goal


def figures(*requests, cut=False):
    return Figures("curl", [Request(*r) for r in requests], cut)


def test_a_failure_followed_by_an_answer_is_retried_not_lost():
    row = figures((0, 1, True), (1.5, 4.5, False), (5, 5.2, True)).row(lost_at=1.0, duration=6)
    assert (row["failed"], row["lost"]) == (1, 0)
    assert row["longest_gap"] == 4.2           # from the answer at 1.0 to the answer at 5.2
    assert round(row["steady_after"], 1) == 4.2  # answered steadily again 4.2 s after the loss


def test_failures_after_the_last_answer_are_lost():
    row = figures((0, 1, True), (1.5, 4.5, False), (5, 8, False)).row(lost_at=1.0, duration=10)
    assert row["lost"] == 2 and row["steady_after"] is None
    assert row["longest_gap"] == 9.0           # until the loop's end


def test_a_request_cut_at_the_loops_end_says_how_long_it_had_waited():
    row = figures((0, 1, True), cut=True).row(lost_at=1.0, duration=35)
    assert row["cut"] == 34.0
    assert goal(row, ttl=30).startswith("not met: still waiting 34 s at the loop's end")


def test_the_goal_is_ttl_plus_15_seconds_and_nothing_lost():
    assert goal(figures((0, 1, True), (1, 40, True)).row(1.0, 41), ttl=30).startswith("met")
    assert goal(figures((0, 1, True), (1, 47, True)).row(1.0, 48), ttl=30).startswith("not met: 46 s")
    assert goal(figures((0, 1, True), (1, 2, False)).row(1.0, 3), ttl=30).startswith("not met: 1 request")
    short_cut = figures((0, 1, True), (1, 30, True), cut=True).row(1.0, 33)   # waiting 3 s: a bounded client's
    assert goal(short_cut, ttl=30).startswith("met")

"""The local cloud gives the OVN provider's load balancers a reset instead of silence (localcloud.dataplane.lb_reject):
which rows the reconciler sets, and which it leaves alone."""

from localcloud.dataplane.lb_reject import PROVIDER_MARK, unset


def row(uuid, options=None, provider=True):
    return {"uuid": uuid, "external_ids": {PROVIDER_MARK: "10.0.1.5"} if provider else {"owner": "someone"},
            "options": options or {}}


def test_a_provider_row_without_reject_is_set():
    assert unset([row("a")]) == ["a"]


def test_an_explicit_choice_is_kept_either_way():
    assert unset([row("t", {"reject": "true"}), row("f", {"reject": "false"})]) == []


def test_other_options_do_not_count_as_a_choice():
    assert unset([row("a", {"affinity_timeout": "60"})]) == ["a"]


def test_rows_the_provider_did_not_make_are_never_touched():
    assert unset([row("x", provider=False), row("a")]) == ["a"]

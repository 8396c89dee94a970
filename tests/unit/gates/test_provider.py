"""MemberReadiness's provider called directly, as the engine's dynamic-provider host calls it, with a fake
openstacksdk connection injected through the Octavia backend's member client (``ha_endpoint.backends.octavia.status.connect``); and its serialization."""

from __future__ import annotations

import base64
import traceback

import dill
import pytest
from pulumi.dynamic.dynamic import serialize_provider
from pulumi.output import Unknown

from ha_endpoint.backends.octavia import status
from ha_endpoint.gates import provider
from ha_endpoint.gates.errors import FetchFailed, MemberFailed, MemberGone, ReadinessTimeout
from ha_endpoint.gates.inputs import InputError
from ha_endpoint.gates.provider import UNKNOWN, MemberReadinessProvider
from keystone_http_fake import FakeKeystoneHTTP
from octavia_http_fake import FakeOctaviaHTTP
from gate_fakes import FakeClock, FakeCloud, http_error

SENTINELS = {
    "OS_CLOUD": "sentinel-cloud-name",
    "OS_PASSWORD": "sentinel-password-3f9a",
    "OS_AUTH_URL": "http://127.0.0.1:5999/sentinel-auth",
    "OS_USERNAME": "sentinel-user",
    "OS_CLIENT_CONFIG_FILE": "/tmp/sentinel-clouds.yaml",
}


@pytest.fixture
def fake(monkeypatch):
    cloud_ = FakeCloud()
    clock = FakeClock()
    monkeypatch.setattr(status, "connect", cloud_.connect)
    monkeypatch.setattr(provider, "_now", clock)
    monkeypatch.setattr(provider, "_sleep", clock.sleep)
    cloud_.clock = clock
    return cloud_


def props(members=("p1-m000", "p1-m001"), **overrides):
    bag = {
        "loadbalancer_id": "lb-1",
        "pools": {"ep-az1-6443-pool": {"pool_id": "p1", "member_ids": list(members), "monitored": True}},
        "require": "online",
        "timeout_seconds": 30,
        "poll_interval_seconds": 1.0,
        "cloud": None,
        "__provider": "serialized-provider",
    }
    bag.update(overrides)
    return bag


def test_create_waits_until_every_member_is_online_and_records_what_it_saw(fake):
    fake.set_members("p1", 2, oper="OFFLINE")

    def online_after_three_polls(cloud_):
        if len(cloud_.member_list_calls) == 3:
            for member_id, (prov, _oper, weight) in list(cloud_.pools["p1"].items()):
                cloud_.pools["p1"][member_id] = (prov, "ONLINE", weight)

    fake.on_members = online_after_three_polls
    result = MemberReadinessProvider().create(props())
    assert result.id.startswith("ready-")
    outs = result.outs
    assert "__provider" not in outs
    assert outs["ready"] is True and outs["all_online"] is True
    assert outs["ready_member_ids"] == ["p1-m000", "p1-m001"]
    assert outs["statuses"] == {"p1-m000": "ACTIVE/ONLINE", "p1-m001": "ACTIVE/ONLINE"}
    # online at the third poll, ready in two consecutive polls (stable_polls absent: the default, 2) at the fourth
    assert outs["waited_seconds"] == 3.0 and outs["polls"] == 4 and outs["api_calls"] == 4
    assert outs["pools"] == props()["pools"] and outs["loadbalancer_id"] == "lb-1"
    assert len(fake.connections) == 1 and fake.connections[0].closed


def test_create_fails_with_the_timeout_message(fake):
    fake.set_members("p1", 2)
    fake.pools["p1"]["p1-m001"] = ("ACTIVE", "ERROR", 1)
    fake.lb = ("ACTIVE", "DEGRADED")
    with pytest.raises(ReadinessTimeout) as caught:
        MemberReadinessProvider().create(props(timeout_seconds=5))
    assert str(caught.value) == (
        "load balancer lb-1: 1 of 2 members not ready after 5s (requirement: provisioning ACTIVE and operating "
        "ONLINE): member p1-m001 in pool ep-az1-6443-pool (p1) is ACTIVE/ERROR. Load balancer lb-1 is "
        "ACTIVE/DEGRADED."
    )
    assert fake.connections[0].closed


def test_create_fails_fast_on_provisioning_error(fake):
    fake.set_members("p1", 2)
    fake.pools["p1"]["p1-m000"] = ("ERROR", "OFFLINE", 1)
    with pytest.raises(MemberFailed, match=r"^member p1-m000 in pool ep-az1-6443-pool \(p1\) failed"):
        MemberReadinessProvider().create(props())
    assert fake.member_list_calls == ["p1"]


def test_create_survives_409_5xx_and_an_expired_token(fake):
    fake.set_members("p1", 2)
    fake.schedule["members"] = [http_error(409), http_error(503), http_error(401)]
    outs = MemberReadinessProvider().create(props()).outs
    assert outs["transient_errors"] == 2 and outs["reauths"] == 1
    assert len(fake.connections) == 2 and fake.tokens == 1, "re-auth rebuilds the connection and gets a token"


def test_provisioned_mode_accepts_offline_members(fake):
    fake.set_members("p1", 2, oper="OFFLINE")
    outs = MemberReadinessProvider().create(props(require="provisioned", stable_polls=1)).outs
    assert outs["ready"] is True and outs["all_online"] is False and outs["polls"] == 1


def test_invalid_inputs_are_reported_by_name():
    with pytest.raises(InputError, match=r"^require: must be 'online' or 'provisioned', got 'serving'$"):
        MemberReadinessProvider().create(props(require="serving"))


def test_diff_reports_a_change_only_when_what_is_waited_for_changes():
    p = MemberReadinessProvider()
    olds = {**props(), "ready": True, "statuses": {}}
    assert p.diff("id", olds, props(members=("p1-m001", "p1-m000"))).changes is False
    assert p.diff("id", olds, props(timeout_seconds=900, poll_interval_seconds=5)).changes is False
    for news in (props(members=("p1-m000", "p1-m001", "p1-m002")), props(require="provisioned"),
                 props(loadbalancer_id="lb-2"), props(cloud="other"), props(members=("p1-m000",)),
                 props(members=[UNKNOWN]), props(pools=UNKNOWN)):
        diff = p.diff("id", olds, news)
        assert diff.changes is True and diff.replaces == [] and diff.delete_before_replace is False


def test_update_waits_for_the_new_member_set(fake):
    fake.set_members("p1", 3)
    outs = MemberReadinessProvider().update("id", props(), props(members=("p1-m001", "p1-m002"))).outs
    assert outs["ready_member_ids"] == ["p1-m001", "p1-m002"]


def test_read_and_delete_make_no_api_call(fake):
    p = MemberReadinessProvider()
    state = {**props(), "ready": True}
    read = p.read("ready-1", state)
    assert read.id == "ready-1" and read.outs["ready"] is True and "__provider" not in read.outs
    p.delete("ready-1", state)
    assert fake.connections == []


def test_check_reports_bad_inputs_and_tolerates_unknowns():
    p = MemberReadinessProvider()
    assert p.check({}, props()).failures == []
    failures = p.check({}, props(timeout_seconds=-1)).failures
    assert [(f.property, f.reason) for f in failures] == [("timeout_seconds", "must be a number of seconds > 0, got -1")]
    dup = {"a": {"pool_id": "p1", "member_ids": [], "monitored": True},
           "b": {"pool_id": "p1", "member_ids": [], "monitored": True}}
    assert [f.property for f in p.check({}, props(pools=dup)).failures] == ["pools.b.pool_id"]
    preview = props(loadbalancer_id=UNKNOWN, pools={"x": {"pool_id": UNKNOWN, "member_ids": UNKNOWN}})
    assert p.check({}, preview).failures == []
    assert [f.property for f in p.check({}, {**preview, "require": "bogus"}).failures] == ["require"]
    # what the engine's dynamic-provider host hands check() in a preview: Unknown objects inside lists
    members_unknown = props(pools={"x": {"pool_id": "p1", "member_ids": [Unknown(), Unknown()], "monitored": True}})
    assert p.check({}, members_unknown).failures == []
    assert p.check({}, props(timeout_seconds=Unknown(), require=Unknown())).failures == []
    assert p.diff("id", props(), members_unknown).changes is True


def test_provider_pickles_by_reference_without_credentials(monkeypatch, fake):
    for key, value in SENTINELS.items():
        monkeypatch.setenv(key, value)
    instance = MemberReadinessProvider()
    before = serialize_provider(instance)
    fake.set_members("p1", 2)
    instance.create(props())  # using the provider must not leave anything in it
    after = serialize_provider(instance)
    assert before == after
    raw = base64.b64decode(after)
    assert b"ha_endpoint.gates.provider" in raw and b"MemberReadinessProvider" in raw
    assert len(raw) < 200, "pickled by reference: no code, no captured objects"
    for value in SENTINELS.values():
        assert value.encode() not in raw
    restored = dill.loads(raw)
    assert isinstance(restored, MemberReadinessProvider) and vars(restored) == {}
    assert MemberReadinessProvider.serialize_as_secret_always is False


def test_a_provider_reference_from_before_the_rename_still_resolves_and_is_re_recorded():
    """Stacks deployed when the package was `components` hold `components.readiness.provider.MemberReadinessProvider`:
    the repository's compatibility modules resolve it (so such resources can be deleted), and the diff reports the
    old reference as an in-place update that re-records it under ha_endpoint."""
    import base64
    import sys
    from pathlib import Path

    import dill

    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    from components.readiness import drain as old_drain, provider as old_provider  # noqa: E402
    from ha_endpoint.gates.drain import MemberDrainProvider
    from ha_endpoint.gates.provider import stale_reference

    assert old_provider.MemberReadinessProvider is MemberReadinessProvider
    assert old_drain.MemberDrainProvider is MemberDrainProvider
    MemberReadinessProvider.__module__ = "components.readiness.provider"  # as the state of such a stack holds it
    try:
        raw = dill.dumps(MemberReadinessProvider())
    finally:
        MemberReadinessProvider.__module__ = "ha_endpoint.gates.provider"
    assert b"components.readiness.provider" in raw
    legacy = base64.b64encode(raw).decode()
    assert isinstance(dill.loads(base64.b64decode(legacy)), MemberReadinessProvider)
    current = base64.b64encode(dill.dumps(MemberReadinessProvider())).decode()
    assert stale_reference({"__provider": legacy}, {"__provider": current})
    assert not stale_reference({"__provider": current}, {"__provider": current})


@pytest.mark.parametrize("module, name", [("provider", "MemberReadinessProvider"), ("drain", "MemberDrainProvider"),
                                          ("put_back", "PutBackProvider")])
def test_a_provider_reference_from_before_the_gates_folder_still_resolves(module, name):
    """Stacks deployed when the gates' folder was `readiness` hold `ha_endpoint.readiness.<module>.<class>` (the dev
    state of 2026-12-02 holds the provider's and the drain's): the compatibility modules resolve it to the current
    class, and the diff reports the old reference as an in-place update that re-records it under `gates`."""
    import base64
    import importlib

    import dill

    from ha_endpoint.gates.provider import stale_reference

    cls = getattr(importlib.import_module(f"ha_endpoint.gates.{module}"), name)
    cls.__module__ = f"ha_endpoint.readiness.{module}"  # as the state of such a stack holds it
    try:
        raw = dill.dumps(cls())
    finally:
        cls.__module__ = f"ha_endpoint.gates.{module}"
    assert f"ha_endpoint.readiness.{module}".encode() in raw
    legacy = base64.b64encode(raw).decode()
    assert type(dill.loads(base64.b64decode(legacy))) is cls
    current = base64.b64encode(dill.dumps(cls())).decode()
    assert b"ha_endpoint.gates." + module.encode() in base64.b64decode(current)
    assert stale_reference({"__provider": legacy}, {"__provider": current})


@pytest.mark.parametrize("given, polls", [(None, 2), (1, 1), (3, 3), (2.0, 2)])  # the engine sends numbers as floats
def test_stable_polls_is_optional_and_defaults_to_two(fake, given, polls):
    fake.set_members("p1", 2)
    bag = props() if given is None else props(stable_polls=given)
    assert MemberReadinessProvider().create(bag).outs["polls"] == polls


def test_a_flapping_member_does_not_open_the_gate_until_it_is_stable(fake):
    fake.set_members("p1", 2)
    flips = iter(["ERROR", "ONLINE", "ERROR", "ONLINE", "ONLINE", "ONLINE"])

    def flap(cloud_):
        prov, _oper, weight = cloud_.pools["p1"]["p1-m001"]
        cloud_.pools["p1"]["p1-m001"] = (prov, next(flips, "ONLINE"), weight)

    fake.on_members = flap
    outs = MemberReadinessProvider().create(props(stable_polls=3)).outs
    assert outs["polls"] == 6 and outs["statuses"]["p1-m001"] == "ACTIVE/ONLINE"


def test_check_reports_a_bad_stable_polls_and_tolerates_an_unknown_one():
    p = MemberReadinessProvider()
    for bad in (0, 1.5, True, "2"):
        failures = p.check({}, props(stable_polls=bad)).failures
        assert [(f.property, f.reason) for f in failures] == [
            ("stable_polls", f"must be a whole number of polls >= 1, got {bad!r}")]
    assert p.check({}, props(stable_polls=Unknown(), pools=UNKNOWN)).failures == []
    assert p.check({}, props(stable_polls=4)).failures == []


def test_stable_polls_changes_no_recorded_gate():
    """A gate recorded before the input existed, or with another value, needs no new wait."""
    p = MemberReadinessProvider()
    recorded = {k: v for k, v in props().items() if k != "stable_polls"}
    assert p.diff("id", {**recorded, "ready": True}, props(stable_polls=2)).changes is False
    assert p.diff("id", {**props(stable_polls=2), "ready": True}, props(stable_polls=5)).changes is False


def test_create_fails_at_once_when_a_member_was_deleted_out_of_band(fake):
    fake.set_members("p1", 1)
    with pytest.raises(MemberGone) as caught:
        MemberReadinessProvider().create(props())
    assert str(caught.value) == (
        "member p1-m001 in pool ep-az1-6443-pool (p1) is gone: it is no longer in the pool's member list, so "
        "something outside this stack deleted it. Load balancer lb-1 is ACTIVE/ONLINE. It will never become ready: "
        "run `pulumi refresh` so that the stack forgets it, then `pulumi up` to create it again."
    )
    assert fake.member_list_calls == ["p1"]


def host_report(call) -> str:
    """What the engine's dynamic-provider host sends the CLI when a provider method raises: it aborts the call with
    ``traceback.format_exc()`` (pulumi/dynamic/__main__.py, ``_abort_with_traceback``)."""
    try:
        call()
    except Exception:
        return traceback.format_exc()
    raise AssertionError("the call did not fail")


def frames(report: str) -> list[str]:
    """The functions of a formatted traceback's frames, outermost first. Only the host's (here: the test's two) and
    the provider method's may appear: no keystoneauth, openstacksdk or waiter frames, and no chained traceback
    ("During handling of the above exception" / "The above exception was the direct cause")."""
    assert report.count("Traceback (most recent call last):") == 1, report
    return [line.rsplit(" in ", 1)[1] for line in report.splitlines() if line.startswith("  File ")]


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::PendingDeprecationWarning")
def test_a_refused_re_authentication_reaches_the_user_as_one_precise_message(monkeypatch):
    """Through the real openstacksdk and keystoneauth: Octavia rejects the token, Keystone refuses a new one (the
    project is gone). The host's report is the message with a short traceback of the provider's own frames: no
    keystoneauth or openstacksdk frames, no chained "During handling of the above exception" tracebacks."""
    clock = FakeClock()
    monkeypatch.setattr(provider, "_now", clock)
    monkeypatch.setattr(provider, "_sleep", clock.sleep)
    with FakeOctaviaHTTP() as octavia, FakeKeystoneHTTP(octavia.url) as keystone:
        monkeypatch.setattr(status, "connect", keystone.connect)
        octavia.add_members("p1", 2, oper="OFFLINE")
        octavia.failures.append(401)
        keystone.answers.extend([201, 404, 404])  # a token, then the project is deleted
        report = host_report(lambda: MemberReadinessProvider().create(props(members=("p1-m0000", "p1-m0001"))))
    message = (
        "load balancer lb-1: the cloud refused to re-authenticate (HTTP 404 Not Found: Could not find project: "
        "ha-endpoint.); check the clouds.yaml entry the stack uses (openstack:cloud, readiness.cloud or OS_CLOUD): "
        "the password or application credential, the project and domain names, and that the user still has the "
        "member and load-balancer_member roles in the project; then run `pulumi up` again"
    )
    assert report.splitlines()[-1] == f"ha_endpoint.gates.errors.AuthFailed: {message}"
    assert frames(report) == ["host_report", "<lambda>", "create"], report
    assert clock.now == 0, "at once"


def test_the_timeout_and_member_failures_reach_the_user_without_chained_tracebacks(fake):
    fake.set_members("p1", 2)
    fake.pools["p1"]["p1-m000"] = ("ERROR", "OFFLINE", 1)
    report = host_report(lambda: MemberReadinessProvider().create(props()))
    assert report.splitlines()[-1].startswith("ha_endpoint.gates.errors.MemberFailed: member p1-m000 in pool")
    assert frames(report) == ["host_report", "<lambda>", "create"], report
    fake.pools["p1"]["p1-m000"] = ("ACTIVE", "OFFLINE", 1)
    report = host_report(lambda: MemberReadinessProvider().update("id", props(), props(timeout_seconds=2)))
    assert report.splitlines()[-1].startswith("ha_endpoint.gates.errors.ReadinessTimeout: load balancer lb-1: ")
    assert frames(report) == ["host_report", "<lambda>", "update"], report


# on_not_ready: unpublish (a zone that does not become ready is recorded not ready; the update goes on)

def test_unpublish_records_a_dead_zone_not_ready_with_the_reason_before_the_timeout(fake):
    fake.set_members("p1", 2, oper="ERROR")
    outs = MemberReadinessProvider().create(props(timeout_seconds=600, on_not_ready="unpublish",
                                                  dead_after_seconds=20)).outs
    assert outs["ready"] is False and outs["all_online"] is False and outs["ready_member_ids"] == []
    assert outs["not_ready_reason"].startswith("load balancer lb-1: the zone is dead (every member has been down for")
    assert 20 <= fake.clock.now < 30, "recognised after dead_after_seconds, not the 600 s timeout"
    assert fake.connections[0].closed


@pytest.mark.parametrize("case", ["timeout", "member error", "member gone", "pool gone"])
def test_unpublish_records_every_way_a_zone_fails_to_serve(fake, case):
    fake.set_members("p1", 2, oper="OFFLINE")
    if case == "member error":
        fake.pools["p1"]["p1-m000"] = ("ERROR", "OFFLINE", 1)
    elif case == "member gone":
        del fake.pools["p1"]["p1-m001"]
    elif case == "pool gone":
        fake.schedule["members"] = [http_error(404)] * 10
    outs = MemberReadinessProvider().create(props(timeout_seconds=5, on_not_ready="unpublish")).outs
    assert outs["ready"] is False and outs["not_ready_reason"]


def test_unpublish_still_fails_the_update_when_the_credentials_are_refused(fake):
    fake.set_members("p1", 2)
    fake.schedule["members"] = [http_error(403)]
    with pytest.raises(FetchFailed, match="403"):
        MemberReadinessProvider().create(props(on_not_ready="unpublish"))


def test_fail_is_the_default_and_a_zone_recorded_not_ready_is_checked_again_at_the_next_update(fake):
    fake.set_members("p1", 2, oper="ERROR")
    with pytest.raises(ReadinessTimeout):
        MemberReadinessProvider().create(props(timeout_seconds=5, dead_after_seconds=1))
    p = MemberReadinessProvider()
    not_ready = {**props(on_not_ready="unpublish"), "ready": False, "not_ready_reason": "dead"}
    assert p.diff("id", not_ready, props(on_not_ready="unpublish")).changes is True
    ready = {**props(on_not_ready="unpublish"), "ready": True}
    assert p.diff("id", ready, props(on_not_ready="unpublish")).changes is False
    assert p.diff("id", ready, props(on_not_ready="fail", dead_after_seconds=5)).changes is False


def test_check_reports_a_bad_on_not_ready_or_dead_after_seconds():
    assert [f.property for f in MemberReadinessProvider().check({}, props(on_not_ready="skip")).failures] == \
        ["on_not_ready"]
    failures = MemberReadinessProvider().check({}, props(dead_after_seconds=0, pools=UNKNOWN)).failures
    assert [f.property for f in failures] == ["dead_after_seconds"]

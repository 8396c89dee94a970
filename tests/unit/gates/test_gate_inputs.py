"""The gates' property bags as one model each (ha_endpoint.gates.inputs): bags recorded by earlier versions parse as
they did, an invalid bag is an InputError naming the property, and what a resource declares is what its provider
validates."""

from __future__ import annotations

import pytest
from pulumi.output import Unknown

from ha_endpoint.core.args import DEFAULT_BACKEND
from ha_endpoint.gates.inputs import DrainInputs, InputError, PoolInputs, ReadinessInputs, wait_identity
from ha_endpoint.gates.model import PoolExpectation, Requirement
from ha_endpoint.gates.provider import UNKNOWN, contains_unknown

RECORDED = {  # a gate recorded before stable_polls, on_not_ready, dead_after_seconds, cloud_source, hold/check, backend
    "loadbalancer_id": "lb-1", "pools": {"api": {"pool_id": "p1", "member_ids": ["m2", "m1"]}},
    "require": "online", "timeout_seconds": 600.0, "poll_interval_seconds": 1.0, "cloud": None,
    "__provider": "serialized", "ready": True, "statuses": {"m1": "ACTIVE/ONLINE"},
}


def test_a_bag_recorded_by_an_earlier_version_parses_with_todays_defaults():
    inputs = ReadinessInputs.of_bag(RECORDED)
    assert (inputs.stable_polls, inputs.on_not_ready, inputs.dead_after_seconds, inputs.cloud_source) == \
        (2, "fail", 60.0, "stack")
    assert inputs.backend == DEFAULT_BACKEND  # recorded when every zone was the default backend's
    assert inputs.expectations == (PoolExpectation("p1", ("m1", "m2"), True, "api", 0.0, 0.0),)
    spec = inputs.wait_spec()
    assert spec.requirement is Requirement.ONLINE and spec.stable_polls == 2 and spec.dead_after_seconds is None
    assert ReadinessInputs.of_bag({**RECORDED, "stable_polls": 2.0, "require": None}).stable_polls == 2


@pytest.mark.parametrize("change, path, reason", [
    ({"loadbalancer_id": ""}, "loadbalancer_id", "must be a non-empty string id, got ''"),
    ({"loadbalancer_id": None}, "loadbalancer_id", "must be a non-empty string id, got None"),
    ({"pools": ["p1"]}, "pools", "must be a map of logical pool name -> {pool_id, member_ids, monitored}"),
    ({"pools": {"api": "p1"}}, "pools.api", "must be an object with pool_id, member_ids and monitored"),
    ({"pools": {"api": {"member_ids": []}}}, "pools.api.pool_id", "must be a non-empty string id, got None"),
    ({"pools": {"api": {"pool_id": "p1", "member_ids": "m1"}}}, "pools.api.member_ids",
     "must be a list of member ids, got 'm1'"),
    ({"pools": {"api": {"pool_id": "p1", "member_ids": ["m1", "m1"]}}}, "pools.api.member_ids",
     "lists a member id twice; give each member once"),
    ({"pools": {"api": {"pool_id": "p1", "monitored": "yes"}}}, "pools.api.monitored",
     "must be true or false, got 'yes'"),
    ({"pools": {"api": {"pool_id": "p1", "hold_seconds": -1}}}, "pools.api.hold_seconds",
     "must be a number of seconds >= 0, got -1"),
    ({"pools": {"a": {"pool_id": "p1"}, "b": {"pool_id": "p1"}}}, "pools.b.pool_id", "is also the pool of pools.a"),
    ({"require": "serving"}, "require", "must be 'online' or 'provisioned', got 'serving'"),
    ({"timeout_seconds": 0}, "timeout_seconds", "must be a number of seconds > 0, got 0"),
    ({"poll_interval_seconds": True}, "poll_interval_seconds", "must be a number of seconds > 0, got True"),
    ({"stable_polls": 1.5}, "stable_polls", "must be a whole number of polls >= 1, got 1.5"),
    ({"on_not_ready": "skip"}, "on_not_ready", "must be 'fail' or 'unpublish', got 'skip'"),
    ({"dead_after_seconds": -5.0}, "dead_after_seconds", "must be a number of seconds > 0, got -5.0"),
    ({"region": 3}, "region", "must be a string, got 3"),
    ({"backend": ""}, "backend", "must be the name of the zone's backend, got ''"),
])
def test_an_invalid_bag_names_the_property_and_what_it_must_be(change, path, reason):
    with pytest.raises(InputError) as caught:
        ReadinessInputs.of_bag({**RECORDED, **change})
    assert (caught.value.property, caught.value.reason) == (path, reason)
    assert [(e.property, e.reason) for e in ReadinessInputs.problems({**RECORDED, **change})] == [(path, reason)]


def test_values_unknown_at_preview_are_not_judged_and_make_a_fresh_identity():
    preview = {**RECORDED, "pools": {"api": {"pool_id": UNKNOWN, "member_ids": [Unknown(), Unknown()]}},
               "timeout_seconds": Unknown(), "require": "bogus"}
    assert [e.property for e in ReadinessInputs.problems(preview, contains_unknown)] == ["require"]
    assert wait_identity(preview) != wait_identity(preview)
    assert wait_identity(RECORDED) == wait_identity({**RECORDED, "stable_polls": 5, "timeout_seconds": 60})


def test_what_a_resource_declares_is_what_its_provider_validates():
    declared = ReadinessInputs.declare(loadbalancer_id="lb-1", pools={
        "api": PoolInputs.declare(pool_id="p1", member_ids=["m1"], monitored=False, hold_seconds=20,
                                  check_seconds=5)}, require="provisioned", on_not_ready="unpublish")
    bag = declared.bag()
    assert bag["pools"] == {"api": {"pool_id": "p1", "member_ids": ["m1"], "monitored": False, "hold_seconds": 20,
                                    "check_seconds": 5}}
    assert bag["stable_polls"] == 2 and bag["cloud_source"] == "stack" and bag["timeout_seconds"] == 600
    parsed = ReadinessInputs.of_bag(bag)
    assert parsed.require == "provisioned" and parsed.unpublishes and parsed.pools["api"].hold_seconds == 20.0
    assert ReadinessInputs.declare(loadbalancer_id="lb", pools={"api": {"pool_id": "p1"}}).bag()["pools"]["api"] == \
        {"pool_id": "p1", "member_ids": (), "monitored": True, "hold_seconds": 0.0, "check_seconds": 0.0}
    with pytest.raises(TypeError, match="ReadinessInputs has no input poll_seconds"):
        ReadinessInputs.declare(loadbalancer_id="lb", poll_seconds=1)


def test_a_drain_records_its_flags_only_when_true_and_parses_an_earlier_bag():
    assert "admin_down" not in DrainInputs.declare(pool_id="p1", member_id="m1").bag()
    assert DrainInputs.declare(pool_id="p1", member_id="m1", taken_out=True).bag()["taken_out"] is True
    recorded = {"pool_id": "p1", "member_id": "m1", "drain_seconds": 10.0, "__provider": "serialized"}
    inputs = DrainInputs.of_bag(recorded)
    assert (inputs.drain_seconds, inputs.timeout_seconds, inputs.admin_down, inputs.cloud_source) == \
        (10.0, 300.0, False, "stack")
    assert DrainInputs.of_bag({**recorded, "drain_seconds": None}).drain_seconds == 0.0

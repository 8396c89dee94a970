"""The readiness seam: DNS gets a zone's address only when its gate says the zone is ready."""

from __future__ import annotations

import pytest

from ha_endpoint.core import contract
from ha_endpoint.resources.dns import (NotPublishable, _non_empty, floor_problem,
                                       published_addresses)
from tests.mocks import FakeCloud, run_component
from tests.mocks.configs import amphora_endpoint, internal_endpoint, unpublishing_endpoint


def test_published_addresses_are_the_ready_zones_addresses_sorted():
    assert published_addresses([("172.24.4.9", True), ("172.24.4.10", False), (None, True), ("10.0.0.5", True)]) \
        == ["10.0.0.5", "172.24.4.9"]


def test_a_zone_that_is_not_ready_is_left_out_of_dns_with_the_reason_in_the_outputs():
    cloud = FakeCloud.dev()
    cloud.unready_azs.add("az2")
    run = run_component(unpublishing_endpoint(), cloud, preview=False)
    zones = run.outputs["zones"]
    assert (zones["az2"]["ready"], zones["az2"]["published"]) == (False, False)
    assert zones["az2"]["notReadyReason"].endswith("the zone is dead (every member has been down for 60s)")
    assert zones["az1"]["notReadyReason"] is None and zones["az1"]["published"] is True
    assert run.outputs["addresses"] == sorted([zones["az1"]["floatingIp"], zones["az3"]["floatingIp"]])
    assert run.named(contract.recordset_name("k8s-api"))["inputs"]["records"] == run.outputs["addresses"]
    assert zones["az2"]["loadbalancerId"], "the zone keeps its resources"


def test_by_default_a_zone_that_is_not_ready_fails_the_update_and_dns_is_not_written():
    cloud = FakeCloud.dev()
    cloud.unready_azs.add("az2")
    with pytest.raises(Exception, match="members not ready"):
        run_component(amphora_endpoint(), cloud, preview=False)
    assert "api.example.test." not in [r["name"] for r in cloud.kind(contract.RECORDSET_TYPE).values()]


@pytest.mark.parametrize("floor, unready, ready_left", [(None, {"az2", "az3"}, "az1"), (3, {"az3"}, "az1, az2"),
                                                        (1, {"az1", "az2", "az3"}, "none")])
def test_below_the_floor_the_update_stops_before_dns_changes_naming_every_zone_not_ready(floor, unready, ready_left):
    cloud = FakeCloud.dev()
    cloud.unready_azs.update(unready)
    raw = unpublishing_endpoint(**({} if floor is None else {"minReadyZones": floor}))
    with pytest.raises(NotPublishable) as caught:
        run_component(raw, cloud, preview=False)
    message = str(caught.value)
    expected_floor = 2 if floor is None else floor  # default: every zone but one
    assert f"zones are ready ({ready_left}), fewer than readiness.minReadyZones ({expected_floor})" in message
    for az in sorted(unready):
        assert f"{az}: load balancer " in message and "the zone is dead" in message
    assert not cloud.kind(contract.RECORDSET_TYPE)


def test_the_floor_rule_counts_ready_zones_and_names_the_others():
    states = [("az1", True, None), ("az2", False, "dead"), ("az3", False, None)]
    assert floor_problem(states, 1) is None
    assert floor_problem(states, 2).startswith("only 1 of 3 zones are ready (az1), fewer than readiness.minReadyZones "
                                               "(2), so the update stops before DNS changes. Not ready: az2: dead; "
                                               "az3: not ready.")


def test_no_address_at_all_is_still_refused_by_name():
    with pytest.raises(NotPublishable, match="api.example.test.: no availability zone is ready"):
        _non_empty([], "api.example.test.")


def test_an_internal_endpoint_allocates_no_floating_ip_and_publishes_the_vips():
    run = run_component(internal_endpoint(), FakeCloud.dev(), preview=False)
    assert run.of_type(contract.FLOATING_IP_TYPE) == run.of_type(contract.FLOATING_IP_ASSOCIATE_TYPE) == []
    assert run.outputs["addresses"] == sorted(zone["vipAddress"] for zone in run.outputs["zones"].values())
    assert all(zone["floatingIp"] is None for zone in run.outputs["zones"].values())


def test_without_dns_nothing_is_published_in_designate_but_addresses_are_still_reported():
    raw = amphora_endpoint()
    del raw["dns"]
    run = run_component(raw, FakeCloud.dev(), preview=False)
    assert run.of_type(contract.RECORDSET_TYPE) == []
    assert run.outputs["fqdn"] is None and len(run.outputs["addresses"]) == 3


def test_readiness_settings_reach_each_zones_gate():
    raw = amphora_endpoint()
    raw["readiness"] = {"require": "provisioned", "timeoutSeconds": 120, "pollIntervalSeconds": 2}
    run = run_component(raw, FakeCloud.dev(), preview=True)
    gates = [r for r in run.of_type(contract.READINESS_TYPE) if "pools" in r["inputs"]]  # not the drains
    assert len(gates) == 3
    for gate in gates:
        inputs = gate["inputs"]
        assert (inputs["require"], inputs["timeout_seconds"], inputs["poll_interval_seconds"]) == \
            ("provisioned", 120, 2)
        assert set(inputs["pools"]) == {contract.pool_name("k8s-api", gate["name"].split("-")[-2], port)
                                        for port in (6443, 22623)}


@pytest.mark.parametrize("provider, hold", [("ovn", 20), ("amphora", 0)])
def test_a_gate_holds_an_ovn_members_online_until_its_monitor_could_have_failed_it(provider, hold):
    """delay 3 s, timeout 2 s, maxRetriesDown 3: the OVN provider's optimistic ONLINE is held 20 s
    (predicates.online_hold_seconds); amphorae report a new member OFFLINE until checked: no hold."""
    raw = amphora_endpoint()
    raw["loadBalancerProvider"] = provider
    for listener in raw["listeners"]:
        listener["monitor"] = {"type": "TCP", "delay": 3, "timeout": 2, "maxRetries": 2, "maxRetriesDown": 3}
        listener.pop("lbMethod", None)
    run = run_component(raw, FakeCloud.dev(), preview=True)
    gates = [r for r in run.of_type(contract.READINESS_TYPE) if "pools" in r["inputs"]]
    assert gates and {pool["hold_seconds"] for gate in gates for pool in gate["inputs"]["pools"].values()} == {hold}


def drains_of(run) -> dict[str, dict]:
    return {r["name"]: r for r in run.of_type(contract.DRAIN_TYPE)}


@pytest.mark.parametrize("drain_seconds", [30, 0])
def test_every_member_gets_a_drain_whatever_drain_seconds_is(drain_seconds):
    """At 0 s too: a drain's deletion is then a no-op (components/ha_endpoint/gates/drain.py), and its existence makes a
    later change of drainSeconds an update rather than a deletion."""
    raw = amphora_endpoint()
    raw["readiness"] = {"drainSeconds": drain_seconds}
    run = run_component(raw, FakeCloud.dev(), preview=False)
    drains = drains_of(run)
    members = run.of_type(contract.MEMBER_TYPE)
    assert len(members) == 6 and sorted(drains) == sorted(f"{m['name']}-drain" for m in members)
    for member in members:
        drain = drains[f"{member['name']}-drain"]
        assert (drain["inputs"]["member_id"], drain["inputs"]["pool_id"], drain["inputs"]["drain_seconds"]) == \
            (member["id"], member["inputs"]["poolId"], drain_seconds)
        assert drain["parent"] == member["parent"] and member["urn"] in drain["dependencies"]


def test_lowering_drain_seconds_to_0_updates_the_drains_instead_of_deleting_them():
    """Deleting a drain drains its member with the drain's old state: lowering drainSeconds from 10 to 0 must not
    delete the drains of members that stay (weight 0 on live members), only set their drain_seconds to 0."""
    raw = amphora_endpoint()
    raw["readiness"] = {"drainSeconds": 10}
    before = drains_of(run_component(raw, FakeCloud.dev(), preview=True))
    raw["readiness"] = {"drainSeconds": 0}
    after = drains_of(run_component(raw, FakeCloud.dev(), preview=True))
    assert len(after) == 6 and {r["urn"] for r in after.values()} == {r["urn"] for r in before.values()}
    assert {r["inputs"]["drain_seconds"] for r in before.values()} == {10}
    assert {r["inputs"]["drain_seconds"] for r in after.values()} == {0}
    for name, drain in after.items():
        assert {key for key in drain["inputs"] if drain["inputs"][key] != before[name]["inputs"][key]
                and key not in ("pool_id", "member_id")} == {"drain_seconds"}


def test_gates_and_drains_poll_the_stacks_cloud():
    from tests.mocks import run_stack

    raw = amphora_endpoint()
    raw["readiness"] = {"drainSeconds": 5}
    run = run_stack(FakeCloud.dev(), {"endpoint": raw, "openstack:cloud": "localcloud"}, preview=True)
    dynamic = run.of_type(contract.READINESS_TYPE) + run.of_type(contract.DRAIN_TYPE)
    assert len(dynamic) == 3 + 6 and {r["inputs"]["cloud"] for r in dynamic} == {"localcloud"}

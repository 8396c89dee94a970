"""``memberUpdates``: the endpoint's members as one member set per pool (``batch``), and the handover from per-member
resources (``handover``), against the fake cloud: what a user (and the engine) would notice."""

from __future__ import annotations

import pytest

from ha_endpoint.core import contract
from tests.mocks import FakeCloud, run_component
from tests.mocks.configs import amphora_endpoint

MODES = [pytest.param(True, id="preview"), pytest.param(False, id="up")]


def batch_endpoint(**readiness):
    raw = amphora_endpoint()
    raw["memberUpdates"] = "batch"
    raw.setdefault("readiness", {}).update(readiness)
    return raw


def sets(run):
    return {r["name"]: r for r in run.registrations if r["type"] in contract.MEMBER_SET_TYPES}


@pytest.mark.parametrize("preview", MODES)
def test_batch_registers_one_member_set_per_pool_and_no_member_resource(preview):
    run = run_component(batch_endpoint(drainSeconds=20), FakeCloud.dev(), preview=preview)
    assert run.of_type(contract.MEMBER_TYPE) == [] and run.of_type(contract.DRAIN_TYPE) == []
    assert sorted(sets(run)) == sorted(contract.member_set_name("k8s-api", az, port)
                                       for az in ("az1", "az2", "az3") for port in (6443, 22623))
    home = {m["address"]: m for m in amphora_endpoint()["members"]}
    for name, member_set in sets(run).items():
        az, port = name.split("-")[2], int(name.split("-")[3])
        inputs = member_set["inputs"]
        assert [(m["name"], m["address"], m["protocol_port"], m["weight"]) for m in inputs["members"]] == [
            (m["name"], m["address"], port, 1) for m in home.values() if m["az"] == az]
        assert inputs["pool_name"] == contract.pool_name("k8s-api", az, port)
        assert inputs["identity_tag"] in inputs["tags"] and inputs["drain_seconds"] == 20
        assert inputs["require"] == "online" and inputs["monitored"] is True


def test_batch_keeps_per_member_ids_and_statuses_in_the_outputs():
    run = run_component(batch_endpoint(), FakeCloud.dev(), preview=False)
    for az, zone in run.outputs["zones"].items():
        member = {"az1": "cp-0", "az2": "cp-1", "az3": "cp-2"}[az]
        assert sorted(zone["memberIds"]) == ["22623", "6443"]
        for port in ("6443", "22623"):
            assert list(zone["memberIds"][port]) == [member] and zone["memberIds"][port][member]
            assert zone["memberStatuses"][port] == {member: "ACTIVE/ONLINE"}
        assert zone["ready"] is True and zone["published"] is True


def test_per_member_outputs_also_name_each_members_statuses():
    run = run_component(amphora_endpoint(), FakeCloud.dev(), preview=False)
    zone = run.outputs["zones"]["az1"]
    assert set(zone["memberStatuses"]["6443"]) == {"cp-0"}


def test_the_zones_gate_waits_for_the_sets_members_and_does_not_hold_them_again():
    cloud = FakeCloud.dev()
    raw = batch_endpoint()
    raw["loadBalancerProvider"] = "ovn"
    for listener in raw["listeners"]:
        listener["monitor"] = {"type": "TCP"}
    run = run_component(raw, cloud, preview=False)
    gate = run.named(contract.readiness_name("k8s-api", "az1"))
    member_ids = {contract.pool_name("k8s-api", "az1", port): sets(run)[contract.member_set_name("k8s-api", "az1", port)]
                  ["state"]["member_ids"] for port in (6443, 22623)}
    for pool_name, spec in gate["inputs"]["pools"].items():
        assert spec["member_ids"] == sorted(member_ids[pool_name].values()) and spec["hold_seconds"] == 0
    held = sets(run)[contract.member_set_name("k8s-api", "az1", 6443)]["inputs"]["hold_seconds"]
    assert held > 0  # the set holds the ovn provider's early ONLINE of the members it creates
    assert set(gate["dependencies"]) >= {s["urn"] for n, s in sets(run).items() if "-az1-" in n}


def test_a_members_set_is_written_after_its_ports_admit_the_load_balancer_and_one_write_at_a_time():
    raw = batch_endpoint()
    cloud = FakeCloud.dev()
    subnet = cloud.subnet_id("cp-az1")
    port_id = cloud.add_port(cloud.subnets[subnet].network_id, [(subnet, "10.10.1.10")])
    raw["members"][0]["port"] = port_id
    run = run_component(raw, cloud, preview=False)
    association = run.named(contract.member_port_secgroup_name("k8s-api", port_id))
    first = run.named(contract.member_set_name("k8s-api", "az1", 6443))
    assert association["urn"] in first["dependencies"]
    second_listener = run.named(contract.listener_name("k8s-api", "az1", 22623))
    assert first["urn"] in second_listener["dependencies"]  # Octavia takes one write per load balancer at a time


def test_handover_keeps_the_per_member_resources_and_retains_them_and_their_drains_on_delete():
    raw = amphora_endpoint()
    raw["memberUpdates"] = "handover"
    run = run_component(raw, FakeCloud.dev(), preview=True)
    members, drains = run.of_type(contract.MEMBER_TYPE), run.of_type(contract.DRAIN_TYPE)
    assert len(members) == 6 and len(drains) == 6
    assert all(r["retain_on_delete"] for r in members + drains)
    # per pool a set under the name batch gives it, holding nothing: the record that lets batch adopt the members
    handover_sets = list(sets(run).values())
    batch = run_component(batch_endpoint(), FakeCloud.dev(), preview=True)
    assert sorted(r["urn"] for r in handover_sets) == sorted(r["urn"] for r in sets(batch).values())
    assert all(r["inputs"]["handover"] is True and r["inputs"]["members"] == [] for r in handover_sets)
    assert all(r["inputs"]["handover"] is False for r in sets(batch).values())
    default = run_component(amphora_endpoint(), FakeCloud.dev(), preview=True)
    assert not any(r["retain_on_delete"] for r in default.of_type(contract.MEMBER_TYPE))
    # the handover changes no URN: the same resources, only recorded as retained
    assert sorted(r["urn"] for r in members) == sorted(r["urn"] for r in default.of_type(contract.MEMBER_TYPE))


def test_an_unknown_member_updates_value_is_refused_naming_the_key():
    raw = amphora_endpoint()
    raw["memberUpdates"] = "bulk"
    with pytest.raises(Exception) as caught:
        run_component(raw, FakeCloud.dev(), preview=True)
    assert "memberUpdates" in str(caught.value) and "batch" in str(caught.value)


def test_the_gate_takes_its_sets_verdicts_in_batch_and_its_inputs_stay_as_they_were_per_member():
    batch = run_component(batch_endpoint(), FakeCloud.dev(), preview=False)
    gate = batch.named(contract.readiness_name("k8s-api", "az2"))
    assert gate["inputs"]["members_not_ready"] == [None, None]  # one verdict per pool's set
    per_member = run_component(amphora_endpoint(), FakeCloud.dev(), preview=False)
    assert "members_not_ready" not in per_member.named(contract.readiness_name("k8s-api", "az2"))["inputs"]


@pytest.mark.parametrize("provider", ["amphora", "ovn"])
def test_member_drains_take_members_admin_down_only_under_the_ovn_provider(provider):
    """The ovn provider ignores a member's weight (ha_endpoint.core.predicates.drains_admin_down): under it every
    MemberDrain and every MemberSet records ``admin_down`` (a set drains such members one per write); under amphora
    the key is not recorded at all, so the drains and sets of a stack deployed before it have no change."""
    raw = amphora_endpoint()
    raw.setdefault("readiness", {})["drainSeconds"] = 20
    raw["loadBalancerProvider"] = provider
    for listener in raw["listeners"]:
        listener["monitor"] = {"type": "TCP"}
    run = run_component(raw, FakeCloud.dev(), preview=False)
    drains = run.of_type(contract.DRAIN_TYPE)
    assert drains
    assert {d["inputs"].get("admin_down", "absent") for d in drains} == ({True} if provider == "ovn" else {"absent"})
    raw["memberUpdates"] = "batch"
    batch = run_component(raw, FakeCloud.dev(), preview=False)
    assert sets(batch)
    assert {s["inputs"].get("admin_down", "absent") for s in sets(batch).values()} == (
        {True} if provider == "ovn" else {"absent"})

"""The pack on an endpoint whose members are member sets (``memberUpdates: batch``): it still judges each member, with
the same verdicts and messages as on per-member resources."""

from __future__ import annotations

import pytest
from pulumi_policy.proxy import UNKNOWN_ARRAY_VALUE

from ha_endpoint.core import contract
from policy_harness import run_preview
from tests.mocks.configs import amphora_endpoint


def endpoint(updates: str = "batch", **changes):
    raw = amphora_endpoint()
    raw["memberUpdates"] = updates
    raw.update(changes)
    return raw


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
@pytest.mark.parametrize("placement", ["own-zone", "all-zones"])
def test_a_batch_endpoint_passes_the_pack(preview, placement):
    assert run_preview(endpoint(memberPlacement=placement), preview=preview).violations() == []


@pytest.mark.parametrize("policy, config", [
    ("ha-endpoint-member-zones", {"ha-endpoint-member-zones": {"minMembersPerZone": 2}}),
    ("ha-endpoint-member-zones", {"ha-endpoint-member-zones": {"minMembersPerZone": 1}}),
])
def test_member_counts_are_judged_per_pool_as_for_member_resources(policy, config):
    assert run_preview(endpoint()).messages(policy, config) == \
        run_preview(endpoint("per-member")).messages(policy, config)
    assert run_preview(endpoint()).messages(policy, {"ha-endpoint-member-zones": {"minMembersPerZone": 2}})


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_a_handover_endpoint_is_judged_as_per_member_its_empty_sets_counting_for_nothing(preview):
    """Under handover each pool has its member resources and a set holding nothing (the handover's record)."""
    config = {"ha-endpoint-member-zones": {"minMembersPerZone": 2}}
    handover = run_preview(endpoint("handover"), preview=preview)
    assert handover.violations() == []
    assert handover.messages("ha-endpoint-member-zones", config) == \
        run_preview(endpoint("per-member"), preview=preview).messages("ha-endpoint-member-zones", config)


def test_a_pool_whose_set_holds_no_member_is_reported_as_a_pool_without_members():
    run = run_preview(endpoint())
    run.named(contract.member_set_name("k8s-api", "az3", 6443)).inputs["members"] = []
    assert run.messages("ha-endpoint-member-zones") == [
        "zone az3 of endpoint k8s-api has 0 member(s) in pool k8s-api-az3-6443-pool, fewer than the 1 required "
        "under own-zone placement; add members with az: az3, remove the zone, or set memberPlacement: all-zones"]


def test_a_set_whose_members_are_not_known_at_preview_is_not_reported_empty():
    run = run_preview(endpoint())
    run.named(contract.member_set_name("k8s-api", "az3", 6443)).inputs["members"] = UNKNOWN_ARRAY_VALUE
    assert run.messages("ha-endpoint-member-zones") == []


def test_each_members_monitor_port_in_a_set_is_checked_against_the_members_security_group():
    run = run_preview(endpoint())
    member = run.named(contract.member_set_name("k8s-api", "az2", 22623)).inputs["members"][0]
    member["monitor_port"] = 10257.0
    messages = run.messages("ha-endpoint-member-security-group")
    assert len(messages) == 3 and all(
        "monitor port of member k8s-api-az2-22623-member-10.10.2.10" in message for message in messages)
    per_member = run_preview(endpoint("per-member")).set("k8s-api-az2-22623-member-10.10.2.10", "monitorPort",
                                                           10257.0)
    assert messages == per_member.messages("ha-endpoint-member-security-group")


def _take_out(run, updates: str, az: str, port: int, field: str) -> None:
    """Takes the one member of ``az``'s pool of ``port`` out as the component registers it: admin state down
    (``enabled: false``) or weight 0, on its member resource (per-member) or its member set's entry (batch)."""
    if updates == "batch":
        entry = run.named(contract.member_set_name("k8s-api", az, port)).inputs["members"][0]
        entry.update({"admin_state_up": False} if field == "enabled" else {"weight": 0})
    else:
        address = {m["az"]: m["address"] for m in amphora_endpoint()["members"]}[az]
        member = run.named(contract.member_name("k8s-api", az, port, address)).inputs
        member.update({"adminStateUp": False} if field == "enabled" else {"weight": 0})


@pytest.mark.parametrize("updates", ["per-member", "batch"])
@pytest.mark.parametrize("field", ["enabled", "weight"])
def test_a_zone_whose_only_members_are_taken_out_is_a_zone_without_capacity(updates, field):
    """Issue 46: a member taken out (enabled: false, i.e. admin state down, or weight 0) is no capacity. From the
    compliant baseline, one field changed: az3's only member of pool 6443 taken out, and the pack refuses the zone."""
    run = run_preview(endpoint(updates), preview=False)
    assert run.messages("ha-endpoint-member-zones") == []
    _take_out(run, updates, "az3", 6443, field)
    assert run.messages("ha-endpoint-member-zones") == [
        "zone az3 of endpoint k8s-api has 0 member(s) in service (1 more taken out: enabled: false or weight: 0, "
        "which is no capacity) in pool k8s-api-az3-6443-pool, fewer than the 1 required under own-zone placement; "
        "put taken-out members back (enabled: true, weight above 0), add members with az: az3, remove the zone, or "
        "set memberPlacement: all-zones"]

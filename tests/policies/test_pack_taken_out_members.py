"""Issue 46: the pack counts a member taken out (``enabled: false``, i.e. admin state down, or weight 0) as no
capacity of its zone (``ha-endpoint-member-zones``, the rule the component's validation asks too:
ha_endpoint.core.predicates.member_in_service)."""

from __future__ import annotations

import pytest

from ha_endpoint.core import contract
from policy_harness import run_preview
from tests.mocks.configs import amphora_endpoint


@pytest.mark.parametrize("field", ["enabled", "weight"])
def test_a_zone_whose_only_members_are_taken_out_is_a_zone_without_capacity(field):
    """From the compliant baseline, one field changed: az3's only member of pool 6443 taken out as the component
    registers it (its member resource admin state down, or weight 0), and the pack refuses the zone."""
    run = run_preview(amphora_endpoint(), preview=False)
    assert run.messages("ha-endpoint-member-zones") == []
    address = {m["az"]: m["address"] for m in amphora_endpoint()["members"]}["az3"]
    member = run.named(contract.member_name("k8s-api", "az3", 6443, address)).inputs
    member.update({"adminStateUp": False} if field == "enabled" else {"weight": 0})
    assert run.messages("ha-endpoint-member-zones") == [
        "zone az3 of endpoint k8s-api has 0 member(s) in service (1 more taken out: enabled: false or weight: 0, "
        "which is no capacity) in pool k8s-api-az3-6443-pool, fewer than the 1 required under own-zone placement; "
        "put taken-out members back (enabled: true, weight above 0), add members with az: az3, remove the zone, or "
        "set memberPlacement: all-zones"]

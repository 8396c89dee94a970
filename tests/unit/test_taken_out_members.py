"""Issue 46, finding 1: one way to take a member out (``members[].enabled: false``, weight 0 meaning the same) that
works on every provider, against the Pulumi mocks and the fake cloud: the member is registered administratively down
(the ovn provider ignores the weight: ha_endpoint.core.predicates.drains_admin_down), the zone's gate does not wait
for it, and it does not count as a zone's capacity (the validation, below; the pack:
tests/policies/test_pack_taken_out_members.py). The drain keeping it out under ovn: tests/unit/gates/test_drain.py."""

from __future__ import annotations

import pytest

from ha_endpoint import ConfigError, load_endpoint_args
from ha_endpoint.core import contract
from tests.mocks import FakeCloud, run_component
from tests.mocks.configs import amphora_endpoint

ROOT = "ha-endpoint:endpoint"
OUT = {"name": "cp-3", "address": "10.10.1.11", "az": "az1"}   # a second member in az1, the one taken out


def endpoint(provider: str, how: dict) -> dict:
    """The amphora shape on ``provider`` with cp-3 in az1 taken out by ``how``."""
    raw = amphora_endpoint()
    raw["loadBalancerProvider"] = provider
    if provider == "ovn":
        for listener in raw["listeners"]:
            listener["monitor"] = {"type": "TCP"}
    raw["members"].append({**OUT, **how})
    return raw


HOW = [pytest.param({"enabled": False}, id="enabled-false"), pytest.param({"weight": 0}, id="weight-0")]


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("provider", ["amphora", "ovn"])
def test_a_member_taken_out_is_registered_admin_down_and_its_gate_does_not_wait_for_it(provider, how):
    run = run_component(endpoint(provider, how), FakeCloud.dev(), preview=False)
    gate = run.named(contract.readiness_name("k8s-api", "az1"))
    for port in (6443, 22623):
        out = run.named(contract.member_name("k8s-api", "az1", port, OUT["address"]))
        kept = run.named(contract.member_name("k8s-api", "az1", port, "10.10.1.10"))
        assert out["inputs"]["adminStateUp"] is False
        assert kept["inputs"].get("adminStateUp", True) is True  # in service: no change for a deployed member
        pool = gate["inputs"]["pools"][contract.pool_name("k8s-api", "az1", port)]
        assert pool["member_ids"] == [kept["id"]]
        drain = run.named(contract.member_drain_name("k8s-api", "az1", port, OUT["address"]))
        assert drain["inputs"].get("taken_out") is True
        assert "taken_out" not in run.named(contract.member_drain_name("k8s-api", "az1", port, "10.10.1.10"))["inputs"]
    assert run.outputs["zones"]["az1"]["ready"] is True


def last(run, name: str) -> dict:
    """The latest registration of ``name`` (the fake cloud keeps every run's)."""
    return [r for r in run.registrations if r["name"] == name][-1]


def test_under_ovn_a_member_put_back_is_recreated_deleting_the_old_one_first():
    """Issue 46, the way back: under the ovn provider a member the pool lists administratively down that the
    configuration puts back (``enabled: true`` again) is re-created, its old self deleted first (it serves nothing; the
    provider keeps a member it holds OFFLINE out of its backends for good when it is only set admin up:
    ha_endpoint.backends.octavia.checks.members_put_back_from). The member that stayed in service, and a member put back
    on amphora (whose health monitor takes it back), are updated in place as before."""
    cloud = FakeCloud.dev()
    run_component(endpoint("ovn", {"enabled": False}), cloud, preview=False)
    run = run_component(endpoint("ovn", {"enabled": True}), cloud, preview=False)
    for port in (6443, 22623):
        back = last(run, contract.member_name("k8s-api", "az1", port, OUT["address"]))
        kept = last(run, contract.member_name("k8s-api", "az1", port, "10.10.1.10"))
        assert (back["inputs"]["adminStateUp"], back["replace_on_changes"], back["delete_before_replace"]) == (
            True, ["adminStateUp"], True)
        assert "adminStateUp" not in kept["inputs"] and kept["replace_on_changes"] == []
        assert kept["delete_before_replace"] is False
    # the zone registers its put-back record first and the re-created members wait for it: the dynamic provider
    # is registered before the engine deletes the old member's drain (ha_endpoint.gates.put_back)
    record = last(run, "k8s-api-az1-lb-put-back")
    assert record["type"].endswith("PutBack") and record["inputs"]["members"] == [OUT["name"]], record["inputs"]
    for port in (6443, 22623):
        back = last(run, contract.member_name("k8s-api", "az1", port, OUT["address"]))
        assert record["urn"] in back["dependencies"], back["dependencies"]
    assert not [r for r in run.registrations if r["name"].endswith("-put-back") and r is not record], \
        "one record, in the zone that puts members back"
    again = run_component(endpoint("ovn", {"enabled": True}), cloud, preview=False)
    assert last(again, contract.member_name("k8s-api", "az1", 6443, OUT["address"]))["replace_on_changes"] == [], \
        "the members it created in service are not put back"
    assert [r for r in again.registrations if r["name"].endswith("-put-back")] == [record], \
        "the record lasts one update (the fake cloud keeps every run's registrations)"


def test_a_member_put_back_on_amphora_is_updated_in_place():
    """On amphora the health monitor takes a member set admin up again back: no replacement."""
    cloud = FakeCloud.dev()
    run_component(endpoint("amphora", {"enabled": False}), cloud, preview=False)
    run = run_component(endpoint("amphora", {"enabled": True}), cloud, preview=False)
    back = last(run, contract.member_name("k8s-api", "az1", 6443, OUT["address"]))
    assert back["replace_on_changes"] == [] and "adminStateUp" not in back["inputs"]


def problems_of(raw) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_endpoint_args(raw)
    return [str(problem) for problem in caught.value.problems]


@pytest.mark.parametrize("how, key", [({"enabled": False}, "enabled"), ({"weight": 0}, "weight")])
def test_a_zone_whose_only_members_are_taken_out_is_refused_naming_the_key_and_the_fix(how, key):
    raw = amphora_endpoint()
    raw["members"][1].update(how)  # cp-1, az2's only member
    assert problems_of(raw) == [
        f"{ROOT}.members[1].{key}: zone az2's only member(s) (cp-1) are taken out (enabled: false or weight: 0), so "
        "the load balancer would have no capacity; put one back (enabled: true and a weight above 0), add a member "
        "with az: az2, remove the zone, or set memberPlacement: all-zones"]
    raw["members"].append({"name": "cp-4", "address": "10.10.2.11", "az": "az2"})
    assert load_endpoint_args(raw).members[1].name == "cp-1"  # another member in service: accepted
    raw["memberPlacement"] = "all-zones"
    for member in raw["members"]:
        member["enabled"] = False
    assert problems_of(raw) == [
        f"{ROOT}.members[0].enabled: all members (cp-0, cp-1, cp-2, cp-4) are taken out (enabled: false or weight: "
        "0), so the load balancer would have no capacity; put one back (enabled: true and a weight above 0), or add a "
        "member"]


def test_enabled_must_be_true_or_false():
    raw = amphora_endpoint()
    raw["members"][0]["enabled"] = "no"
    assert problems_of(raw) == [f"{ROOT}.members[0].enabled: enabled must be true or false, got the text 'no'; "
                                "write enabled: true or enabled: false"]


@pytest.mark.parametrize("provider", ["amphora", "ovn"])
def test_under_ovn_a_member_is_written_in_place_only_for_its_admin_state(provider, monkeypatch):
    """An update of a member that leaves its admin state out (a new weight, name or tags) makes the ovn provider report
    it NO_MONITOR until its health next changes (measured on the dev stack: `weight: 2` on cp-0, and the watcher took
    az1 out of DNS while it served). Under ovn those fields are written at create only, and a weight other than 0 or
    1 is said once, naming the key; amphora updates them in place and says nothing."""
    said: list[str] = []
    monkeypatch.setattr("pulumi.log.warn", lambda message, *args, **kwargs: said.append(message))
    raw = endpoint(provider, {"weight": 3})
    raw["members"].append({"name": "cp-4", "address": "10.10.2.11", "az": "az2", "weight": 2})
    run = run_component(raw, FakeCloud.dev(), preview=True)
    member = run.named(contract.member_name("k8s-api", "az1", 6443, OUT["address"]))
    assert member["inputs"]["weight"] == 3                   # a create writes it on every provider
    assert member["ignore_changes"] == (["name", "tags", "weight"] if provider == "ovn" else [])
    weights = [message for message in said if ".weight:" in message]
    if provider == "amphora":
        assert weights == []
    else:
        assert weights == [f"HaEndpoint('k8s-api').args.members[{len(raw['members']) - 2}].weight: weight 3 (and 1 more) "
                           "does nothing under loadBalancerProvider ovn: the provider gives every member in service an "
                           "equal share, and the component writes a member's weight only when it creates the member, "
                           "never in place (an update that leaves the admin state alone makes the ovn provider report "
                           "the member NO_MONITOR, which the gates and the watcher read as not serving); remove the "
                           "weight, or take the member out with enabled: false (or weight: 0)"]

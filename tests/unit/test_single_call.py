"""``loadBalancerCreate: single-call``: each zone's load balancer, listeners, pools and monitors as one
LoadBalancerTree (created with the first members in one Octavia call), the pools' member sets owning the members
after it, against the fake cloud: what a user (and the engine) would notice."""

from __future__ import annotations

import pytest

from ha_endpoint.core import contract
from tests.mocks import FakeCloud, run_component
from tests.mocks.configs import amphora_endpoint

MODES = [pytest.param(True, id="preview"), pytest.param(False, id="up")]
PARTS = (contract.LOADBALANCER_TYPE, contract.LISTENER_TYPE, contract.POOL_TYPE, contract.MONITOR_TYPE,
         contract.MEMBER_TYPE)


def single_call(**changes):
    raw = amphora_endpoint()
    raw.update(memberUpdates="batch", loadBalancerCreate="single-call", **changes)
    return raw


def trees(run):
    return {r["name"]: r for r in run.registrations if r["type"] in contract.TREE_TYPES}


@pytest.mark.parametrize("preview", MODES)
def test_each_zone_is_one_tree_whose_first_members_are_its_member_sets(preview):
    run = run_component(single_call(), FakeCloud.dev(), preview=preview)
    assert [r for r in run.registrations if r["type"] in PARTS] == []
    assert sorted(trees(run)) == [contract.loadbalancer_name("k8s-api", az) for az in ("az1", "az2", "az3")]
    sets = {r["name"]: r for r in run.registrations if r["type"] in contract.MEMBER_SET_TYPES}
    for name, tree in trees(run).items():
        az = name.split("-")[2]
        inputs = tree["inputs"]
        assert inputs["availability_zone"] == az and inputs["identity_tag"] in inputs["tags"]
        assert [int(l["protocol_port"]) for l in inputs["listeners"]] == [6443, 22623]
        for listener in inputs["listeners"]:
            port = int(listener["protocol_port"])
            member_set = sets[contract.member_set_name("k8s-api", az, port)]["inputs"]
            assert listener["members"] == member_set["members"]  # written by the create, owned by the set
            assert listener["member_tag"] == contract.member_set_tag(member_set["pool_name"])
            assert listener["monitor"]["name"] == f"k8s-api-{az}-{port}-monitor"


def test_the_outputs_name_the_trees_load_balancers_pools_and_members_and_every_zone_is_published():
    run = run_component(single_call(), FakeCloud.dev(), preview=False)
    cloud_trees = trees(run)
    for az, zone in run.outputs["zones"].items():
        assert zone["loadbalancerId"] == cloud_trees[contract.loadbalancer_name("k8s-api", az)]["id"]
        assert sorted(zone["poolIds"]) == ["22623", "6443"] and all(zone["poolIds"].values())
        assert zone["memberIds"]["6443"] and zone["ready"] is True and zone["published"] is True
    assert len(run.outputs["addresses"]) == 3


def test_single_call_without_member_sets_is_refused_naming_both_keys_and_nothing_is_created():
    raw = single_call()
    raw["memberUpdates"] = "per-member"
    cloud = FakeCloud.dev()
    with pytest.raises(Exception) as caught:
        run_component(raw, cloud, preview=True)
    message = str(caught.value)
    assert "loadBalancerCreate" in message and "memberUpdates: batch" in message
    assert not any(r["type"] in contract.TREE_TYPES for r in cloud.registrations)

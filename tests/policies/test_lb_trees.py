"""The pack on an endpoint whose zones are load balancer trees (``loadBalancerCreate: single-call``): one dynamic
resource per zone instead of the provider's LoadBalancer, Listener, Pool and Monitor resources, the members in member
sets. Every rule judging load balancers, listeners, pools, monitors and members gives the verdicts (the messages) it
gives on the same stack of provider resources.

The tree stack is made from what the program registers under ``memberUpdates: batch``
(:func:`policy_harness.as_trees`): each zone's load balancer, listeners, pools and monitors become one tree with the
inputs the component gives it, registered where the load balancer was, and everything that depended on one of them
depends on the tree. Each case changes one thing in the provider stack first (so both stacks carry the same change)
and asserts the rule does report it.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import pytest
from pulumi_policy.proxy import UNKNOWN_ARRAY_VALUE, UNKNOWN_OBJECT_VALUE

from ha_endpoint.core import contract
from neighbours_program import production_endpoint, run_neighbours, split_cloud
from policy_harness import PARTS, HarnessRun, Registration, as_trees, run_preview
from policies.registry import RULES
from tests.mocks.cloud import FakeCloud
from tests.mocks.configs import amphora_endpoint

PRODUCTION = {"ha-endpoint-production-listener-cidrs": {"productionStackPattern": "^dev$"}}


def batch(raw: Optional[dict[str, Any]] = None, **changes: Any) -> dict[str, Any]:
    raw = raw or amphora_endpoint()
    raw["memberUpdates"] = "batch"
    raw.update(changes)
    return raw


def two_zones() -> dict[str, Any]:
    raw = batch()
    del raw["zones"]["az3"]
    raw["members"] = [m for m in raw["members"] if m["az"] != "az3"]
    return raw


def ovn() -> dict[str, Any]:
    return batch(listeners=[{"port": 6443, "monitor": {"type": "TCP"}}], loadBalancerProvider="ovn")


def _vip_subnet(run: HarnessRun, az: str) -> str:
    return run.named(contract.loadbalancer_name("k8s-api", az)).inputs["vipSubnetId"]


def _pin_router(run: HarnessRun) -> HarnessRun:
    next(iter(run.facts()["routers"].values()))["azHints"] = ["az1"]
    return run


def _member_on_island(run: HarnessRun, cloud: FakeCloud) -> HarnessRun:
    run.facts()["subnets"]["island-subnet-id"] = {"id": "island-subnet-id", "name": "island-sub",
                                                  "cidr": "10.10.3.0/24", "networkId": cloud.network_id("island"),
                                                  "routerIds": []}
    return run.set_fact("members.cp-2.subnetId", "island-subnet-id")


def _monitor_port(run: HarnessRun) -> HarnessRun:
    run.named(contract.member_set_name("k8s-api", "az2", 22623)).inputs["members"][0]["monitor_port"] = 10257.0
    return run


# (case id, endpoint configuration, the change, pack configuration, the policy that must report it)
Change = Callable[[HarnessRun, FakeCloud], Any]
CASES: list[tuple[str, Callable[[], dict[str, Any]], Change, Optional[dict[str, Any]], Optional[str]]] = [
    ("baseline", batch, lambda run, cloud: run, None, None),
    ("zone-placement-az", batch, lambda run, cloud: run.set("k8s-api-az1-lb", "availabilityZone", "az2"), None,
     "ha-endpoint-zone-placement"),
    ("zone-placement-no-az", batch, lambda run, cloud: run.set("k8s-api-az2-lb", "availabilityZone", ""), None,
     "ha-endpoint-zone-placement"),
    ("zone-placement-shared-subnet", batch,
     lambda run, cloud: run.set("k8s-api-az2-lb", "vipSubnetId", _vip_subnet(run, "az1")), None,
     "ha-endpoint-zone-placement"),
    ("min-zones", two_zones, lambda run, cloud: run.set("k8s-api-az2-lb", "availabilityZone", "az1"), None,
     "ha-endpoint-min-zones"),
    ("az-independence", batch, lambda run, cloud: _pin_router(run), None, "ha-endpoint-az-independence"),
    ("pool-without-monitor", batch, lambda run, cloud: run.remove("k8s-api-az2-6443-monitor"), None,
     "ha-endpoint-pool-health-monitor"),
    ("monitor-refused", batch, lambda run, cloud: run.set("k8s-api-az1-6443-monitor", "urlPath", "readyz"), None,
     "ha-endpoint-pool-health-monitor"),
    ("ovn-baseline", ovn, lambda run, cloud: run, None, None),
    ("ovn-monitor-type", ovn, lambda run, cloud: run.set("k8s-api-az3-6443-monitor", "type", "HTTP"), None,
     "ha-endpoint-ovn-provider-constraints"),
    ("ovn-lb-method", ovn, lambda run, cloud: run.set("k8s-api-az1-6443-pool", "lbMethod", "ROUND_ROBIN"), None,
     "ha-endpoint-ovn-provider-constraints"),
    ("ovn-given-an-az", ovn, lambda run, cloud: run.set("k8s-api-az2-lb", "availabilityZone", "az2"), None,
     "ha-endpoint-zone-placement"),
    ("production-by-stack", batch, lambda run, cloud: run, PRODUCTION, "ha-endpoint-production-listener-cidrs"),
    ("production-by-tag", batch, lambda run, cloud: run.set("k8s-api-az1-lb", "tags", ["production"]), None,
     "ha-endpoint-production-listener-cidrs"),
    ("member-count", batch, lambda run, cloud: run, {"ha-endpoint-member-zones": {"minMembersPerZone": 2}},
     "ha-endpoint-member-zones"),
    ("empty-set", batch,
     lambda run, cloud: run.named(contract.member_set_name("k8s-api", "az3", 6443)).inputs.update(members=[]), None,
     "ha-endpoint-member-zones"),
    ("member-unreachable", lambda: batch(memberPlacement="all-zones"),
     lambda run, cloud: _member_on_island(run, cloud), None, "ha-endpoint-member-reachability"),
    ("member-monitor-port", batch, lambda run, cloud: _monitor_port(run), None, "ha-endpoint-member-security-group"),
]


def _both(endpoint: Callable[[], dict[str, Any]], change: Change) -> tuple[HarnessRun, HarnessRun]:
    cloud = FakeCloud.dev(preview=True)
    provider = run_preview(endpoint(), cloud)
    change(provider, cloud)
    return provider, as_trees(provider)


@pytest.mark.parametrize("case, endpoint, change, config, policy", CASES, ids=[case[0] for case in CASES])
def test_a_tree_stack_gets_the_verdicts_of_the_provider_resources_stack(case, endpoint, change, config, policy):
    provider, trees = _both(endpoint, change)
    expected = provider.violations(config)
    if policy is None:
        assert expected == []
    else:
        assert [name for name, _ in expected if name == policy], f"{case}: {policy} reports nothing to compare"
    assert sorted(trees.violations(config)) == sorted(expected)


def _tree(run: HarnessRun, az: str) -> Registration:
    return run.named(contract.loadbalancer_name("k8s-api", az))


def test_the_tree_stack_holds_no_provider_load_balancer_resource_and_its_trees_hold_the_zones_parts():
    _, trees = _both(batch, lambda run, cloud: run)
    assert {r.type for r in trees.registrations} & set(PARTS) == set()
    tree = _tree(trees, "az1")
    assert tree.type == contract.TREE_TYPE
    assert [(listener["name"], listener["pool"]["name"], listener["monitor"]["name"])
            for listener in tree.inputs["listeners"]] == [
        ("k8s-api-az1-6443-listener", "k8s-api-az1-6443-pool", "k8s-api-az1-6443-monitor"),
        ("k8s-api-az1-22623-listener", "k8s-api-az1-22623-pool", "k8s-api-az1-22623-monitor")]
    member_set = trees.named(contract.member_set_name("k8s-api", "az1", 6443))
    assert member_set.property_dependencies["pool_id"] == [tree.urn]


def _rule(name: str) -> Any:
    return next(rule for rule in RULES if rule.name == name)


def test_a_violation_about_a_part_of_a_tree_points_at_the_tree():
    _, trees = _both(batch, lambda run, cloud: run.remove("k8s-api-az2-6443-monitor"))
    violations = _rule("ha-endpoint-pool-health-monitor").check(trees.stack_resources(), {})
    assert [(violation.message.split(":")[0], violation.urn) for violation in violations] == [
        ("pool k8s-api-az2-6443-pool has no health monitor", _tree(trees, "az2").urn)]


@pytest.mark.parametrize("unknown", [UNKNOWN_ARRAY_VALUE, [UNKNOWN_OBJECT_VALUE]], ids=["list", "entry"])
def test_a_tree_whose_listeners_are_not_known_at_preview_is_not_reported_for_missing_pools_or_monitors(unknown):
    _, trees = _both(batch, lambda run, cloud: run)
    _tree(trees, "az3").inputs["listeners"] = unknown
    config = {"ha-endpoint-member-zones": {"minMembersPerZone": 2}}
    messages = trees.violations(config)
    assert [name for name, _ in messages if name != "ha-endpoint-member-zones"] == []
    assert [message for _, message in messages if "az3" in message] == []   # az3's pools are not counted
    assert len([message for _, message in messages if "zone az1" in message]) == 2   # the others' are


def test_a_tree_whose_listeners_are_not_known_still_has_its_load_balancer_placed():
    _, trees = _both(batch, lambda run, cloud: run)
    _tree(trees, "az3").inputs.update(listeners=UNKNOWN_ARRAY_VALUE, availability_zone="az1")
    assert trees.messages("ha-endpoint-zone-placement") == [
        "load balancer k8s-api-az3-lb serves zone az3 but is placed in availability zone 'az1'; set its "
        "availability_zone to 'az3'"]


def test_listeners_not_known_at_preview_cannot_be_ruled_open_in_production():
    _, trees = _both(lambda: batch(allowedCidrs=["192.0.2.0/24"]), lambda run, cloud: run)
    assert trees.messages("ha-endpoint-production-listener-cidrs", PRODUCTION) == []
    _tree(trees, "az2").inputs["listeners"] = UNKNOWN_ARRAY_VALUE
    assert trees.messages("ha-endpoint-production-listener-cidrs", PRODUCTION) == [
        "load balancer k8s-api-az2-lb: not all of its listeners are known at preview, so an opening to the internet "
        "cannot be ruled out in a production stack (stack 'dev' matches productionStackPattern '^dev$'); pass the "
        "listeners (allowedCidrs) as plain values"]


def test_a_set_of_a_trees_pool_whose_members_are_not_known_at_preview_is_not_reported_empty():
    _, trees = _both(batch, lambda run, cloud: run)
    trees.named(contract.member_set_name("k8s-api", "az3", 6443)).inputs["members"] = UNKNOWN_ARRAY_VALUE
    assert trees.messages("ha-endpoint-member-zones") == []
    trees.named(contract.member_set_name("k8s-api", "az3", 6443)).inputs["members"] = []
    assert trees.messages("ha-endpoint-member-zones") == [
        "zone az3 of endpoint k8s-api has 0 member(s) in pool k8s-api-az3-6443-pool, fewer than the 1 required "
        "under own-zone placement; add members with az: az3, remove the zone, or set memberPlacement: all-zones"]


def test_a_sets_members_join_the_trees_pool_the_set_names():
    """Both sets of a zone depend on the same tree: their members are counted in the pool each set names."""
    _, trees = _both(batch, lambda run, cloud: run)
    members = trees.named(contract.member_set_name("k8s-api", "az1", 22623)).inputs["members"]
    members.append({**members[0], "address": "10.10.1.11", "name": "cp-0b"})
    config = {"ha-endpoint-member-zones": {"minMembersPerZone": 2}}
    assert [message.split(", fewer")[0] for message in trees.messages("ha-endpoint-member-zones", config)
            if "zone az1" in message] == ["zone az1 of endpoint k8s-api has 1 member(s) in pool k8s-api-az1-6443-pool"]


def test_a_member_beside_the_endpoint_in_a_trees_pool_is_judged_against_the_trees_zone():
    cloud = split_cloud()
    provider = run_neighbours(cloud, endpoint=batch(production_endpoint()),
                              member={"subnet": "cp-az2", "address": "10.10.2.20"})
    trees = as_trees(provider)
    extra = trees.named("extra-member")
    assert set(extra.property_dependencies["poolId"]) == {_tree(trees, "az1").urn}
    expected = provider.violations()
    assert [name for name, _ in expected] == ["ha-endpoint-neighbour-member-reachability"]
    assert "joins a pool of zone az1, but zone az1's load balancer cannot reach it" in expected[0][1]
    assert trees.violations() == expected


def single_call(raw: Optional[dict[str, Any]] = None, **changes: Any) -> dict[str, Any]:
    return batch(raw, loadBalancerCreate="single-call", **changes)


def test_the_component_registers_the_trees_this_harness_builds():
    """What the program registers under ``loadBalancerCreate: single-call`` is the tree stack the cases above judge:
    one tree per zone with the inputs :func:`policy_harness.as_trees` gives it (the listeners' first members aside:
    they are the member sets'), and no provider load balancer, listener, pool or monitor."""
    cloud = FakeCloud.dev(preview=True)
    real = run_preview(single_call(), cloud)
    built = as_trees(run_preview(batch(), FakeCloud.dev(preview=True)))
    assert {r.type for r in real.registrations} & set(PARTS) == set()
    for az in ("az1", "az2", "az3"):
        mine, theirs = _tree(real, az).inputs, _tree(built, az).inputs
        for key in ("name", "availability_zone", "loadbalancer_provider", "tags", "identity_tag"):
            assert mine.get(key) == theirs.get(key), key
        def strip(listeners: list) -> list:  # without the first members, and without keys given no value
            def present(value: Any) -> Any:
                return {k: present(v) for k, v in value.items() if v is not None} if isinstance(value, dict) \
                    else value
            return [present({k: v for k, v in l.items() if k not in ("members", "member_tag")}) for l in listeners]
        assert strip(mine["listeners"]) == strip(theirs["listeners"])
        assert [l["member_tag"] for l in mine["listeners"]] == [
            contract.member_set_tag(contract.pool_name("k8s-api", az, port)) for port in (6443, 22623)]


@pytest.mark.parametrize("change, policy", [
    (lambda run: run, None),
    (lambda run: run.set("k8s-api-az2-lb", "availabilityZone", "az1"), "ha-endpoint-zone-placement"),
], ids=["baseline", "az-of-another-zone"])
def test_the_real_single_call_program_gets_the_verdicts_of_the_provider_resources_program(change, policy):
    provider = run_preview(batch(), FakeCloud.dev(preview=True))
    change(provider)
    real = run_preview(single_call(), FakeCloud.dev(preview=True))
    if policy is not None:  # the same change, on the tree's own input
        _tree(real, "az2").inputs["availability_zone"] = "az1"
    expected = provider.violations(None)
    assert bool(expected) == (policy is not None)
    assert sorted(real.violations(None)) == sorted(expected)

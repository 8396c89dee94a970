"""The pack judges what a program declares beside the endpoint: a member in one of its pools, a rule in one of its
security groups, a record set publishing one of its addresses (issue 10).

Each test runs a real program under mocks (``neighbours_program.py``: the component, then the raw resources beside
it), starts from its compliant baseline and changes one thing (a setting of the program, the cloud, or one value the
program registered), and asserts the exact messages.
"""

from __future__ import annotations

import pytest
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from neighbours_program import any_zone_pool, production_endpoint, run_neighbours, split_cloud
from tests.mocks.cloud import FakeCloud
from tests.mocks.configs import amphora_endpoint

BESIDE = "(declared beside endpoint k8s-api)"
DECLARED = "cp-az1 10.10.1.0/24, cp-az2 10.10.2.0/24, cp-az3 10.10.3.0/24"
DECLARE = ("declare it through the endpoint instead (members[] with its subnet: the component looks the subnet up, "
           "checks the route and its readiness gate waits for the member)")
PRODUCTION = "in a production stack (load balancers tagged 'production')"
VIP_FIX = ("admit only the client networks that need the endpoint (their CIDRs as remote_ip_prefix, or the endpoint's "
           "allowedCidrs)")
REACHABILITY, UNJUDGED = "ha-endpoint-neighbour-member-reachability", "ha-endpoint-neighbour-member-unjudged"
RULES, RECORDS = "ha-endpoint-production-neighbour-rules", "ha-endpoint-neighbour-dns-readiness"


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_the_baseline_with_its_neighbours_passes_the_whole_pack(preview):
    run = run_neighbours(preview=preview)
    assert {r.name for r in run.registrations if r.name.startswith("extra-")} == {
        "extra-member", "extra-rule", "extra-dns"}
    assert run.violations() == []


# -- a member beside the endpoint: ha-endpoint-neighbour-member-reachability ------------------------------------------

def _unrouted(cloud: FakeCloud, pool: str) -> str:
    member, vip = cloud.subnet_id("cp-az2"), cloud.subnet_id("cp-az1")
    member_net, vip_net = cloud.network_id("cp-az2-net"), cloud.network_id("cp-az1-net")
    return (f"member extra-member {BESIDE} joins {pool}, but zone az1's load balancer cannot reach it: its subnet "
            f"cp-az2 ({member}, network {member_net}) and the VIP subnet cp-az1 ({vip}, network {vip_net}) are on "
            f"different networks and share no router; attach both subnets to one router, or put the member on a "
            f"subnet of network {vip_net}")


def test_a_member_on_a_subnet_no_route_joins_to_its_zone_is_refused():
    cloud = split_cloud()
    run = run_neighbours(cloud, member={"subnet": "cp-az2", "address": "10.10.2.20"})
    assert run.violations() == [(REACHABILITY, _unrouted(cloud, "a pool of zone az1"))]


def test_after_up_the_members_pool_is_known_by_its_id():
    cloud = split_cloud(preview=False)
    run = run_neighbours(cloud, preview=False, member={"subnet": "cp-az2", "address": "10.10.2.20"})
    run.drop_dependency("extra-member", "k8s-api-az1-6443-pool").drop_dependency("extra-member",
                                                                                "k8s-api-az1-22623-pool")
    assert run.violations() == [(REACHABILITY, _unrouted(cloud, "pool k8s-api-az1-6443-pool"))]


def test_a_member_address_outside_its_subnet_is_refused():
    run = run_neighbours()
    subnet = run.named("extra-member").inputs["subnetId"]
    run.set("extra-member", "address", "10.10.9.20")
    assert run.violations() == [(REACHABILITY, (
        f"member extra-member {BESIDE} joins a pool of zone az1 with address 10.10.9.20, which is not in its subnet "
        f"cp-az1 ({subnet}, 10.10.1.0/24); give it an address of that subnet, or set its subnet_id to the subnet "
        f"10.10.9.20 is on"))]


def test_a_member_address_that_is_no_address_is_refused():
    run = run_neighbours().set("extra-member", "address", "cp-9")
    assert run.violations() == [(REACHABILITY, (
        f"member extra-member {BESIDE} joins a pool of zone az1 with address 'cp-9', which is not an IP address; "
        f"give the member's IP address"))]


# -- a member the pack cannot judge: ha-endpoint-neighbour-member-unjudged ----------------------------------------------

def test_a_member_on_a_subnet_the_facts_do_not_describe_is_not_passed_unseen():
    cloud = FakeCloud.dev(preview=True)
    run = run_neighbours(cloud, member={"subnet": "island-sub", "address": "10.99.0.20"})
    assert run.violations() == [(UNJUDGED, (
        f"member extra-member {BESIDE} joins a pool of zone az1, but its subnet {cloud.subnet_id('island-sub')} is "
        f"not one the endpoint declares, so whether the load balancer of zone az1 reaches it cannot be judged; put "
        f"the member on a subnet the endpoint declares ({DECLARED}), or {DECLARE}"))]


def test_a_member_on_a_subnet_created_in_the_same_stack_is_not_passed_unseen():
    run = run_neighbours().set("extra-member", "subnetId", UNKNOWN_STRING_VALUE)
    assert run.violations() == [(UNJUDGED, (
        f"member extra-member {BESIDE} joins a pool of zone az1, but its subnet_id is not known at preview (a subnet "
        f"created in this stack), so the endpoint's facts cannot describe it and whether the load balancer reaches it "
        f"cannot be judged; put the member on a subnet the endpoint declares ({DECLARED}), or {DECLARE}"))]


def test_an_address_not_known_at_preview_leaves_the_route_judged_on_the_subnet():
    run = run_neighbours().set("extra-member", "address", UNKNOWN_STRING_VALUE)
    assert run.violations() == []
    cloud = split_cloud()
    run = run_neighbours(cloud, member={"subnet": "cp-az2", "address": "10.10.2.20"})
    run.set("extra-member", "address", UNKNOWN_STRING_VALUE)
    assert run.violations() == [(REACHABILITY, _unrouted(cloud, "a pool of zone az1"))]


def _without_subnet(run):
    del run.named("extra-member").inputs["subnetId"]
    return run


def test_a_member_without_subnet_is_judged_on_its_zones_vip_subnet():
    assert _without_subnet(run_neighbours()).violations() == []
    run = _without_subnet(run_neighbours()).set("extra-member", "address", "10.10.2.20")
    assert run.violations() == [(UNJUDGED, (
        f"member extra-member {BESIDE} joins a pool of zone az1 and sets no subnet_id, so Octavia reaches it from "
        f"zone az1's VIP subnet cp-az1 (10.10.1.0/24), which does not hold its address 10.10.2.20: whether a router "
        f"forwards that traffic is not in the endpoint's facts; set its subnet_id to the member's subnet (one the "
        f"endpoint declares: {DECLARED}), or {DECLARE}"))]


def test_a_pool_id_read_from_every_zone_is_judged_against_each_zone():
    """The endpoint's ``zones`` output depends on every zone's resources: at preview the member may join any."""
    assert run_neighbours(member={"pool": any_zone_pool("az1", 6443)}).violations() == []  # one network: all reach
    cloud = split_cloud()
    run = run_neighbours(cloud, member={"pool": any_zone_pool("az1", 6443)})
    assert run.violations() == [(UNJUDGED, (
        f"member extra-member {BESIDE} joins a pool of zone az1, az2 or az3 (its pool id is not known at preview): "
        f"the load balancer(s) of zones az2 and az3 would not reach its subnet cp-az1 ({cloud.subnet_id('cp-az1')}, "
        f"network {cloud.network_id('cp-az1-net')}), that of zone az1 would; take the pool id from the one zone the "
        f"member belongs to (not from the endpoint's zones output, which depends on every zone), so that the pack "
        f"can tell which zone it joins"))]
    up = run_neighbours(split_cloud(preview=False), preview=False, member={"pool": any_zone_pool("az1", 6443)})
    assert up.violations() == []  # once the pool exists its id says which zone


def test_a_member_unreachable_from_every_zone_it_may_join_is_refused():
    cloud = split_cloud()
    run = run_neighbours(cloud, member={"pool": any_zone_pool("az1", 6443)})
    island = cloud.subnet_id("island-sub")
    run.facts()["subnets"][island] = {"id": island, "name": "island-sub", "cidr": "10.99.0.0/24",
                                      "networkId": cloud.network_id("island"), "routerIds": []}
    run.set("extra-member", "subnetId", island).set("extra-member", "address", "10.99.0.20")
    assert [(policy, message.split(": its subnet")[0]) for policy, message in run.violations()] == [
        (REACHABILITY, f"member extra-member {BESIDE} joins a pool of zone az1, az2 or az3, but zone {az}'s load "
                       f"balancer cannot reach it") for az in ("az1", "az2", "az3")]


def test_a_member_of_another_pool_is_not_the_endpoints():
    run = run_neighbours(member={"subnet": "island-sub", "address": "10.99.0.20"})
    run.drop_dependency("extra-member", "k8s-api-az1-6443-pool").drop_dependency("extra-member",
                                                                                "k8s-api-az1-22623-pool")
    assert run.violations() == []


# -- a rule beside the endpoint: ha-endpoint-production-neighbour-rules -------------------------------------------------

def test_a_rule_opening_the_vip_group_to_everyone_in_production_is_refused():
    run = run_neighbours(rule={"prefix": "0.0.0.0/0"})
    assert run.violations() == [(RULES, (
        f"security group rule extra-rule {BESIDE} admits tcp port 6443 from 0.0.0.0/0 into the endpoint's VIP "
        f"security group k8s-api-vip-sg {PRODUCTION}; {VIP_FIX}"))]


def test_a_rule_opening_the_members_group_to_every_ipv6_address_in_production_is_refused():
    run = run_neighbours(rule={"group": "members", "prefix": "::/0", "ethertype": "IPv6"})
    assert run.violations() == [(RULES, (
        f"security group rule extra-rule {BESIDE} admits tcp port 6443 from ::/0 into the endpoint's members' "
        f"security group k8s-api-members-sg (the servers behind its load balancers) {PRODUCTION}; admit only the "
        f"networks that need the members' ports (the endpoint already admits its load balancers' subnets)"))]


def test_a_rule_without_any_remote_admits_everyone():
    run = run_neighbours(rule={"prefix": None, "port": None})
    assert run.violations() == [(RULES, (
        f"security group rule extra-rule {BESIDE} admits tcp on every port from everyone (no remote_ip_prefix nor "
        f"remote_group_id) into the endpoint's VIP security group k8s-api-vip-sg {PRODUCTION}; {VIP_FIX}"))]


def test_a_rule_admitting_a_remote_group_or_going_out_is_no_opening():
    assert run_neighbours(rule={"prefix": None, "remote_group": lambda ep: ep.members_security_group_id}
                          ).violations() == []
    assert run_neighbours(rule={"prefix": "0.0.0.0/0", "direction": "egress"}).violations() == []


def test_an_open_rule_outside_production_passes():
    assert run_neighbours(endpoint=amphora_endpoint(), rule={"prefix": "0.0.0.0/0"}).violations() == []


def test_production_by_stack_name_counts_too():
    run = run_neighbours(endpoint=amphora_endpoint(), rule={"prefix": "0.0.0.0/0"})
    config = {RULES: {"productionStackPattern": "^dev$"}}
    assert run.messages(RULES, config) == [
        f"security group rule extra-rule {BESIDE} admits tcp port 6443 from 0.0.0.0/0 into the endpoint's VIP "
        f"security group k8s-api-vip-sg in a production stack (stack 'dev' matches productionStackPattern '^dev$'); "
        f"{VIP_FIX}"]


def test_after_up_the_group_is_known_by_its_id():
    run = run_neighbours(preview=False, rule={"prefix": "0.0.0.0/0"}).drop_dependency("extra-rule", "k8s-api-vip-sg")
    assert run.messages(RULES) == [
        f"security group rule extra-rule {BESIDE} admits tcp port 6443 from 0.0.0.0/0 into the endpoint's VIP "
        f"security group k8s-api-vip-sg {PRODUCTION}; {VIP_FIX}"]


def test_a_rule_whose_direction_is_not_known_cannot_be_ruled_out():
    run = run_neighbours(rule={"prefix": "0.0.0.0/0"}).set("extra-rule", "direction", UNKNOWN_STRING_VALUE)
    assert run.messages(RULES) == [
        f"security group rule extra-rule {BESIDE} may admit tcp port 6443 from 0.0.0.0/0 (its direction is not known "
        f"at preview) into the endpoint's VIP security group k8s-api-vip-sg {PRODUCTION}; {VIP_FIX}"]


def test_an_invalid_production_pattern_is_reported():
    run = run_neighbours()
    assert run.messages(RULES, {RULES: {"productionStackPattern": "prod("}}) == [
        "productionStackPattern 'prod(' is not a regular expression (missing ), unterminated subpattern at position "
        "4); fix the policy configuration of ha-endpoint-production-neighbour-rules"]


# -- a record set beside the endpoint: ha-endpoint-neighbour-dns-readiness ----------------------------------------------

def _zone_address(az: str):
    return lambda ep: [ep.zone_components[az].published_address]


def _gate_message(address: str, az: str = "az1") -> str:
    return (f"record set extra-dns {BESIDE} publishes {address}, zone {az}'s address, without waiting for "
            f"k8s-api-{az}-ready: under publish when-ready a zone's address may be published only once its members "
            f"are ready; take the addresses from the endpoint's addresses output (or its zones output), or make the "
            f"record set depend on k8s-api-{az}-ready")


def _without_floating_ips() -> dict:
    """The production endpoint publishing its VIPs (no floating network): a zone's address exists once its load
    balancer does, before its members are ready."""
    raw = production_endpoint()
    del raw["floatingNetwork"]
    return raw


def test_a_record_taking_a_zones_vip_before_its_readiness_is_refused():
    run = run_neighbours(endpoint=_without_floating_ips(), record={"records": _zone_address("az1")})
    assert run.violations() == [(RECORDS, _gate_message("the address of k8s-api-az1-lb"))]


def test_after_up_the_record_names_the_address():
    run = run_neighbours(preview=False, endpoint=_without_floating_ips(), record={"records": _zone_address("az1")})
    address = run.named("extra-dns").inputs["records"][0]
    assert run.violations() == [(RECORDS, _gate_message(address))]


def test_a_record_taking_a_zones_allocated_floating_ip_waits_through_its_association():
    """The component associates a zone's floating IP once the zone is ready (backends/octavia/serving.py): a record taking
    the association's address waits for the readiness through it."""
    for preview in (True, False):
        assert run_neighbours(preview=preview, record={"records": _zone_address("az1")}).violations() == []


def test_a_brought_floating_ip_written_as_a_literal_is_refused():
    raw = production_endpoint()
    raw["zones"]["az3"]["floatingIp"] = "172.24.4.50"
    run = run_neighbours(endpoint=raw, record={"records": lambda ep: ["172.24.4.50"]})
    assert run.violations() == [(RECORDS, _gate_message("172.24.4.50", "az3"))]


def test_records_that_wait_for_the_zones_readiness_pass():
    ready_addresses = {"records": lambda ep: ep.zones.apply(
        lambda zones: [z.get("floatingIp") or z.get("floating_ip") for z in zones.values() if z["ready"]])}
    assert run_neighbours(record=ready_addresses).violations() == []
    waits = {"records": _zone_address("az1"), "depends_on": lambda ep: [ep.zone_components["az1"].serving.readiness]}
    assert run_neighbours(record=waits).violations() == []


def test_bootstrap_publication_may_publish_at_once():
    raw = production_endpoint()
    raw["dns"]["publish"] = "bootstrap"
    assert run_neighbours(endpoint=raw, record={"records": _zone_address("az1")}).violations() == []

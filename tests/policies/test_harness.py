"""The pack on what the program really registers: ``__main__.py`` run under mocks against the fake cloud, in
preview (nothing created, floating IP addresses unknown) unless a test says otherwise. Each policy: the dev baseline
passes, and each test changes one thing (the configuration, or one registered resource or declared fact) and
asserts the exact messages."""

from __future__ import annotations

import pytest

from ha_endpoint.core import contract
from ha_endpoint.core.errors import ConfigError
from policy_harness import run_preview
from policy_runner import run_pack
from tests.mocks.cloud import FakeCloud
from tests.mocks.configs import byo_endpoint, amphora_endpoint, internal_endpoint, sized_endpoint, unpublishing_endpoint


def _facts(run, *path):
    value = run.facts()
    for part in path:
        value = value[part]
    return value


# -- baselines ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
@pytest.mark.parametrize("endpoint", [amphora_endpoint, byo_endpoint, internal_endpoint],
                         ids=["dev", "byo-floating-ip", "internal"])
def test_the_programs_endpoints_pass_the_pack(endpoint, preview):
    assert run_preview(endpoint(), preview=preview).violations() == []


@pytest.mark.parametrize("zones, members, listeners, placement", [
    (2, 1, 1, "own-zone"), (4, 2, 3, "all-zones"), (5, 1, 2, "own-zone")])
def test_generated_endpoints_pass_the_pack(zones, members, listeners, placement):
    raw = sized_endpoint(zones, members, listeners, placement)
    run = run_preview(raw, FakeCloud.topology(preview=True, zones=zones))
    assert run.violations() == []
    assert run.messages("ha-endpoint-min-zones", {"ha-endpoint-min-zones": {"minZones": zones + 1}}) == [
        f"endpoint bench's load balancers span {zones} distinct availability zone(s) "
        f"({', '.join(f'az{n}' for n in range(1, zones + 1))}); at least {zones + 1} are required: add zones, each "
        f"in its own AZ with its own subnet"]


def test_bootstrap_publication_passes_the_pack():
    raw = amphora_endpoint()
    raw["dns"]["publish"] = "bootstrap"
    assert run_preview(raw).violations() == []


def test_a_monitor_on_its_own_port_is_admitted_by_the_component():
    raw = amphora_endpoint()
    raw["listeners"][1]["monitor"]["port"] = 10257
    assert run_preview(raw).violations() == []


def test_the_stack_policies_read_the_facts_from_the_endpoints_outputs_alone():
    """What AnalyzeStack gets for a component is its registered outputs: the facts are recorded there, once."""
    run = run_preview(amphora_endpoint())
    assert run.named("k8s-api").inputs == {"name": "k8s-api"}
    assert run_pack(run.stack_resources(), inputs={}) == []


def test_without_facts_in_the_outputs_the_pack_says_so_once():
    run = run_preview(amphora_endpoint())
    endpoint = run.named("k8s-api")
    endpoint.outputs = {key: value for key, value in endpoint.outputs.items() if key != "facts"}
    assert run.violations() == [(
        "ha-endpoint-declared-facts",
        "endpoint k8s-api: facts: missing from the HaEndpoint's outputs; use a component version that declares its "
        "facts (ha_endpoint.core.facts), or this pack's matching version; the other policies cannot check this endpoint "
        "until its facts are declared in the component's shape")]


# -- ha-endpoint-min-zones -------------------------------------------------------------------------------------------

def test_min_zones_counts_the_registered_load_balancers():
    assert run_preview(amphora_endpoint()).messages("ha-endpoint-min-zones", {"ha-endpoint-min-zones": {"minZones": 4}}) == [
        "endpoint k8s-api's load balancers span 3 distinct availability zone(s) (az1, az2, az3); at least 4 are "
        "required: add zones, each in its own AZ with its own subnet"]


# -- ha-endpoint-zone-placement --------------------------------------------------------------------------------------

def test_a_registered_load_balancer_in_another_az_is_reported():
    run = run_preview(amphora_endpoint()).set("k8s-api-az1-lb", "availabilityZone", "az3")
    assert run.messages("ha-endpoint-zone-placement") == [
        "load balancer k8s-api-az1-lb serves zone az1 but is placed in availability zone 'az3'; set its "
        "availability_zone to 'az1'"]


def test_a_registered_vip_on_another_zones_subnet_is_reported():
    run = run_preview(amphora_endpoint())
    az1_subnet, az3_subnet = _facts(run, "zones", "az1", "vipSubnetId"), _facts(run, "zones", "az3", "vipSubnetId")
    run.set("k8s-api-az3-lb", "vipSubnetId", az1_subnet)
    assert run.messages("ha-endpoint-zone-placement") == [
        f"load balancer k8s-api-az3-lb has its VIP on subnet {az1_subnet} but zone az3 is mapped to subnet "
        f"{az3_subnet}; put the VIP on the zone's subnet (zones.az3.subnet)",
        f"load balancer k8s-api-az3-lb (zone az3) has its VIP on subnet {az1_subnet}, already the VIP subnet of zone "
        f"az1; each zone needs a subnet of its own in its own AZ (zones.az3.subnet), or one AZ's failure takes both "
        f"zones down"]


def test_a_missing_zone_load_balancer_is_reported():
    run = run_preview(amphora_endpoint()).remove("k8s-api-az2-lb")
    assert run.messages("ha-endpoint-zone-placement") == [
        "zone az2 of endpoint k8s-api has no load balancer (expected k8s-api-az2-lb); every configured zone needs "
        "its own load balancer"]


# -- ha-endpoint-member-zones ----------------------------------------------------------------------------------------

def test_a_zone_pool_left_without_members_is_reported():
    run = run_preview(amphora_endpoint()).remove("k8s-api-az3-6443-member-10.10.3.10")
    assert run.messages("ha-endpoint-member-zones") == [
        "zone az3 of endpoint k8s-api has 0 member(s) in pool k8s-api-az3-6443-pool, fewer than the 1 required "
        "under own-zone placement; add members with az: az3, remove the zone, or set memberPlacement: all-zones"]


def test_min_members_per_zone_on_the_dev_stack():
    messages = run_preview(amphora_endpoint()).messages(
        "ha-endpoint-member-zones", {"ha-endpoint-member-zones": {"minMembersPerZone": 2}})
    assert messages == [
        f"zone {az} of endpoint k8s-api has 1 member(s) in pool k8s-api-{az}-{port}-pool, fewer than the 2 "
        f"required under own-zone placement; add members with az: {az}, remove the zone, or set memberPlacement: "
        f"all-zones" for az in ("az1", "az2", "az3") for port in (6443, 22623)]


def test_a_member_declared_in_an_unconfigured_zone_is_reported():
    run = run_preview(amphora_endpoint()).set_fact("members.cp-1.az", "az7")
    assert run.messages("ha-endpoint-member-zones") == [
        "member cp-1 of endpoint k8s-api is in zone 'az7', which is not configured; use one of az1, az2, az3, or "
        "add 'az7' under zones with its subnet"]


def test_all_zones_placement_registers_every_member_in_every_zone():
    raw = amphora_endpoint()
    raw["memberPlacement"] = "all-zones"
    assert run_preview(raw).violations() == []


# -- ha-endpoint-member-reachability ---------------------------------------------------------------------------------

def test_a_member_on_an_unrouted_network_is_reported():
    cloud = FakeCloud.dev(preview=True)
    run = run_preview(amphora_endpoint(), cloud)
    island = cloud.network_id("island")
    subnet, vip_subnet = "island-subnet-id", _facts(run, "zones", "az3", "vipSubnetId")
    cp = _facts(run, "subnets", vip_subnet, "networkId")
    run.facts()["subnets"][subnet] = {"id": subnet, "name": "island-sub", "cidr": "10.10.3.0/24", "networkId": island,
                                      "routerIds": []}
    run.set_fact("members.cp-2.subnetId", subnet)
    assert run.messages("ha-endpoint-member-reachability") == [
        f"member cp-2 (10.10.3.10 on subnet {subnet}, network {island}) is not reachable from the load balancer of "
        f"zone az3 (VIP subnet {vip_subnet}, network {cp}): the subnets are on different networks and share no "
        f"router; attach both subnets to one router, or move the member to a subnet of network {cp}"]


def test_a_member_address_outside_its_subnet_is_reported():
    run = run_preview(amphora_endpoint()).set_fact("members.cp-1.address", "10.10.9.10")
    subnet = _facts(run, "members", "cp-1", "subnetId")
    assert run.messages("ha-endpoint-member-reachability") == [
        f"member cp-1 has address 10.10.9.10, which is not in its subnet {subnet} (10.10.2.0/24); fix "
        f"members[].address, or set members[].subnet to the subnet that address is on"]


def test_the_component_refuses_an_unreachable_member_before_the_pack_runs():
    raw = amphora_endpoint()
    raw["members"][2].update(address="10.99.0.10", subnet="island-sub")
    with pytest.raises(ConfigError, match="members\\[2\\]"):
        run_preview(raw)


# -- ha-endpoint-member-security-group -------------------------------------------------------------------------------

def test_a_zone_vip_subnet_missing_from_the_registered_rules_is_reported():
    run = run_preview(amphora_endpoint()).remove("k8s-api-members-sg-tcp-22623-from-10.10.2.0_24")
    assert run.messages("ha-endpoint-member-security-group") == [
        "the members' security group k8s-api-members-sg does not admit zone az2's VIP subnet 10.10.2.0/24 on tcp "
        "port 22623 (member port of listener 22623 and health-monitor port of listener 22623); add an ingress rule "
        "for tcp port 22623 from 10.10.2.0/24"]


def test_a_rule_for_the_wrong_port_is_reported():
    run = run_preview(amphora_endpoint())
    run.set("k8s-api-members-sg-tcp-6443-from-10.10.3.0_24", "portRangeMin", 6444.0)
    run.set("k8s-api-members-sg-tcp-6443-from-10.10.3.0_24", "portRangeMax", 6444.0)
    assert run.messages("ha-endpoint-member-security-group") == [
        "the members' security group k8s-api-members-sg does not admit zone az3's VIP subnet 10.10.3.0/24 on tcp "
        "port 6443 (member port of listener 6443 and health-monitor port of listener 6443); add an ingress rule for "
        "tcp port 6443 from 10.10.3.0/24"]


def test_a_member_monitor_port_read_back_as_0_needs_no_rule_for_port_0():
    run = run_preview(amphora_endpoint()).set("k8s-api-az2-22623-member-10.10.2.10", "monitorPort", 0.0)
    assert run.messages("ha-endpoint-member-security-group") == []
    run.set("k8s-api-az2-22623-member-10.10.2.10", "monitorPort", 10257.0)  # a real monitor port is checked
    assert len(run.messages("ha-endpoint-member-security-group")) == 3


# -- ha-endpoint-production-listener-cidrs ---------------------------------------------------------------------------

def _production_endpoint():
    raw = amphora_endpoint()
    raw["tags"] = ["production"]
    raw["allowedCidrs"] = ["192.0.2.0/24"]
    return raw


def test_a_restricted_production_endpoint_passes():
    assert run_preview(_production_endpoint()).violations() == []


def test_a_production_endpoint_open_to_everyone_is_reported():
    raw = _production_endpoint()
    raw["allowedCidrs"] = ["0.0.0.0/0"]
    messages = run_preview(raw).messages("ha-endpoint-production-listener-cidrs")
    reason = "in a production stack (load balancers tagged 'production')"
    fix = "set allowedCidrs to the client networks that need the endpoint"
    listeners = [f"listener k8s-api-{az}-{port}-listener admits 0.0.0.0/0 {reason}; {fix}"
                 for az in ("az1", "az2", "az3") for port in (6443, 22623)]
    rules = [f"security group rule k8s-api-vip-sg-tcp-{port}-from-0.0.0.0_0 opens the endpoint's VIPs to 0.0.0.0/0 "
             f"{reason}; {fix}" for port in (22623, 6443)]
    assert sorted(messages) == sorted(listeners + rules)


def test_one_open_production_listener_is_reported():
    run = run_preview(_production_endpoint()).set("k8s-api-az2-6443-listener", "allowedCidrs", ["0.0.0.0/0"])
    assert run.messages("ha-endpoint-production-listener-cidrs") == [
        "listener k8s-api-az2-6443-listener admits 0.0.0.0/0 in a production stack (load balancers tagged "
        "'production'); set allowedCidrs to the client networks that need the endpoint"]


# -- ha-endpoint-outage-floor ----------------------------------------------------------------------------------------

def test_a_production_endpoint_that_may_end_an_update_on_one_zone_is_refused_and_the_default_floor_passes():
    def floor_messages(**readiness):
        raw = unpublishing_endpoint(_production_endpoint(), **readiness)
        return run_preview(raw).messages("ha-endpoint-outage-floor")
    assert floor_messages() == []  # default: every zone but one
    assert floor_messages(minReadyZones=3) == []
    assert floor_messages(minReadyZones=1) == [
        "endpoint k8s-api in a production stack (load balancers tagged 'production'): minReadyZones is 1: an update "
        "during an outage may leave a single zone serving; set readiness.minReadyZones to at least 2"]


def test_the_floor_is_judged_only_where_it_applies():
    raw = unpublishing_endpoint(minReadyZones=1)  # not production
    assert run_preview(raw).messages("ha-endpoint-outage-floor") == []
    assert run_preview(_production_endpoint()).messages("ha-endpoint-outage-floor") == []  # fail: no floor


# -- ha-endpoint-pool-health-monitor ---------------------------------------------------------------------------------

def test_a_listener_without_monitor_is_refused_by_the_component_and_its_pools_by_the_pack():
    raw = amphora_endpoint()
    raw["listeners"][1]["monitor"] = None
    with pytest.raises(ConfigError, match=r"listeners\[1\]\.monitor: a listener needs a health monitor"):
        run_preview(raw)
    run = run_preview(amphora_endpoint()).remove("k8s-api-az2-22623-monitor")
    assert run.messages("ha-endpoint-pool-health-monitor") == [
        "pool k8s-api-az2-22623-pool has no health monitor: without a health monitor Octavia cannot take a dead "
        "member out of rotation and a member reports NO_MONITOR, which says nothing about whether it serves, so "
        "readiness would be blind; give its listener a monitor (listeners[].monitor, e.g. type TCP)"]


# -- ha-endpoint-dns-ttl ---------------------------------------------------------------------------------------------

def test_a_long_ttl_is_reported_on_every_record_set():
    raw = amphora_endpoint()
    raw["dns"]["ttl"] = 300
    assert sorted(run_preview(raw).messages("ha-endpoint-dns-ttl")) == sorted(
        f"record set {name} has a TTL of 300 s, above the 60 s maximum: resolvers would keep a failed zone's address "
        f"that long; set dns.ttl to 60 or less"
        for name in ("k8s-api-dns", "k8s-api-az1-dns", "k8s-api-az2-dns", "k8s-api-az3-dns"))


# -- ha-endpoint-dns-records -----------------------------------------------------------------------------------------

def test_a_zone_address_left_out_of_the_record_is_reported():
    run = run_preview(amphora_endpoint()).drop_dependency("k8s-api-dns", "k8s-api-az2-fip-assoc")
    assert run.messages("ha-endpoint-dns-records") == [
        "record set k8s-api-dns does not take zone az2's address: its records depend on no floating IP, load balancer "
        "or other resource of zone az2; publish that zone's address (its floating IP, or its VIP for an internal endpoint) "
        "in it"]


def test_another_zones_address_in_a_per_zone_record_is_reported():
    run = run_preview(amphora_endpoint())
    run.named("k8s-api-az1-dns").property_dependencies["records"].append(run.named("k8s-api-az2-fip-assoc").urn)
    assert run.messages("ha-endpoint-dns-records") == [
        "record set k8s-api-az1-dns takes an address from zone az2, which it must not publish (it publishes az1); "
        "remove that address"]


def test_a_brought_floating_ip_missing_from_known_records_is_reported():
    run = run_preview(byo_endpoint(), preview=False)
    assert run.named("k8s-api-az3-dns").inputs["records"] == ["172.24.4.50"]
    run.set("k8s-api-az3-dns", "records", ["172.24.4.51"])
    assert run.messages("ha-endpoint-dns-records") == [
        "record set k8s-api-az3-dns does not list 172.24.4.50, the published address of zone az3; add it",
        "record set k8s-api-az3-dns lists 172.24.4.51, which is not the published address of any of its ready zones "
        "(az3); remove it"]


def _held_back(zone: str):
    cloud = FakeCloud.dev()
    cloud.unready_azs.add(zone)
    return run_preview(unpublishing_endpoint(), cloud, preview=False)


def test_a_zone_held_back_by_its_gate_is_rightly_left_out_after_the_update():
    assert _held_back("az2").violations() == []


def test_a_zone_whose_gate_is_closed_must_not_be_listed():
    run = _held_back("az2")
    az2 = run.named("k8s-api").outputs["zones"]["az2"]["floatingIp"]
    run.set("k8s-api-dns", "records", sorted(run.named("k8s-api-dns").inputs["records"] + [az2]))
    assert run.messages("ha-endpoint-dns-records") == [
        f"record set k8s-api-dns lists {az2}, which is not the published address of any of its ready zones (az1, "
        f"az3); remove it"]


def test_a_ready_zone_missing_from_the_record_is_reported_after_the_update():
    run = run_preview(amphora_endpoint(), preview=False)
    az1 = run.named("k8s-api").outputs["zones"]["az1"]["floatingIp"]
    run.set("k8s-api-dns", "records", [r for r in run.named("k8s-api-dns").inputs["records"] if r != az1])
    assert run.messages("ha-endpoint-dns-records") == [
        f"record set k8s-api-dns does not list {az1}, the published address of zone az1; add it"]


# -- ha-endpoint-dns-readiness-gate ----------------------------------------------------------------------------------

def test_a_record_that_does_not_wait_for_a_zones_readiness_is_reported():
    # the record waits for the zone's readiness directly and through the floating IP association (associated once
    # the zone is ready): both paths are cut
    run = (run_preview(amphora_endpoint()).drop_dependency("k8s-api-dns", "k8s-api-az2-ready")
           .drop_dependency(contract.floating_ip_association_name("k8s-api", "az2"), "k8s-api-az2-ready"))
    assert run.messages("ha-endpoint-dns-readiness-gate") == [
        "record set k8s-api-dns does not depend on k8s-api-az2-ready: under publish when-ready zone az2's address "
        "could be published before its members are ready; make the record set wait for that readiness resource"]


def test_a_missing_readiness_resource_is_reported():
    run = run_preview(amphora_endpoint()).remove("k8s-api-az1-ready")
    assert run.messages("ha-endpoint-dns-readiness-gate") == [
        "zone az1 of endpoint k8s-api has no readiness resource k8s-api-az1-ready; under publish when-ready its "
        "address may only be published once its members are ready"]


# -- ha-endpoint-ovn-provider-constraints ----------------------------------------------------------------------------

def _ovn_endpoint():
    raw = amphora_endpoint()
    raw["loadBalancerProvider"] = "ovn"
    raw["listeners"][0]["monitor"] = {"type": "TCP"}
    return raw


def test_an_ovn_endpoint_passes():
    assert run_preview(_ovn_endpoint()).violations() == []


def test_an_ovn_pool_with_round_robin_is_reported():
    run = run_preview(_ovn_endpoint()).set("k8s-api-az2-6443-pool", "lbMethod", "ROUND_ROBIN")
    assert run.messages("ha-endpoint-ovn-provider-constraints") == [
        "pool k8s-api-az2-6443-pool balances with ROUND_ROBIN, but the ovn provider supports SOURCE_IP_PORT only; "
        "set lbMethod: SOURCE_IP_PORT (or remove it)"]


def test_an_ovn_http_monitor_is_reported():
    run = run_preview(_ovn_endpoint()).set("k8s-api-az1-22623-monitor", "type", "HTTP")
    assert run.messages("ha-endpoint-ovn-provider-constraints") == [
        "health monitor k8s-api-az1-22623-monitor is of type HTTP, which the ovn provider does not have; use one of "
        "TCP, UDP-CONNECT, SCTP"]

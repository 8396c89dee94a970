"""Each rule on a hand-built stack shaped like the component's dev output: the baseline passes, and each test
changes one thing and asserts the exact message. (``test_harness.py`` runs the same rules on real mock runs.)"""

from __future__ import annotations

import pytest
from pulumi_policy.proxy import UNKNOWN_OBJECT_VALUE, UNKNOWN_STRING_VALUE, unknown_checking_proxy

from policies import observed
from policies.rules import (
    declared_facts, dns_readiness, dns_records, dns_ttl, member_reachability, member_security_group, member_zones, min_zones,
    ovn_constraints, pool_health_monitor, production_listeners, zone_placement,
)
from policy_runner import run_pack, run_rule
from policy_synthetic import dev_facts, dev_stack

ALL = (declared_facts, min_zones, zone_placement, member_zones, member_reachability, member_security_group, production_listeners,
       pool_health_monitor, dns_ttl, dns_records, dns_readiness, ovn_constraints)


def _gap(path: str, what: str) -> str:
    return (f"endpoint k8s-api: {what} ({path}) is missing from the HaEndpoint's properties or unknown at preview, "
            f"so it cannot be checked; the component must pass it as a plain, looked-up value")


# -- baseline ------------------------------------------------------------------------------------------------------

def test_the_dev_baseline_passes_the_whole_pack():
    assert run_pack(dev_stack().resources) == []


@pytest.mark.parametrize("rule", ALL, ids=lambda rule: rule.NAME)
def test_each_rule_passes_the_dev_baseline(rule):
    assert run_rule(rule, dev_stack().resources) == []


def test_a_stack_without_an_endpoint_is_not_checked():
    stack = dev_stack()
    others = [r for r in stack.resources if r.resource_type in ("pulumi:pulumi:Stack",)]
    assert run_pack(others) == []


# -- ha-endpoint-min-zones -------------------------------------------------------------------------------------------

def test_min_zones_is_configurable():
    assert run_rule(min_zones, dev_stack().resources, {"minZones": 4}) == [
        "endpoint k8s-api's load balancers span 3 distinct availability zone(s) (az1, az2, az3); at least 4 are "
        "required: add zones, each in its own AZ with its own subnet"]


def test_two_zones_in_the_same_az_count_once():
    facts = dev_facts()
    facts["zones"] = {key: zone for key, zone in facts["zones"].items() if key != "az3"}
    facts["zones"]["az2"]["az"] = "az1"
    facts["members"] = facts["members"][:2]
    assert run_rule(min_zones, dev_stack(facts).resources) == [
        "endpoint k8s-api's load balancers span 1 distinct availability zone(s) (az1); at least 2 are required: "
        "add zones, each in its own AZ with its own subnet"]


# -- ha-endpoint-zone-placement --------------------------------------------------------------------------------------

def test_a_load_balancer_in_another_az_is_reported():
    stack = dev_stack()
    stack.named("k8s-api-az1-lb").props["availabilityZone"] = "az2"
    assert run_rule(zone_placement, stack.resources) == [
        "load balancer k8s-api-az1-lb serves zone az1 but is placed in availability zone 'az2'; set its "
        "availability_zone to 'az1'"]


def test_a_load_balancer_without_an_az_is_reported():
    stack = dev_stack()
    stack.named("k8s-api-az2-lb").props["availabilityZone"] = None
    assert run_rule(zone_placement, stack.resources) == [
        "load balancer k8s-api-az2-lb (zone az2) sets no availability zone, so Octavia may place it in any AZ; set "
        "its availability_zone to 'az2'"]


def test_a_vip_on_another_zones_subnet_is_reported():
    stack = dev_stack()
    stack.named("k8s-api-az3-lb").props["vipSubnetId"] = "subnet-az1"
    assert run_rule(zone_placement, stack.resources) == [
        "load balancer k8s-api-az3-lb has its VIP on subnet subnet-az1 but zone az3 is mapped to subnet subnet-az3; "
        "put the VIP on the zone's subnet (zones.az3.subnet)",
        "load balancer k8s-api-az3-lb (zone az3) has its VIP on subnet subnet-az1, already the VIP subnet of zone "
        "az1; each zone needs a subnet of its own in its own AZ (zones.az3.subnet), or one AZ's failure takes both "
        "zones down"]


def test_two_zones_mapped_to_one_subnet_are_reported():
    facts = dev_facts()
    facts["zones"]["az2"].update(subnetId="subnet-az1", subnetCidr="10.10.1.0/24")
    facts["members"][1].update(address="10.10.1.11", subnetId="subnet-az1", subnetCidr="10.10.1.0/24")
    assert run_rule(zone_placement, dev_stack(facts).resources) == [
        "load balancer k8s-api-az2-lb (zone az2) has its VIP on subnet subnet-az1, already the VIP subnet of zone "
        "az1; each zone needs a subnet of its own in its own AZ (zones.az2.subnet), or one AZ's failure takes both "
        "zones down"]


def test_a_zone_without_a_load_balancer_is_reported():
    stack = dev_stack()
    stack.remove("k8s-api-az3-lb")
    assert run_rule(zone_placement, stack.resources) == [
        "zone az3 of endpoint k8s-api has no load balancer (expected k8s-api-az3-lb); every configured zone needs "
        "its own load balancer"]


def test_a_missing_subnet_fact_is_a_clear_violation():
    facts = dev_facts()
    del facts["zones"]["az1"]["subnetId"]
    assert run_rule(zone_placement, dev_stack(facts).resources) == [
        _gap("zones.az1.subnetId", "the VIP subnet id of zone az1")]


def test_an_unknown_vip_subnet_is_reported_not_deferred():
    stack = dev_stack()
    stack.named("k8s-api-az1-lb").props["vipSubnetId"] = UNKNOWN_STRING_VALUE
    assert run_rule(zone_placement, stack.resources) == [
        "load balancer k8s-api-az1-lb (zone az1): its VIP subnet is unknown at preview; pass the looked-up subnet "
        "id subnet-az1 as a plain value"]


# -- ha-endpoint-member-zones ----------------------------------------------------------------------------------------

def test_a_member_in_an_unconfigured_zone_is_reported():
    facts = dev_facts()
    facts["members"][2]["zone"] = "az9"
    stack = dev_stack(facts)
    assert run_rule(member_zones, stack.resources) == [
        "member cp-2 of endpoint k8s-api is in zone 'az9', which is not configured; use one of az1, az2, az3, or "
        "add 'az9' under zones with its subnet",
        "zone az3 of endpoint k8s-api has 0 member(s) in pool k8s-api-az3-6443-pool, fewer than the 1 required "
        "under own-zone placement; add members with zone: az3, remove the zone, or set memberPlacement: all-zones",
        "zone az3 of endpoint k8s-api has 0 member(s) in pool k8s-api-az3-22623-pool, fewer than the 1 required "
        "under own-zone placement; add members with zone: az3, remove the zone, or set memberPlacement: all-zones"]


def test_a_pool_without_members_is_reported():
    stack = dev_stack()
    stack.remove("k8s-api-az2-22623-member-10.10.2.10")
    assert run_rule(member_zones, stack.resources) == [
        "zone az2 of endpoint k8s-api has 0 member(s) in pool k8s-api-az2-22623-pool, fewer than the 1 required "
        "under own-zone placement; add members with zone: az2, remove the zone, or set memberPlacement: all-zones"]


def test_min_members_per_zone_is_configurable():
    messages = run_rule(member_zones, dev_stack().resources, {"minMembersPerZone": 2})
    assert len(messages) == 6
    assert messages[0] == (
        "zone az1 of endpoint k8s-api has 1 member(s) in pool k8s-api-az1-6443-pool, fewer than the 2 required "
        "under own-zone placement; add members with zone: az1, remove the zone, or set memberPlacement: all-zones")


def test_all_zones_placement_needs_no_member_per_zone():
    facts = dev_facts()
    facts["memberPlacement"] = "all-zones"
    facts["members"] = facts["members"][:1]
    assert run_rule(member_zones, dev_stack(facts).resources) == []


# -- ha-endpoint-member-reachability ---------------------------------------------------------------------------------

def test_a_member_address_outside_its_subnet_is_reported():
    facts = dev_facts()
    facts["members"][1]["address"] = "10.10.9.10"
    assert run_rule(member_reachability, dev_stack(facts).resources) == [
        "member cp-1 has address 10.10.9.10, which is not in its subnet subnet-az2 (10.10.2.0/24); fix "
        "members[].address, or set members[].subnet to the subnet that address is on"]


def test_a_member_on_an_unrouted_network_is_reported():
    facts = dev_facts()
    facts["members"][2].update(networkId="net-other", routerIds=["router-other"])
    assert run_rule(member_reachability, dev_stack(facts).resources) == [
        "member cp-2 (10.10.3.10 on subnet subnet-az3, network net-other) is not reachable from the load balancer "
        "of zone az3 (VIP subnet subnet-az3, network net-cp): the subnets are on different networks and share no "
        "router; attach both subnets to one router, or move the member to a subnet of network net-cp"]


def test_a_shared_router_makes_another_network_reachable():
    facts = dev_facts()
    facts["members"][2].update(networkId="net-other", routerIds=["router-other", "router-cp"])
    assert run_rule(member_reachability, dev_stack(facts).resources) == []


def test_all_zones_placement_checks_every_zone_the_member_joins():
    facts = dev_facts()
    facts["memberPlacement"] = "all-zones"
    facts["zones"]["az1"].update(networkId="net-a", routerIds=[])  # az1's subnet moves to an unrouted network
    facts["members"][0].update(networkId="net-a", routerIds=[])
    unreachable = [("cp-0", 1, "az2", 2), ("cp-0", 1, "az3", 3), ("cp-1", 2, "az1", 1), ("cp-2", 3, "az1", 1)]
    assert run_rule(member_reachability, dev_stack(facts).resources) == [
        f"member {m} (10.10.{i}.10 on subnet subnet-az{i}, network {'net-a' if i == 1 else 'net-cp'}) is not "
        f"reachable from the load balancer of zone {z} (VIP subnet subnet-az{j}, network "
        f"{'net-a' if j == 1 else 'net-cp'}): the subnets are on different networks and share no router; attach both "
        f"subnets to one router, or move the member to a subnet of network {'net-a' if j == 1 else 'net-cp'}"
        for m, i, z, j in unreachable]


def test_a_missing_member_cidr_is_a_clear_violation():
    facts = dev_facts()
    facts["members"][0]["subnetCidr"] = None
    assert run_rule(member_reachability, dev_stack(facts).resources) == [
        _gap("members.cp-0.subnetCidr", "the CIDR of member cp-0's subnet")]


# -- ha-endpoint-member-security-group -------------------------------------------------------------------------------

def test_a_zone_vip_subnet_missing_from_the_members_group_is_reported():
    stack = dev_stack()
    stack.remove("k8s-api-members-sg-tcp-22623-az2")
    assert run_rule(member_security_group, stack.resources) == [
        "the members' security group k8s-api-members-sg does not admit zone az2's VIP subnet 10.10.2.0/24 on tcp "
        "port 22623 (member port of listener 22623 and health-monitor port of listener 22623); add an ingress rule "
        "for tcp port 22623 from 10.10.2.0/24"]


def test_a_monitor_port_not_admitted_is_reported():
    facts = dev_facts()
    facts["listeners"][0]["monitorPort"] = 10257
    messages = run_rule(member_security_group, dev_stack(facts).resources)
    assert messages == [
        f"the members' security group k8s-api-members-sg does not admit zone az{i}'s VIP subnet 10.10.{i}.0/24 on "
        f"tcp port 10257 (health-monitor port of listener 6443); add an ingress rule for tcp port 10257 from "
        f"10.10.{i}.0/24" for i in (1, 2, 3)]


def test_a_member_monitor_port_of_0_means_the_member_port_and_needs_no_rule():
    """Octavia, and the provider reading a member back after create, report an unset monitor port as 0: the
    member port is probed, so no rule for port 0 is required."""
    stack = dev_stack()
    stack.named("k8s-api-az1-6443-member-10.10.1.10").props["monitorPort"] = 0
    assert run_rule(member_security_group, stack.resources) == []


def test_a_member_monitor_port_not_admitted_is_reported():
    stack = dev_stack()
    stack.named("k8s-api-az1-6443-member-10.10.1.10").props["monitorPort"] = 10257
    assert run_rule(member_security_group, stack.resources) == [
        f"the members' security group k8s-api-members-sg does not admit zone az{i}'s VIP subnet 10.10.{i}.0/24 on "
        f"tcp port 10257 (monitor port of member k8s-api-az1-6443-member-10.10.1.10); add an ingress rule for tcp "
        f"port 10257 from 10.10.{i}.0/24" for i in (1, 2, 3)]


def test_a_broader_rule_admits_the_vip_subnets():
    stack = dev_stack()
    stack.named("k8s-api-members-sg-tcp-22623-az2").props["remoteIpPrefix"] = "10.10.0.0/16"
    assert run_rule(member_security_group, stack.resources) == []


def test_an_egress_rule_does_not_admit():
    stack = dev_stack()
    stack.named("k8s-api-members-sg-tcp-6443-az1").props["direction"] = "egress"
    assert run_rule(member_security_group, stack.resources) == [
        "the members' security group k8s-api-members-sg does not admit zone az1's VIP subnet 10.10.1.0/24 on tcp "
        "port 6443 (member port of listener 6443 and health-monitor port of listener 6443); add an ingress rule "
        "for tcp port 6443 from 10.10.1.0/24"]


def test_a_missing_members_group_is_reported():
    stack = dev_stack()
    stack.remove("k8s-api-members-sg")
    assert run_rule(member_security_group, stack.resources) == [
        "endpoint k8s-api has no members' security group k8s-api-members-sg; the load balancers' traffic and "
        "health checks to the members depend on it: create it with a rule per zone VIP subnet and port"]


# -- ha-endpoint-production-listener-cidrs ---------------------------------------------------------------------------

def _production_facts():
    facts = dev_facts()
    facts["allowedCidrs"] = ["192.0.2.0/24"]
    return facts


def test_a_restricted_production_stack_passes():
    assert run_rule(production_listeners, dev_stack(_production_facts(), stack="prod").resources) == []


def test_the_open_dev_stack_is_not_production():
    assert run_rule(production_listeners, dev_stack().resources) == []


def test_an_open_listener_in_a_production_stack_is_reported():
    stack = dev_stack(_production_facts(), stack="prod")
    stack.named("k8s-api-az2-6443-listener").props["allowedCidrs"] = ["192.0.2.0/24", "0.0.0.0/0"]
    assert run_rule(production_listeners, stack.resources) == [
        "listener k8s-api-az2-6443-listener admits 0.0.0.0/0 in a production stack (stack 'prod' matches "
        "productionStackPattern '^prod(uction)?([-_.].*)?$'); set allowedCidrs to the client networks that need "
        "the endpoint"]


def test_the_production_tag_marks_a_stack_as_production():
    facts = _production_facts()
    facts["tags"] = ["production"]
    stack = dev_stack(facts)
    stack.named("k8s-api-vip-sg-tcp-6443-192.0.2.0/24").props["remoteIpPrefix"] = "0.0.0.0/0"
    assert run_rule(production_listeners, stack.resources) == [
        "security group rule k8s-api-vip-sg-tcp-6443-192.0.2.0/24 opens the endpoint's VIPs to 0.0.0.0/0 in a "
        "production stack (load balancers tagged 'production'); set allowedCidrs to the client networks that need "
        "the endpoint"]


def test_the_production_stack_pattern_is_configurable():
    stack = dev_stack(stack="live")
    messages = run_rule(production_listeners, stack.resources, {"productionStackPattern": "^live$"})
    assert len(messages) == 8  # 6 listeners and the 2 VIP rules are open to 0.0.0.0/0
    assert messages[0] == (
        "listener k8s-api-az1-6443-listener admits 0.0.0.0/0 in a production stack (stack 'live' matches "
        "productionStackPattern '^live$'); set allowedCidrs to the client networks that need the endpoint")


def test_an_invalid_production_pattern_is_reported():
    assert run_rule(production_listeners, dev_stack().resources, {"productionStackPattern": "prod("}) == [
        "productionStackPattern 'prod(' is not a regular expression (missing ), unterminated subpattern at position "
        "4); fix the policy configuration of ha-endpoint-production-listener-cidrs"]


# -- ha-endpoint-pool-health-monitor ---------------------------------------------------------------------------------

def test_a_pool_without_a_monitor_is_reported():
    stack = dev_stack()
    stack.remove("k8s-api-az2-22623-monitor")
    assert run_rule(pool_health_monitor, stack.resources) == [
        "pool k8s-api-az2-22623-pool has no health monitor, so Octavia cannot take a dead member out of rotation "
        "and members never go ONLINE; give its listener a monitor (listeners[].monitor, e.g. type TCP)"]


# -- ha-endpoint-dns-ttl ---------------------------------------------------------------------------------------------

def test_a_long_ttl_is_reported():
    stack = dev_stack()
    stack.named("k8s-api-dns").props["ttl"] = 300.0
    assert run_rule(dns_ttl, stack.resources) == [
        "record set k8s-api-dns has a TTL of 300 s, above the 60 s maximum: resolvers would keep a failed zone's "
        "address that long; set dns.ttl to 60 or less"]


def test_max_ttl_is_configurable():
    messages = run_rule(dns_ttl, dev_stack().resources, {"maxTtl": 20})
    assert len(messages) == 4 and messages[0] == (
        "record set k8s-api-dns has a TTL of 30 s, above the 20 s maximum: resolvers would keep a failed zone's "
        "address that long; set dns.ttl to 20 or less")


def test_a_record_without_ttl_is_reported():
    stack = dev_stack()
    stack.named("k8s-api-az1-dns").props["ttl"] = None
    assert run_rule(dns_ttl, stack.resources) == [
        "record set k8s-api-az1-dns sets no TTL, so the DNS zone's default (often 3600 s) applies; set dns.ttl to "
        "60 or less"]


def test_record_sets_outside_the_endpoint_are_not_checked():
    stack = dev_stack()
    stack.add("openstack:dns/recordSet:RecordSet", "unrelated", {"ttl": 3600}, stack.resources[0])
    assert run_rule(dns_ttl, stack.resources) == []


# -- ha-endpoint-dns-records -----------------------------------------------------------------------------------------

def test_a_zone_left_out_of_the_a_record_is_reported():
    stack = dev_stack()
    stack.named("k8s-api-dns").property_dependencies["records"].remove(stack.named("k8s-api-az2-fip"))
    assert run_rule(dns_records, stack.resources) == [
        "record set k8s-api-dns does not take zone az2's address: its records depend on no floating IP or load "
        "balancer of zone az2; publish that zone's address (its floating IP, or its VIP for an internal endpoint) "
        "in it"]


def test_another_zones_address_in_a_per_zone_record_is_reported():
    stack = dev_stack()
    stack.named("k8s-api-az1-dns").property_dependencies["records"].append(stack.named("k8s-api-az3-fip"))
    assert run_rule(dns_records, stack.resources) == [
        "record set k8s-api-az1-dns takes an address from zone az3, which it must not publish (it publishes az1); "
        "remove that address"]


def test_known_records_must_be_the_published_addresses():
    facts = dev_facts()
    for i, zone in enumerate(facts["zones"].values(), start=1):
        zone["publishedAddress"] = f"203.0.113.{i}"
    stack = dev_stack(facts)
    stack.named("k8s-api-dns").props["records"] = ["203.0.113.1", "203.0.113.2", "203.0.113.9"]
    for i, key in enumerate(("az1", "az2", "az3"), start=1):
        stack.named(f"k8s-api-{key}-dns").props["records"] = [f"203.0.113.{i}"]
    assert run_rule(dns_records, stack.resources) == [
        "record set k8s-api-dns does not list 203.0.113.3, the published address of zone az3; add it",
        "record set k8s-api-dns lists 203.0.113.9, which is not the published address of any of its zones (az1, "
        "az2, az3); remove it"]


def test_known_records_are_counted_when_addresses_are_not_declared():
    stack = dev_stack()
    stack.named("k8s-api-dns").props["records"] = ["203.0.113.1", "203.0.113.2"]
    assert run_rule(dns_records, stack.resources) == [
        "record set k8s-api-dns lists 2 address(es) (203.0.113.1, 203.0.113.2) for 3 published zone(s) (az1, az2, "
        "az3); it must list exactly one address per published zone"]


def test_a_missing_record_set_is_reported():
    stack = dev_stack()
    stack.remove("k8s-api-dns")
    assert run_rule(dns_records, stack.resources) == [
        "endpoint k8s-api has DNS configured but no record set k8s-api-dns publishing zone(s) az1, az2, az3"]


def test_a_record_set_of_another_type_is_reported():
    stack = dev_stack()
    stack.named("k8s-api-dns").props["type"] = "CNAME"
    assert run_rule(dns_records, stack.resources) == [
        "record set k8s-api-dns is of type CNAME; the endpoint publishes its zones' IPv4 addresses in an A record "
        "(type: A)"]


# -- ha-endpoint-dns-readiness-gate ----------------------------------------------------------------------------------

def test_a_record_not_waiting_for_readiness_is_reported():
    stack = dev_stack()
    stack.named("k8s-api-dns").dependencies.remove(stack.named("k8s-api-az2-ready"))
    assert run_rule(dns_readiness, stack.resources) == [
        "record set k8s-api-dns does not depend on k8s-api-az2-ready: under publish when-ready zone az2's address "
        "could be published before its members are ready; make the record set wait for that readiness resource"]


def test_a_zone_without_readiness_resource_is_reported():
    stack = dev_stack()
    stack.remove("k8s-api-az3-ready")
    assert run_rule(dns_readiness, stack.resources) == [
        "zone az3 of endpoint k8s-api has no readiness resource k8s-api-az3-ready; under publish when-ready its "
        "address may only be published once its members are ready"]


def test_bootstrap_publication_needs_no_readiness_dependency():
    facts = dev_facts()
    facts["dns"]["publish"] = "bootstrap"
    stack = dev_stack(facts)
    stack.named("k8s-api-dns").dependencies.clear()
    assert run_rule(dns_readiness, stack.resources) == []


def test_a_missing_publish_mode_is_a_clear_violation():
    facts = dev_facts()
    del facts["dns"]["publish"]
    assert run_rule(dns_readiness, dev_stack(facts).resources) == [
        _gap("dns.publish", "the DNS publication mode")]


# -- ha-endpoint-ovn-provider-constraints ----------------------------------------------------------------------------

def _ovn_facts():
    facts = dev_facts()
    facts["provider"] = "ovn"
    for listener in facts["listeners"]:
        listener.update(lbMethod="SOURCE_IP_PORT", monitorType="TCP")
    return facts


def test_an_ovn_baseline_passes():
    assert run_rule(ovn_constraints, dev_stack(_ovn_facts()).resources) == []


def test_an_ovn_pool_with_another_algorithm_is_reported():
    stack = dev_stack(_ovn_facts())
    stack.named("k8s-api-az1-6443-pool").props["lbMethod"] = "ROUND_ROBIN"
    assert run_rule(ovn_constraints, stack.resources) == [
        "pool k8s-api-az1-6443-pool balances with ROUND_ROBIN, but the ovn provider supports SOURCE_IP_PORT only; "
        "set lbMethod: SOURCE_IP_PORT (or remove it)"]


def test_an_ovn_http_monitor_is_reported():
    stack = dev_stack(_ovn_facts())
    stack.named("k8s-api-az3-6443-monitor").props["type"] = "HTTPS"
    assert run_rule(ovn_constraints, stack.resources) == [
        "health monitor k8s-api-az3-6443-monitor is of type HTTPS, which the ovn provider does not have; use one of "
        "TCP, UDP-CONNECT, SCTP"]


def test_an_ovn_pool_with_http_protocol_is_reported():
    stack = dev_stack(_ovn_facts())
    stack.named("k8s-api-az2-22623-pool").props["protocol"] = "HTTP"
    assert run_rule(ovn_constraints, stack.resources) == [
        "pool k8s-api-az2-22623-pool uses protocol HTTP, but the ovn provider serves TCP, UDP, SCTP only; use "
        "protocol TCP (TLS passes through)"]


def test_amphora_pools_are_not_held_to_ovn_limits():
    stack = dev_stack()
    stack.named("k8s-api-az1-6443-pool").props["lbMethod"] = "LEAST_CONNECTIONS"
    assert run_rule(ovn_constraints, stack.resources) == []


# -- facts missing altogether ----------------------------------------------------------------------------------------

def test_an_endpoint_without_facts_gets_clear_violations_not_errors():
    stack = dev_stack()
    endpoint = stack.named("k8s-api")
    for key in list(endpoint.props):
        del endpoint.props["__target"][key]
    found = run_pack(stack.resources)
    assert ("ha-endpoint-zone-placement", _gap("zones", "the zones and their VIP subnets")) in found
    assert ("ha-endpoint-member-zones", _gap("members", "the members and their zones")) in found
    assert ("ha-endpoint-member-security-group", _gap("listeners", "the listeners and their ports")) in found
    assert ("ha-endpoint-dns-records", _gap("dns", "the DNS settings")) in found


def test_unknown_facts_are_gaps_not_preview_errors():
    facts = dev_facts()
    facts["zones"]["az2"]["subnetCidr"] = UNKNOWN_STRING_VALUE
    assert run_rule(member_security_group, dev_stack(facts).resources) == [
        _gap("zones.az2.subnetCidr", "the CIDR of zone az2's VIP subnet")]


def test_policy_config_reaches_the_rules_through_the_pack():
    found = run_pack(dev_stack().resources, {"ha-endpoint-min-zones": {"minZones": 4}})
    assert [name for name, _ in found] == ["ha-endpoint-min-zones"]


def _endpoint_outputs_only(stack):
    """The HaEndpoint as AnalyzeStack shows it: its registered outputs, not its inputs."""
    endpoint = stack.named("k8s-api")
    inputs = dict(endpoint.props["__target"])
    endpoint.props = unknown_checking_proxy({"fqdn": "api.example.test.", "zones": UNKNOWN_OBJECT_VALUE})
    return endpoint, inputs


def test_facts_seen_as_inputs_reach_the_stack_policies():
    stack = dev_stack()
    endpoint, inputs = _endpoint_outputs_only(stack)
    assert run_pack(stack.resources, inputs={endpoint.urn: unknown_checking_proxy(inputs)}) == []


def test_facts_repeated_in_the_outputs_are_read_there():
    stack = dev_stack()
    endpoint, inputs = _endpoint_outputs_only(stack)
    endpoint.props = unknown_checking_proxy({"fqdn": "api.example.test.", "facts": inputs})
    assert run_rule(zone_placement, stack.resources) == []


def test_outputs_without_facts_and_no_inputs_seen_are_gaps():
    stack = dev_stack()
    _endpoint_outputs_only(stack)
    assert run_rule(zone_placement, stack.resources) == [_gap("zones", "the zones and their VIP subnets")]
    assert observed.inputs(stack.named("k8s-api").urn) is None


# -- ha-endpoint-declared-facts --------------------------------------------------------------------------------------

def test_each_missing_fact_is_named_on_the_endpoint():
    facts = dev_facts()
    del facts["zones"]["az2"]["routerIds"]
    facts["members"][0]["networkId"] = UNKNOWN_STRING_VALUE
    assert run_rule(declared_facts, dev_stack(facts).resources) == [
        _gap("zones.az2.routerIds", "the routers of zone az2's VIP subnet"),
        _gap("members.cp-0.networkId", "the network of member cp-0")]


def test_declared_facts_feed_the_stack_policies_even_with_the_other_resource_policies_disabled():
    stack = dev_stack()
    endpoint, inputs = _endpoint_outputs_only(stack)
    found = run_pack(stack.resources, {"ha-endpoint-dns-ttl": "disabled"},
                     inputs={endpoint.urn: unknown_checking_proxy(inputs)})
    assert found == []

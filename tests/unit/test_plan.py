"""The plan and the cloud lookups: exact messages for the problems only cloud facts reveal, and plan details."""

from __future__ import annotations

import json

import pytest

from ha_endpoint import CloudLookupError, ConfigError, load_endpoint_args
from ha_endpoint.core.cloud_facts import CloudFacts, FloatingIpFacts, SubnetFacts
from ha_endpoint.pipeline import Context, checked_plan
from ha_endpoint.core.facts import parse_facts
from ha_endpoint.core.declared import endpoint_facts
from ha_endpoint.backends.octavia.zone import octavia_zone
from tests.mocks import FakeCloud, run_component
from tests.mocks.configs import amphora_endpoint, internal_endpoint

ROOT = "ha-endpoint:endpoint"
CONSUMER = "HaEndpoint('k8s-api').args"  # how a program's endpoint names its arguments (run_component)


def facts(**extra_subnets: SubnetFacts) -> CloudFacts:
    subnets = {f"cp-az{n}": SubnetFacts(f"cp-az{n}", f"sub{n}", f"cp-az{n}", f"10.10.{n}.0/24", "net-cp", 4,
                                        f"10.10.{n}.1", ("router",)) for n in (1, 2, 3)}
    subnets.update(extra_subnets)
    return CloudFacts(subnets, "net-public", "public", {}, "zone-id")


def problems(raw, cloud_facts=None) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        checked_plan(load_endpoint_args(raw), cloud_facts or facts(), Context())
    return [str(problem) for problem in caught.value.problems]


def test_member_address_outside_its_subnet():
    raw = amphora_endpoint()
    raw["members"][1]["address"] = "10.10.1.20"
    assert problems(raw) == [
        f"{ROOT}.members[1].address: address 10.10.1.20 of member cp-1 is outside its subnet cp-az2 (10.10.2.0/24); "
        "fix the address, or set members[1].subnet to the subnet the address is on"]


def test_member_subnet_unreachable_from_its_zone():
    raw = amphora_endpoint()
    raw["members"][0].update(address="10.99.0.5", subnet="island")
    island = SubnetFacts("island", "sub-island", "island", "10.99.0.0/24", "net-island", 4, "10.99.0.1", ())
    assert problems(raw, facts(island=island)) == [
        f"{ROOT}.members[0].subnet: member cp-0 on subnet island (10.99.0.0/24) is not reachable from zone az1's "
        "load balancer on subnet cp-az1: they are on different networks with no common router; attach both subnets "
        "to one router, or use a member subnet on the zone's network"]


def test_member_subnet_behind_a_shared_router_is_reachable():
    raw = amphora_endpoint()
    raw["members"][0].update(address="10.50.0.5", subnet="routed")
    routed = SubnetFacts("routed", "sub-routed", "routed", "10.50.0.0/24", "net-other", 4, "10.50.0.1", ("router",))
    plan = checked_plan(load_endpoint_args(raw), facts(routed=routed), Context())
    member = plan.zone("az1").listeners[0].members[0]
    assert (member.member, member.subnet.id) == ("cp-0", "sub-routed")
    assert "10.50.0.0/24" in {rule.remote_ip_prefix for rule in plan.security.members_rules}


def test_brought_floating_ip_on_another_network():
    raw = amphora_endpoint()
    raw["zones"]["az3"]["floatingIp"] = "203.0.113.9"
    cloud_facts = facts()
    cloud_facts.floating_ips["az3"] = FloatingIpFacts("203.0.113.9", "fip", "net-elsewhere")
    assert problems(raw, cloud_facts) == [
        f"{ROOT}.zones.az3.floatingIp: floating IP 203.0.113.9 belongs to network net-elsewhere, not to "
        "floatingNetwork public; bring an address of public or change floatingNetwork"]


def test_internal_endpoint_on_ipv6_subnet():
    raw = internal_endpoint()
    raw["zones"]["az1"]["subnet"] = "v6"
    raw["members"][0]["subnet"] = "cp-az1"
    v6 = SubnetFacts("v6", "sub-v6", "v6", "fd00::/64", "net-cp", 6, None, ("router",))
    assert problems(raw, facts(v6=v6)) == [
        f"{ROOT}.zones.az1.subnet: subnet v6 is IPv6; an internal endpoint publishes its VIPs as A records, so give "
        "an IPv4 subnet",
        f"{ROOT}.allowedCidrs[0]: 0.0.0.0/0 is an IPv4 network, but the VIP subnet of zone az1 (v6, fd00::/64) is "
        "IPv6: Octavia admits on a listener only CIDRs of its VIP's IP version; list IPv6 client networks only (one "
        "endpoint serves one IP version)"]


def test_unknown_names_are_listed_together_with_their_fixes():
    raw = amphora_endpoint()
    raw["zones"]["az2"]["subnet"] = "cp-az9"
    raw["floatingNetwork"] = "outside"
    raw["dns"]["dnsZone"] = "nowhere.test."
    cloud = FakeCloud.dev()
    with pytest.raises(CloudLookupError) as caught:
        run_component(raw, cloud, preview=True)
    assert str(caught.value).splitlines() == [
        "cloud lookup failed (3 problems):",
        f"  - {CONSUMER}.zones.az2.subnet: subnet 'cp-az9' was not found; give the name or id of an existing subnet "
        "(openstack subnet list)",
        f"  - {CONSUMER}.floatingNetwork: external network 'outside' was not found; give the name or id of an external "
        "network (openstack network list --external), or remove floatingNetwork for an internal endpoint",
        f"  - {CONSUMER}.dns.dnsZone: DNS zone 'nowhere.test.' was not found; create the zone first (openstack zone create) "
        "or fix its name",
    ]
    assert cloud.registrations == []


def test_subnets_are_found_by_id_too_and_routers_are_resolved():
    cloud = FakeCloud.dev()
    raw = amphora_endpoint()
    raw["zones"]["az1"]["subnet"] = cloud.subnet_id("cp-az1")
    run = run_component(raw, cloud, preview=True)
    facts = run.registrations[0]["outputs"]["facts"]
    subnet = facts["subnets"][facts["zones"]["az1"]["vipSubnetId"]]
    assert subnet["name"] == "cp-az1" and subnet["routerIds"] == [cloud.router_id]


def test_ovn_default_cidrs_are_not_sent_and_protocol_specific_rules_are_planned():
    raw = amphora_endpoint()
    raw["loadBalancerProvider"] = "ovn"
    raw["listeners"] = [{"port": 6443, "monitor": {"type": "TCP"}},
                        {"port": 53, "protocol": "UDP", "monitor": {"type": "UDP-CONNECT"}}]
    plan = checked_plan(load_endpoint_args(raw), facts(), Context())
    assert {listener.allowed_cidrs for listener in plan.zone("az1").listeners} == {()}
    assert {(rule.protocol, rule.port) for rule in plan.security.members_rules} == {("tcp", 6443), ("udp", 53)}
    assert [octavia_zone(zone).availability_zone for zone in plan.zones] == [None, None, None]  # refused on ovn


def test_ovn_members_admit_the_clients_themselves_on_member_ports_and_amphora_members_only_the_lb_subnets():
    """OVN forwards clients unproxied (measured: tests/e2e/test_ovn_engine.py) and refuses allowed_cidrs on a
    listener: the members' group admits allowedCidrs on the member ports and no listener carries them; an amphora
    proxies, so its members admit only its subnets, and its listeners carry allowedCidrs."""
    raw = amphora_endpoint()
    raw["loadBalancerProvider"] = "ovn"
    raw["allowedCidrs"] = ["198.51.100.0/24"]
    raw["listeners"] = [{"port": 6443, "monitor": {"type": "TCP"}}, {"port": 22623, "memberPort": 8443}]
    plan = checked_plan(load_endpoint_args(raw), facts(), Context())
    rules = {(rule.protocol, rule.port, rule.remote_ip_prefix) for rule in plan.security.members_rules}
    clients = {rule for rule in rules if rule[2] == "198.51.100.0/24"}
    assert clients == {("tcp", 6443, "198.51.100.0/24"), ("tcp", 8443, "198.51.100.0/24")}
    assert {("tcp", 8443, f"10.10.{n}.0/24") for n in (1, 2, 3)} <= rules
    assert {listener.allowed_cidrs for zone in plan.zones for listener in zone.listeners} == {()}
    raw["listeners"][0]["monitor"]["port"] = 10257
    assert problems(raw) == [f"{ROOT}.listeners[0].monitor.port: the ovn provider probes the member port 6443 only "
                             "(it refuses a member's monitor port); remove monitor.port"]
    raw["loadBalancerProvider"] = "amphora"
    plan = checked_plan(load_endpoint_args(raw), facts(), Context())
    assert {rule.remote_ip_prefix for rule in plan.security.members_rules} == {f"10.10.{n}.0/24" for n in (1, 2, 3)}
    assert {listener.allowed_cidrs for zone in plan.zones for listener in zone.listeners} == {("198.51.100.0/24",)}
    assert [octavia_zone(zone).availability_zone for zone in plan.zones] == ["az1", "az2", "az3"]


def test_ovn_icmp_monitors_are_refused_amphora_members_admit_icmp():
    raw = amphora_endpoint()
    raw["listeners"] = [{"port": 6443, "monitor": {"type": "TCP"}},
                        {"port": 53, "protocol": "UDP", "monitor": {"type": "UDP-CONNECT"}}]
    raw["listeners"][0]["monitor"] = {"type": "PING"}
    raw["loadBalancerProvider"] = "amphora"
    plan = checked_plan(load_endpoint_args(raw), facts(), Context())
    assert ("icmp", None) in {(rule.protocol, rule.port) for rule in plan.security.members_rules}
    assert plan.zone("az1").listeners[0].allowed_cidrs == ("0.0.0.0/0",)


def test_declared_facts_are_plain_json_that_the_pack_parses_back():
    args = load_endpoint_args(amphora_endpoint())
    cloud_facts = facts()
    declared = endpoint_facts(checked_plan(args, cloud_facts, Context())).dump()
    assert json.loads(json.dumps(declared)) == declared
    assert parse_facts(declared).dump() == declared
    member = declared["members"]["cp-2"]
    assert declared["zones"]["az2"]["members"] == ["cp-1"]
    assert declared["subnets"][member["subnetId"]]["cidr"] == "10.10.3.0/24"
    assert declared["membersSecurityGroup"]["rules"][0] == {
        "protocol": "tcp", "port": 22623, "remoteIpPrefix": "10.10.1.0/24", "ethertype": "IPv4"}

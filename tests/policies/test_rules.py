"""More of each policy, on what the component really registers (``__main__.py`` under mocks, see
``policy_harness.py``): the baseline passes, each test changes one thing and asserts the exact messages. The declared
facts are the component's own output (``ha_endpoint.core.facts``), changed in place where a test needs a broken one."""

from __future__ import annotations

import pytest
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from policy_harness import run_preview
from tests.mocks.cloud import FakeCloud
from tests.mocks.configs import amphora_endpoint

PRODUCTION = {"ha-endpoint-production-listener-cidrs": {"productionStackPattern": "^dev$"}}


def _listeners(*specs):
    raw = amphora_endpoint()
    raw["listeners"] = list(specs)
    return raw


# -- one contract: what the component accepts, the pack accepts ---------------------------------------------------------

@pytest.mark.parametrize("listener", [
    {"port": 3868, "protocol": "SCTP", "monitor": {"type": "UDP-CONNECT"}},
    {"port": 3868, "protocol": "SCTP", "monitor": {"type": "TCP"}},
    {"port": 53, "protocol": "UDP", "monitor": {"type": "UDP-CONNECT"}},
    {"port": 53, "protocol": "UDP", "monitor": {"type": "HTTP", "path": "/health"}},
    {"port": 443, "protocol": "HTTPS", "monitor": {"type": "TLS-HELLO"}},
    {"port": 6443, "monitor": {"type": "PING"}},
], ids=["sctp-udp-connect", "sctp-tcp", "udp-udp-connect", "udp-http", "https-tls-hello", "tcp-ping"])
@pytest.mark.parametrize("provider", ["amphora", "ovn"])
def test_a_listener_the_component_accepts_passes_the_pack(listener, provider):
    """The SCTP case diverged once: the plan opened sctp rules, the pack looked for udp-else-tcp."""
    from ha_endpoint.core.errors import ConfigError

    raw = _listeners({"port": 22623, "monitor": {"type": "TCP"}}, listener)
    raw["loadBalancerProvider"] = provider
    try:
        run = run_preview(raw)
    except ConfigError:
        assert provider == "ovn"  # OVN has no PING, HTTP or TLS-HELLO monitors nor HTTPS pools: refused up front
        return
    assert run.violations() == []


def test_the_members_group_admits_sctp_for_an_sctp_listener():
    run = run_preview(_listeners({"port": 3868, "protocol": "SCTP", "monitor": {"type": "TCP"}}))
    rules = {(r["protocol"], r["port"]) for r in run.facts()["membersSecurityGroup"]["rules"]}
    assert rules == {("sctp", 3868), ("tcp", 3868)}


def test_an_sctp_monitor_on_an_sctp_pool_is_accepted_as_the_provider_accepts_it():
    """terraform-provider-openstack v1.54.1 (pulumi-openstack 3.15.1) refused monitor type SCTP at preview, so the
    component refused it first; v3.4.0 (pulumi-openstack 5.5.3) accepts it, and so do the component and the pack."""
    run = run_preview(_listeners({"port": 3868, "protocol": "SCTP", "monitor": {"type": "SCTP"}}))
    assert run.violations() == []
    assert {(r["protocol"], r["port"]) for r in run.facts()["membersSecurityGroup"]["rules"]} == {("sctp", 3868)}


# -- the declared facts ----------------------------------------------------------------------------------------------

def test_a_malformed_fact_is_a_violation_not_a_crash():
    run = run_preview(amphora_endpoint()).set_fact("members.cp-1.az", ["az1", "az2"])
    assert run.violations() == [(
        "ha-endpoint-declared-facts",
        "endpoint k8s-api: facts.members.cp-1.az: Input should be a valid string; the other policies cannot check "
        "this endpoint until its facts are declared in the component's shape")]


def test_facts_of_another_version_are_named():
    run = run_preview(amphora_endpoint()).set_fact("version", 7)
    assert run.messages("ha-endpoint-declared-facts") == [
        "endpoint k8s-api: facts.version: expected 1, got 7 (the component and the policy pack are of different "
        "versions: use the pack of the component's release); the other policies cannot check this endpoint until "
        "its facts are declared in the component's shape"]


def test_facts_unknown_at_preview_are_named_in_an_advisory():
    run = run_preview(amphora_endpoint())
    vip = run.facts()["zones"]["az1"]["vipSubnetId"]
    run.set_fact(f"subnets.{vip}.cidr", UNKNOWN_STRING_VALUE).set_fact("members.cp-0.address", UNKNOWN_STRING_VALUE)
    assert run.violations() == [(
        "ha-endpoint-facts-known-at-preview",
        f"endpoint k8s-api: 2 declared fact(s) are not known at preview (facts.members.cp-0.address, "
        f"facts.subnets.{vip}.cidr), so the pack cannot check this endpoint before `up`; the component checks the "
        "same rules before it creates any load balancer. Pass plain values (names or ids of existing resources) to "
        "have them judged at preview")]


# -- ha-endpoint-min-zones / zone-placement ----------------------------------------------------------------------------

def test_two_zones_in_the_same_az_count_once():
    raw = amphora_endpoint()
    del raw["zones"]["az3"]
    raw["members"] = [m for m in raw["members"] if m["az"] != "az3"]
    run = run_preview(raw).set("k8s-api-az2-lb", "availabilityZone", "az1")
    assert run.messages("ha-endpoint-min-zones") == [
        "endpoint k8s-api's load balancers span 1 distinct availability zone(s) (az1); at least 2 are required: add "
        "zones, each in its own AZ with its own subnet"]


def test_a_load_balancer_without_an_az_is_reported():
    run = run_preview(amphora_endpoint()).set("k8s-api-az2-lb", "availabilityZone", "")
    assert run.messages("ha-endpoint-zone-placement") == [
        "load balancer k8s-api-az2-lb (zone az2) sets no availability zone, so Octavia may place it in any AZ; set "
        "its availability_zone to 'az2'"]


def _ovn_endpoint():
    raw = _listeners({"port": 6443, "monitor": {"type": "TCP"}})
    raw["loadBalancerProvider"] = "ovn"
    return raw


def test_ovn_load_balancers_have_no_az_and_span_their_zones_azs():
    """Octavia refuses an AZ on an ovn load balancer (501, measured on the local cloud): the component sets none,
    and the pack counts the zones' AZs for them."""
    run = run_preview(_ovn_endpoint())
    assert run.violations() == []
    two_zones = _ovn_endpoint()
    del two_zones["zones"]["az3"]
    two_zones["members"] = [m for m in two_zones["members"] if m["az"] != "az3"]
    assert run_preview(two_zones).messages("ha-endpoint-min-zones") == []


def test_an_ovn_load_balancer_given_an_az_is_reported():
    run = run_preview(_ovn_endpoint()).set("k8s-api-az2-lb", "availabilityZone", "az2")
    assert run.messages("ha-endpoint-zone-placement") == [
        "load balancer k8s-api-az2-lb (zone az2) sets availability zone 'az2', which the ovn provider refuses "
        "(Octavia: 'This provider does not support validating availability zones'); leave it unset: the zone's AZ "
        "is its VIP subnet's router's gateway"]


# -- ha-endpoint-member-reachability -----------------------------------------------------------------------------------

def _member_on_island(run, cloud, routers):
    island = cloud.network_id("island")
    run.facts()["subnets"]["island-subnet-id"] = {"id": "island-subnet-id", "name": "island-sub",
                                                  "cidr": "10.10.3.0/24", "networkId": island, "routerIds": routers}
    return run.set_fact("members.cp-2.subnetId", "island-subnet-id")


def test_a_shared_router_makes_another_network_reachable():
    cloud = FakeCloud.dev(preview=True)
    run = _member_on_island(run_preview(amphora_endpoint(), cloud), cloud, [cloud.router_id])
    assert run.messages("ha-endpoint-member-reachability") == []


def test_all_zones_placement_checks_every_zone_the_member_joins():
    cloud = FakeCloud.dev(preview=True)
    raw = amphora_endpoint()
    raw["memberPlacement"] = "all-zones"
    run = _member_on_island(run_preview(raw, cloud), cloud, [])
    messages = run.messages("ha-endpoint-member-reachability")
    assert [message.split(" (VIP subnet")[0].rsplit(" ", 1)[1] for message in messages] == ["az1", "az2", "az3"]


# -- ha-endpoint-member-security-group -------------------------------------------------------------------------------

def test_an_egress_rule_does_not_admit():
    run = run_preview(amphora_endpoint()).set("k8s-api-members-sg-tcp-22623-from-10.10.2.0_24", "direction", "egress")
    assert run.messages("ha-endpoint-member-security-group") == [
        "the members' security group k8s-api-members-sg does not admit zone az2's VIP subnet 10.10.2.0/24 on tcp "
        "port 22623 (member port of listener 22623 and health-monitor port of listener 22623); add an ingress rule "
        "for tcp port 22623 from 10.10.2.0/24"]


def test_a_broader_rule_admits_the_vip_subnets():
    run = run_preview(amphora_endpoint()).set("k8s-api-members-sg-tcp-22623-from-10.10.2.0_24", "remoteIpPrefix",
                                          "10.10.0.0/16")
    assert run.messages("ha-endpoint-member-security-group") == []


def test_a_missing_members_group_is_reported():
    run = run_preview(amphora_endpoint()).remove("k8s-api-members-sg")
    assert run.messages("ha-endpoint-member-security-group") == [
        "endpoint k8s-api has no members' security group k8s-api-members-sg; the load balancers' traffic and health "
        "checks to the members depend on it: create it with a rule per zone VIP subnet and port"]


# -- ha-endpoint-production-listener-cidrs ----------------------------------------------------------------------------

def test_the_production_stack_pattern_is_configurable():
    messages = run_preview(amphora_endpoint()).messages("ha-endpoint-production-listener-cidrs", PRODUCTION)
    assert len(messages) == 8  # 6 listeners and the 2 VIP rules are open to 0.0.0.0/0
    assert messages[0] == (
        "listener k8s-api-az1-6443-listener admits 0.0.0.0/0 in a production stack (stack 'dev' matches "
        "productionStackPattern '^dev$'); set allowedCidrs to the client networks that need the endpoint")


def test_the_production_tag_marks_an_endpoint_as_production():
    raw = amphora_endpoint()
    raw["tags"] = ["production"]
    messages = run_preview(raw).messages("ha-endpoint-production-listener-cidrs")
    assert (
        "security group rule k8s-api-vip-sg-tcp-6443-from-0.0.0.0_0 opens the endpoint's VIPs to 0.0.0.0/0 in a "
        "production stack (load balancers tagged 'production'); set allowedCidrs to the client networks that need the "
        "endpoint") in messages


def test_an_invalid_production_pattern_is_reported():
    config = {"ha-endpoint-production-listener-cidrs": {"productionStackPattern": "prod("}}
    assert run_preview(amphora_endpoint()).messages("ha-endpoint-production-listener-cidrs", config) == [
        "productionStackPattern 'prod(' is not a regular expression (missing ), unterminated subpattern at position "
        "4); fix the policy configuration of ha-endpoint-production-listener-cidrs"]


# -- ha-endpoint-production-listener-timeouts ---------------------------------------------------------------------------

TIMEOUTS = "ha-endpoint-production-listener-timeouts"
PRODUCTION_TIMEOUTS = {TIMEOUTS: {"productionStackPattern": "^dev$"}}


def test_the_endpoints_listener_timeouts_pass_in_production():
    assert run_preview(amphora_endpoint()).messages(TIMEOUTS, PRODUCTION_TIMEOUTS) == []


def test_a_short_member_data_timeout_is_refused_in_production():
    raw = amphora_endpoint()
    raw["listeners"][0]["timeoutMemberData"] = 50000
    run = run_preview(raw)
    assert run.messages(TIMEOUTS) == []  # not production: the stack is free to choose
    assert run.messages(TIMEOUTS, PRODUCTION_TIMEOUTS) == [
        f"listener k8s-api-{az}-6443-listener: timeoutMemberData is 50000 ms: an idle watch, logs -f or exec is cut "
        f"after 50 s, sooner than 60 min, in a production stack (stack 'dev' matches productionStackPattern "
        f"'^dev$'); set timeoutMemberData to at least 3600000 (or leave it out for the endpoint's default, 3600000)"
        for az in ("az1", "az2", "az3")]


def test_the_least_data_timeout_is_configurable():
    config = {TIMEOUTS: {"productionStackPattern": "^dev$", "minDataTimeoutMs": 7200000}}
    messages = run_preview(amphora_endpoint()).messages(TIMEOUTS, config)
    assert len(messages) == 12  # 2 listeners x 3 zones x client and member data
    assert messages[0] == (
        "listener k8s-api-az1-6443-listener: timeoutClientData is 3600000 ms: an idle watch, logs -f or exec is cut "
        "after 60 min, sooner than 120 min, in a production stack (stack 'dev' matches productionStackPattern "
        "'^dev$'); set timeoutClientData to at least 7200000")


def test_ovn_listeners_are_not_judged_on_timeouts_nothing_applies():
    raw = amphora_endpoint()
    raw["loadBalancerProvider"] = "ovn"
    raw["listeners"][0]["monitor"] = {"type": "TCP"}
    assert run_preview(raw).messages(TIMEOUTS, PRODUCTION_TIMEOUTS) == []


# -- ha-endpoint-dns-ttl / dns-records / dns-readiness --------------------------------------------------------------

def test_max_ttl_is_configurable():
    messages = run_preview(amphora_endpoint()).messages("ha-endpoint-dns-ttl", {"ha-endpoint-dns-ttl": {"maxTtl": 20}})
    assert (
        "record set k8s-api-dns has a TTL of 30 s, above the 20 s maximum: resolvers would keep a failed zone's "
        "address that long; set dns.ttl to 20 or less") in messages and len(messages) == 4


def test_a_record_without_ttl_is_reported():
    run = run_preview(amphora_endpoint())
    del run.named("k8s-api-az1-dns").inputs["ttl"]
    assert run.messages("ha-endpoint-dns-ttl") == [
        "record set k8s-api-az1-dns sets no TTL, so the DNS zone's default (often 3600 s) applies; set dns.ttl to 60 "
        "or less"]


def test_a_record_set_of_another_type_is_reported():
    run = run_preview(amphora_endpoint()).set("k8s-api-dns", "type", "AAAA")
    assert run.messages("ha-endpoint-dns-records") == [
        "record set k8s-api-dns is of type AAAA; the endpoint publishes its zones' IPv4 addresses in an A record "
        "(type: A)"]


def test_a_missing_record_set_is_reported():
    run = run_preview(amphora_endpoint()).remove("k8s-api-dns")
    assert run.messages("ha-endpoint-dns-records") == [
        "endpoint k8s-api has DNS configured but no record set k8s-api-dns publishing zone(s) az1, az2, az3"]


def test_bootstrap_publication_needs_no_readiness_dependency():
    raw = amphora_endpoint()
    raw["dns"]["publish"] = "bootstrap"
    run = run_preview(raw).drop_dependency("k8s-api-dns", "k8s-api-az1-ready")
    assert run.messages("ha-endpoint-dns-readiness-gate") == []


# -- ha-endpoint-ovn-provider-constraints -----------------------------------------------------------------------------

def test_amphora_pools_are_not_held_to_ovn_limits():
    run = run_preview(amphora_endpoint()).set("k8s-api-az1-6443-pool", "protocol", "HTTP")
    assert run.messages("ha-endpoint-ovn-provider-constraints") == []

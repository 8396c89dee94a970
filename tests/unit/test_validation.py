"""Bad configuration is rejected with one message per problem, naming the key path and the fix.

Each test starts from the dev stack's configuration (valid) and breaks one thing.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from ha_endpoint.backends import REGISTRY
from ha_endpoint import ConfigError, EndpointArgs, load_endpoint_args
from ha_endpoint.core.checks import notices

ROOT = "ha-endpoint:endpoint"
DEV_CONFIG = yaml.safe_load((Path(__file__).parents[2] / "Pulumi.amphora.yaml").read_text())["config"][ROOT]


def amphora_config() -> dict:
    return copy.deepcopy(DEV_CONFIG)


def problems_of(raw) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_endpoint_args(raw)
    return [str(problem) for problem in caught.value.problems]


def test_dev_config_is_valid_and_camel_case_keys_map_to_fields():
    args = load_endpoint_args(amphora_config())
    assert isinstance(args, EndpointArgs)
    assert args.floating_network == "public"
    assert args.listeners[1].member_port == 22623
    assert args.listeners[0].monitor.max_retries_down == 3
    assert args.dns.per_zone_records is True
    assert args.readiness.timeout_seconds == 600


def test_arguments_are_checked_once_and_a_changed_copy_again(monkeypatch):
    """The stack program, HaEndpoint and the pipeline each load the arguments: the checks run once; a copy with other
    values is other arguments, refused when wrong."""
    from ha_endpoint.core import validation

    calls = []
    check = validation.check_endpoint_args
    monkeypatch.setattr(validation, "check_endpoint_args", lambda *a: calls.append(a) or check(*a))
    args = load_endpoint_args(amphora_config())
    assert load_endpoint_args(load_endpoint_args(args)) is args
    assert len(calls) == 1
    one_zone = args.model_copy(update={"zones": {"az1": args.zones["az1"]}})
    with pytest.raises(ConfigError, match="zones: 1 zone"):
        load_endpoint_args(one_zone)
    assert len(calls) == 2
    with pytest.raises(ConfigError, match="no backend is registered as 'octavia'"):
        load_endpoint_args(args, backends={"keepalived": REGISTRY["keepalived"]})  # checked against what is asked


def test_a_zone_key_the_chosen_backend_does_not_take_is_refused_naming_the_backends_that_do():
    """``adopt`` and ``vipAddress`` are zone keys some backends take: given to one that does not, each is refused with
    the configuration's other problems, naming the backends that take it (read from the registry)."""
    raw = amphora_config()
    raw["backend"] = "keepalived"
    raw.pop("loadBalancerProvider", None)
    raw["zones"]["az2"]["adopt"] = {"loadBalancer": "capo-kubeapi"}
    raw["zones"]["az1"]["name"] = "x"  # a field-level problem: reported first, alone
    with pytest.raises(ConfigError) as caught:
        load_endpoint_args(raw, backends=REGISTRY)
    assert [problem.path for problem in caught.value.problems] == [f"{ROOT}.zones.az1.name"]
    del raw["zones"]["az1"]["name"]
    with pytest.raises(ConfigError) as caught:
        load_endpoint_args(raw, backends=REGISTRY)
    assert f"{ROOT}.zones.az2.adopt: adopt takes over an existing load balancer, and the keepalived backend adopts " \
           "none; remove adopt, or set backend to one that adopts: octavia" in [str(p) for p in caught.value.problems]
    raw["backend"] = "octavia"
    del raw["zones"]["az2"]["adopt"]
    raw["zones"]["az1"]["vipAddress"] = "10.10.1.250"
    with pytest.raises(ConfigError) as caught:
        load_endpoint_args(raw, backends=REGISTRY)
    assert [str(problem) for problem in caught.value.problems] == [
        f"{ROOT}.zones.az1.vipAddress: sets the address of the zone's VIP port, and the octavia backend makes no such "
        "port (it gets its VIP addresses from the cloud); remove vipAddress, or set backend to one that takes it: "
        "keepalived"]


def test_allowed_cidrs_of_two_ip_versions_are_refused_in_the_chosen_backends_words():
    """The allowed CIDRs' IP-version rule holds for every backend; why, the chosen backend says (its ``Rules``, the
    same words as the cloud-facts check of the VIPs' versions); without the registry, the words every backend shares."""
    from ha_endpoint.core import validation

    raw = amphora_config()
    raw["allowedCidrs"] = ["10.0.0.0/8", "fd00::/64"]
    fix = "list the IPv4 client networks only, or make another endpoint for the other version"
    head = f"{ROOT}.allowedCidrs[1]: fd00::/64 is IPv6 but allowedCidrs[0] (10.0.0.0/8) is IPv4: "
    with pytest.raises(ConfigError) as caught:
        load_endpoint_args(raw, backends=REGISTRY)
    assert f"{head}{REGISTRY['octavia'].rules.one_ip_version}; {fix}" in [str(p) for p in caught.value.problems]
    assert "Octavia admits on a listener only CIDRs of its VIP's IP version" in REGISTRY["octavia"].rules.one_ip_version
    with pytest.raises(ConfigError) as caught:
        validation.load_endpoint_args(raw)  # the core's, without the registry
    assert f"{head}a zone's VIP admits clients of its own IP version only; {fix}" in [str(p) for p in
                                                                                      caught.value.problems]


def test_a_member_object_in_two_endpoints_lists_is_named_by_its_place_in_each():
    """Python callers may put one MemberArgs in two endpoints' lists: each endpoint's messages name it where it is in
    that endpoint's list."""
    from ha_endpoint import MemberArgs

    base = load_endpoint_args(amphora_config())
    shared = MemberArgs(name="shared", az="az1", address="10.10.1.50")
    first = EndpointArgs(**{**base.__dict__, "members": [*base.members, shared]})
    twin = MemberArgs(name="twin", az="az1", address="10.10.1.50")
    second = EndpointArgs(**{**base.__dict__, "members": [shared, *base.members, twin]})
    with pytest.raises(ConfigError) as caught:
        load_endpoint_args(second)
    assert [problem.path for problem in caught.value.problems] == [f"{ROOT}.members[{len(base.members) + 1}].address"]
    assert "already the address of members[0] (shared)" in caught.value.problems[0].message
    with pytest.raises(ConfigError) as caught:  # a copy with another list: named by their places in it
        load_endpoint_args(first.model_copy(update={"members": [twin, *first.members]}))
    assert [problem.path for problem in caught.value.problems] == [f"{ROOT}.members[{len(base.members) + 1}].address"]
    assert "already the address of members[0] (twin)" in caught.value.problems[0].message


def test_snake_case_keys_are_accepted_for_python_callers():
    raw = amphora_config()
    raw["floating_network"] = raw.pop("floatingNetwork")
    assert load_endpoint_args(raw).floating_network == "public"


def test_member_in_unknown_zone():
    raw = amphora_config()
    raw["members"][2]["az"] = "az4"
    assert problems_of(raw) == [
        f"{ROOT}.members[2].az: member cp-2 is in zone 'az4', which is not configured; use one of az1, az2, az3, "
        "or add 'az4' under zones with its subnet",
        f"{ROOT}.zones.az3: zone az3 has no members, so its load balancer would serve nothing under memberPlacement "
        "own-zone; add a member with az: az3, remove the zone, or set memberPlacement: all-zones",
    ]


def test_duplicate_member_names_and_addresses():
    raw = amphora_config()
    raw["members"].append({"name": "cp-0", "address": "10.10.1.10", "az": "az1"})
    assert problems_of(raw) == [
        f"{ROOT}.members[3].name: member name 'cp-0' is already used by members[0]; give each member a name of its "
        "own",
        f"{ROOT}.members[3].address: address 10.10.1.10 is already the address of members[0] (cp-0); give each "
        "member its own address (one entry per server)",
    ]


def test_duplicate_subnets_across_zones():
    raw = amphora_config()
    raw["zones"]["az2"]["subnet"] = "cp-az1"
    assert problems_of(raw) == [
        f"{ROOT}.zones.az2.subnet: subnet 'cp-az1' is already the subnet of zone az1, so one subnet's failure would "
        "take both zones down; give zone az2 a subnet of its own in its own AZ",
    ]


def test_zone_without_members_under_own_zone_but_not_all_zones():
    raw = amphora_config()
    raw["members"] = [member for member in raw["members"] if member["az"] != "az2"]
    assert problems_of(raw) == [
        f"{ROOT}.zones.az2: zone az2 has no members, so its load balancer would serve nothing under memberPlacement "
        "own-zone; add a member with az: az2, remove the zone, or set memberPlacement: all-zones",
    ]
    raw["memberPlacement"] = "all-zones"
    assert load_endpoint_args(raw).member_placement == "all-zones"


def test_fewer_than_two_zones():
    raw = amphora_config()
    raw["zones"] = {"az1": raw["zones"]["az1"]}
    raw["members"] = [member for member in raw["members"] if member["az"] == "az1"]
    assert problems_of(raw) == [
        f"{ROOT}.zones: 1 zone(s) given (az1); an HA endpoint needs at least 2: add another availability zone and "
        "its subnet",
    ]


@pytest.mark.parametrize("port", [0, 65536, -1])
def test_port_outside_range(port):
    raw = amphora_config()
    raw["listeners"][0]["port"] = port
    bound = "below the least allowed, 1" if port < 1 else "above the most allowed, 65535"
    assert problems_of(raw) == [f"{ROOT}.listeners[0].port: port is {port}, {bound}; give a value from 1 to 65535, "
                                "e.g. port: 6443"]


def test_ovn_with_http_monitor_and_wrong_method():
    raw = amphora_config()
    raw["loadBalancerProvider"] = "ovn"
    raw["listeners"][1]["lbMethod"] = "ROUND_ROBIN"
    assert problems_of(raw) == [
        f"{ROOT}.listeners[0].monitor.type: the ovn provider has no HTTPS health monitors; use one of TCP, "
        "UDP-CONNECT, SCTP",
        f"{ROOT}.listeners[1].lbMethod: the ovn provider balances with SOURCE_IP_PORT only, not ROUND_ROBIN; set "
        "lbMethod: SOURCE_IP_PORT or remove it",
    ]


@pytest.mark.parametrize("ttl", [0, 86401])
def test_ttl_outside_range(ttl):
    raw = amphora_config()
    raw["dns"]["ttl"] = ttl
    bound = "below the least allowed, 1" if ttl < 1 else "above the most allowed, 86400"
    assert problems_of(raw) == [f"{ROOT}.dns.ttl: ttl is {ttl}, {bound}; give a value from 1 to 86400, e.g. ttl: 30"]


@pytest.mark.parametrize("address", ["172.24.4", "2001:db8::5", "public"])
def test_byo_floating_ip_must_be_ipv4(address):
    raw = amphora_config()
    raw["zones"]["az3"]["floatingIp"] = address
    assert problems_of(raw) == [
        f"{ROOT}.zones.az3.floatingIp: '{address}' is not an IPv4 address; give the address of an existing "
        "floating IP",
    ]


def test_unknown_key_and_wrong_enum_are_reported_together():
    raw = amphora_config()
    raw["zonez"] = raw["zones"]
    raw["memberPlacement"] = "everywhere"
    assert problems_of(raw) == [
        f"{ROOT}.memberPlacement: memberPlacement is the text 'everywhere', which is not one of own-zone, all-zones; "
        "use one of them",
        f"{ROOT}.zonez: zonez is not a setting here; did you mean zones? Fix its spelling or remove it (the settings "
        "here: name, backend, loadBalancerProvider, floatingNetwork, allowedCidrs, zones, listeners, members, memberSources, "
        "memberPlacement, dns, readiness, tags)",
    ]


@pytest.mark.parametrize("mode", ["single-call", "per-object"])
def test_the_removed_load_balancer_create_key_is_refused_with_the_fix(mode):
    """loadBalancerCreate was a setting until issue 47 removed its single-call mode: a configuration that still gives
    it (either value) is told what happens now and to remove it, not to fix its spelling (loadBalancerProvider)."""
    raw = amphora_config()
    raw["loadBalancerCreate"] = mode
    assert problems_of(raw) == [
        f"{ROOT}.loadBalancerCreate: loadBalancerCreate is no longer a setting: each zone's load balancer, listeners, "
        "pools and health monitors are always created per object (the single-call mode was removed); remove "
        "loadBalancerCreate",
    ]


@pytest.mark.parametrize("mode", ["per-member", "handover", "batch"])
def test_the_removed_member_updates_key_is_refused_with_the_fix(mode):
    """memberUpdates was a setting until issue 47 kept one member write path: a configuration that still gives it
    (any value) is told what happens now, where a stack deployed with batch or handover finds its way over, and to
    remove the key; nothing is planned."""
    raw = amphora_config()
    raw["memberUpdates"] = mode
    assert problems_of(raw) == [
        f"{ROOT}.memberUpdates: memberUpdates is no longer a setting: every member is its own resource, written and "
        "drained on its own (per-member; batch and handover were removed in issue 47). A stack deployed with batch or "
        "handover moves first: docs/readiness.md 'memberUpdates (removed)'; remove memberUpdates",
    ]


def test_message_lists_every_problem_without_traceback_text():
    raw = amphora_config()
    raw["listeners"][0]["port"] = 0
    raw["dns"]["dnsZone"] = "example.test"
    with pytest.raises(ConfigError) as caught:
        load_endpoint_args(raw)
    text = str(caught.value)
    assert text.splitlines()[0] == "invalid endpoint configuration (2 problems):"
    assert f"  - {ROOT}.dns.dnsZone: 'example.test' is not fully qualified; write it with its trailing dot: " \
           "'example.test.'" in text
    assert "Traceback" not in text


def test_monitor_timeout_must_be_below_delay():
    raw = amphora_config()
    raw["listeners"][0]["monitor"]["timeout"] = 5
    assert problems_of(raw) == [
        f"{ROOT}.listeners[0].monitor.timeout: timeout 5s must be shorter than delay 5s; lower timeout or raise delay",
    ]


def test_floating_ip_without_floating_network():
    raw = amphora_config()
    del raw["floatingNetwork"]
    raw["zones"]["az3"]["floatingIp"] = "172.24.4.50"
    assert problems_of(raw) == [
        f"{ROOT}.zones.az3.floatingIp: a floating IP is given but floatingNetwork is not set; set floatingNetwork "
        "to the external network of that address, or remove floatingIp for an internal endpoint",
    ]


def test_config_that_is_not_a_mapping():
    assert problems_of(["az1"]) == [
        f"{ROOT}: must be a mapping of settings (name, zones, listeners, members, ...), got a list; write it as one, "
        "as in README.md 'Configuration'",
    ]


def test_former_key_names_still_work_and_say_what_to_use_instead():
    """One meaning per word: members[].zone -> az, dns.zone -> dnsZone, provider -> loadBalancerProvider."""
    raw = amphora_config()
    raw["provider"] = raw.pop("loadBalancerProvider", "amphora")
    raw["dns"]["zone"] = raw["dns"].pop("dnsZone")
    for member in raw["members"]:
        member["zone"] = member.pop("az")
    args = load_endpoint_args(raw)
    assert args == load_endpoint_args(amphora_config())
    # said once, as warnings on the component (HaEndpoint says its plan's notices), before the others
    warned = [str(notice) for notice in notices(args, ROOT)]
    assert warned[:3] == [
        f"{ROOT}: provider is now loadBalancerProvider (same meaning); rename it, the old name will go",
        f"{ROOT}: members[].zone is now members[].az (same meaning); rename it, the old name will go",
        f"{ROOT}: dns.zone is now dns.dnsZone (same meaning); rename it, the old name will go"]
    assert [str(notice) for notice in notices(load_endpoint_args(amphora_config()), ROOT)] == warned[3:]


def test_a_former_and_a_current_name_together_are_refused():
    raw = amphora_config()
    raw["members"][0]["zone"] = "az1"
    assert problems_of(raw) == [f"{ROOT}.members[0]: 'zone' is the former name of 'az'; give only 'az'"]


def test_a_message_lists_at_most_20_problems_then_how_many_more():
    raw = amphora_config()
    raw["members"] = [{"name": f"m{index}", "address": f"10.10.1.{300 + index}", "az": "az1"} for index in range(25)]
    with pytest.raises(ConfigError) as caught:
        load_endpoint_args(raw)
    lines = str(caught.value).splitlines()
    assert lines[0] == "invalid endpoint configuration (25 problems):"
    assert len(lines) == 22 and lines[-1] == "  ... and 5 more (fix these first; the same check lists the rest)"
    assert len(caught.value.problems) == 25


# -- the rules said once (ha_endpoint.core.predicates), as Octavia and Designate apply them -------------------------------

@pytest.mark.parametrize("path, accepted", [
    ("/", True), ("/readyz", True), ("/readyz?verbose", True), ("/a/b%20c", True), ("/healthz#x", True),
    ("readyz", False), ("/ready z", False), ("http://h/readyz", False), ("//h/readyz", False), ("/a|b", False),
    ("/%zz", False), ("/é", False)])
def test_url_paths_as_octavia_takes_them(path, accepted):
    from ha_endpoint.core import predicates

    assert (predicates.url_path_problem(path) is None) is accepted


@pytest.mark.parametrize("codes, accepted", [
    ("200", True), ("200,202", True), ("200, 202", True), ("200-204", True), ("2xx", False), ("200-", False),
    ("200-204,301", False), ("20", False), ("200;204", False), ("", False)])
def test_expected_codes_as_octavia_takes_them(codes, accepted):
    from ha_endpoint.core.args import expected_codes_problem

    assert (expected_codes_problem(codes) is None) is accepted


@pytest.mark.parametrize("address, refused", [
    ("10.10.1.10", None), ("10.10.1.0", "network address"), ("10.10.1.255", "broadcast address"),
    ("10.10.1.1", "gateway"), ("10.99.0.1", None)])
def test_member_addresses_no_server_holds(address, refused):
    from ha_endpoint.core import predicates

    problem = predicates.member_address_problem(address, "10.10.1.0/24", "10.10.1.1")
    assert (problem is None) if refused is None else (refused in problem)


def test_member_addresses_of_small_and_ipv6_subnets():
    from ha_endpoint.core import predicates

    assert predicates.member_address_problem("10.0.0.0", "10.0.0.0/31") is None  # RFC 3021: both are hosts
    assert "network address" in predicates.member_address_problem("fd00::", "fd00::/64")
    assert predicates.member_address_problem("fd00::ffff:ffff:ffff:ffff", "fd00::/64") is None  # no broadcast in v6


@pytest.mark.parametrize("fqdn, refused", [
    ("api.example.test.", None), ("*.apps.example.test.", None), ("_acme.example.test.", None),
    ("a" * 63 + ".example.test.", None), ("a" * 64 + ".example.test.", "64 characters"),
    ("api-.example.test.", "not a DNS label"), ("api..example.test.", "not a DNS label"),
    ("apps.*.example.test.", "not a DNS label"), (".".join(["a" * 49] * 5) + ".test.", "characters long")])
def test_dns_names_as_designate_takes_them(fqdn, refused):
    from ha_endpoint.core import predicates

    problem = predicates.dns_name_problem(fqdn)
    assert (problem is None) if refused is None else (refused in problem)


def test_a_record_name_given_as_an_output_is_checked_for_its_own_labels():
    import pulumi

    raw = amphora_config()
    raw["dns"]["dnsZone"] = pulumi.Output.from_input("example.test.")
    raw["dns"]["record"] = "api-"
    assert [problem.split(": ", 1)[0] for problem in problems_of(raw)] == [f"{ROOT}.dns.record"]
    raw["dns"]["record"] = "a" * 200  # its full length is known only with the zone's name: checked once known
    assert problems_of(raw)[0].startswith(f"{ROOT}.dns.record: the endpoint's record would be ")


# -- pydantic's own wording never reaches a user ---------------------------------------------------------------------

JUNK = [None, True, False, 0, -1, 1.5, 6443.0, 10 ** 12, "", "x", "6443", " ", [], ["x"], {}, {"x": 1}]
KEYS = ["name", "loadBalancerProvider", "floatingNetwork", "allowedCidrs", "zones", "zones.az1", "zones.az1.subnet",
        "zones.az1.floatingIp", "zones.az1.takeOverFloatingIp", "listeners", "listeners.0", "listeners.0.port",
        "listeners.0.memberPort", "listeners.0.protocol", "listeners.0.lbMethod", "listeners.0.monitor",
        "listeners.0.monitor.type", "listeners.0.monitor.path", "listeners.0.monitor.expectedCodes",
        "listeners.0.monitor.delay", "listeners.0.monitor.timeout", "listeners.0.monitor.maxRetries",
        "listeners.0.monitor.port", "listeners.0.certificateRef", "members", "members.0", "members.0.name",
        "members.0.az", "members.0.address", "members.0.subnet", "members.0.port", "members.0.weight",
        "memberPlacement", "dns", "dns.dnsZone", "dns.record", "dns.ttl", "dns.publish", "dns.perZoneRecords",
        "readiness", "readiness.timeoutSeconds", "readiness.require", "readiness.pollIntervalSeconds",
        "readiness.stablePolls", "readiness.drainSeconds", "readiness.cloud", "tags", "tags.0", "typo"]


def test_every_key_with_any_wrong_value_is_refused_in_words_a_user_knows():
    """Each key of the configuration, given each kind of wrong value: whatever is refused names a key under the
    configuration and says what to do, with none of pydantic's phrases (and nothing crashes)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from tests.budget import examples

    from ha_endpoint.core.messages import raw_phrases
    from tests.unit.corpus.runner import FIX_WORDS

    @settings(max_examples=examples(400), deadline=None)
    @given(st.sampled_from(KEYS), st.sampled_from(JUNK))
    def check(key, junk):
        raw = amphora_config()
        raw.setdefault("tags", ["production"])
        *head, last = [int(step) if step.isdigit() else step for step in key.split(".")]
        container = raw
        for step in head:
            container = container[step]
        container[last] = junk
        try:
            load_endpoint_args(raw)
        except ConfigError as error:
            for problem in error.problems:
                text = str(problem)
                assert text.startswith(ROOT) and not any(phrase in text for phrase in raw_phrases()), text
                assert FIX_WORDS.search(text.split(": ", 1)[-1]), text

    check()


def test_the_outage_settings_are_checked_with_the_key_and_the_fix():
    raw = amphora_config()
    raw["readiness"] = {"onZoneNotReady": "skip"}
    assert problems_of(raw) == [
        f"{ROOT}.readiness.onZoneNotReady: onZoneNotReady is the text 'skip', which is not one of fail, unpublish; "
        "use one of them"]
    raw["readiness"] = {"minReadyZones": 2}
    assert problems_of(raw) == [
        f"{ROOT}.readiness.minReadyZones: applies only with readiness.onZoneNotReady: unpublish (with fail, every zone "
        "must be ready); set onZoneNotReady: unpublish, or remove minReadyZones"]
    raw["readiness"] = {"onZoneNotReady": "unpublish", "minReadyZones": 4}
    raw["dns"]["perZoneRecords"] = False
    assert problems_of(raw) == [
        f"{ROOT}.readiness.minReadyZones: is 4 but the endpoint has 3 zones, so no update could ever complete; set it "
        "to at most 3"]
    raw["readiness"] = {"onZoneNotReady": "unpublish"}
    raw["dns"]["perZoneRecords"] = True
    assert problems_of(raw) == [
        f"{ROOT}.readiness.onZoneNotReady: unpublish cannot leave a zone out of its own record (dns.perZoneRecords: "
        "Designate refuses an empty record); set dns.perZoneRecords: false, or onZoneNotReady: fail"]
    raw["dns"]["perZoneRecords"] = False
    args = load_endpoint_args(raw)
    assert (args.readiness.on_zone_not_ready, args.readiness.min_ready_zones, args.readiness.dead_after_seconds) == \
        ("unpublish", None, 60)


# -- listener timeouts (issue 46, finding 5) -----------------------------------------------------------------------

def test_ovn_refuses_listener_timeouts_at_preview():
    """ovn-octavia-provider ignores them (Octavia would record them and nothing would apply them)."""
    raw = amphora_config()
    raw["loadBalancerProvider"] = "ovn"
    raw["listeners"][0]["monitor"] = {"type": "TCP"}
    raw["listeners"][0]["timeoutClientData"] = 3600000
    raw["listeners"][1]["timeoutTcpInspect"] = 0
    ignored = ("is set but the ovn provider ignores listener timeouts (Octavia records them, nothing applies them: an "
               "OVN load balancer is no proxy, an idle connection lives as long as its conntrack entry, 5 days on "
               "Linux by default); remove it (under ovn an idle connection is bounded by the conntrack timeouts of "
               "the hosts, not by Octavia)")
    assert problems_of(raw) == [f"{ROOT}.listeners[0].timeoutClientData: timeoutClientData {ignored}",
                                f"{ROOT}.listeners[1].timeoutTcpInspect: timeoutTcpInspect {ignored}"]


def test_an_amphora_udp_listener_refuses_listener_timeouts():
    raw = amphora_config()
    raw["listeners"][1] = {"port": 53, "protocol": "UDP", "monitor": {"type": "UDP-CONNECT"},
                           "timeoutMemberData": 3600000}
    assert problems_of(raw) == [
        f"{ROOT}.listeners[1].timeoutMemberData: timeoutMemberData is set but an amphora serves UDP listeners with "
        "LVS, which has no such timeouts (Octavia records them, nothing applies them); remove it, or use protocol TCP "
        "for a listener the amphora proxies"]


@pytest.mark.parametrize("value, message", [
    (-1, "timeoutClientData is -1, below the least allowed, 1; give a value from 1 to 2073600000, e.g. "
         "timeoutClientData: 3600000"),
    (2073600001, "timeoutClientData is 2073600001, above the most allowed, 2073600000; give a value from 1 to "
                 "2073600000, e.g. timeoutClientData: 3600000"),
    ("1h", "timeoutClientData must be a whole number from 1 to 2073600000, got the text '1h'; write the number "
           "itself, e.g. timeoutClientData: 3600000"),
    (0, "0 does not mean 'no timeout': the load balancer then applies the cloud's configured default; give the "
        "milliseconds, 1 to 2073600000, or remove the key for the endpoint's default"),
], ids=["negative", "above-24-days", "text", "zero"])
def test_a_bad_listener_timeout_names_the_key_and_the_fix(value, message):
    raw = amphora_config()
    raw["listeners"][0]["timeoutClientData"] = value
    assert problems_of(raw) == [f"{ROOT}.listeners[0].timeoutClientData: {message}"]


def test_listener_timeouts_within_octavias_bounds_are_accepted():
    raw = amphora_config()
    raw["listeners"][0].update(timeoutClientData=2073600000, timeoutMemberData=1, timeoutMemberConnect=5000,
                               timeoutTcpInspect=0)
    listener = load_endpoint_args(raw).listeners[0]
    assert (listener.timeout_client_data, listener.timeout_member_data, listener.timeout_member_connect,
            listener.timeout_tcp_inspect) == (2073600000, 1, 5000, 0)


def test_an_unknown_backend_is_named_with_the_registered_ones_and_reported_with_the_other_problems():
    from ha_endpoint.backends import names
    from ha_endpoint.pipeline import run

    raw = amphora_config()
    raw["backend"] = "haproxy"
    raw["zones"]["az2"]["subnet"] = raw["zones"]["az1"]["subnet"]
    with pytest.raises(ConfigError) as caught:
        run(raw)
    assert [problem.path for problem in caught.value.problems] == [f"{ROOT}.backend", f"{ROOT}.zones.az2.subnet"]
    assert str(caught.value.problems[0]) == (
        f"{ROOT}.backend: no backend is registered as 'haproxy' (registered: keepalived, octavia); set backend to one "
        "of them, "
        "or leave it out for the default")
    assert names() == ("keepalived", "octavia")
    assert load_endpoint_args(amphora_config()).backend == "octavia"  # the default

"""Property tests (Hypothesis) of the pure planning code: args + cloud facts -> plan.

* A random valid topology gives a plan whose resource names are unique per resource type, derived from names and
  never from positions: the same plan (and the same component properties) comes out whatever the order of zones,
  listeners and members.
* A random valid topology broken in one random way always fails with a ConfigError whose every problem names a
  key path inside ``ha-endpoint:endpoint`` that exists in the input (or whose parent does, for a missing key) and
  says how to fix it.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples

from ha_endpoint import ConfigError, load_endpoint_args
from ha_endpoint.core.cloud_facts import CloudFacts, FloatingIpFacts, SubnetFacts
from ha_endpoint.core.plan import EndpointPlan
from ha_endpoint.pipeline import Context, checked_plan
from ha_endpoint.core.declared import endpoint_facts
from ha_endpoint.backends.octavia.zone import octavia_zone

ROOT = "ha-endpoint:endpoint"
zone_names = st.from_regex(r"\A[a-z][a-z0-9]{0,6}(-[a-z0-9]{1,3})?\Z")
member_names = st.from_regex(r"\A[a-z][a-z0-9]{0,8}\Z")
ports = st.integers(min_value=1, max_value=65535)


@st.composite
def topologies(draw) -> dict[str, Any]:
    """A valid endpoint configuration (raw, camelCase) for the synthetic cloud of :func:`facts_for`."""
    zones = draw(st.lists(zone_names, min_size=2, max_size=5, unique=True))
    listener_ports = draw(st.lists(ports, min_size=1, max_size=3, unique=True))
    names = draw(st.lists(member_names, min_size=len(zones), max_size=len(zones) + 8, unique=True))
    members = []
    for index, name in enumerate(names):
        zone_index = index if index < len(zones) else draw(st.integers(0, len(zones) - 1))
        members.append({"name": name, "address": f"10.{zone_index}.{index // 200}.{10 + index % 200}",
                        "az": zones[zone_index]})
    byo = draw(st.lists(st.sampled_from(zones), unique=True, max_size=2))
    raw = {
        "name": draw(st.from_regex(r"\A[a-z][a-z0-9]{0,8}\Z")),
        "loadBalancerProvider": draw(st.sampled_from(["amphora", "ovn"])),
        "floatingNetwork": "public",
        "zones": {zone: {"subnet": f"sub-{zone}", **({"floatingIp": f"172.24.4.{10 + i}"} if zone in byo else {})}
                  for i, zone in enumerate(zones)},
        "listeners": [{"port": port, "monitor": {"type": "TCP"}} for port in listener_ports],
        "members": members,
        "memberPlacement": draw(st.sampled_from(["own-zone", "all-zones"])),
        "dns": {"dnsZone": "example.test.", "record": "api", "perZoneRecords": draw(st.booleans())},
    }
    return raw


def facts_for(raw: dict[str, Any]) -> CloudFacts:
    """One network, one router, subnet sub-<zone> = 10.<i>.0.0/16 per zone (in config order at generation)."""
    subnets = {}
    for index, (zone, spec) in enumerate(sorted(raw["zones"].items(), key=lambda item: _zone_index(raw, item[0]))):
        subnets[spec["subnet"]] = SubnetFacts(spec["subnet"], f"id-{zone}", spec["subnet"], f"10.{index}.0.0/16",
                                              "net", 4, f"10.{index}.0.1", ("router",))
    fips = {zone: FloatingIpFacts(spec["floatingIp"], f"fip-{zone}", "public-id")
            for zone, spec in raw["zones"].items() if spec.get("floatingIp")}
    return CloudFacts(subnets, "public-id", "public", fips, "zone-id")


def _zone_index(raw: dict[str, Any], zone: str) -> int:
    return int(next(m["address"].split(".")[1] for m in raw["members"] if m["az"] == zone))


def plan_of(raw: dict[str, Any]) -> EndpointPlan:
    return checked_plan(load_endpoint_args(raw), facts_for(raw), Context())


def props_of(raw: dict[str, Any]) -> dict[str, Any]:
    args, facts = load_endpoint_args(raw), facts_for(raw)
    return endpoint_facts(checked_plan(args, facts, Context())).dump()


def names_by_type(plan: EndpointPlan) -> dict[str, list[str]]:
    names: dict[str, list[str]] = {"component": [], "lb": [], "listener": [], "pool": [], "monitor": [],
                                   "member": [], "fip": [], "fip-assoc": [], "port-sg": [], "readiness": [],
                                   "sg": [plan.security.vip_group_name, plan.security.members_group_name],
                                   "rule": [r.name for r in (*plan.security.vip_rules, *plan.security.members_rules)],
                                   "dns": [plan.dns.resource_name, *(r[1] for r in plan.dns.zone_records)]}
    for zone in plan.zones:
        names["component"].append(zone.component_name)
        names["lb"].append(octavia_zone(zone).lb_name)
        names["readiness"].append(zone.readiness_name)
        names["port-sg"].append(zone.vip_secgroup_association_name)
        if zone.floating.name:
            names["fip"].append(zone.floating.name)
        names["fip-assoc"].append(zone.floating.association_name)
        for listener in zone.listeners:
            names["listener"].append(listener.listener_name)
            names["pool"].append(listener.pool_name)
            names["monitor"].append(listener.monitor.name)
            names["member"].extend(member.resource_name for member in listener.members)
    names["port-sg"].extend(port.name for port in plan.security.member_ports)
    return names


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(topologies())
def test_valid_topologies_give_unique_names(raw):
    plan = plan_of(raw)
    for kind, names in names_by_type(plan).items():
        assert len(names) == len(set(names)), kind
    member_count = sum(len(listener.members) for zone in plan.zones for listener in zone.listeners)
    per_zone = 1 if raw["memberPlacement"] == "own-zone" else len(raw["zones"])
    assert member_count == len(raw["members"]) * len(raw["listeners"]) * per_zone


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(topologies(), st.randoms(use_true_random=False))
def test_plans_are_stable_under_permutation(raw, random):
    shuffled = copy.deepcopy(raw)
    items = list(shuffled["zones"].items())
    random.shuffle(items)
    shuffled["zones"] = dict(items)
    random.shuffle(shuffled["listeners"])
    random.shuffle(shuffled["members"])
    assert plan_of(shuffled) == plan_of(raw)
    assert props_of(shuffled) == props_of(raw)  # what the policy pack reads is order-free too


def _break(raw: dict[str, Any], how: str, data) -> None:
    zones = list(raw["zones"])
    member = data.draw(st.integers(0, len(raw["members"]) - 1), label="member")
    if how == "unknown zone":
        raw["members"][member]["az"] = "nowhere"
    elif how == "duplicate member name":
        raw["members"].append({**raw["members"][member], "address": "10.0.255.250"})
    elif how == "duplicate address":
        raw["members"].append({**raw["members"][member], "name": "twin"})
    elif how == "duplicate subnet":
        raw["zones"][zones[1]]["subnet"] = raw["zones"][zones[0]]["subnet"]
    elif how == "one zone":
        raw["zones"] = {zones[0]: raw["zones"][zones[0]]}
    elif how == "port out of range":
        raw["listeners"][0]["port"] = data.draw(st.sampled_from([0, -1, 65536, 10 ** 6]), label="port")
    elif how == "ovn http monitor":
        raw["loadBalancerProvider"] = "ovn"
        raw["listeners"][0]["monitor"] = {"type": data.draw(st.sampled_from(["HTTP", "HTTPS"]), label="type")}
    elif how == "ttl out of range":
        raw["dns"]["ttl"] = data.draw(st.sampled_from([0, 86401, -5]), label="ttl")
    elif how == "byo not ipv4":
        raw["zones"][zones[0]]["floatingIp"] = data.draw(st.sampled_from(["fe80::1", "1.2.3", "public"]), label="ip")
    elif how == "address outside subnet":
        raw["members"][member]["address"] = "192.0.2.7"
    elif how == "unknown key":
        raw["members"][member]["adress"] = "10.0.0.1"
    elif how == "empty zone":
        raw["memberPlacement"] = "own-zone"
        raw["members"] = [m for m in raw["members"] if m["az"] != zones[0]]
        raw["members"] = raw["members"] or [{"name": "solo", "address": "10.1.0.9", "az": zones[1]}]


BREAKS = ["unknown zone", "duplicate member name", "duplicate address", "duplicate subnet", "one zone",
          "port out of range", "ovn http monitor", "ttl out of range", "byo not ipv4", "address outside subnet",
          "unknown key", "empty zone"]


def resolves(raw: dict[str, Any], path: str) -> bool:
    """True when ``path`` (``root.key[index].key``) names a place in ``raw`` (or a missing key of a place in it)."""
    assert path.startswith(ROOT), path
    parts = re.findall(r"\.([^.\[\]]+)|\[(\d+)\]", path[len(ROOT):])
    node: Any = raw
    for position, (key, index) in enumerate(parts):
        last = position == len(parts) - 1
        if index:
            if not isinstance(node, list) or int(index) >= len(node):
                return False
            node = node[int(index)]
            continue
        camel = re.sub(r"_([a-z])", lambda match: match.group(1).upper(), key)
        if not isinstance(node, dict):
            return False
        if key in node or camel in node:
            node = node.get(key, node.get(camel))
        elif not last:
            return False
    return True


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(topologies(), st.sampled_from(BREAKS), st.data())
def test_broken_topologies_fail_with_key_paths_and_fixes(raw, how, data):
    broken = copy.deepcopy(raw)
    _break(broken, how, data)
    facts = facts_for(raw)
    try:
        checked_plan(load_endpoint_args(broken), facts, Context())
    except ConfigError as error:
        assert error.problems
        for problem in error.problems:
            assert resolves(broken, problem.path), problem
            assert len(problem.message) > 20 and "Traceback" not in problem.message
    else:
        raise AssertionError(f"{how} was accepted")

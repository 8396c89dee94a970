"""Every policy gives a verdict on any input, never an exception (issue 10).

Malformed facts are named by ``ha-endpoint-declared-facts`` (a member ``az`` given as a list, a protocol the shared
predicates do not know, a subnet referred to and not declared). Beyond the cases named here, Hypothesis mutates what a
real program registered (the endpoint with raw resources beside it, at preview and after up): any declared fact, any
output of the endpoint, any property of any resource, replaced by a value of any type (or an unknown, or removed),
and the dependency and parent graph rewired (cycles included); every policy must return violations or pass.
"""

from __future__ import annotations

import copy
import functools
from typing import Any, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import cases, examples
from pulumi_policy.proxy import UNKNOWN_NUMBER_VALUE, UNKNOWN_STRING_VALUE

from neighbours_program import any_zone_pool, run_neighbours
from policies import pack
from policies.model import Violation, plain, with_defaults
from policies.rules import RULES
from policy_harness import HarnessRun
from policy_runner import run_pack
from tests.mocks.configs import amphora_endpoint

DECLARED = "ha-endpoint-declared-facts"
TAIL = "; the other policies cannot check this endpoint until its facts are declared in the component's shape"


# -- malformed facts: a verdict that names them -------------------------------------------------------------------------

def test_a_member_zone_given_as_a_list_is_named():
    run = run_neighbours().set_fact("members.cp-1.az", ["az1", "az2"])
    assert run.violations() == [(DECLARED, f"endpoint k8s-api: facts.members.cp-1.az: Input should be a valid string"
                                           f"{TAIL}")]


def test_a_listener_protocol_the_predicates_do_not_know_is_named():
    run = run_neighbours().set_fact("listeners.0.protocol", "QUIC")
    assert run.violations() == [(DECLARED, (
        "endpoint k8s-api: facts.listeners.0.protocol: Value error, unknown listener protocol 'QUIC'; one of TCP, "
        f"HTTP, HTTPS, TERMINATED_HTTPS, UDP, SCTP{TAIL}"))]


def test_a_monitor_type_the_predicates_do_not_know_is_named():
    run = run_neighbours().set_fact("listeners.1.monitor.type", "GRPC")
    assert run.violations() == [(DECLARED, (
        "endpoint k8s-api: facts.listeners.1.monitor.type: Value error, unknown health-monitor type 'GRPC'; one of "
        f"TCP, HTTP, HTTPS, TLS-HELLO, UDP-CONNECT, SCTP, PING{TAIL}"))]


def test_a_subnet_referred_to_and_not_declared_is_named():
    run = run_neighbours()
    vip = run.facts()["zones"]["az2"]["vipSubnetId"]
    del run.facts()["subnets"][vip]
    assert run.violations() == [(DECLARED, f"endpoint k8s-api: facts.{path}: subnet {vip} is not among facts.subnets"
                                           f"{TAIL}")
                                for path in ("zones.az2.vipSubnetId", "members.cp-1.subnetId")]


def test_facts_that_are_not_a_mapping_are_named():
    run = run_neighbours()
    run.named("k8s-api").outputs["facts"] = ["facts"]
    assert run.violations() == [(DECLARED, f"endpoint k8s-api: facts: expected the declared facts as a mapping, got "
                                           f"list{TAIL}")]


def test_a_policy_that_fails_anyway_is_a_violation_naming_it(monkeypatch):
    """The last line of defence (policies.pack.unfinished): the preview names the policy, not a traceback."""
    rule = next(rule for rule in RULES if rule.name == "ha-endpoint-neighbour-dns-readiness")

    def broken(resources, config):
        raise TypeError("unhashable type: 'list'")

    monkeypatch.setattr(rule, "check", broken)
    assert run_pack(run_neighbours().stack_resources()) == [(rule.name, (
        "policy ha-endpoint-neighbour-dns-readiness could not finish (TypeError: unhashable type: 'list'), so it "
        "judged nothing in this stack; this is a bug of the policy pack: report it with this preview's output"))]
    assert pack.unfinished(rule, KeyError("x")).startswith("policy ha-endpoint-neighbour-dns-readiness could not")


# -- any malformed input: violations or a pass ------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _baseline(kind: str) -> HarnessRun:
    if kind == "ambiguous":  # a member whose pool id depends on every zone, an open rule, an ungated record
        return run_neighbours(member={"pool": any_zone_pool("az1", 6443)}, rule={"prefix": "0.0.0.0/0"},
                              record={"records": lambda ep: [ep.zone_components["az2"].serving.outputs["vip_address"]]})
    return run_neighbours(preview=kind == "preview")


STRINGS = ["", "az1", "az9", "10.10.1.10", "10.10.1.0/24", "0.0.0.0/0", "::/0", "fd00::1", "not-a-cidr", "TCP", "udp",
           "QUIC", "PING", "ingress", "egress", "A", "when-ready", "bootstrap", "own-zone", "all-zones", "ovn",
           "octavia", "production", UNKNOWN_STRING_VALUE, UNKNOWN_NUMBER_VALUE]
JUNK = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2, 70000), st.floats(allow_nan=True, allow_infinity=True),
              st.text(max_size=6), st.sampled_from(STRINGS)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(STRINGS) | st.text(max_size=4),
                                                                          inner, max_size=3)),
    max_leaves=6)
REMOVE = object()
READ = ["address", "subnetId", "poolId", "protocolPort", "monitorPort", "records", "type", "ttl", "remoteIpPrefix",
        "remoteGroupId", "direction", "protocol", "portRangeMin", "portRangeMax", "securityGroupId", "tags",
        "availabilityZone", "vipSubnetId", "loadbalancerProvider", "lbMethod", "allowedCidrs", "id", "zones", "facts",
        "vipSecurityGroupId", "membersSecurityGroupId", "pool_ids", "pool_id", "members"]
"""The properties the policies read (of any resource type): most mutations hit one of them."""
CONFIGS = [None, {"productionStackPattern": "^dev$", "minZones": 5, "minMembersPerZone": 3, "maxTtl": 1}]


def _paths(value: Any, path: tuple = ()) -> list[tuple]:
    found = [path]
    if isinstance(value, dict):
        found += [p for key, item in value.items() for p in _paths(item, path + (key,))]
    elif isinstance(value, list):
        found += [p for index, item in enumerate(value) for p in _paths(item, path + (index,))]
    return found


def _put(root: Any, path: tuple, value: Any) -> Any:
    """``root`` with the value at ``path`` replaced (or removed); a path that no longer exists changes nothing."""
    if not path:
        return None if value is REMOVE else value
    target = root
    try:
        for part in path[:-1]:
            target = target[part]
        if value is REMOVE:
            del target[path[-1]]
        else:
            target[path[-1]] = value
    except (KeyError, IndexError, TypeError):
        pass
    return root


def _mutate(data: st.DataObject, run: HarnessRun) -> None:
    registrations = run.registrations
    endpoint = run.named("k8s-api")
    kind = data.draw(st.sampled_from(["fact", "output", "property", "dependency", "parent"]))
    value = data.draw(JUNK | st.just(REMOVE))
    outputs = endpoint.outputs if isinstance(endpoint.outputs, dict) else {}
    if kind == "fact":
        facts = outputs.get("facts")
        endpoint.outputs = {**outputs, "facts": _put(facts, data.draw(st.sampled_from(_paths(facts))), value)}
    elif kind == "output":
        endpoint.outputs = _put(outputs, data.draw(st.sampled_from(_paths(outputs)[1:] or [()])), value) or {}
    elif kind == "property":
        target = data.draw(st.sampled_from(registrations))
        props = target.inputs if target.custom else (target.outputs or {})
        path = data.draw(st.sampled_from([(key,) for key in READ]) | st.sampled_from(_paths(props)[1:] or [()]))
        props = _put(props, path, value)
        if target.custom:
            target.inputs = props if isinstance(props, dict) else {}
        else:
            target.outputs = props if isinstance(props, dict) else {}
    elif kind == "dependency":
        source, target = data.draw(st.sampled_from(registrations)), data.draw(st.sampled_from(registrations))
        prop = data.draw(st.sampled_from(["poolId", "records", "securityGroupId", None]))
        if prop is None:
            source.dependencies.append(target.urn)
        else:
            source.property_dependencies.setdefault(prop, []).append(target.urn)
    else:
        source, target = data.draw(st.sampled_from(registrations)), data.draw(st.sampled_from(registrations))
        source.parent = target.urn


def _judge_every_policy(run: HarnessRun, config: Any, changed: Optional[str] = None,
                        shared: Optional[dict] = None) -> None:
    """Every rule judges the run: stack rules the whole stack; resource rules each resource, or only the resource
    named ``changed`` when one alone differs from a baseline (a resource rule sees that resource alone, and the
    baselines' verdicts are asserted by test_the_fuzzed_baselines_are_judged_as_expected). ``shared``: the
    unchanged registrations' resources, kept from one judging to the next (HarnessRun.stack_resources)."""
    resources = run.stack_resources(shared)
    judged = [r for r in resources if r.name == changed] if changed is not None else resources
    assert judged, changed
    for rule in RULES:
        settings_ = with_defaults(config, rule.config)
        if rule.kind == "stack":
            found = rule.check(list(resources), settings_)
        else:
            found = [violation for resource in judged if resource.resource_type in rule.resource_types
                     for violation in rule.check_resource(resource.resource_type, plain(resource.props),
                                                          resource.name, resource.urn, settings_)]
        assert all(isinstance(v, Violation) and isinstance(v.message, str) and v.message for v in found), rule.name


@pytest.mark.parametrize("kind", ["preview", "up", "ambiguous"])
@settings(max_examples=examples(250), deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_policy_gives_a_verdict_on_any_malformed_input(kind, data):
    run = copy.deepcopy(_baseline(kind))
    for _ in range(data.draw(st.integers(1, 4))):
        _mutate(data, run)
    _judge_every_policy(run, data.draw(st.sampled_from(CONFIGS)))


ODD_VALUES = [None, True, 7, 2.5, float("nan"), "", "x", [], [None], [7], [[1]], [{"k": 1}], {"k": [1]},
              UNKNOWN_STRING_VALUE, [UNKNOWN_STRING_VALUE], REMOVE]


@pytest.mark.parametrize("kind", ["preview", "up", "ambiguous"])
def test_every_property_the_policies_read_takes_any_value(kind):
    """One change at a time, systematically: for one resource of each type, each property the policies read
    replaced by each kind of odd value (a verdict in production, where the most rules apply). Outside the full
    budget each property takes a fifth of the values, rotating, so that every value is still tried."""
    baseline = _baseline(kind)
    rotation = 0
    shared: dict = {}  # the baseline's registrations are never changed here: their resources serve every case
    samples = {registration.type: registration.name for registration in baseline.registrations}
    for name in samples.values():
        original = baseline.named(name)
        props = original.inputs if original.custom else original.outputs or {}
        for key in [key for key in READ if key in props or key in ("poolId", "records", "securityGroupId")]:
            rotation += 1
            for value in cases(ODD_VALUES, rotation):
                target = copy.deepcopy(original)  # the one registration changed; the others shared, never changed
                run = HarnessRun([target if r is original else r for r in baseline.registrations],
                                 baseline.stack_outputs)
                if target.custom:
                    target.inputs = _put(target.inputs, (key,), value)
                else:
                    target.outputs = _put(target.outputs or {}, (key,), value)
                _judge_every_policy(run, CONFIGS[1], changed=name, shared=shared)


def test_the_fuzzed_baselines_are_judged_as_expected():
    """What the fuzzing starts from: the compliant program, and one with each kind of neighbour finding."""
    assert _baseline("preview").violations() == [] and _baseline("up").violations() == []
    assert [policy for policy, _ in _baseline("ambiguous").violations()] == [
        "ha-endpoint-production-neighbour-rules", "ha-endpoint-neighbour-dns-readiness"]


def test_the_dev_program_with_malformed_configuration_of_the_pack_gives_verdicts():
    run = run_neighbours(endpoint=amphora_endpoint())
    config = {"productionStackPattern": ["^dev$"], "productionTag": 7, "minZones": "three", "maxTtl": None,
              "minMembersPerZone": -1}
    _judge_every_policy(run, config)

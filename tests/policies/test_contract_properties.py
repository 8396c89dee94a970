"""One contract, proven over configurations (Hypothesis): the component and its pack answer the same questions alike.

Configurations range over every listener protocol, monitor type (or none), algorithm, provider, member placement,
publication mode and zone/member counts, on the fake cloud behind Pulumi mocks (the dev cloud: zones az1..az3 on
subnets cp-az1..3):

* every configuration the component accepts builds a stack that passes the whole pack;
* every configuration it refuses, built anyway with the component's own checks switched off, gets pack violations
  only where validation named a problem of the same kind (policy -> the key paths it corresponds to).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ha_endpoint import ConfigError, validation
from policy_harness import run_preview

PROTOCOLS = ["TCP", "UDP", "SCTP", "HTTP", "HTTPS", "TERMINATED_HTTPS"]
MONITORS = [None, "TCP", "HTTP", "HTTPS", "PING", "TLS-HELLO", "UDP-CONNECT", "SCTP"]
METHODS = [None, "ROUND_ROBIN", "LEAST_CONNECTIONS", "SOURCE_IP", "SOURCE_IP_PORT"]

# A pack violation on a stack the component would refuse must match one of the problems validation found:
# policy -> the fragments of the key paths validation names for that kind of problem.
CORRESPONDS = {
    "ha-endpoint-ovn-provider-constraints": (".protocol", ".monitor.type", ".lbMethod"),
    "ha-endpoint-member-zones": (".zones.", ".members"),
    "ha-endpoint-min-zones": (".zones",),
    "ha-endpoint-pool-health-monitor": (".monitor",),
    "ha-endpoint-member-security-group": (".monitor.type", ".protocol"),
}


@st.composite
def endpoints(draw) -> dict[str, Any]:
    azs = draw(st.lists(st.sampled_from(["az1", "az2", "az3"]), min_size=1, max_size=3, unique=True))
    listeners = []
    for port in draw(st.lists(st.sampled_from([53, 443, 3868, 6443, 22623]), min_size=1, max_size=2, unique=True)):
        monitor = draw(st.sampled_from(MONITORS))
        listener: dict[str, Any] = {"port": port, "protocol": draw(st.sampled_from(PROTOCOLS)),
                                    "monitor": None if monitor is None else {"type": monitor}}
        method = draw(st.sampled_from(METHODS))
        if method:
            listener["lbMethod"] = method
        if listener["protocol"] == "TERMINATED_HTTPS":
            listener["protocol"] = "HTTPS"  # needs a certificate the fake cloud does not hold
        listeners.append(listener)
    members = [{"name": f"cp-{n}", "address": f"10.10.{n}.10", "az": f"az{n}"}
               for n in (1, 2, 3) if f"az{n}" in azs and draw(st.booleans())]
    raw = {
        "name": "k8s-api", "loadBalancerProvider": draw(st.sampled_from(["amphora", "ovn"])), "floatingNetwork": "public",
        "zones": {az: {"subnet": f"cp-{az}"} for az in azs}, "listeners": listeners, "members": members,
        "memberPlacement": draw(st.sampled_from(["own-zone", "all-zones"])),
        "dns": {"dnsZone": "example.test.", "record": "api", "ttl": 30,
                "publish": draw(st.sampled_from(["when-ready", "bootstrap"]))},
    }
    return raw


def _problems(raw: dict[str, Any]) -> list[str]:
    try:
        validation.load_endpoint_args(raw)
    except ConfigError as error:
        return [problem.path for problem in error.problems]
    return []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(endpoints())
def test_the_component_and_the_pack_agree(raw):
    problems = _problems(raw)
    if not problems:
        assert run_preview(raw).violations() == []
        return
    if not raw["members"]:
        return  # nothing to build: the planner needs members
    original = validation.check_endpoint_args
    validation.check_endpoint_args = lambda args, root=validation.DEFAULT_ROOT: []
    try:
        found = run_preview(raw).violations()
    except ConfigError:
        return  # refused by the checks that need the cloud's facts, before anything is registered
    finally:
        validation.check_endpoint_args = original
    for policy, message in found:
        fragments = CORRESPONDS.get(policy, ())
        assert any(fragment in path for path in problems for fragment in fragments), \
            f"the pack's {policy} found '{message}', which validation does not refuse (it found: {problems})"


@pytest.mark.parametrize("protocol, monitor", [("SCTP", "TCP"), ("UDP", "UDP-CONNECT"), ("TCP", "PING")])
def test_the_examples_that_diverged_once_agree(protocol, monitor):
    raw = {"name": "k8s-api", "floatingNetwork": "public",
           "zones": {"az1": {"subnet": "cp-az1"}, "az2": {"subnet": "cp-az2"}},
           "listeners": [{"port": 3868, "protocol": protocol, "monitor": {"type": monitor}}],
           "members": [{"name": "cp-1", "address": "10.10.1.10", "az": "az1"},
                       {"name": "cp-2", "address": "10.10.2.10", "az": "az2"}],
           "dns": {"dnsZone": "example.test.", "record": "api"}}
    assert _problems(raw) == [] and run_preview(raw).violations() == []

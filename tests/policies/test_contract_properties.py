"""One contract, proven over configurations (Hypothesis): the component and its pack answer the same questions alike.

Configurations range over every listener protocol (TERMINATED_HTTPS with or without a certificate, a certificate on
other protocols), monitor type (or none) with its delay, timeout, URL path and expected codes, algorithm, provider,
allowed CIDRs of either IP version, DNS record names (some too long for Designate, per zone or not), member
placement, publication mode and zone/member counts, on the fake cloud behind Pulumi mocks (the dev cloud: zones
az1..az3 on subnets cp-az1..3, with one certificate in its key manager):

* every configuration the component accepts builds a stack that passes the whole pack;
* every configuration it refuses, built anyway with the component's own checks switched off, gets pack violations
  only where validation named a problem of the same kind (policy -> the key paths it corresponds to).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.budget import examples

from ha_endpoint import CloudLookupError, ConfigError

from ha_endpoint.backends import REGISTRY
from ha_endpoint.core import validation
from policy_harness import run_preview
from tests.mocks import CloudError, FakeCloud

PROTOCOLS = ["TCP", "UDP", "SCTP", "HTTP", "HTTPS", "TERMINATED_HTTPS"]
MONITORS = [None, "TCP", "HTTP", "HTTPS", "PING", "TLS-HELLO", "UDP-CONNECT", "SCTP"]
METHODS = [None, "ROUND_ROBIN", "LEAST_CONNECTIONS", "SOURCE_IP", "SOURCE_IP_PORT"]
CERTIFICATE = "https://barbican.example:9311/v1/containers/0b7d2c1e-7c52-4f3a-9b1e-3d2f6a8c9e10"
CIDRS = [None, ["10.0.0.0/8"], ["0.0.0.0/0"], ["fd00::/8"], ["10.0.0.0/8", "fd00::/8"]]
RECORDS = ["api", "k8s.api", "a" * 61, "api-"]

# A pack violation on a stack the component would refuse must match one of the problems validation found:
# policy -> the fragments of the key paths validation names for that kind of problem.
CORRESPONDS = {
    "ha-endpoint-ovn-provider-constraints": (".protocol", ".monitor.type", ".lbMethod"),
    "ha-endpoint-member-zones": (".zones.", ".members"),
    "ha-endpoint-min-zones": (".zones",),
    "ha-endpoint-pool-health-monitor": (".monitor",),
    "ha-endpoint-member-security-group": (".monitor.type", ".protocol"),
    "ha-endpoint-dns-records": (".dns.record",),
}


@st.composite
def endpoints(draw) -> dict[str, Any]:
    azs = draw(st.lists(st.sampled_from(["az1", "az2", "az3"]), min_size=1, max_size=3, unique=True))
    listeners = []
    for port in draw(st.lists(st.sampled_from([53, 443, 3868, 6443, 22623]), min_size=1, max_size=2, unique=True)):
        monitor = draw(st.sampled_from(MONITORS))
        listener: dict[str, Any] = {"port": port, "protocol": draw(st.sampled_from(PROTOCOLS)),
                                    "monitor": None if monitor is None else {"type": monitor}}
        if monitor is not None:
            listener["monitor"].update(delay=draw(st.sampled_from([2, 3, 5])), timeout=draw(st.sampled_from([1, 2])))
            if monitor in ("HTTP", "HTTPS") and draw(st.booleans()):
                listener["monitor"].update(path=draw(st.sampled_from(["/healthz", "/readyz?verbose", "healthz"])),
                                           expectedCodes=draw(st.sampled_from(["200", "200,202", "200-204", "2xx"])))
        method = draw(st.sampled_from(METHODS))
        if method:
            listener["lbMethod"] = method
        terminates = listener["protocol"] == "TERMINATED_HTTPS"  # a certificate mostly where it belongs
        if (draw(st.integers(0, 3)) > 0) == terminates:
            listener["certificateRef"] = CERTIFICATE  # the fake cloud's key manager holds it
        listeners.append(listener)
    members = [{"name": f"cp-{n}", "address": f"10.10.{n}.10", "az": f"az{n}"}
               for n in (1, 2, 3) if f"az{n}" in azs and draw(st.booleans())]
    raw = {
        "name": "k8s-api", "loadBalancerProvider": draw(st.sampled_from(["amphora", "ovn"])), "floatingNetwork": "public",
        "zones": {az: {"subnet": f"cp-{az}"} for az in azs}, "listeners": listeners, "members": members,
        "memberPlacement": draw(st.sampled_from(["own-zone", "all-zones"])),
        "dns": {"dnsZone": "example.test.", "record": draw(st.sampled_from(RECORDS)), "ttl": 30,
                "perZoneRecords": draw(st.booleans()), "publish": draw(st.sampled_from(["when-ready", "bootstrap"]))},
    }
    cidrs = draw(st.sampled_from(CIDRS))
    if cidrs is not None:
        raw["allowedCidrs"] = cidrs
    return raw


def _cloud() -> FakeCloud:
    cloud = FakeCloud.dev(preview=True)
    cloud.certificates.add(CERTIFICATE)
    return cloud


def _problems(raw: dict[str, Any]) -> list[str]:
    try:
        validation.load_endpoint_args(raw, backends=REGISTRY)  # as the stack program: the backend's rules too
    except ConfigError as error:
        return [problem.path for problem in error.problems]
    return []


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(endpoints())
def test_the_component_and_the_pack_agree(raw):
    problems = _problems(raw)
    if not problems:
        try:
            found = run_preview(raw, _cloud()).violations()
        except ConfigError as error:  # refused once the subnets are known (e.g. CIDRs of the other IP version)
            assert error.problems
            return
        assert found == []
        return
    if not raw["members"]:
        return  # nothing to build: the planner needs members
    original = validation.check_endpoint_args
    validation.check_endpoint_args = lambda args, root=validation.DEFAULT_ROOT, rules=None: []
    try:
        found = run_preview(raw, _cloud()).violations()
    except (ConfigError, CloudLookupError, CloudError):
        return  # refused by the checks that need the cloud's facts, or by the cloud itself (what validation refused)
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

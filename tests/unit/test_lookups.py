"""The cloud lookups turn what the provider reports (no results, several matches, no permission) into problems with
the user's configuration, and nothing else: a bug of ours stays a bug (issue 21, finding 4)."""

from __future__ import annotations

import asyncio

import pytest

from ha_endpoint.cloud import lookups
from ha_endpoint.cloud.connection import Category, classify
from ha_endpoint.cloud import retry
from ha_endpoint.cloud.retry import Backoff
from ha_endpoint.core.errors import CloudLookupError, Problem
from tests.mocks import FakeCloud, run_component
from tests.mocks.configs import amphora_endpoint


def _attempt(error: BaseException) -> list[Problem]:
    async def lookup():
        raise error

    found, problem = asyncio.run(lookups._attempt("endpoint.zones.az1.subnet", "subnet 'cp-az1'", "fix its name",
                                                  lookup))
    assert found is None
    return [problem]


def test_the_providers_no_results_is_a_problem_naming_the_key_and_the_fix():
    problems = _attempt(Exception("invoke of openstack:networking/getSubnet:getSubnet failed: Your query returned no "
                                  "results. Please change your search criteria and try again. (name)"))
    assert [(p.path, p.message) for p in problems] == [
        ("endpoint.zones.az1.subnet", "subnet 'cp-az1' was not found; fix its name")]


def test_what_else_the_provider_reports_is_kept_in_the_problem():
    problems = _attempt(Exception("invoke of openstack:networking/getSubnet:getSubnet failed: 403 Forbidden (name)"))
    assert problems[0].message == "subnet 'cp-az1' could not be looked up (403 Forbidden (name)); fix its name"


@pytest.mark.parametrize("bug", [AttributeError("'NoneType' object has no attribute 'cidr'"), KeyError("cidr"),
                                 TypeError("unsupported operand"), ValueError("'x' does not appear to be an IPv4")])
def test_a_bug_in_a_lookup_is_raised_as_itself_never_reported_as_configuration(bug):
    with pytest.raises(type(bug)):
        _attempt(bug)


def test_a_bug_inside_the_components_lookups_reaches_the_user_as_a_bug(monkeypatch):
    """Through the whole component: before the fix this was 'subnet cp-az1 could not be looked up (...)', a
    CloudLookupError blaming the user's configuration for our AttributeError."""
    async def broken(self, ref):
        return None.cidr  # an error of ours

    monkeypatch.setattr(lookups._Cloud, "subnet", broken)
    with pytest.raises(AttributeError) as raised:
        run_component(amphora_endpoint(), FakeCloud(), preview=True)
    assert not isinstance(raised.value, CloudLookupError)


class _CountingCloud(FakeCloud):
    """Answers each subnet lookup after 0.2 s, counting how many are in flight at once."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        import threading

        self.in_flight = self.most = 0
        self.counting = threading.Lock()

    def call(self, args):
        import time

        if args.token != "openstack:networking/getSubnet:getSubnet":
            return super().call(args)
        with self.counting:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        time.sleep(0.2)
        try:
            return super().call(args)
        finally:
            with self.counting:
                self.in_flight -= 1


def test_the_lookups_that_do_not_depend_on_each_other_are_in_flight_at_once():
    """One after another, a stack of 30 members per zone given by server spent 62.9 s in its lookups before its first
    resource (docs/results/2026-12-03-budgets.md); the zones' subnets are asked at once."""
    cloud = _CountingCloud.topology(preview=True)
    run_component(amphora_endpoint(), cloud, preview=True)
    assert cloud.most == len(amphora_endpoint()["zones"]), cloud.most


def test_a_failed_lookup_is_the_configuration_problem_alone_not_the_providers_raw_error_after_it():
    """The component's message (the key and the fix) is what the user reads; the invoke that failed is not raised
    again when the program ends (it was, with the lookups sent as Outputs)."""
    raw = amphora_endpoint()
    raw["zones"]["az1"]["subnet"] = "no-such-subnet"
    with pytest.raises(CloudLookupError) as raised:
        run_component(raw, FakeCloud.topology(preview=True), preview=True)
    assert [problem.path for problem in raised.value.problems] == ["HaEndpoint('k8s-api').args.zones.az1.subnet"]
    assert "subnet 'no-such-subnet' was not found" in str(raised.value)


DESIGNATE_503 = ("invoke of openstack:dns/getDnsZone:getDnsZone failed: \t* Unable to retrieve zones: Expected HTTP "
                 "response code [200 204 300] when accessing [GET http://127.0.0.1:14001/v2/zones?name=example.test.], "
                 "but got 503 instead: {\"message\": \"The Keystone service is temporarily unavailable.\"}")


@pytest.mark.parametrize("message, category", [
    (DESIGNATE_503, Category.TRANSIENT),
    ("invoke of x failed: Get \"http://127.0.0.1:9696/v2.0/subnets\": dial tcp 127.0.0.1:9696: connect: connection "
     "refused", Category.TRANSIENT),
    ("invoke of x failed: Get \"http://127.0.0.1:9696/v2.0/ports\": EOF", Category.TRANSIENT),
    ("invoke of x failed: Expected HTTP response code [200] ..., but got 501 instead", Category.TERMINAL),
    ("invoke of x failed: Expected HTTP response code [200] ..., but got 403 instead", Category.TERMINAL),
    ("invoke of x failed: Your query returned no results. Please change your search criteria and try again.",
     Category.TERMINAL),
])
def test_a_failed_invoke_is_classified_by_the_providers_words(message, category):
    assert classify(Exception(message)) is category


def _zone_lookup(monkeypatch, failures: int, retry_seconds: float):
    """The DNS zone looked up through a provider that answers Designate's 503 ``failures`` times first."""
    calls = []

    async def invoke(token, args, opts):
        calls.append(token)
        if len(calls) <= failures:
            raise Exception(DESIGNATE_503)
        return type("Zone", (), {"id": "zone-1"})()

    monkeypatch.setattr(lookups, "invoke", invoke)
    cloud = lookups._Cloud(None, retry_seconds=retry_seconds, backoff=Backoff(0.01, 1.0, 0.01))
    found, problem = asyncio.run(lookups._attempt("endpoint.dns.dnsZone", "DNS zone 'example.test.'",
                                                  "create the zone first", lambda: cloud.dns_zone_id("example.test.")))
    return found, problem, calls


def test_a_lookup_the_cloud_fails_transiently_is_retried_until_it_answers(monkeypatch):
    """A CI run's `pulumi up` started as Keystone came back failed at once on Designate's 503, told to create a zone
    that existed (2026-12-03)."""
    found, problem, calls = _zone_lookup(monkeypatch, failures=3, retry_seconds=30)
    assert (found, problem, len(calls)) == ("zone-1", None, 4)


def test_a_lookup_the_cloud_keeps_failing_is_the_clouds_failure_not_the_configurations(monkeypatch):
    found, problem, calls = _zone_lookup(monkeypatch, failures=10**6, retry_seconds=0.1)
    assert found is None and len(calls) > 1
    assert problem.path == "endpoint.dns.dnsZone"
    assert "could not be looked up: the cloud kept failing" in problem.message
    assert "got 503" in problem.message and "run again once it answers" in problem.message
    assert "create the zone first" not in problem.message


def test_a_lookup_the_cloud_refuses_is_not_retried(monkeypatch):
    calls = []

    async def invoke(token, args, opts):
        calls.append(token)
        raise Exception("invoke of x failed: Your query returned no results. Please change your search criteria.")

    monkeypatch.setattr(lookups, "invoke", invoke)
    cloud = lookups._Cloud(None, retry_seconds=30, backoff=Backoff(0.01, 1.0, 0.01))
    found, problem = asyncio.run(lookups._attempt("endpoint.dns.dnsZone", "DNS zone 'x.'", "create the zone first",
                                                  lambda: cloud.dns_zone_id("x.")))
    assert len(calls) == 1 and problem.message == "DNS zone 'x.' was not found; create the zone first"


class _RestartingDesignate(FakeCloud):
    """Answers the DNS zone lookup with Designate's 503 the first ``failures`` times (Keystone restarting)."""

    failures = 2

    def call(self, args):
        if args.token == "openstack:dns/getDnsZone:getDnsZone" and self.failures:
            self.failures -= 1
            return {}, [("name", DESIGNATE_503.split(" failed: ", 1)[1])]
        return super().call(args)


def test_a_503_in_the_lookups_delays_the_program_and_it_goes_on(monkeypatch):
    """Through the component, on the program's event loop: the retry's sleep does not stop the other lookups."""
    monkeypatch.setattr(retry, "READ_BACKOFF", Backoff(0.01, 1.0, 0.01))
    cloud = _RestartingDesignate.topology(preview=True)
    run_component(amphora_endpoint(), cloud, preview=True)
    assert cloud.failures == 0
    assert [token for token, _, _ in cloud.calls].count("openstack:dns/getDnsZone:getDnsZone") == 1

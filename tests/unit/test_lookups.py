"""The cloud lookups turn what the provider reports (no results, several matches, no permission) into problems with
the user's configuration, and nothing else: a bug of ours stays a bug (issue 21, finding 4)."""

from __future__ import annotations

import asyncio

import pytest

from ha_endpoint.cloud import lookups
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

"""The cloud lookups turn what the provider reports (no results, several matches, no permission) into problems with
the user's configuration, and nothing else: a bug of ours stays a bug (issue 21, finding 4)."""

from __future__ import annotations

import pytest

from ha_endpoint.cloud import lookups
from ha_endpoint.core.errors import CloudLookupError, Problem
from tests.mocks import FakeCloud, run_component
from tests.mocks.configs import amphora_endpoint


def _attempt(error: BaseException) -> list[Problem]:
    problems: list[Problem] = []

    def lookup():
        raise error

    lookups._attempt(problems, "endpoint.zones.az1.subnet", "subnet 'cp-az1'", "fix its name", lookup)
    return problems


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
    def broken(self, ref):
        return None.cidr  # an error of ours

    monkeypatch.setattr(lookups._Cloud, "subnet", broken)
    with pytest.raises(AttributeError) as raised:
        run_component(amphora_endpoint(), FakeCloud(), preview=True)
    assert not isinstance(raised.value, CloudLookupError)

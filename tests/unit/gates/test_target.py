"""Where a gate or drain polls: the cloud and region of the OpenStack provider its resources use."""

from __future__ import annotations

import pytest
from pulumi.dynamic.config import Config

from ha_endpoint.gates.drain import MemberDrainProvider
from ha_endpoint.gates.provider import MemberReadinessProvider
from ha_endpoint.gates.inputs import InputError
from ha_endpoint.gates.target import CloudTarget, resolve, stack_defaults

STACK = CloudTarget("localcloud", "RegionOne")


@pytest.mark.parametrize("props, expected", [
    ({"cloud_source": "stack"}, CloudTarget("localcloud", "RegionOne")),
    ({}, CloudTarget("localcloud", "RegionOne")),  # state written before cloud_source existed
    ({"cloud": "other", "cloud_source": "stack"}, CloudTarget("other", "RegionOne")),
    ({"cloud": "elsewhere", "region": "RegionTwo", "cloud_source": "provider"}, CloudTarget("elsewhere", "RegionTwo")),
    ({"cloud": "elsewhere", "cloud_source": "provider"}, CloudTarget("elsewhere", None)),  # never the stack's region
    ({"cloud": "mirror", "cloud_source": "readiness"}, CloudTarget("mirror", None)),
])
def test_the_target_is_the_providers(props, expected):
    assert resolve(props, STACK) == expected


def test_an_explicit_provider_without_a_cloud_is_refused_not_replaced_by_the_stacks():
    with pytest.raises(InputError) as caught:
        resolve({"cloud": None, "region": "RegionTwo", "cloud_source": "provider"}, STACK)
    assert caught.value.property == "cloud"
    assert "give that provider `cloud`" in caught.value.reason and "readiness.cloud" in caught.value.reason


@pytest.mark.parametrize("provider_class", [MemberReadinessProvider, MemberDrainProvider])
def test_the_dynamic_providers_read_the_stacks_default_provider_config(provider_class):
    provider = provider_class()
    provider.configure(type("Req", (), {"config": Config({"openstack:cloud": "localcloud",
                                                             "openstack:region": "RegionOne"}, "ha-endpoint")})())
    assert provider.stack == STACK
    failures = provider.check({}, {"cloud": None, "cloud_source": "provider", "pool_id": "p", "member_id": "m",
                                   "loadbalancer_id": "lb", "pools": {}}).failures
    assert [(failure.property, failure.reason.split(";")[0]) for failure in failures] == [
        ("cloud", "the OpenStack provider given to the endpoint names no clouds.yaml entry (its `cloud` is unset), "
                  "so the readiness gates and drains cannot poll the same cloud as its resources")]


def test_no_config_means_the_environment_decides():
    assert stack_defaults(None) == CloudTarget()

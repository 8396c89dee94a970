"""Issue 46, finding 6: allowedCidrs defaults to 0.0.0.0/0, which the policy pack refuses only in production. The
default stays (a dev endpoint reached from anywhere), and the component says so, once per endpoint, at preview and up:
a warning on the component naming the key and the fix."""

from __future__ import annotations

import pytest

from ha_endpoint import HaEndpoint
from ha_endpoint.core import contract
from tests.mocks import FakeCloud, run_component, run_stack
from tests.mocks.configs import amphora_endpoint, internal_endpoint

ROOT = "HaEndpoint('k8s-api').args"


@pytest.fixture
def warnings(monkeypatch):
    """Every warning: (message, the resource it is on)."""
    said: list[tuple[str, object]] = []
    monkeypatch.setattr("pulumi.log.warn",
                        lambda message, resource=None, *args, **kwargs: said.append((message, resource)))
    return said


def open_warnings(warnings) -> list[tuple[str, object]]:
    return [(message, resource) for message, resource in warnings if "allowedCidrs" in message]


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_the_default_allowed_cidrs_are_said_once_to_open_the_api_to_the_internet(warnings, preview):
    raw = amphora_endpoint()
    del raw["allowedCidrs"]
    run = run_component(raw, FakeCloud.dev(), preview=preview)
    said = open_warnings(warnings)
    assert [message for message, _ in said] == [
        f"{ROOT}.allowedCidrs: the endpoint's listener ports (6443, 22623) admit 0.0.0.0/0 (the default): every "
        "address on the internet, through the floating IPs; set allowedCidrs to the client networks that need the "
        "endpoint (e.g. allowedCidrs: ['10.0.0.0/8']). The policy pack refuses it in a production stack"]
    resource = said[0][1]
    assert isinstance(resource, HaEndpoint) and run.named("k8s-api")["type"] == contract.ENDPOINT_TYPE


def test_an_explicit_opening_is_said_too_naming_the_entry(warnings):
    raw = amphora_endpoint()
    raw["allowedCidrs"] = ["10.0.0.0/8", "0.0.0.0/0"]
    run_component(raw, FakeCloud.dev(), preview=True)
    assert [message.split(":")[0] for message, _ in open_warnings(warnings)] == [f"{ROOT}.allowedCidrs[1]"]
    assert "admit 0.0.0.0/0: every address" in open_warnings(warnings)[0][0]


def test_an_internal_endpoint_is_open_to_every_address_that_reaches_its_vips(warnings):
    run_component(internal_endpoint(), FakeCloud.dev(), preview=True)
    assert [message for message, _ in open_warnings(warnings)] == [
        f"{ROOT}.allowedCidrs[0]: the endpoint's listener ports (6443, 22623) admit 0.0.0.0/0: every address that "
        "can reach the VIP subnets; set allowedCidrs to the client networks that need the endpoint (e.g. "
        "allowedCidrs: ['10.0.0.0/8']). The policy pack refuses it in a production stack"]


def test_client_networks_only_say_nothing(warnings):
    raw = amphora_endpoint()
    raw["allowedCidrs"] = ["10.0.0.0/8", "192.0.2.0/24"]
    run_component(raw, FakeCloud.dev(), preview=True)
    assert open_warnings(warnings) == []


def test_the_stack_names_its_configuration_key(warnings):
    run_stack(FakeCloud.dev(), {"endpoint": amphora_endpoint()}, preview=True)
    assert [message.split(":", 2)[:2] for message, _ in open_warnings(warnings)] == [
        ["ha-endpoint", "endpoint.allowedCidrs[0]"]]


def test_every_ipv6_address_is_the_internet_too():
    from ha_endpoint import load_endpoint_args
    from ha_endpoint.core.checks import open_to_everyone

    raw = amphora_endpoint()
    raw["allowedCidrs"] = ["fd00::/8", "::/0"]
    [notice] = open_to_everyone(load_endpoint_args(raw, "endpoint"), "endpoint")
    assert notice.path == "endpoint.allowedCidrs[1]" and "admit ::/0: every address on the internet" in notice.message

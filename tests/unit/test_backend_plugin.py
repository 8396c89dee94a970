"""A backend is one folder and one registry line: ``tests/unit/backend_plugin/`` (outside the package) registered by
the fixture below, chosen by the ``backend`` key, serves the zones through the real pipeline and component under
Pulumi mocks; DNS, the zones' outputs and the declared facts come out for its zones, and no Octavia object is made."""

from __future__ import annotations

import ipaddress

import pytest

from ha_endpoint import CloudLookupError, ConfigError, backends
from ha_endpoint.core import contract
from tests.mocks import FakeCloud, resources, run_component
from tests.mocks.configs import amphora_endpoint

from tests.unit.backend_plugin import ADDRESS_TYPE, BACKEND, HOST, NAME, fake_address

ROOT = "HaEndpoint('k8s-api').args"
OCTAVIA_TYPES = {contract.LOADBALANCER_TYPE, contract.LISTENER_TYPE, contract.POOL_TYPE, contract.MEMBER_TYPE}


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    monkeypatch.setitem(backends.REGISTRY, NAME, BACKEND)  # the one registry line
    monkeypatch.setitem(resources.HANDLERS, ADDRESS_TYPE, fake_address)  # the fake cloud's answer for its resource


def served_by_plugin() -> dict:
    raw = amphora_endpoint()
    raw["backend"] = NAME
    return raw


def zone_address(cloud: FakeCloud, az: str) -> str:
    return str(ipaddress.ip_network(cloud.subnets[cloud.subnet_id(f"cp-{az}")].net)[HOST])


def test_the_plugin_serves_every_zone_and_dns_publishes_its_addresses():
    cloud = FakeCloud.dev()
    cloud.disabled_azs.add("az2")  # Octavia would refuse this zone: the plugin's zones are not Octavia's to judge
    run = run_component(served_by_plugin(), cloud, preview=False)
    expected = {az: zone_address(cloud, az) for az in ("az1", "az2", "az3")}
    assert not OCTAVIA_TYPES & {registration["type"] for registration in run.registrations}
    held = run.of_type(ADDRESS_TYPE)
    assert sorted(r["name"] for r in held) == sorted(contract.readiness_name("k8s-api", az) for az in expected)
    assert run.outputs["addresses"] == sorted(expected.values())
    assert sorted(run.named(contract.recordset_name("k8s-api"))["inputs"]["records"]) == sorted(expected.values())
    for az, zone in run.outputs["zones"].items():
        assert zone["address"] == expected[az]
        assert zone["ready"] is True and zone["published"] is True and zone["gate"] == "address held"
    facts = next(r for r in run.registrations if r["type"] == contract.ENDPOINT_TYPE)["outputs"]["facts"]
    assert {az: zone["backend"] for az, zone in facts["zones"].items()} == {az: NAME for az in expected}


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_the_chosen_backends_preview_refuses_what_it_cannot_serve(preview):
    raw = served_by_plugin()
    raw["listeners"][1]["protocol"] = "UDP"
    raw["listeners"][1]["monitor"] = {"type": "UDP-CONNECT", "delay": 5, "timeout": 3}
    with pytest.raises(CloudLookupError) as caught:
        run_component(raw, FakeCloud.dev(), preview=preview)
    assert [str(problem) for problem in caught.value.problems] == [
        f"{ROOT}.listeners[1].protocol: the {NAME} backend serves TCP listeners only, not UDP; use protocol TCP or "
        "another backend"]


def test_an_unregistered_name_lists_every_registered_backend():
    raw = served_by_plugin()
    raw["backend"] = "haproxy"
    with pytest.raises(ConfigError) as caught:
        run_component(raw, FakeCloud.dev(), preview=True)
    assert [str(problem) for problem in caught.value.problems] == [
        f"{ROOT}.backend: no backend is registered as 'haproxy' (registered: keepalived, octavia, {NAME}); set backend to one "
        "of them, or leave it out for the default"]

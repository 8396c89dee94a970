"""The backend seam (ha_endpoint.backends): a second backend, registered by name and chosen by the ``backend`` key,
serves the zones without DNS, the publication gate or the pack's generic rules changing. The double here is the shape
of the one the seam is for: a VIP port per AZ (that keepalived would hold, on clouds without Octavia) and a readiness
resource of its own."""

from __future__ import annotations

from typing import Any, Mapping

import pulumi
import pulumi_openstack as openstack
import pytest

from ha_endpoint import HaEndpoint, backends
from ha_endpoint.backends.plugin import Backend, ZoneServing
from ha_endpoint.core import contract
from ha_endpoint.core.plan import ZonePlan
from policy_harness import run_program_for_pack
from tests.mocks import resources
from tests.mocks.cloud import FakeCloud
from tests.mocks.configs import internal_endpoint

PORT_TYPE = "openstack:networking/port:Port"
READY_TYPE = "pulumi-python:dynamic/test:VipReadiness"


class _NoProvider(pulumi.dynamic.ResourceProvider):
    pass


class VipReadiness(pulumi.dynamic.Resource, module="test", name="VipReadiness"):
    ready: pulumi.Output[bool]

    def __init__(self, name: str, port_id: pulumi.Input[str], opts: pulumi.ResourceOptions):
        super().__init__(_NoProvider(), name, {"port_id": port_id, "ready": None}, opts)


def serve_vip_port(zone: ZonePlan, vip_group_id: pulumi.Input[str], parent: pulumi.Resource,
                   member_ports: Mapping[str, pulumi.Resource]) -> ZoneServing:
    """The test double: one VIP port per zone on the zone's subnet, ready once the port exists."""
    child = pulumi.ResourceOptions(parent=parent)
    port = openstack.networking.Port(
        f"{zone.endpoint}-{zone.az}-vip-port", network_id=zone.vip_subnet.network_id,
        fixed_ips=[openstack.networking.PortFixedIpArgs(subnet_id=zone.vip_subnet.id)],
        security_group_ids=[vip_group_id], opts=child)
    readiness = VipReadiness(zone.readiness_name, port.id, child)
    address = port.all_fixed_ips.apply(lambda ips: ips[0] if ips else None)
    return ZoneServing(published_address=address, exists=port, exists_label="VIP port up",
                       readiness=readiness, ready=readiness.ready, requirement="VIP port held",
                       outputs={"vip_port_id": port.id, "vip_address": address})


@pytest.fixture(autouse=True)
def _fake_cloud_knows_the_doubles_types(monkeypatch):
    monkeypatch.setitem(backends.REGISTRY, "vip-port", Backend("vip-port", serve_vip_port))
    counter = iter(range(200, 250))

    def port(cloud: Any, name: str, inputs: dict) -> dict:
        return {"allFixedIps": [f"10.10.{name.split('-az')[1][0]}.{next(counter)}"]}

    monkeypatch.setitem(resources.HANDLERS, PORT_TYPE, port)
    monkeypatch.setitem(resources.HANDLERS, READY_TYPE, lambda cloud, name, inputs: {"ready": True})


def _run(preview: bool):
    return run_program_for_pack(lambda: HaEndpoint("k8s-api", {**internal_endpoint(), "backend": "vip-port"}),
                                FakeCloud.dev(preview=preview), preview=preview)


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_a_second_backend_serves_the_zones_and_passes_the_pack(preview):
    run = _run(preview)
    types = {registration.type for registration in run.registrations}
    assert contract.LOADBALANCER_TYPE not in types and contract.POOL_TYPE not in types
    assert {r.name for r in run.registrations if r.type == PORT_TYPE} == {f"k8s-api-az{n}-vip-port" for n in (1, 2, 3)}
    assert {zone["backend"] for zone in run.facts()["zones"].values()} == {"vip-port"}
    assert run.violations() == []


def test_dns_publishes_the_second_backends_addresses_after_its_readiness():
    run = _run(preview=False)
    record = run.named("k8s-api-dns")
    addresses = record.inputs["records"]  # one VIP port address per zone, from the zone's own subnet
    assert len(addresses) == 3 and sorted(address.split(".")[2] for address in addresses) == ["1", "2", "3"]
    readiness = {r.urn for r in run.registrations if r.type == READY_TYPE}
    assert readiness and readiness <= set(record.dependencies) | set(record.property_dependencies.get("records", []))


def test_the_generic_dns_rule_still_catches_a_zone_left_out():
    run = _run(preview=True).drop_dependency("k8s-api-dns", "k8s-api-az2-vip-port")
    assert run.messages("ha-endpoint-dns-records") == [
        "record set k8s-api-dns does not take zone az2's address: its records depend on no floating IP, load balancer "
        "or other resource of zone az2; publish that zone's address (its floating IP, or its VIP for an internal "
        "endpoint) in it"]

"""The pack on an endpoint that adopts a load balancer (docs/adoption.md): compliant as any, and its adopted zone
alone (the way back) is not refused by ha-endpoint-min-zones (any other single zone the component refuses first)."""

from __future__ import annotations

from policy_harness import run_preview
from tests.mocks.adopted import capo_lb
from tests.mocks.cloud import FakeCloud
from tests.mocks.configs import amphora_endpoint


def _adopting(alone: bool) -> dict:
    raw = amphora_endpoint()
    raw["zones"]["az1"]["adopt"] = {"loadBalancer": "capo-kubeapi"}
    if alone:
        raw["zones"] = {"az1": raw["zones"]["az1"]}
        raw["members"] = [member for member in raw["members"] if member["az"] == "az1"]
    return raw


def _cloud() -> FakeCloud:
    cloud = FakeCloud.dev(preview=True)
    capo_lb(cloud)
    return cloud


def test_an_endpoint_that_adopts_a_zone_passes_the_pack():
    assert run_preview(_adopting(alone=False), _cloud()).violations() == []


def test_the_adopted_zone_alone_passes_min_zones_and_declares_it_adopted():
    run = run_preview(_adopting(alone=True), _cloud())
    assert run.messages("ha-endpoint-min-zones") == []
    assert run.messages("ha-endpoint-min-zones", {"ha-endpoint-min-zones": {"minZones": 3}}) == []

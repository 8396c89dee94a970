"""Each zone survives the loss of any other AZ (issue 15): the policies from the baseline, one change each, and the
component refusing the same layouts before anything exists (one rule: EndpointFacts.az_loss)."""

from __future__ import annotations

import pytest

from ha_endpoint import ConfigError
from policy_harness import run_preview
from tests.mocks.cloud import FakeCloud
from tests.mocks.configs import amphora_endpoint

MANDATORY, ADVISORY = "ha-endpoint-az-independence", "ha-endpoint-az-independence-advisory"


def _router(run) -> tuple[str, dict]:
    return next(iter(run.facts()["routers"].items()))


def test_the_baseline_passes_both():
    run = run_preview(amphora_endpoint())
    assert run.messages(MANDATORY) == [] and run.messages(ADVISORY) == []
    router_id, router = _router(run)
    assert router["name"] == "cp-router" and router["azHints"] == ["az1", "az2", "az3"] and router["ha"] is True


def test_a_router_every_zone_depends_on_pinned_to_one_az_is_mandatory():
    run = run_preview(amphora_endpoint())
    router_id, router = _router(run)
    router["azHints"] = ["az1"]
    assert run.messages(MANDATORY) == [
        f"endpoint k8s-api: router cp-router ({router_id}) is hinted to az1 only, but zone(s) az1, az2, az3 depend on "
        "it (its floating IPs' gateway or the path to their members): losing az1 takes zone(s) az2, az3 down with it; "
        "hint it to every zone's AZ and make it HA or distributed, or give each zone its own router in its own AZ"]


def test_a_router_hinted_to_fewer_azs_than_its_zones_is_advisory():
    run = run_preview(amphora_endpoint())
    _, router = _router(run)
    router["azHints"] = ["az1", "az2"]
    assert run.messages(MANDATORY) == []
    assert [m.split(": losing")[1] for m in run.messages(ADVISORY)] == [
        " az1, az2 takes zone(s) az3 down with it; hint it to every zone's AZ and make it HA or distributed, or give "
        "each zone its own router in its own AZ"]


def test_a_shared_router_neither_ha_nor_distributed_runs_in_one_az_whatever_its_hints():
    run = run_preview(amphora_endpoint())
    router_id, router = _router(run)
    router["ha"] = False
    assert run.messages(ADVISORY) == [
        f"endpoint k8s-api: router cp-router ({router_id}) is shared by zones az1, az2, az3 and is neither HA nor "
        "distributed, so Neutron runs it on one L3 agent in one AZ whatever its hints say: losing that AZ takes all of "
        "them down; make it HA (openstack router set --ha) or distributed, or give each zone its own router in its "
        "own AZ"]


def test_a_vip_network_hinted_to_other_azs_only_is_mandatory():
    run = run_preview(amphora_endpoint())
    network_id, network = next(iter(run.facts()["networks"].items()))
    network["azHints"] = ["az1"]
    assert run.messages(MANDATORY) == [
        f"endpoint k8s-api: zone {az}'s VIP network cp ({network_id}) is hinted to az1 only, not to {az}: its DHCP "
        f"and ports live outside the zone's AZ; hint the network to {az} too, or give the zone a subnet on a network "
        f"of its own AZ" for az in ("az2", "az3")]


def test_all_zones_placement_across_a_single_az_router_is_reported():
    """Members on the island network are reached from every zone through one router pinned to az1."""
    cloud = FakeCloud.dev(preview=True)
    island_subnet = cloud.subnet_id("island-sub")
    router = cloud.add_router("island-router", [island_subnet, cloud.subnet_id("cp-az1"), cloud.subnet_id("cp-az2"),
                                                cloud.subnet_id("cp-az3")], az_hints=("az1",), ha=True)
    raw = amphora_endpoint()
    raw["memberPlacement"] = "all-zones"
    raw["members"].append({"name": "cp-9", "address": "10.99.0.9", "az": "az1", "subnet": "island-sub"})
    with pytest.raises(ConfigError) as caught:
        run_preview(raw, cloud)
    assert [p.path for p in caught.value.problems] == ["ha-endpoint:endpoint.zones.az2.subnet"]
    assert f"router island-router ({router}) is hinted to az1 only, but zone(s) az1, az2, az3 depend on it" in \
        caught.value.problems[0].message


def test_the_component_refuses_what_the_pack_finds_mandatory():
    cloud = FakeCloud.dev(preview=True)
    cloud.routers[cloud.router_id]["az_hints"] = ("az2",)
    with pytest.raises(ConfigError, match=r"zones\.az1\.subnet: router cp-router .* is hinted to az2 only"):
        run_preview(amphora_endpoint(), cloud)


def test_no_az_information_is_said_once():
    cloud = FakeCloud.dev(preview=True)
    cloud.routers[cloud.router_id]["az_hints"] = ()
    run = run_preview(amphora_endpoint(), cloud)
    assert run.messages(ADVISORY) == [
        "endpoint k8s-api: the cloud reports no availability-zone hints for the endpoint's routers and VIP networks "
        "(the router_availability_zone / network_availability_zone extensions are absent, or no hints are set), so "
        "whether each zone survives the loss of another AZ could not be checked"]

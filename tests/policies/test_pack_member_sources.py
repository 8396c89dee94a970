"""The pack judges members read from Cluster API Machines (``memberSources.clusterApi``) as it judges static ones: it
reads the one resolved member list the component declares (``facts.members``, each with its ``source``), on what
the program really registers (``__main__.py`` under mocks, Machines served by a fake Kubernetes API on 127.0.0.1)."""

from __future__ import annotations

import pytest

from policy_harness import run_preview
from tests.mocks.configs import amphora_endpoint
from ha_endpoint.core import contract
from tests.mocks.cloud import FakeCloud
from tests.mocks.machines_api import FakeMachinesApi, agent_member, machine, serving


@pytest.fixture
def machines_api():
    """Three control-plane Machines of cluster k8s: two in az2, one in az3."""
    return FakeMachinesApi([machine("k8s-cp-b", "az2", "10.10.2.21"), machine("k8s-cp-c", "az2", "10.10.2.22"),
                            machine("k8s-cp-d", "az3", "10.10.3.21")])


@pytest.fixture
def machine_endpoint(tmp_path, machines_api):
    """The amphora shape with one static member (cp-0, az1) and the Machines of ``machines_api``."""
    with serving(machines_api, tmp_path) as kubeconfig:
        raw = amphora_endpoint()
        raw["members"] = [raw["members"][0]]
        raw["memberSources"] = {"clusterApi": {"cluster": "k8s", "kubeconfig": str(kubeconfig)}}
        yield raw


def test_the_declared_members_are_the_resolved_list_with_their_source(machine_endpoint):
    run = run_preview(machine_endpoint)
    members = run.facts()["members"]
    assert {name: (fact["az"], fact["address"], fact["source"]) for name, fact in members.items()} == {
        "cp-0": ("az1", "10.10.1.10", "static"), "k8s-cp-b": ("az2", "10.10.2.21", "clusterApi"),
        "k8s-cp-c": ("az2", "10.10.2.22", "clusterApi"), "k8s-cp-d": ("az3", "10.10.3.21", "clusterApi")}
    assert run.violations() == []


def test_machine_members_count_as_a_zones_members(machine_endpoint):
    """az2's two Machines meet minMembersPerZone 2; az1 (one static member) and az3 (one Machine) do not."""
    messages = run_preview(machine_endpoint).messages(
        "ha-endpoint-member-zones", {"ha-endpoint-member-zones": {"minMembersPerZone": 2}})
    assert messages == [
        f"zone {az} of endpoint k8s-api has 1 member(s) in pool k8s-api-{az}-{port}-pool, fewer than the 2 "
        f"required under own-zone placement; add members with az: {az}, remove the zone, or set memberPlacement: "
        f"all-zones" for az in ("az1", "az3") for port in (6443, 22623)]


def test_a_machine_member_declared_in_an_unconfigured_zone_is_reported(machine_endpoint):
    run = run_preview(machine_endpoint).set_fact("members.k8s-cp-d.az", "az7")
    assert run.messages("ha-endpoint-member-zones") == [
        "member k8s-cp-d of endpoint k8s-api is in zone 'az7', which is not configured; use one of az1, az2, az3, or "
        "add 'az7' under zones with its subnet"]


def test_a_machine_member_outside_its_subnet_is_reported(machine_endpoint):
    run = run_preview(machine_endpoint).set_fact("members.k8s-cp-b.address", "10.10.9.21")
    assert run.messages("ha-endpoint-member-reachability") == [
        f"member k8s-cp-b has address 10.10.9.21, which is not in its subnet {run.facts()['members']['k8s-cp-b']['subnetId']} "
        "(10.10.2.0/24); its Machine's address (status.addresses) is on another network: give the Machine an address "
        "on its zone's subnet, or set memberSources.clusterApi.addressType to the type that is"]


def test_members_the_agent_holds_are_declared_and_count_as_their_zones_members(machine_endpoint, machines_api):
    """After an up, a new Machine joined az3 and the member agent added its member: the next preview declares it
    (heldByAgent, no resource of the stack) and the pack counts it, so az3 (k8s-cp-d and k8s-cp-e) meets
    minMembersPerZone 2."""
    cloud = FakeCloud.dev()
    run_preview(machine_endpoint, cloud, preview=False)
    machines_api.machines.append(machine("k8s-cp-e", "az3", "10.10.3.22"))
    for port in (6443, 22623):
        agent_member(cloud, contract.pool_name("k8s-api", "az3", port), "10.10.3.22", port)
    run = run_preview(machine_endpoint, cloud, preview=True)
    members = run.facts()["members"]
    assert [name for name, fact in members.items() if fact["heldByAgent"]] == ["k8s-cp-e"]
    assert run.violations() == []
    assert run.messages("ha-endpoint-member-zones", {"ha-endpoint-member-zones": {"minMembersPerZone": 2}}) == [
        f"zone az1 of endpoint k8s-api has 1 member(s) in pool k8s-api-az1-{port}-pool, fewer than the 2 required "
        "under own-zone placement; add members with az: az1, remove the zone, or set memberPlacement: all-zones"
        for port in (6443, 22623)]

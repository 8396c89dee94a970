"""Inputs that are Outputs of resources declared beside the endpoint, under the stateful fake cloud.

``examples/same-stack/__main__.py`` creates a network, a subnet per AZ behind a router, a server per AZ, a floating
IP and a DNS zone, and hands their Outputs to the component: it previews (unknowns stay unknown, nothing is created)
and comes up on the resources it created. What is wrong with such an input is refused once it is known: before any
load balancer is registered.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import pulumi
import pulumi_openstack as openstack
import pytest

from ha_endpoint import ConfigError, HaEndpoint

from ha_endpoint.core import contract
from tests.mocks.cloud import FakeCloud, known
from tests.mocks.harness import run_program
from tests.mocks.neighbours import INSTANCE, PORT, SUBNET

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "same-stack" / "__main__.py"
AZS = ("az1", "az2", "az3")


def run_example(preview: bool):
    cloud = FakeCloud.dev()
    return run_program(lambda: runpy.run_path(str(EXAMPLE), run_name="__main__"), cloud, preview=preview)


def test_the_same_stack_program_previews_without_creating_anything():
    run = run_example(preview=True)
    assert not any(run.cloud.objects.values())
    lbs = run.of_type(contract.LOADBALANCER_TYPE)
    assert sorted(lb["name"] for lb in lbs) == [f"app-api-{az}-lb" for az in AZS]
    assert not any(known(lb["inputs"].get("vipSubnetId")) for lb in lbs)  # the subnets do not exist yet
    assert run.outputs["fqdn"] == "api.same-stack.example.test."  # the zone's name is an input, known


def test_the_same_stack_program_comes_up_on_the_resources_it_created():
    run = run_example(preview=False)
    subnets = {r["name"]: r["id"] for r in run.of_type(SUBNET)}
    for az in AZS:
        lb = run.named(f"app-api-{az}-lb")
        assert lb["inputs"]["vipSubnetId"] == subnets[f"app-{az}"] and lb["inputs"]["availabilityZone"] == az
    servers = {r["name"]: r["state"] for r in run.of_type(INSTANCE)}
    members = {r["name"]: r["inputs"] for r in run.of_type(contract.MEMBER_TYPE)}
    for az in AZS:
        member = members[f"app-api-{az}-6443-member-by-name-cp-{az}"]
        server = servers[f"app-{az}-cp"]
        assert member["address"] == server["networks"][0]["fixedIpV4"]
        assert member["subnetId"] == subnets[f"app-{az}"]
    # the servers' ports get the members' security group
    group = run.named(contract.members_secgroup_name("app-api"))["id"]
    ports = [r for r in run.of_type(PORT)]
    assert all(group in run.cloud.ports[port["id"]]["security_groups"] for port in ports)
    # the brought floating IP is associated, never created or owned by the endpoint
    brought = run.named("app-brought-fip")["state"]["address"]
    assert run.outputs["zones"]["az3"]["floatingIp"] == brought
    assert sorted(r["name"] for r in run.of_type("openstack:networking/floatingIp:FloatingIp")) == [
        "app-api-az1-fip", "app-api-az2-fip", "app-brought-fip"]
    zone_id = run.named("app-zone")["id"]
    record = run.named(contract.recordset_name("app-api"))
    assert record["inputs"]["zoneId"] == zone_id and record["inputs"]["name"] == "api.same-stack.example.test."
    assert sorted(run.outputs["addresses"]) == sorted(run.outputs["zones"][az]["floatingIp"] for az in AZS)


def _two_zones(members, *, extra=None):
    """A program: a network with a subnet per AZ (az1, az2), and an endpoint whose members ``members(net, subnets)``
    gives."""

    def program():
        network = openstack.networking.Network("net")
        subnets = {az: openstack.networking.Subnet(f"sub-{az}", network_id=network.id, cidr=f"10.40.{n}.0/24")
                   for n, az in enumerate(("az1", "az2"), start=1)}
        HaEndpoint("ep", {"name": "ep", "zones": {az: {"subnet": s.id} for az, s in subnets.items()},
                          "listeners": [{"port": 6443}], "memberPlacement": "all-zones",
                          "members": members(network, subnets), **(extra or {})})
    return program


def _server(network, subnet, az: str, name: str = "srv"):
    port = openstack.networking.Port(f"{name}-port", network_id=network.id, fixed_ips=[{"subnet_id": subnet.id}])
    return openstack.compute.Instance(name, availability_zone=az, networks=[{"port": port.id}])


def _refused_before_any_load_balancer(program) -> list[str]:
    cloud = FakeCloud.dev()
    with pytest.raises(ConfigError) as caught:
        run_program(program, cloud, preview=False)
    assert not cloud.kind(contract.LOADBALANCER_TYPE)
    assert not [r for r in cloud.registrations if r["type"] == contract.LOADBALANCER_TYPE]
    return [str(problem) for problem in caught.value.problems]


def test_a_server_in_another_az_than_its_member_is_refused_before_any_load_balancer():
    program = _two_zones(lambda net, subnets: [
        {"name": "cp-0", "az": "az1", "server": _server(net, subnets["az1"], "az2")}])
    assert _refused_before_any_load_balancer(program) == [
        "HaEndpoint('ep').args.members[0].az: member cp-0 is configured in zone az1, but its server srv runs in "
        "availability zone az2; set az: az2 (a key of zones), or give a server that runs in az1"]


def test_an_output_address_outside_its_subnet_is_refused_before_any_load_balancer():
    def members(net, subnets):
        port = openstack.networking.Port("p", network_id=net.id, fixed_ips=[{"subnet_id": subnets["az2"].id}])
        return [{"name": "cp-0", "az": "az1", "address": port.all_fixed_ips[0], "port": port.id}]

    [problem] = _refused_before_any_load_balancer(_two_zones(members))
    assert problem.startswith("HaEndpoint('ep').args.members[0].address: address 10.40.2.") and \
        problem.endswith("of member cp-0 is outside its subnet sub-az1 (10.40.1.0/24); fix the address, or set "
                         "members[0].subnet to the subnet the address is on")


def test_a_member_given_by_its_port_outputs_is_named_by_its_name_and_its_port_gets_the_members_group():
    def members(net, subnets):
        port = openstack.networking.Port("p", network_id=net.id, fixed_ips=[{"subnet_id": subnets["az1"].id}])
        return [{"name": "cp-0", "az": "az1", "address": port.all_fixed_ips[0], "port": port.id}]

    run = run_program(_two_zones(members), FakeCloud.dev(), preview=False)
    names = sorted(r["name"] for r in run.of_type(contract.MEMBER_TYPE))
    assert names == ["ep-az1-6443-member-by-name-cp-0", "ep-az2-6443-member-by-name-cp-0"]
    port = run.named("p")
    association = run.named(contract.member_port_secgroup_name("ep", "of-cp-0"))
    assert association["inputs"]["portId"] == port["id"]
    assert run.named("ep-members-sg")["id"] in run.cloud.ports[port["id"]]["security_groups"]


def test_a_server_that_exists_already_is_looked_up_and_checked_at_preview():
    cloud = FakeCloud.dev()
    network = cloud.network_id("cp")
    port = cloud.add_port(network, [(cloud.subnet_id("cp-az1"), "10.10.1.10")], "compute:az2", "srv-1")
    cloud.kind(INSTANCE)["srv-1"] = {"name": "cp-0-server", "availabilityZone": "az2", "accessIpV4": "10.10.1.10",
                                     "networks": [{"port": port, "uuid": network, "fixedIpV4": "10.10.1.10",
                                                   "fixedIpV6": ""}]}
    cloud.preview = True
    with pytest.raises(ConfigError) as caught:
        run_program(lambda: HaEndpoint("ep", {
            "name": "ep", "zones": {"az1": {"subnet": "cp-az1"}, "az2": {"subnet": "cp-az2"}},
            "listeners": [{"port": 6443}], "memberPlacement": "all-zones",
            "members": [{"name": "cp-0", "az": "az1", "server": "srv-1"}]}), cloud)
    assert [str(p) for p in caught.value.problems] == [
        "HaEndpoint('ep').args.members[0].az: member cp-0 is configured in zone az1, but its server cp-0-server runs "
        "in availability zone az2; set az: az2 (a key of zones), or give a server that runs in az1"]
    assert not cloud.registrations

"""``zones.<az>.vipAddress`` (keepalived backend): the VIP port takes the given address, the members' configuration
carries it before the port exists, and a preview refuses an address that is outside the zone's subnet, not a host
address of it, its gateway, held by another port, or given to the octavia backend."""

from __future__ import annotations

import pulumi
import pytest

from ha_endpoint import CloudLookupError, ConfigError, HaEndpoint
from tests.mocks import FakeCloud, run_component
from tests.mocks.harness import PROJECT, STACK, run_program
from tests.unit.test_keepalived import ROOT, cloud_with_members, keepalived_endpoint

VIPS = {"az1": "10.10.1.5", "az2": "10.10.2.5", "az3": "10.10.3.5"}
"""Outside the fake cloud's allocation range for VIPs (it allocates from .100) and below the members' .10."""


def with_vips(vips: dict[str, str] = VIPS) -> dict:
    raw = keepalived_endpoint()
    for az, address in vips.items():
        raw["zones"][az]["vipAddress"] = address
    return raw


def refusals(raw: dict, cloud: FakeCloud) -> list[str]:
    with pytest.raises(CloudLookupError) as caught:
        run_component(raw, cloud, preview=True)
    return [str(problem) for problem in caught.value.problems]


# ----- the given address is the VIP ------------------------------------------------------------------------------


def test_the_members_configuration_carries_the_given_address_at_preview_before_any_port_exists():
    """What Cluster API users need before the first `up`: each zone's vipAddress and keepalived outputs (the zone
    component's, ``<name>-<az>``) are known in the preview, with nothing created, and during `up` they wait for no
    resource, so a program can hand the control plane its files in the same run as the endpoint. (The endpoint's
    ``zones`` output, which holds each zone's verdict, is known after `up`.)"""
    cloud = cloud_with_members(preview=True)
    run = run_program(lambda: HaEndpoint("k8s-api", with_vips()), cloud, preview=True,
                      outputs=lambda endpoint: {az: pulumi.Output.all(zone.serving.outputs["vip_address"],
                                                                      zone.serving.outputs["keepalived"])
                                                for az, zone in endpoint.zone_components.items()})
    for az, address in VIPS.items():
        port = run.named(f"k8s-api-{az}-vip")
        assert port["inputs"]["fixedIps"] == [{"subnetId": cloud.subnet_id(f"cp-{az}"), "ipAddress": address}]
        vip, keepalived = run.outputs[az]
        assert vip == address
        assert sorted(keepalived) == sorted(m["name"] for m in with_vips()["members"] if m["az"] == az)
        for files in keepalived.values():
            assert f"        {address}/32 dev eth0\n" in files["config"]
            assert any(address in entry["content"] for entry in files["kubeadm_files"])
    assert not [port for port in cloud.ports.values() if port.get("name", "").startswith("k8s-api-")]


def test_up_gives_the_vip_port_the_address_and_the_floating_ip_follows_it():
    cloud = cloud_with_members()
    run = run_component(with_vips(), cloud, preview=False)
    for az, address in VIPS.items():
        zone = run.outputs["zones"][az]
        assert [ip for _, ip in cloud.ports[zone["vipPortId"]]["fixed_ips"]] == [address]
        assert address in cloud.port_at(address.rsplit(".", 1)[0] + ".10")["allowed_address_pairs"]
        assert next(fip for fip in cloud.floating_ips.values() if fip.address == zone["floatingIp"]).port_id == \
            zone["vipPortId"]
        assert zone["ready"] is True and zone["published"] is True


def test_a_new_address_replaces_the_vip_port_deleting_the_old_one_first():
    """Neutron changes a port's fixed IP in place but leaves its floating IP on the old address (measured on the
    local cloud, Neutron Zed): so a change of address is a new port; the old one goes first, since the new address
    may be the one it holds (an allocated address pinned by vipAddress)."""
    run = run_component(with_vips(), cloud_with_members(preview=True), preview=True)
    port = next(r for r in run.registrations if r["name"] == "k8s-api-az1-vip")
    assert port["replace_on_changes"] == ["fixedIps"] and port["delete_before_replace"] is True


def test_without_vip_address_neutron_picks_the_address_as_before():
    cloud = cloud_with_members()
    run = run_component(keepalived_endpoint(), cloud, preview=False)
    port = run.named("k8s-api-az1-vip")
    assert port["inputs"]["fixedIps"] == [{"subnetId": cloud.subnet_id("cp-az1")}]
    assert run.outputs["zones"]["az1"]["vipAddress"] == cloud.ports[port["id"]]["fixed_ips"][0][1]


def test_the_address_its_own_vip_port_holds_passes_the_next_preview():
    """A second preview finds the address on the zone's own VIP port (this stack's tag, the port's name): not in use."""
    cloud = cloud_with_members()
    run_component(with_vips(), cloud, preview=False)
    run_component(with_vips(), cloud, preview=True)


def test_pinning_the_address_neutron_picked_passes_the_preview():
    cloud = cloud_with_members()
    first = run_component(keepalived_endpoint(), cloud, preview=False)
    run_component(with_vips({"az1": first.outputs["zones"]["az1"]["vipAddress"]}), cloud, preview=True)


# ----- refused at preview ----------------------------------------------------------------------------------------


def test_an_address_outside_the_subnet_not_a_host_or_the_gateway_is_refused_naming_the_key_and_the_fix():
    found = refusals(with_vips({"az1": "10.10.9.5", "az2": "10.10.2.0", "az3": "10.10.3.1"}),
                     cloud_with_members(preview=True))
    assert found == [
        f"{ROOT}.zones.az1.vipAddress: 10.10.9.5 is not in zone az1's subnet cp-az1 (10.10.1.0/24), and the VIP port "
        "is created on that subnet; give an address inside 10.10.1.0/24, or remove vipAddress to let Neutron pick a "
        "free one",
        f"{ROOT}.zones.az2.vipAddress: 10.10.2.0 is the network address of zone az2's subnet (10.10.2.0/24), which "
        "Neutron gives to no port; give a host address inside 10.10.2.0/24, or remove vipAddress to let Neutron pick "
        "a free one",
        f"{ROOT}.zones.az3.vipAddress: 10.10.3.1 is the gateway of zone az3's subnet (10.10.3.0/24); give another "
        "address inside 10.10.3.0/24, or remove vipAddress to let Neutron pick a free one"]


def test_the_broadcast_address_is_refused():
    found = refusals(with_vips({"az2": "10.10.2.255"}), cloud_with_members(preview=True))
    assert found == [f"{ROOT}.zones.az2.vipAddress: 10.10.2.255 is the broadcast address of zone az2's subnet "
                     "(10.10.2.0/24), which Neutron gives to no port; give a host address inside 10.10.2.0/24, or "
                     "remove vipAddress to let Neutron pick a free one"]


def test_an_address_in_use_by_a_server_port_is_refused_naming_the_port_and_its_owner():
    cloud = cloud_with_members(preview=True)
    server = cloud.add_member_port("cp-az2", "10.10.2.5")
    assert refusals(with_vips(), cloud) == [
        f"{ROOT}.zones.az2.vipAddress: 10.10.2.5 is in use by port {server} (no name; device_owner compute:nova, "
        "device server-10.10.2.5), and Neutron gives one address to one port; give a free address (openstack port "
        "list --fixed-ip ip-address=10.10.2.5 shows who holds it), or remove vipAddress to let Neutron pick a free "
        "one"]


def test_a_member_address_as_vip_is_refused_as_in_use():
    found = refusals(with_vips({"az1": "10.10.1.10"}), cloud_with_members(preview=True))
    assert len(found) == 1 and found[0].startswith(f"{ROOT}.zones.az1.vipAddress: 10.10.1.10 is in use by port ")


@pytest.mark.parametrize("owner", ["another stack", "another zone"])
def test_a_vip_port_that_is_not_this_zones_own_is_in_use(owner):
    """The exemption is for this zone's own VIP port only, proven by this stack's identity tag and the port's name:
    another stack's endpoint of the same name, or this endpoint's other zone, holds the address."""
    cloud = cloud_with_members(preview=True)
    port = cloud.add_port(cloud.network_id("cp"), [(cloud.subnet_id("cp-az1"), "10.10.1.5")])
    tag = "ha-endpoint:stack=ha-endpoint/prod" if owner == "another stack" else f"ha-endpoint:stack={PROJECT}/{STACK}"
    name = "k8s-api-az1-vip" if owner == "another stack" else "k8s-api-az2-vip"
    cloud.ports[port].update(name=name, tags=[tag])
    found = refusals(with_vips({"az1": "10.10.1.5"}), cloud)
    assert found == [f"{ROOT}.zones.az1.vipAddress: 10.10.1.5 is in use by port {port} ({name}; no device), and "
                     "Neutron gives one address to one port; give a free address (openstack port list --fixed-ip "
                     "ip-address=10.10.1.5 shows who holds it), or remove vipAddress to let Neutron pick a free one"]


def test_a_zones_address_is_judged_on_the_cloud_once_the_configuration_passes_the_backends_rules():
    """A weight (the backend's rules, the configuration alone) is refused before the cloud is asked where az1's
    address lies; with the weight fixed, the address outside the subnet is refused."""
    raw = with_vips({"az1": "10.10.9.5"})
    raw["members"][1]["weight"] = 5
    cloud = cloud_with_members(preview=True)
    with pytest.raises(ConfigError) as caught:
        run_component(raw, cloud, preview=True)
    assert [str(problem).split(": ")[0] for problem in caught.value.problems] == [f"{ROOT}.members[1].weight"]
    assert cloud.calls == []
    raw["members"][1]["weight"] = 1
    found = [problem.split(": ")[0] for problem in refusals(raw, cloud_with_members(preview=True))]
    assert found == [f"{ROOT}.zones.az1.vipAddress"]


def test_vip_address_with_the_octavia_backend_is_refused_before_the_cloud_is_asked():
    raw = with_vips({"az2": "10.10.2.5"})
    raw["backend"] = "octavia"
    with pytest.raises(ConfigError) as caught:
        run_component(raw, cloud_with_members(preview=True), preview=True)
    assert [str(problem) for problem in caught.value.problems] == [
        f"{ROOT}.zones.az2.vipAddress: sets the address of the zone's VIP port, and the octavia backend makes no such "
        "port (it gets its VIP addresses from the cloud); remove vipAddress, or set backend to one that takes it: "
        "keepalived"]


def test_an_address_that_is_no_address_is_refused_with_the_fix():
    with pytest.raises(ConfigError) as caught:
        run_component(with_vips({"az1": "10.10.1.500"}), cloud_with_members(preview=True), preview=True)
    assert [str(problem) for problem in caught.value.problems] == [
        f"{ROOT}.zones.az1.vipAddress: '10.10.1.500' is not an IP address; give a free address on the zone's subnet "
        "(e.g. 10.10.1.5), or remove vipAddress to let Neutron pick one"]


def test_an_address_from_a_resource_declared_beside_is_checked_once_known_and_given_to_the_port():
    """vipAddress may be an Output (e.g. computed from a Subnet declared beside): the same checks run once it is
    known (here at once), and the port and the members' configuration take it."""
    cloud = cloud_with_members()
    raw = with_vips({"az1": "10.10.1.5"})
    raw["zones"]["az1"]["vipAddress"] = pulumi.Output.from_input("10.10.1.5")
    run = run_component(raw, cloud, preview=False)
    zone = run.outputs["zones"]["az1"]
    assert zone["vipAddress"] == "10.10.1.5" and cloud.ports[zone["vipPortId"]]["fixed_ips"][0][1] == "10.10.1.5"
    assert all("10.10.1.5/32" in files["config"] for files in zone["keepalived"].values())


def test_an_output_address_in_use_fails_before_the_vip_port_is_created():
    cloud = cloud_with_members()
    cloud.add_member_port("cp-az1", "10.10.1.5")
    raw = keepalived_endpoint()
    raw["zones"]["az1"]["vipAddress"] = pulumi.Output.from_input("10.10.1.5")
    with pytest.raises(CloudLookupError) as caught:
        run_component(raw, cloud, preview=False)
    [problem] = [str(problem) for problem in caught.value.problems]
    assert problem.startswith(f"{ROOT}.zones.az1.vipAddress: 10.10.1.5 is in use by port "), problem
    assert not [port for port in cloud.ports.values() if port.get("name") == "k8s-api-az1-vip"]

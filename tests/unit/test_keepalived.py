"""The keepalived backend (ha_endpoint.backends.keepalived): what it renders for the members, what it builds per zone
under the fake cloud, what it refuses at preview, and what it removes again."""

from __future__ import annotations

import copy
import re

import pytest
import yaml

from ha_endpoint import CloudLookupError, ConfigError
from ha_endpoint.backends.keepalived import config
from ha_endpoint.backends.keepalived.checks import NAME
from pydantic.alias_generators import to_camel

from ha_endpoint.core import contract
from ha_endpoint.core.outputs import ZoneOutputs
from tests.mocks import FakeCloud, run_component
from tests.mocks.harness import amphora_config

ROOT = "HaEndpoint('k8s-api').args"
PORT = "openstack:networking/port:Port"
MEMBER_VIP = "pulumi-python:dynamic/haendpoint:MemberVip"
VIP_READINESS = "pulumi-python:dynamic/haendpoint:VipReadiness"
OCTAVIA_TYPES = {contract.LOADBALANCER_TYPE, contract.LISTENER_TYPE, contract.POOL_TYPE, contract.MEMBER_TYPE}
MEMBERS = {"az1": "10.10.1.10", "az2": "10.10.2.10", "az3": "10.10.3.10"}


def keepalived_endpoint() -> dict:
    """Pulumi.keepalived.yaml's endpoint."""
    with open("Pulumi.keepalived.yaml") as handle:
        return copy.deepcopy(yaml.safe_load(handle)["config"]["ha-endpoint:endpoint"])


def two_per_zone() -> dict:
    """Pulumi.keepalived.yaml's endpoint: two members per zone, cp-0..cp-2 at 10.10.N.10, cp-3..cp-5 at .11."""
    raw = keepalived_endpoint()
    assert sorted(member["address"] for member in raw["members"]) == sorted(
        f"10.10.{n}.{host}" for n in range(1, 4) for host in (10, 11))
    return raw


def cloud_with_members(preview: bool = False) -> FakeCloud:
    """The dev cloud with a port at each member's address (the servers' ports)."""
    cloud = FakeCloud.dev(preview)
    for n in range(1, 4):
        for host in (10, 11):
            cloud.add_member_port(f"cp-az{n}", f"10.10.{n}.{host}")
    return cloud


# ----- what runs on the members ---------------------------------------------------------------------------------------

ZONE = config.ZoneVrrp("k8s-api", "az1", "10.10.1.100", 42,
                       (("cp-0", "10.10.1.10"), ("cp-3", "10.10.1.11"), ("cp-6", "10.10.1.12")), 6443, "/readyz")


def _instance(text: str) -> str:
    return text[text.index("vrrp_instance"):]


@pytest.mark.parametrize("member,address", list(ZONE.members))
def test_each_member_lists_every_peer_but_itself_and_advertises_from_its_own_address(member, address):
    text = config.render(member, address, [ZONE])
    peers = re.search(r"unicast_peer \{\n(.*?)\n    \}", text, re.S).group(1).split()
    assert sorted(peers) == sorted(peer for name, peer in ZONE.members if name != member)
    assert f"unicast_src_ip {address}\n" in text
    assert "    virtual_ipaddress {\n        10.10.1.100/32 dev eth0\n    }" in text
    assert "interface eth0\n" in text and "virtual_router_id 42\n" in text and "advert_int 1\n" in text


def test_priorities_are_distinct_and_follow_the_members_order():
    priorities = [int(re.search(r"priority (\d+)", config.render(name, address, [ZONE])).group(1))
                  for name, address in ZONE.members]
    assert priorities == sorted(priorities, reverse=True) and len(set(priorities)) == len(priorities)


def test_the_track_script_checks_the_members_own_listener_fast_enough_to_move_the_vip_within_3s():
    text = config.render("cp-0", "10.10.1.10", [ZONE])
    assert 'script "/usr/bin/curl -fsk --max-time 1 -o /dev/null https://127.0.0.1:6443/readyz"' in text
    interval = int(re.search(r"interval (\d+)", text).group(1))
    fall = int(re.search(r"fall (\d+)", text).group(1))
    assert interval * fall + 1 <= 3  # checks failing in a row, then the priority-0 advertisement hands over
    assert "track_script {\n        check_k8s_api_az1\n    }" in _instance(text)


def test_a_member_whose_listener_comes_back_leaves_the_vip_where_it_is():
    """nopreempt in every member's instance (which starts BACKUP, as nopreempt needs): the member with the higher
    priority does not take the VIP back from the one that took it over (no second switch: docs/keepalived.md)."""
    for name, address in ZONE.members:
        text = config.render(name, address, [ZONE])
        assert "vrrp_instance k8s_api_az1 {\n    state BACKUP\n    nopreempt\n" in text
        assert "    state MASTER" not in text
        assert yaml.safe_load(config.cloud_init(text))["write_files"][0]["content"] == text  # what cloud-init writes


def test_a_member_of_no_zone_gets_no_instance_and_a_tcp_listener_is_checked_by_a_connect():
    tcp = config.ZoneVrrp("ep", "az2", "10.10.2.100", 7, (("a", "10.10.2.10"), ("b", "10.10.2.11")), 22623, None)
    assert "vrrp_instance" not in config.render("cp-0", "10.10.1.10", [tcp])
    assert "/dev/tcp/127.0.0.1/22623" in config.render("a", "10.10.2.10", [tcp])


def test_a_zone_of_one_member_has_no_peer_block():
    alone = config.ZoneVrrp("ep", "az1", "10.10.1.100", 7, (("cp-0", "10.10.1.10"),), 6443, "/readyz")
    text = config.render("cp-0", "10.10.1.10", [alone], interface="m-1234")
    assert "unicast_peer" not in text and "10.10.1.100/32 dev m-1234" in text and "interface m-1234\n" in text


def test_cloud_init_and_static_pod_carry_the_same_configuration():
    text = config.render("cp-0", "10.10.1.10", [ZONE])
    fragment = config.cloud_init(text)
    assert fragment.startswith("#cloud-config\n")
    parsed = yaml.safe_load(fragment)
    assert parsed["write_files"][0] == {"path": config.CONFIG_PATH, "permissions": "0640", "owner": "root:root",
                                        "content": text}
    assert "keepalived" in parsed["packages"]
    pod = yaml.safe_load(config.static_pod("cp-0", text))
    assert pod["spec"]["hostNetwork"] is True
    assert "NET_ADMIN" in pod["spec"]["containers"][0]["securityContext"]["capabilities"]["add"]
    files = config.kubeadm_files(text, config.static_pod("cp-0", text))
    assert [entry["path"] for entry in files] == [config.CONFIG_PATH, "/etc/kubernetes/manifests/keepalived.yaml"]


def test_the_zones_of_one_endpoint_get_distinct_router_ids():
    assert len({config.router_id("k8s-api", index) for index in range(10)}) == 10


# ----- the zone's resources ---------------------------------------------------------------------------------------


def test_keepalived_serves_every_zone_with_a_vip_port_its_members_hold_and_no_octavia_object():
    cloud = cloud_with_members()
    run = run_component(two_per_zone(), cloud, preview=False)
    assert not OCTAVIA_TYPES & {registration["type"] for registration in run.registrations}
    vips = {az: run.named(f"k8s-api-{az}-vip") for az in MEMBERS}
    for az, vip in vips.items():
        port = cloud.ports[vip["id"]]
        assert port["device_owner"] == "" and port["device_id"] == ""
        address = port["fixed_ips"][0][1]
        zone = run.outputs["zones"][az]
        assert zone["vipAddress"] == address and zone["vipPortId"] == vip["id"]
        for member in (MEMBERS[az], MEMBERS[az][:-1] + "1"):  # each member port of the zone holds the VIP
            assert address in cloud.port_at(member)["allowed_address_pairs"]
            assert zone["vrrpGroupId"] in cloud.port_at(member)["security_groups"]
        other = next(a for a in MEMBERS if a != az)  # and no other zone's member does
        assert address not in cloud.port_at(MEMBERS[other])["allowed_address_pairs"]
        assert zone["ready"] is True and zone["published"] is True and zone["gate"] == "VIP held and answering"
        assert sorted(zone["keepalived"]) == sorted(m["name"] for m in two_per_zone()["members"] if m["az"] == az)
        typed = {to_camel(key) for key in ZoneOutputs.__annotations__}  # the schema's type (test_packaging.py)
        assert set(zone) <= typed, f"keys a typed SDK (Go, C#, Java) would drop: {sorted(set(zone) - typed)}"
    assert sorted(run.named(contract.recordset_name("k8s-api"))["inputs"]["records"]) == \
        sorted(zone["floatingIp"] for zone in run.outputs["zones"].values())
    facts = next(r for r in run.registrations if r["type"] == contract.ENDPOINT_TYPE)["outputs"]["facts"]
    assert {zone["backend"] for zone in facts["zones"].values()} == {NAME}


def test_the_vrrp_group_admits_vrrp_from_the_zones_members_and_clients_on_the_listener():
    run = run_component(two_per_zone(), cloud_with_members(), preview=False)
    group = run.named("k8s-api-az2-vrrp")
    rules = [r["inputs"] for r in run.of_type("openstack:networking/secGroupRule:SecGroupRule")
             if r["inputs"]["securityGroupId"] == group["id"]]
    assert sorted(r["remoteIpPrefix"] for r in rules if r["protocol"] == "vrrp") == ["10.10.2.10/32", "10.10.2.11/32"]
    assert [(r["protocol"], r["portRangeMin"], r["remoteIpPrefix"]) for r in rules if r["protocol"] == "tcp"] == \
        [("tcp", 6443, "0.0.0.0/0")]


def test_each_member_gets_its_zones_keepalived_configuration_with_the_vip_and_its_peer():
    run = run_component(two_per_zone(), cloud_with_members(), preview=False)
    zone = run.outputs["zones"]["az3"]
    for name, peer in (("cp-2", "10.10.3.11"), ("cp-5", "10.10.3.10")):
        text = zone["keepalived"][name]["config"]
        assert f"{zone['vipAddress']}/32 dev eth0" in text
        assert re.search(r"unicast_peer \{\n\s+" + re.escape(peer) + r"\n\s+\}", text)
        assert zone["keepalived"][name]["cloud_init"].startswith("#cloud-config")
    assert zone["keepalived"]["cp-2"]["priority"] > zone["keepalived"]["cp-5"]["priority"]


def test_the_lab_nodes_render_during_up_exactly_what_the_component_outputs_after_it():
    """localcloud's keepalived nodes start while `up` runs (keepalived_nodes follow): from the stack's file and the
    VIP port's address, with the component's renderer; what they run is what the outputs say."""
    from pathlib import Path

    from localcloud.dataplane import keepalived_nodes

    run = run_component(two_per_zone(), cloud_with_members(), preview=False)
    args = keepalived_nodes.stack_args(Path("Pulumi.keepalived.yaml"))
    for az, zone in run.outputs["zones"].items():
        assert keepalived_nodes.zone_outputs(args, az, zone["vipAddress"]) == \
            {"vipAddress": zone["vipAddress"], "keepalived": zone["keepalived"]}


def test_destroy_removes_only_the_pairs_and_groups_it_added_and_keeps_the_users_floating_ip():
    cloud = cloud_with_members()
    port = cloud.port_at("10.10.1.10")
    port["allowed_address_pairs"].append("10.10.1.250")  # the user's own pair
    raw = keepalived_endpoint()
    raw["zones"]["az3"]["floatingIp"] = "172.24.4.50"
    run = run_component(raw, cloud, preview=False)
    assert run.outputs["zones"]["az3"]["floatingIp"] == "172.24.4.50"
    vip_ports = [zone["vipPortId"] for zone in run.outputs["zones"].values()]
    cloud.destroy()
    assert port["allowed_address_pairs"] == ["10.10.1.250"]
    assert all(not p["allowed_address_pairs"] for p in cloud.ports.values() if p is not port)
    assert any(fip.address == "172.24.4.50" for fip in cloud.floating_ips.values())  # brought: never deleted
    assert not set(vip_ports) & set(cloud.ports)


def test_an_unready_zone_is_left_out_of_dns_under_unpublish():
    cloud = cloud_with_members()
    cloud.unready_azs.add("az2")
    raw = keepalived_endpoint()
    raw["dns"]["perZoneRecords"] = False
    raw["readiness"] = {"onZoneNotReady": "unpublish"}
    run = run_component(raw, cloud, preview=False)
    assert run.outputs["zones"]["az2"]["ready"] is False and run.outputs["zones"]["az2"]["published"] is False
    assert len(run.outputs["addresses"]) == 2


# ----- refused at preview ----------------------------------------------------------------------------------------


def _refusals(raw: dict, cloud: FakeCloud) -> list[str]:
    with pytest.raises(CloudLookupError) as caught:
        run_component(raw, cloud, preview=True)
    return [str(problem) for problem in caught.value.problems]


def _configuration_refusals(raw: dict) -> list[str]:
    """What the configuration alone refuses (the backend's rules): every problem at once, before the cloud is asked
    anything (no lookup, no question of the preview's catalog) and before any resource."""
    cloud = cloud_with_members(preview=True)
    with pytest.raises(ConfigError) as caught:
        run_component(raw, cloud, preview=True)
    assert (cloud.calls, cloud.registrations) == ([], []), (cloud.calls, cloud.registrations)
    return [str(problem) for problem in caught.value.problems]


def test_every_option_keepalived_cannot_honour_is_refused_at_once_naming_its_key():
    raw = keepalived_endpoint()
    raw["loadBalancerProvider"] = "amphora"
    raw["listeners"] = amphora_config()["endpoint"]["listeners"]  # HTTPS /readyz monitor on 6443
    raw["listeners"][1]["lbMethod"] = "LEAST_CONNECTIONS"
    raw["listeners"][1]["timeoutClientData"] = 1000
    raw["members"][1]["weight"] = 5
    found = _configuration_refusals(raw)
    assert [problem.split(": ")[0] for problem in found] == [
        f"{ROOT}.loadBalancerProvider", f"{ROOT}.listeners[0].monitor", f"{ROOT}.listeners[1].lbMethod",
        f"{ROOT}.listeners[1].timeoutClientData", f"{ROOT}.members[1].weight"]
    assert "remove the monitor" in found[1] and "use weight 1" in found[4]


def test_an_internal_vip_is_refused_since_no_user_can_prove_which_member_holds_it():
    """A zone with no floating IP could never count as ready (found on the local cloud: the project user cannot read
    the VIP port's binding:host_id), so the preview refuses it instead of an `up` that waits until its timeout."""
    raw = keepalived_endpoint()
    del raw["floatingNetwork"]
    found = [p for p in _configuration_refusals(raw) if ".floatingNetwork" in p]
    assert len(found) == 1 and "set floatingNetwork" in found[0] and "backend octavia" in found[0], found


def test_tls_termination_is_refused_with_the_fix():
    raw = keepalived_endpoint()
    raw["listeners"][0].update(protocol="TERMINATED_HTTPS", certificateRef=cloud_with_members().add_certificate())
    assert [p for p in _configuration_refusals(raw) if ".protocol" in p] == [
        f"{ROOT}.listeners[0].protocol: the keepalived backend cannot terminate TLS: the clients reach the member "
        "holding the VIP directly; use protocol HTTPS (TLS passed through to the members) or TCP"]


def test_a_cloud_without_allowed_address_pairs_is_refused():
    cloud = cloud_with_members(preview=True)
    cloud.network_extensions.discard("allowed-address-pairs")
    assert _refusals(keepalived_endpoint(), cloud) == [
        f"{ROOT}.backend: the cloud's Neutron has no allowed-address-pairs extension (openstack extension list "
        "--network), so no member port can hold a zone's VIP; ask the cloud's operator to enable it, or use backend "
        "octavia"]


def test_a_member_port_without_port_security_and_a_member_on_another_network_are_refused():
    cloud = FakeCloud.dev(preview=True)
    cloud.add_member_port("cp-az1", "10.10.1.10", port_security=False)
    for address in ("10.10.1.11", "10.10.2.10", "10.10.2.11", "10.10.3.11"):
        cloud.add_member_port(f"cp-az{address.split('.')[2]}", address)
    island = cloud.add_member_port("island-sub", "10.99.0.10")
    raw = keepalived_endpoint()
    raw["members"][2]["port"] = island
    found = _refusals(raw, cloud)
    assert [problem.split(": ")[0] for problem in found] == [f"{ROOT}.members[0]", f"{ROOT}.members[2].port"]
    assert "port security disabled" in found[0] and "enable-port-security" in found[0]
    assert "put the zone's members and its subnet on one network" in found[1]


def test_a_member_without_a_port_at_its_address_is_refused():
    cloud = cloud_with_members(preview=True)
    raw = keepalived_endpoint()
    raw["members"][0]["address"] = "10.10.1.20"
    found = _refusals(raw, cloud)
    assert [problem.split(": ")[0] for problem in found] == [f"{ROOT}.members[0]"]
    assert "give the member's port (port) or server" in found[0]

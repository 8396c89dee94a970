"""Bad input is refused by a real `pulumi preview` (the engine, the Python language host, the real local cloud),
before anything exists: each kind of refusal with its key and fix, no traceback, nothing in the stack. The refusals
a user can make at once are made at once, in one configuration and one preview, which must report every one of them
(what a user fixing a configuration sees; a preview per refusal took 15 s each of `make test`'s budget). The corpus
(tests/unit/corpus) holds every case alone under mocks; these prove the same path under the engine, including the
checks that ask the cloud itself at preview (Octavia's availability zones through openstacksdk, the key manager for certificates) and, for ``backend: keepalived``, the facts of Neutron's ports (port
security, the network a member's port is on), with Neutron objects the test makes for the case."""

from __future__ import annotations

import copy

import pytest

from localcloud.testing import Cleanup
from tests.e2e.keepalived_stack import at_member_ports, keepalived_endpoint, make_member_ports
from tests.e2e.pulumi_cli import ENDPOINT_KEY, PulumiStack, refused
from tests.mocks.configs import amphora_endpoint

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

CERTIFICATE = "https://barbican.example:9311/v1/containers/0b7d2c1e-7c52-4f3a-9b1e-3d2f6a8c9e10"


def dev() -> dict:
    endpoint = amphora_endpoint()
    return {**endpoint, "name": "prr-api", "dns": {**endpoint["dns"], "record": "prr"}}


def boolean_port(raw: dict) -> None:
    raw["listeners"][0]["port"] = True


def unknown_octavia_az(raw: dict) -> None:
    raw["zones"]["az9"] = raw["zones"].pop("az3")
    raw["members"][2]["az"] = "az9"


def certificate_without_key_manager(raw: dict) -> None:
    raw["listeners"][0].update(protocol="TERMINATED_HTTPS", certificateRef=CERTIFICATE,
                               monitor={"type": "HTTP", "path": "/readyz"})


def per_zone_record_too_long(raw: dict) -> None:
    raw["dns"]["record"] = "kubernetes-api-server-endpoint-of-the-production-cluster-xyz"


def member_at_the_gateway(raw: dict) -> None:
    raw["members"][0]["address"] = "10.10.1.1"


CASES = {
    "boolean port": (boolean_port, "listeners[0].port: port must be a whole number from 1 to 65535, got true (a yes/no "
                                   "value); write the number itself, e.g. port: 6443"),
    "unknown Octavia AZ": (unknown_octavia_az, "zones.az9: Octavia has no availability zone 'az9'"),
    "certificate, no key manager": (certificate_without_key_manager,
                                    "listeners[0].certificateRef: the cloud has no key manager (Barbican) in its "
                                    "catalog"),
    "per-zone record too long": (per_zone_record_too_long,
                                 "dns.record: zone az1's record would be kubernetes-api-server-endpoint-of-the-"
                                 "production-cluster-xyz-az1.example.test., which Designate refuses"),
    "member at the gateway": (member_at_the_gateway, "members[0].address: member cp-0's address 10.10.1.1 is the "
                                                     "gateway of the subnet"),
}


STAGES = {"a field's own rule": ["boolean port"], "a rule over several fields": ["per-zone record too long"],
          "the cloud's services and zones": ["unknown Octavia AZ", "certificate, no key manager"],
          "the facts of the cloud's networks": ["member at the gateway"]}
"""The order in which a preview checks a configuration: a field that breaks its own rule stops it before the rules
that read several fields (they need every field whole); those stop it before the cloud is asked; what the cloud's
catalog and availability zones refuse stops it before the facts of its subnets and ports are judged. Each stage
names every problem it finds at once."""


@pytest.mark.parametrize("stage", list(STAGES))
def test_a_real_preview_refuses_every_case_of_a_stage_at_once_and_stops_before_the_next(stage, pulumi_environment,
                                                                                       tmp_path):
    """The configuration holds the cases of this stage and of every later one: the preview names this stage's, each
    with its key and fix, and none of the later stages'."""
    later = list(STAGES)[list(STAGES).index(stage) + 1:]
    raw = dev()
    for case in [case for name in (stage, *later) for case in STAGES[name]]:
        CASES[case][0](raw)
    stack = PulumiStack.create(tmp_path / "prr", "prr-preview", pulumi_environment)
    output = " ".join(refused(stack, raw, *[CASES[case][1] for case in STAGES[stage]]).output.split())
    assert [case for name in later for case in STAGES[name] if CASES[case][1] in output] == []
    assert stack.resources() == []


@pytest.mark.parametrize("description, owner", [
    ("k8s-api [ha-endpoint ha-endpoint/prod prr-api-dns]", "the endpoint of stack ha-endpoint/prod (its record set "
                                                           "prr-api-dns)"),
    ("made by hand", "a record set ha-endpoint did not make"),
], ids=["another stack's endpoint", "by hand"])
def test_a_name_published_already_is_refused_by_a_real_preview_naming_its_owner(description, owner, cloud,
                                                                                 pulumi_environment, tmp_path):
    """Issue 29, finding 1: the name is Designate's (one A record set per name), held by another owner: refused at
    preview, naming the owner from the record set's description and the fix; nothing in the stack, the record kept."""
    zone = cloud.dns.find_zone("example.test.", ignore_missing=False)
    taken = cloud.dns.create_recordset(zone, name="prr.example.test.", type="A", records=["192.0.2.10"], ttl=30,
                                       description=description)
    try:
        stack = PulumiStack.create(tmp_path / "prr", "prr-taken", pulumi_environment)
        stack.write_config(dev())
        result = stack.preview(check=False)
        text = " ".join(result.output.split())
        assert result.returncode != 0
        assert f"{ENDPOINT_KEY}.dns.record: prr.example.test. is published already by {owner}" in text, result.output[-3000:]
        assert "give dns.record a name of its own" in text
        assert "Traceback" not in result.output
        assert stack.resources() == []
        assert cloud.dns.get_recordset(taken, zone).records == ["192.0.2.10"]
    finally:
        cloud.dns.delete_recordset(taken, zone, ignore_missing=True)


# ----- backend: keepalived (issue 49: the pack refuses each bad topology in a real preview) --------------------------

KEEPALIVED = "prk-api"
OCTAVIA_LISTENERS = [{"port": 6443, "protocol": "HTTPS", "monitor": {"type": "HTTPS", "path": "/readyz"}}]


@pytest.fixture(scope="module")
def member_ports(localcloud):
    """A port per member of Pulumi.keepalived.yaml on its zone's subnet (the servers' ports; Neutron allocates the
    addresses), one more on az1's subnet with port security off, one on az2's subnet that holds the address a
    ``vipAddress`` then asks for, and one on a network of its own (another L2 segment): member name -> port
    (``no-port-security``, ``vip-taken``, ``island``), deleted when the module ends."""
    conn, cleanup = localcloud.conn, Cleanup(localcloud)
    try:
        ports = make_member_ports(conn, cleanup)
        az1 = conn.network.find_subnet("cp-az1", ignore_missing=False)
        ports["no-port-security"] = cleanup.add("port", conn.network.create_port(
            network_id=az1.network_id, name=cleanup.name("no-port-security"), fixed_ips=[{"subnet_id": az1.id}],
            is_port_security_enabled=False, security_group_ids=[]))
        az2 = conn.network.find_subnet("cp-az2", ignore_missing=False)
        ports["vip-taken"] = cleanup.add("port", conn.network.create_port(
            network_id=az2.network_id, name=cleanup.name("vip-taken"), fixed_ips=[{"subnet_id": az2.id}]))
        island = cleanup.add("network", conn.network.create_network(name=cleanup.name("island")))
        subnet = cleanup.add("subnet", conn.network.create_subnet(network_id=island.id, name=cleanup.name("island"),
                                                                  ip_version=4, cidr="10.99.0.0/24"))
        ports["island"] = cleanup.add("port", conn.network.create_port(
            network_id=island.id, name=cleanup.name("island"), fixed_ips=[{"subnet_id": subnet.id}]))
        yield ports
    finally:
        leftovers = cleanup.run()
        assert leftovers == [], leftovers


def keepalived(ports: dict) -> dict:
    """The keepalived stack, under a name and record of its own, with each member at its port's address."""
    return at_member_ports(keepalived_endpoint(KEEPALIVED, "prk"), ports)


def tls_termination(raw: dict, ports: dict) -> str:
    raw["listeners"][0].update(protocol="TERMINATED_HTTPS", certificateRef=CERTIFICATE)
    return ("listeners[0].protocol: the keepalived backend cannot terminate TLS: the clients reach the member holding "
            "the VIP directly; use protocol HTTPS (TLS passed through to the members) or TCP")


def per_listener_monitor(raw: dict, ports: dict) -> str:
    raw["listeners"] = copy.deepcopy(OCTAVIA_LISTENERS)
    return ("listeners[0].monitor: the keepalived backend has no per-listener health monitor: each member's track "
            "script checks its own listener and gives the VIP up when it fails; remove the monitor")


def weight(raw: dict, ports: dict) -> str:
    raw["members"][1]["weight"] = 5
    return ("members[1].weight: the keepalived backend cannot weigh members: one member of a zone holds its VIP at a "
            "time (its priority is its place in the zone's members by name); use weight 1, or 0 to take the member "
            "out")


def balancing_method(raw: dict, ports: dict) -> str:
    raw["listeners"][0]["lbMethod"] = "LEAST_CONNECTIONS"
    return ("listeners[0].lbMethod: the keepalived backend balances nothing: one member of a zone holds its VIP at a "
            "time; remove lbMethod")


def internal_endpoint(raw: dict, ports: dict) -> str:
    del raw["floatingNetwork"]
    return ("floatingNetwork: is not set, and the keepalived backend proves a zone ready by connecting to its VIP "
            "through the zone's floating IP; an internal VIP cannot be proven (which member holds it is an admin's "
            "attribute of the VIP port, binding:host_id), so no zone would ever count as ready; set floatingNetwork, "
            "or use backend octavia for an internal endpoint")


def port_security_off(raw: dict, ports: dict) -> str:
    raw["members"][0]["address"] = ports["no-port-security"].fixed_ips[0]["ip_address"]
    return (f"members[0]: port {ports['no-port-security'].id} has port security disabled, so Neutron ignores the VIP "
            "in its allowed address pairs and the VRRP group; enable it (openstack port set --enable-port-security) "
            "or use backend octavia")


def another_segment(raw: dict, ports: dict) -> str:
    cp3 = next(index for index, member in enumerate(raw["members"]) if member["name"] == "cp-3")  # az1's second
    raw["members"][cp3]["port"] = ports["island"].id
    return (f"members[{cp3}].port: port {ports['island'].id} is on network {ports['island'].network_id}, not on zone "
            f"az1's ({ports['cp-0'].network_id}): VRRP and the VIP stay within one network; put the zone's members "
            "and its subnet on one network")


def vip_address_in_use(raw: dict, ports: dict) -> str:
    taken = ports["vip-taken"]
    address = taken.fixed_ips[0]["ip_address"]
    raw["zones"]["az2"]["vipAddress"] = address
    return (f"zones.az2.vipAddress: {address} is in use by port {taken.id} ({taken.name}; no device), and Neutron "
            f"gives one address to one port; give a free address (openstack port list --fixed-ip ip-address={address} "
            "shows who holds it), or remove vipAddress to let Neutron pick a free one")


def vip_address_outside_the_subnet(raw: dict, ports: dict) -> str:
    raw["zones"]["az1"]["vipAddress"] = "10.10.9.5"
    return ("zones.az1.vipAddress: 10.10.9.5 is not in zone az1's subnet cp-az1 (10.10.1.0/24), and the VIP port is "
            "created on that subnet; give an address inside 10.10.1.0/24, or remove vipAddress to let Neutron pick a "
            "free one")


KEEPALIVED_STAGES = {
    "the backend's rules of the configuration": {
        "per-listener monitor": per_listener_monitor, "TLS termination": tls_termination, "weight": weight,
        "balancing method": balancing_method, "internal endpoint": internal_endpoint},
    "the facts of the cloud's networks": {
        "port security off": port_security_off, "member on another L2 segment": another_segment,
        "VIP address in use": vip_address_in_use, "VIP address outside the subnet": vip_address_outside_the_subnet},
}
"""What issue 49 refuses at preview, in a real one, by stage: what the configuration alone refuses (the backend's
rules, :mod:`ha_endpoint.backends.keepalived.rules`) stops the preview before the cloud is asked; what Neutron's
ports and subnets refuse (its preview, :mod:`ha_endpoint.backends.keepalived.checks`) comes after. The cases are
applied in this order to one configuration (the monitor's case replaces the listeners, so it comes first). A Neutron
without the allowed-address-pairs extension needs a neutron-server restart:
tests/e2e/test_preview_without_address_pairs.py, on a cloud of its own."""


def _nothing_of(cloud, stack: PulumiStack) -> None:
    assert stack.resources() == []
    assert [port.name for port in cloud.network.ports() if (port.name or "").startswith(f"{KEEPALIVED}-")] == []
    assert [group.name for group in cloud.network.security_groups()
            if (group.name or "").startswith(f"{KEEPALIVED}-")] == []


def test_the_keepalived_stack_passes_a_real_preview_and_the_pack(member_ports, cloud, pulumi_environment, tmp_path):
    """The baseline each refusal below changes once: previewed by the engine with the policy pack, which judges the
    backend's resources (a VIP port, groups, floating IPs, the record) with its generic rules and passes them."""
    stack = PulumiStack.create(tmp_path / "prk", "prk-clean", pulumi_environment)
    stack.write_config(keepalived(member_ports))
    result = stack.preview()
    text = " ".join(result.output.split())
    assert all(f"{KEEPALIVED}-{az}-vip" in text for az in ("az1", "az2", "az3")), result.output[-3000:]
    assert "Policy Violations" not in text and "mandatory" not in text and "Traceback" not in result.output
    _nothing_of(cloud, stack)


@pytest.mark.parametrize("stage", list(KEEPALIVED_STAGES))
def test_a_real_preview_refuses_every_bad_keepalived_topology_of_a_stage_at_once_and_stops_before_the_next(
        stage, member_ports, cloud, pulumi_environment, tmp_path):
    """The configuration holds the cases of this stage and of every later one: the preview names this stage's, each
    with its key and fix, and none of the later stages'; nothing is created."""
    later = list(KEEPALIVED_STAGES)[list(KEEPALIVED_STAGES).index(stage) + 1:]
    raw = keepalived(member_ports)
    expected = [change(raw, member_ports) for change in KEEPALIVED_STAGES[stage].values()]
    unseen = [change(raw, member_ports) for name in later for change in KEEPALIVED_STAGES[name].values()]
    stack = PulumiStack.create(tmp_path / "prk", "prk-refused", pulumi_environment)
    output = " ".join(refused(stack, raw, *expected).output.split())
    assert [message for message in unseen if message in output] == []
    _nothing_of(cloud, stack)


def test_a_free_vip_address_passes_a_real_keepalived_preview_and_the_pack(member_ports, cloud, pulumi_environment, tmp_path):
    """The baseline with a vipAddress per zone (free addresses of the subnets, outside their allocation pools, so that
    no other test's port takes them meanwhile: localcloud.seed.CP_FIXED): previewed by the engine with the policy
    pack, nothing created; the VIP ports are planned with those addresses."""
    raw = keepalived(member_ports)
    for n in (1, 2, 3):
        raw["zones"][f"az{n}"]["vipAddress"] = f"10.10.{n}.250"
    stack = PulumiStack.create(tmp_path / "prk", "prk-vip", pulumi_environment)
    stack.write_config(raw)
    result = stack.preview()
    text = " ".join(result.output.split())
    assert all(f"10.10.{n}.250" in text for n in (1, 2, 3)), result.output[-3000:]
    assert "Policy Violations" not in text and "mandatory" not in text and "Traceback" not in result.output
    _nothing_of(cloud, stack)

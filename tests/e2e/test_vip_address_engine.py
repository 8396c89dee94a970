"""``zones.<az>.vipAddress`` on the real local cloud, through the engine: the VIP port takes the given address, a new
address replaces the port (the old one deleted first) and the zone's floating IP follows it, and the address Neutron
picked can be pinned (the replacement takes the address its old port held). Neutron alone would change the port's
fixed IP in place and leave the floating IP on the old address (measured: docs/keepalived.md), hence the replacement.

The stack publishes in bootstrap mode (the gate waits for the VIP port only), so no member needs to run keepalived:
the member ports are plain Neutron ports the test makes and deletes. The addresses it names (10.10.1.240, .241) are
outside the subnet's allocation pool (localcloud.seed.CP_FIXED): no other test's port takes them meanwhile."""

from __future__ import annotations

import pytest
from localcloud.testing import Cleanup
from tests.e2e.keepalived_stack import at_member_ports, keepalived_endpoint, make_member_ports
from tests.e2e.pulumi_cli import PulumiStack

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

NAME = "pvx-api"


@pytest.fixture(scope="module")
def member_ports(localcloud):
    """A port per member of Pulumi.keepalived.yaml on its zone's subnet (the servers' ports), deleted at the end."""
    cleanup = Cleanup(localcloud)
    try:
        yield make_member_ports(localcloud.conn, cleanup)
    finally:
        leftovers = cleanup.run()
        assert leftovers == [], leftovers


ZONES = ("az1", "az2")
"""Pulumi.keepalived.yaml's first two zones: az1's address changes, az2's is pinned; a third zone would only add a VIP
port, floating IP and members to build and destroy (issue 53: the suite's budget)."""


def endpoint(ports: dict, vips: dict[str, str]) -> dict:
    raw = at_member_ports(keepalived_endpoint(NAME, "pvx"), ports)
    raw["zones"] = {az: zone for az, zone in raw["zones"].items() if az in ZONES}
    raw["members"] = [member for member in raw["members"] if member["az"] in ZONES]
    raw["dns"]["publish"] = "bootstrap"
    for az, address in vips.items():
        raw["zones"][az]["vipAddress"] = address
    return raw


def vip_port(cloud, az: str):
    found = [port for port in cloud.network.ports() if port.name == f"{NAME}-{az}-vip"]
    assert len(found) == 1, found
    return found[0]


def floating_ip_on(cloud, port_id: str):
    found = list(cloud.network.ips(port_id=port_id))
    assert len(found) == 1, found
    return found[0]


def test_a_changed_vip_address_replaces_the_port_and_the_floating_ip_follows(member_ports, cloud,
                                                                             pulumi_environment, tmp_path):
    stack = PulumiStack.create(tmp_path / "pvx", "pvx", pulumi_environment)
    try:
        stack.write_config(endpoint(member_ports, {"az1": "10.10.1.240"}))
        stack.up()
        first = vip_port(cloud, "az1")
        assert [ip["ip_address"] for ip in first.fixed_ips] == ["10.10.1.240"]
        fip = floating_ip_on(cloud, first.id)
        assert fip.fixed_ip_address == "10.10.1.240"
        picked = vip_port(cloud, "az2")
        allocated = picked.fixed_ips[0]["ip_address"]  # Neutron's pick
        outputs = stack.outputs()["zones"]
        assert outputs["az1"]["vipAddress"] == "10.10.1.240"
        assert "10.10.1.240/32 dev eth0" in outputs["az1"]["keepalived"]["cp-0"]["config"]

        # a new address for az1, and az2's allocated address pinned: both ports replaced, the old ones first
        stack.write_config(endpoint(member_ports, {"az1": "10.10.1.241", "az2": allocated}))
        preview = stack.preview().output
        for az in ("az1", "az2"):
            replaced = preview.index(f"::{NAME}-{az}-vip]")
            assert "+-openstack:networking/port:Port: (replace)" in preview[max(0, replaced - 400):replaced], \
                preview[-3000:]
        stack.up()
        second = vip_port(cloud, "az1")
        assert second.id != first.id and [ip["ip_address"] for ip in second.fixed_ips] == ["10.10.1.241"]
        moved = floating_ip_on(cloud, second.id)
        assert (moved.id, moved.floating_ip_address, moved.fixed_ip_address) == \
            (fip.id, fip.floating_ip_address, "10.10.1.241")  # the same floating IP, on the new address
        assert cloud.network.find_port(first.id, ignore_missing=True) is None
        pinned = vip_port(cloud, "az2")  # a new port with the address the old one held: deleted first
        assert pinned.id != picked.id and pinned.fixed_ips[0]["ip_address"] == allocated
        for member in ("cp-0", "cp-3"):  # az1's members hold the new VIP, no more the old one
            pairs = [pair["ip_address"] for pair in cloud.network.get_port(member_ports[member].id)
                     .allowed_address_pairs]
            assert "10.10.1.241" in pairs and "10.10.1.240" not in pairs, pairs
        zones = stack.outputs()["zones"]
        assert zones["az1"]["vipAddress"] == "10.10.1.241" and zones["az1"]["floatingIp"] == fip.floating_ip_address
        assert "10.10.1.241/32 dev eth0" in zones["az1"]["keepalived"]["cp-0"]["config"]
        stack.run("preview", "--non-interactive", "--expect-no-changes")
    finally:
        stack.destroy()
    assert [port.name for port in cloud.network.ports() if (port.name or "").startswith(f"{NAME}-")] == []

"""Servers on the local cloud under the real engine: the OpenStack provider plugin (lab/engine/openstack, the
terraform-provider-openstack bridge) creates `openstack.compute.Instance`s by image and flavor name, one on a port of
its own in az1 and one on a network in az2; they come up ACTIVE on their AZ's compute host with their fixed IPs, a
second preview sees no change, and destroy leaves nothing (lab/localcloud/README.md, "Compute")."""

from __future__ import annotations

import ipaddress
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from localcloud.seed import FLAVORS, IMAGE
from localcloud.settings import COMPUTE_HOSTS
from tests.e2e.pulumi_cli import PulumiStack

pytestmark = pytest.mark.e2e

PROGRAM = textwrap.dedent('''
    import pulumi
    import pulumi_openstack as openstack

    config = pulumi.Config()
    prefix = config.require("prefix")
    image, flavor = config.require("image"), config.require("flavor")

    az1_network = openstack.networking.get_network(name="cp-az1-net")
    az1_subnet = openstack.networking.get_subnet(name="cp-az1")
    port = openstack.networking.Port("port", name=f"{prefix}-port", network_id=az1_network.id,
                                     fixed_ips=[openstack.networking.PortFixedIpArgs(subnet_id=az1_subnet.id)])
    on_port = openstack.compute.Instance(
        "on-port", name=f"{prefix}-on-port", availability_zone="az1", image_name=image, flavor_name=flavor,
        networks=[openstack.compute.InstanceNetworkArgs(port=port.id)])

    az2_network = openstack.networking.get_network(name="cp-az2-net")
    on_network = openstack.compute.Instance(
        "on-network", name=f"{prefix}-on-network", availability_zone="az2", image_name=image, flavor_name=flavor,
        networks=[openstack.compute.InstanceNetworkArgs(uuid=az2_network.id)])

    pulumi.export("onPort", {"id": on_port.id, "az": on_port.availability_zone, "ip": on_port.access_ip_v4,
                             "port": port.id, "portIp": port.all_fixed_ips[0]})
    pulumi.export("onNetwork", {"id": on_network.id, "az": on_network.availability_zone,
                                "ip": on_network.access_ip_v4})
''')


def compute_stack(workdir: Path, environment: dict) -> PulumiStack:
    return PulumiStack.program(workdir, "compute-e2e", "compute-e2e", PROGRAM, environment)


def mine(cloud, prefix: str) -> list[str]:
    """What carries the stack's prefix on the cloud: servers and ports."""
    servers = [f"server {s.name}" for s in cloud.compute.servers() if s.name.startswith(prefix)]
    return servers + [f"port {p.name}" for p in cloud.network.ports() if (p.name or "").startswith(prefix)]


def test_servers_by_image_and_flavor_name_come_up_in_their_az_and_go(pulumi_environment, cloud, cloud_admin,
                                                                     tmp_path):
    prefix = f"e2e-cmp-{uuid.uuid4().hex[:6]}"
    stack = compute_stack(tmp_path / "compute", pulumi_environment)
    try:
        for key, value in (("openstack:cloud", "localcloud"), ("prefix", prefix), ("image", IMAGE),
                           ("flavor", FLAVORS[0][0])):
            stack.run("config", "set", key, value)
        up = stack.up(policy=False)
        print(f"up: {up.seconds:.1f}s")
        outputs = stack.outputs()

        on_port, on_network = outputs["onPort"], outputs["onNetwork"]
        assert (on_port["az"], on_network["az"]) == ("az1", "az2")
        assert on_port["ip"] == on_port["portIp"]
        for az, server_id, ip in (("az1", on_port["id"], on_port["ip"]), ("az2", on_network["id"], on_network["ip"])):
            server = cloud.compute.get_server(server_id)
            assert (server.status, server.availability_zone) == ("ACTIVE", az)
            assert cloud_admin.compute.get_server(server_id).compute_host == COMPUTE_HOSTS[az]
            [port] = cloud.network.ports(device_id=server_id)
            subnet = cloud.network.find_subnet(f"cp-{az}", ignore_missing=False)
            assert [f["ip_address"] for f in port.fixed_ips] == [ip]
            assert ipaddress.ip_address(ip) in ipaddress.ip_network(subnet.cidr)
            assert cloud_admin.network.get_port(port.id).binding_host_id == COMPUTE_HOSTS[az]
        assert cloud.network.get_port(on_port["port"]).device_id == on_port["id"]

        again = stack.preview("--expect-no-changes", policy=False)  # the provider reads back what it wrote
        print(f"preview: {again.seconds:.1f}s")

        down = stack.destroy()
        print(f"destroy: {down.seconds:.1f}s")
        deadline = time.monotonic() + 60  # Nova shows a server DELETED for a moment before it is gone
        while mine(cloud, prefix) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert mine(cloud, prefix) == []
    finally:
        stack.destroy(check=False)

"""A real `pulumi preview --policy-pack policies` of a stack that declares resources of its own beside the endpoint
(issue 10): a member in one of its pools with an address outside its subnet, a rule opening its VIP security group
to 0.0.0.0/0 in a production stack, a record set publishing a zone's floating IP before the zone's readiness. The
real engine prints each mandatory violation and creates nothing; the same stack with compliant neighbours passes."""

from __future__ import annotations

import textwrap

import pytest
from tests.e2e.pulumi_cli import PulumiStack
from tests.mocks.configs import amphora_endpoint

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

PREFIX = "pn"
PROGRAM = textwrap.dedent('''
    """The ha-endpoint program, and resources of the user's own beside the endpoint (tests/e2e/test_pack_neighbours)."""
    import pulumi
    import pulumi_openstack as openstack

    from stacks.endpoint_stack import main

    endpoint = main()
    bad = not pulumi.Config().get_bool("compliantNeighbours")
    zone_az1 = endpoint.zone_components["az1"]
    subnet = openstack.networking.get_subnet(name="cp-az2" if bad else "cp-az1")
    openstack.loadbalancer.Member(
        "pn-extra-member", pool_id=zone_az1.serving.outputs["pool_ids"].apply(lambda ids: ids["6443"]),
        address="10.10.9.20" if bad else "10.10.1.20", subnet_id=subnet.id, protocol_port=6443)
    openstack.networking.SecGroupRule(
        "pn-extra-rule", security_group_id=endpoint.vip_security_group_id, direction="ingress", ethertype="IPv4",
        protocol="tcp", port_range_min=6443, port_range_max=6443,
        remote_ip_prefix="0.0.0.0/0" if bad else "198.51.100.0/24")
    dns_zone = openstack.dns.get_dns_zone(name="example.test.")
    openstack.dns.RecordSet(
        "pn-extra-dns", zone_id=dns_zone.id, name="pn-extra.example.test.", type="A", ttl=30,
        # the zone's VIP: it exists once the load balancer does (the floating IP is associated after the zone's
        # readiness, so a record taking it waits)
        records=[zone_az1.serving.outputs["vip_address"]] if bad else endpoint.addresses)
''')


def _stack(tmp_path, pulumi_environment, compliant: bool) -> PulumiStack:
    name = f"{PREFIX}-{'ok' if compliant else 'bad'}"
    stack = PulumiStack.create(tmp_path / name, name, pulumi_environment)
    (stack.workdir / "__main__.py").write_text(PROGRAM)
    dev = amphora_endpoint()
    stack.write_config({**dev, "name": f"{PREFIX}-api", "tags": ["production"], "allowedCidrs": ["192.0.2.0/24"],
                        "dns": {**dev["dns"], "record": f"{PREFIX}-api"}},
                       extra={"ha-endpoint:compliantNeighbours": compliant})
    return stack


def test_a_real_preview_refuses_each_neighbour_with_its_message(pulumi_environment, tmp_path, cloud):
    stack = _stack(tmp_path, pulumi_environment, compliant=False)
    result = stack.preview(check=False)
    (tmp_path / "preview.log").write_text(result.output)
    az2 = cloud.network.find_subnet("cp-az2", ignore_missing=False)
    output = " ".join(result.output.split())  # the CLI may wrap long messages
    assert result.returncode != 0
    assert "ha-endpoint-neighbour-member-reachability" in output
    assert (f"member pn-extra-member (declared beside endpoint pn-api) joins a pool of zone az1 with address "
            f"10.10.9.20, which is not in its subnet cp-az2 ({az2.id}, 10.10.2.0/24); give it an address of that "
            f"subnet, or set its subnet_id to the subnet 10.10.9.20 is on") in output
    assert "ha-endpoint-production-neighbour-rules" in output
    assert ("security group rule pn-extra-rule (declared beside endpoint pn-api) admits tcp port 6443 from 0.0.0.0/0 "
            "into the endpoint's VIP security group pn-api-vip-sg in a production stack (load balancers tagged "
            "'production')") in output
    assert "ha-endpoint-neighbour-dns-readiness" in output
    assert ("record set pn-extra-dns (declared beside endpoint pn-api) publishes the address of pn-api-az1-lb, "
            "zone az1's address, without waiting for pn-api-az1-ready") in output
    assert "Traceback" not in output and "could not finish" not in output
    assert stack.resources() == []


def test_the_same_stack_with_compliant_neighbours_passes(pulumi_environment, tmp_path):
    stack = _stack(tmp_path, pulumi_environment, compliant=True)
    result = stack.preview(check=False)
    (tmp_path / "preview.log").write_text(result.output)
    assert result.returncode == 0, result.output[-3000:]
    assert "neighbour" not in result.output

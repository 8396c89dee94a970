"""A second stack reads the endpoint stack's outputs through a StackReference and builds on them (issue 12).

The endpoint stack is this project (two zones, one member each); the second stack is examples/stack-reference: a
security group with an egress rule to every published address and every zone's VIP on every listener port, and a
CNAME to the endpoint's name. Both run under the real engine on the local cloud with one file backend, each under
its own stack name; the cloud is read back with openstacksdk and the cloud's DNS server (named). When the endpoint stack
loses a zone, the second stack's next update follows.
"""

from __future__ import annotations

import shutil

import pytest

from localcloud.testing import Cleanup
from localcloud.dns import query as dns_query
from tests.e2e.cloud_checks import loadbalancers_named, resolve_a
from tests.e2e.pulumi_cli import REPO, PulumiStack

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

ENDPOINT = "ref-e2e"
CLIENTS_STACK = "ref-e2e-clients"
FQDN = f"{ENDPOINT}.example.test."
ALIAS = f"{CLIENTS_STACK}.example.test."


def endpoint_config(zones=("az1", "az2")) -> dict:
    number = {"az1": 1, "az2": 2, "az3": 3}
    return {
        "name": ENDPOINT,
        "floatingNetwork": "public",
        "zones": {zone: {"subnet": f"cp-{zone}"} for zone in zones},
        "listeners": [{"port": 6443, "monitor": {"type": "TCP"}}],
        "members": [{"name": f"cp-{zone}", "address": f"10.10.{number[zone]}.41", "az": zone} for zone in zones],
        "memberPlacement": "own-zone",
        "dns": {"dnsZone": "example.test.", "record": ENDPOINT, "ttl": 30},
        "readiness": {"timeoutSeconds": 300},
    }


@pytest.fixture(scope="module")
def swept(localcloud):
    sweep = Cleanup(localcloud)
    sweep.prefix = ENDPOINT  # the endpoint's objects, the clients' group and the alias all start with it
    leftovers = sweep.run()
    assert not leftovers, leftovers


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory, pulumi_environment, swept):
    instance = PulumiStack.create(tmp_path_factory.mktemp("ref-endpoint"), ENDPOINT, pulumi_environment)
    instance.write_config(endpoint_config())
    yield instance
    instance.destroy(check=False)


@pytest.fixture(scope="module")
def clients(tmp_path_factory, pulumi_environment, endpoint):
    """examples/stack-reference in a copy, in the endpoint stack's backend (a StackReference reads that backend)."""
    workdir = tmp_path_factory.mktemp("ref-clients")
    for name in ("Pulumi.yaml", "__main__.py", "requirements.txt"):
        shutil.copy2(REPO / "examples" / "stack-reference" / name, workdir / name)
    (workdir / "venv").symlink_to(REPO / ".venv")  # pulumi + pulumi-openstack, as its requirements.txt asks
    instance = PulumiStack(workdir, CLIENTS_STACK, pulumi_environment, backend=endpoint.backend)
    instance.run("stack", "init", CLIENTS_STACK, "--non-interactive")
    instance.run("config", "set", "endpointStack", f"organization/ha-endpoint/{ENDPOINT}")
    instance.run("config", "set", "openstack:cloud", pulumi_environment.get("OS_CLOUD", "localcloud"))
    yield instance
    instance.destroy(check=False)


def egress_targets(cloud, group_id: str) -> set[tuple[str, int]]:
    return {(rule.remote_ip_prefix, rule.port_range_min) for rule in cloud.network.security_group_rules(
        security_group_id=group_id, direction="egress") if rule.remote_ip_prefix and rule.protocol == "tcp"}


def resolve_cname(name: str) -> set[str]:
    return set(dns_query.ask(name, "CNAME").records)


def expected_targets(outputs: dict) -> set[tuple[str, int]]:
    addresses = set(outputs["addresses"]) | {zone["vipAddress"] for zone in outputs["zones"].values()}
    return {(f"{address}/32", port) for address in addresses for port in outputs["ports"]}


def test_1_the_second_stack_builds_on_the_endpoint_stacks_outputs(endpoint, clients, cloud):
    endpoint.up(policy=False)
    published = endpoint.outputs()
    assert published["fqdn"] == FQDN and len(published["addresses"]) == 2

    preview = clients.preview(policy=False)
    assert "api-clients-dns-" in preview.stdout  # the rules are planned at preview: the reference is read then
    clients.up(policy=False)
    outputs = clients.outputs()
    assert outputs["apiUrl"] == f"https://{FQDN.rstrip('.')}:6443"
    assert outputs["alias"] == ALIAS
    assert egress_targets(cloud, outputs["clientsSecurityGroupId"]) == expected_targets(published)
    assert resolve_cname(ALIAS) == {FQDN}
    assert resolve_a(FQDN) == set(published["addresses"])


def test_2_when_the_endpoint_loses_a_zone_the_second_stack_follows(endpoint, clients, cloud):
    endpoint.write_config(endpoint_config(zones=("az1", "az3")))
    endpoint.up(policy=False)
    published = endpoint.outputs()
    assert set(published["zones"]) == {"az1", "az3"}
    clients.up(policy=False)
    group_id = clients.outputs()["clientsSecurityGroupId"]
    assert egress_targets(cloud, group_id) == expected_targets(published)


def test_3_both_stacks_destroy_cleanly_second_stack_first(endpoint, clients, cloud):
    group_id = clients.outputs()["clientsSecurityGroupId"]
    clients.destroy()
    assert cloud.network.find_security_group(group_id) is None
    assert resolve_cname(ALIAS) == set()
    endpoint.destroy()
    assert not loadbalancers_named(cloud, f"{ENDPOINT}-")
    assert resolve_a(FQDN) == set()

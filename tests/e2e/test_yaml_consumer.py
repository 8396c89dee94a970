"""A Pulumi YAML program consumes the component package and builds an endpoint on the local cloud (issue 12).

examples/yaml/Pulumi.yaml names the package in `packages:` (../../components: PulumiPlugin.yaml, the Python provider
host). The real engine runs it with the YAML language host built by lab/engine/yaml; the CLI installs the package's
virtualenv (components/requirements.txt) and the host constructs HaEndpoint. The readiness gates and drains run in
that host too (ha_endpoint.gates.hosted: a dynamic provider would run with the YAML program's python3). Each step
reads the cloud back with openstacksdk and the cloud's DNS server (named).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time

import pytest

from localcloud.testing import Cleanup
from tests.e2e.cloud_checks import RolloutSampler, loadbalancers_named, online_members_by_pool, resolve_a
from tests.e2e.pulumi_cli import REPO, PulumiStack

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

ENDPOINT = "yaml-e2e"
STACK = "yaml-e2e"
ZONES = ("az1", "az2")
FQDN = f"{ENDPOINT}.example.test."
EXAMPLE = REPO / "examples" / "yaml"


@pytest.fixture(scope="module")
def swept(localcloud):
    sweep = Cleanup(localcloud)
    sweep.prefix = ENDPOINT
    leftovers = sweep.run()
    assert not leftovers, leftovers


@pytest.fixture(scope="module")
def stack(tmp_path_factory, pulumi_environment, swept):
    """The example in a copy of the repository's layout (examples/yaml beside components/, whose virtualenv
    ../.venv-component the CLI creates or updates), with the policy pack, under its own stack and backend."""
    root = tmp_path_factory.mktemp("yaml-consumer")
    workdir = root / "examples" / "yaml"
    workdir.mkdir(parents=True)
    shutil.copy2(EXAMPLE / "Pulumi.yaml", workdir / "Pulumi.yaml")
    (root / "components").symlink_to(REPO / "components")
    (root / ".venv-component").symlink_to(REPO / ".venv-component", target_is_directory=True)
    # what `pulumi install` would create there (it refuses to create a virtualenv through a symlink)
    subprocess.run(["make", "--no-print-directory", "-s", "_component-venv"], cwd=REPO, check=True, timeout=900)
    (workdir / "policies").symlink_to(REPO / "policies")
    (workdir / ".venv").symlink_to(REPO / ".venv")  # the pack's virtualenv (../.venv of policies/)
    # the YAML language host: an engine tool (lab/engine/build.sh --tools; not assembled into the engine)
    yaml_part = subprocess.run(["lab/engine/build.sh", "--part", "yaml"], cwd=REPO, capture_output=True, text=True,
                               timeout=3600)
    assert yaml_part.returncode == 0, f"the YAML language host did not build:\n{yaml_part.stderr[-3000:]}"
    environment = {**pulumi_environment,
                   "PATH": f"{yaml_part.stdout.strip().splitlines()[-1]}/bin:{pulumi_environment['PATH']}"}
    instance = PulumiStack(workdir, STACK, environment)
    instance.run("stack", "init", STACK, "--non-interactive")
    instance.run("config", "set", "endpointName", ENDPOINT)
    instance.run("config", "set", "openstack:cloud", pulumi_environment.get("OS_CLOUD", "localcloud"))
    yield instance
    instance.destroy(check=False)
    instance.run("stack", "rm", "--yes", "--force", check=False)


def resources_of(stack: PulumiStack, type_: str) -> list[dict]:
    return [r for r in stack.resources() if r["type"] == type_]


def test_1_preview_plans_the_endpoint_from_the_package_and_passes_the_pack(stack):
    result = stack.preview()
    for zone in ZONES:
        assert f"{ENDPOINT}-{zone}-lb" in result.stdout
    assert "haendpoint:index:HaEndpoint" in result.stdout
    assert "haendpoint:index:MemberReadiness" in result.stdout  # served by the package's host, not pulumi-python
    assert "pulumi-python:dynamic" not in result.stdout
    assert "Policy Violations" not in result.output and "mandatory" not in result.output


def test_2_up_builds_each_zone_waits_for_its_members_and_publishes_exactly_the_ready_addresses(stack, cloud):
    stack.up()
    outputs = stack.outputs()
    assert outputs["fqdn"] == FQDN
    zones = outputs["zones"]
    assert set(zones) == set(ZONES)
    for zone in ZONES:
        lb = cloud.load_balancer.get_load_balancer(zones[zone]["loadbalancerId"])
        subnet = cloud.network.find_subnet(f"cp-{zone}", ignore_missing=False)
        assert (lb.name, lb.availability_zone, lb.vip_subnet_id, lb.provisioning_status) == (
            f"{ENDPOINT}-{zone}-lb", zone, subnet.id, "ACTIVE")
        assert set(online_members_by_pool(cloud, lb.id).values()) == {1}
        assert zones[zone]["ready"] is True and zones[zone]["published"] is True
    published = {zones[zone]["floatingIp"] for zone in ZONES}
    assert set(outputs["addresses"]) == published and resolve_a(FQDN) == published
    gates = resources_of(stack, "haendpoint:index:MemberReadiness")
    assert len(gates) == len(ZONES)
    for gate in gates:  # the host waited for ACTIVE/ONLINE with openstacksdk, in the package's own virtualenv
        assert gate["outputs"]["ready"] is True and gate["outputs"]["all_online"] is True
        assert set(gate["outputs"]["statuses"].values()) == {"ACTIVE/ONLINE"}
    assert not [r for r in stack.resources() if r["type"].startswith("pulumi-python:")]


class WeightWatcher:
    """Polls the weight of one member until it is gone: what a drain did to it before the delete."""

    def __init__(self, conn, pool_id: str, member_id: str):
        self.conn, self.pool_id, self.member_id = conn, pool_id, member_id
        self.weights: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=30)

    def _loop(self):
        while not self._stop.is_set():
            member = self.conn.load_balancer.find_member(self.member_id, self.pool_id)
            if member is None:
                return
            if not self.weights or self.weights[-1] != member.weight:
                self.weights.append(member.weight)
            time.sleep(0.5)  # the drain holds weight 0 for drainSeconds (3 s here): seen several times


def edit_program(stack: PulumiStack, old: str, new: str) -> None:
    program = (stack.workdir / "Pulumi.yaml").read_text()
    assert old in program
    (stack.workdir / "Pulumi.yaml").write_text(program.replace(old, new, 1))


def test_3_drain_seconds_reach_the_hosted_drains_in_place(stack, cloud):
    """A drain acts with the setting its state records when the member goes: set it first (an in-place update)."""
    edit_program(stack, "timeoutSeconds: 300", "timeoutSeconds: 300\n        drainSeconds: 3")
    result = stack.up()
    assert "haendpoint:index:MemberDrain" in result.stdout
    drains = resources_of(stack, "haendpoint:index:MemberDrain")
    assert len(drains) == len(ZONES) and {d["outputs"]["drain_seconds"] for d in drains} == {3}


def test_4_replacing_a_member_drains_the_old_one_and_keeps_every_zone_serving(stack, cloud):
    zones = stack.outputs()["zones"]
    pool_id = next(iter(zones["az1"]["poolIds"].values()))
    old = next(member for member in cloud.load_balancer.members(pool_id) if member.address == "10.10.1.31")
    edit_program(stack, "10.10.1.31", "10.10.1.32")
    address_zone = {zones[zone]["floatingIp"]: zone for zone in ZONES}
    with RolloutSampler(cloud, ENDPOINT, ZONES, "example.test.", FQDN, address_zone) as sampler, \
            WeightWatcher(cloud, pool_id, old.id) as watcher:
        stack.up()
    assert watcher.weights[0] == 1 and 0 in watcher.weights, watcher.weights  # weight 0, then deleted
    assert cloud.load_balancer.find_member(old.id, pool_id) is None
    assert [m.address for m in cloud.load_balancer.members(pool_id)] == ["10.10.1.32"]
    assert sampler.samples, sampler.errors
    assert all(sampler.min_online(zone) >= 1 for zone in ZONES), [s.online_by_zone for s in sampler.samples]
    assert not sampler.published_without_online()


def test_5_destroy_removes_what_the_program_created(stack, cloud):
    stack.destroy()
    assert not loadbalancers_named(cloud, f"{ENDPOINT}-")
    assert resolve_a(FQDN) == set()
    assert not [group for group in cloud.network.security_groups() if (group.name or "").startswith(ENDPOINT)]
    assert json.loads(stack.run("stack", "output", "--json").stdout) == {}

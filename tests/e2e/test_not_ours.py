"""Nothing that is not this stack's is ever changed or deleted, under the real engine on the local cloud.

* Two stacks of one project use the same endpoint name (dev and prod): one is killed mid-update and recovered; the
  other's every object is untouched (read back with openstacksdk) and a no-change preview of it shows nothing.
* A brought floating IP that serves another port is refused at preview, naming the port and its device; nothing
  is created and the address stays where it was.
"""

from __future__ import annotations

import subprocess
import time

import pytest

from localcloud.testing import Cleanup
from tests.e2e.pulumi_cli import REPO, PulumiStack, read_events

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

ENDPOINT = "twin-api"
ZONES = ("az1", "az2")
"""Two zones, the fewest an HA endpoint has: what is asserted (the other stack's objects untouched) holds per zone,
and a third zone would only add a load balancer per stack to build and destroy (issue 53: the suite's budget)."""


def twin_config(record: str, host: int, floating_ip: str | None = None, name: str = ENDPOINT) -> dict:
    return {
        "name": name, "floatingNetwork": "public",
        "zones": {az: {"subnet": f"cp-{az}", **({"floatingIp": floating_ip} if floating_ip and az == "az1" else {})}
                  for az in ZONES},
        "listeners": [{"port": 6443, "monitor": {"type": "TCP"}}, {"port": 22623, "monitor": {"type": "TCP"}}],
        "members": [{"name": f"cp-{n}", "address": f"10.10.{n}.{host}", "az": f"az{n}"}
                    for n in range(1, len(ZONES) + 1)],
        "dns": {"dnsZone": "example.test.", "record": record, "ttl": 30},
        "readiness": {"timeoutSeconds": 300},
    }


@pytest.fixture(scope="module")
def swept(localcloud):
    sweep = Cleanup(localcloud)
    sweep.prefix = ENDPOINT
    assert not sweep.run()
    yield
    sweep.run()


@pytest.fixture(scope="module")
def twins(tmp_path_factory, pulumi_environment, swept):
    """Stack `twin-prod` (up) and stack `twin-dev` (not yet), one project, one backend, one endpoint name."""
    workdir = tmp_path_factory.mktemp("twins")
    prod = PulumiStack.create(workdir, "twin-prod", pulumi_environment)
    dev = PulumiStack(workdir, "twin-dev", pulumi_environment)
    dev.run("stack", "init", "twin-dev", "--non-interactive")
    prod.write_config(twin_config("twin-prod", 31))
    dev.write_config(twin_config("twin-dev", 32))
    yield prod, dev
    for stack in (dev, prod):
        stack.destroy(check=False)


def objects_of(conn, lb_ids: set[str]) -> dict:
    """Every object a stack's load balancers hold, with its status, as openstacksdk reads it back."""
    lbs = [conn.load_balancer.get_load_balancer(lb) for lb in sorted(lb_ids)]
    listeners = [l for lb in sorted(lb_ids) for l in conn.load_balancer.listeners(load_balancer_id=lb)]
    pools = [p for lb in sorted(lb_ids) for p in conn.load_balancer.pools(loadbalancer_id=lb)]
    return {
        "load_balancers": sorted((lb.id, lb.name, lb.provisioning_status) for lb in lbs),
        "listeners": sorted((l.id, l.name, l.provisioning_status) for l in listeners),
        "pools": sorted((p.id, p.name, p.provisioning_status) for p in pools),
        "members": sorted((m.id, m.address, m.provisioning_status) for p in pools
                          for m in conn.load_balancer.members(p.id)),
    }


def stack_objects(conn, stack: PulumiStack) -> dict:
    resources = stack.resources()
    lb_ids = {r["id"] for r in resources if r["type"].endswith("loadBalancer:LoadBalancer")}
    ids: dict[str, list[str]] = {}
    for resource in resources:
        if resource["type"].startswith("openstack:"):
            ids.setdefault(resource["type"].rsplit(":", 1)[1], []).append(resource["id"])
    fips = sorted((ip.id, ip.floating_ip_address, ip.port_id) for ip in conn.network.ips()
                  if ip.id in ids.get("FloatingIp", []))
    groups = sorted((g.id, g.name) for g in conn.network.security_groups() if g.id in ids.get("SecGroup", []))
    return {**objects_of(conn, lb_ids), "floating_ips": fips, "security_groups": groups,
            "recordsets": sorted(ids.get("RecordSet", [])), "rules": sorted(ids.get("SecGroupRule", []))}


def test_recovering_one_stack_leaves_the_other_stack_of_the_same_endpoint_name_untouched(twins, cloud, tmp_path):
    prod, dev = twins
    prod.up()
    before = stack_objects(cloud, prod)
    assert len(before["load_balancers"]) == 2 and len(before["members"]) == 4

    event_log = tmp_path / "killed.jsonl"
    process = dev.spawn_up(event_log)
    deadline = time.monotonic() + 300
    started = lambda: any(event.get("resourcePreEvent", {}).get("metadata", {}).get("urn", "").endswith(
        f"::{ENDPOINT}-{ZONES[-1]}-6443-listener") for event in read_events(event_log))
    while not started() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert process.poll() is None, f"the update ended before it could be interrupted:\n{process.stdout.read()}"
    PulumiStack.kill(process)
    assert dev.export_after_kill()["deployment"].get("pending_operations"), "the kill left nothing to recover"

    recovered = subprocess.run([str(REPO / ".venv/bin/python"), str(REPO / "scripts/recover.py"), "--stack",
                                dev.stack, "--cwd", str(dev.workdir)], env=dev.env, capture_output=True, text=True)
    assert recovered.returncode == 0, recovered.stdout + recovered.stderr
    assert "is consistent again" in recovered.stdout, recovered.stdout

    assert stack_objects(cloud, prod) == before, "recovering twin-dev changed an object of twin-prod"
    prod.preview("--expect-no-changes")
    dev.up()
    assert stack_objects(cloud, prod) == before


def test_a_brought_floating_ip_serving_another_port_is_refused_at_preview(pulumi_environment, cloud, swept,
                                                                          tmp_path):
    subnet = cloud.network.find_subnet("cp-az1", ignore_missing=False)
    public = cloud.network.find_network("public", ignore_missing=False)
    port = cloud.network.create_port(network_id=subnet.network_id, name=f"{ENDPOINT}-server-port",
                                     fixed_ips=[{"subnet_id": subnet.id}], device_owner="compute:nova",
                                     device_id="server-4711")
    ip = cloud.network.create_ip(floating_network_id=public.id, port_id=port.id,
                                 description=f"{ENDPOINT}-server: the address of another service")
    try:
        stack = PulumiStack.create(tmp_path / "byo", "twin-byo", pulumi_environment)
        stack.write_config(twin_config("twin-byo", 33, floating_ip=ip.floating_ip_address))
        result = stack.preview(check=False)
        assert result.returncode != 0
        assert (f"zones.az1.floatingIp: floating IP {ip.floating_ip_address} is associated with port {port.id} "
                "(device server-4711, owner compute:nova)") in result.output
        assert "takeOverFloatingIp: true" in result.output and "Traceback" not in result.output
        assert stack.resources() == []
        assert cloud.network.get_ip(ip.id).port_id == port.id, "the address stays with the service it serves"
    finally:
        cloud.network.delete_ip(ip, ignore_missing=True)
        cloud.network.delete_port(port, ignore_missing=True)


# -- make up: the verdict first; secrets of other stacks ---------------------------------------------------------------

def _stack_sh(action: str, stack: str, environment: dict, backend, **extra: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in environment.items() if key != "PULUMI_CONFIG_PASSPHRASE"}
    env.update(STACK=stack, PULUMI_BACKEND_URL=f"file://{backend}", **extra)
    return subprocess.run(["scripts/stack.sh", action], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)


def test_a_stack_other_than_dev_never_gets_the_dev_passphrase(pulumi_environment, tmp_path):
    result = _stack_sh("preview", "prod-secrets", pulumi_environment, tmp_path)
    assert result.returncode == 2
    assert "stack.sh: stack 'prod-secrets' has no secrets provider: set PULUMI_CONFIG_PASSPHRASE" in result.stderr
    assert not (tmp_path / ".pulumi").exists(), "nothing was created, not even the stack"


def test_make_up_stops_at_the_packs_mandatory_verdict_before_anything_is_created(pulumi_environment, cloud, swept,
                                                                                  tmp_path):
    """A production stack (its name matches productionStackPattern) whose listeners admit 0.0.0.0/0: `up` runs the
    preview with the pack first and stops there."""
    config = REPO / "Pulumi.prod-verdict.yaml"
    config.write_text(__import__("yaml").safe_dump(
        {"config": {"openstack:cloud": "localcloud",
                    "ha-endpoint:endpoint": twin_config("verdict-api", 34, name="verdict-api")}}))
    try:
        result = _stack_sh("up", "prod-verdict", pulumi_environment, tmp_path, PULUMI_CONFIG_PASSPHRASE="verdict")
        assert result.returncode != 0
        assert "ha-endpoint-production-listener-cidrs" in result.stdout + result.stderr
        assert "Updating (prod-verdict)" not in result.stdout, "up never started"
        assert not [lb for lb in cloud.load_balancer.load_balancers() if lb.name.startswith("verdict-api")]
        assert not [group for group in cloud.network.security_groups() if group.name.startswith("verdict-api")]
    finally:
        config.unlink(missing_ok=True)

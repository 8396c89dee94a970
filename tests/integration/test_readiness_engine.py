"""MemberReadiness and MemberDrain under the real Pulumi engine (lab/engine/, dynamic providers pickled by dill and run
in the engine's own provider process) against the local cloud.

The program registers only the two dynamic resources: the zone's load balancer, pool and members are made with
openstacksdk (no OpenStack provider plugin is needed), and their ids come in through stack config. What the engine
adds over the unit and cloud tests: the provider is pickled, stored and unpickled in another process; state holds no
secret and no credential; a second preview shows no change; deletes (drains) run after the gate's update, so an old
member is drained only once its replacement is ready; a failed gate stops the update before any drain.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from ha_endpoint.core import contract
from test_readiness_cloud import Zone, build_zone, retry

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")]

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = '''
import json

import pulumi

from ha_endpoint.gates.drain import MemberDrain
from ha_endpoint.gates.inputs import DrainInputs, ReadinessInputs
from ha_endpoint.gates.provider import MemberReadiness

cfg = pulumi.Config()
pool = cfg.require("pool")
members = json.loads(cfg.require("members"))
gate = MemberReadiness("ep-az1-ready", ReadinessInputs.declare(
    loadbalancer_id=cfg.require("lb"),
    pools={"ep-az1-6443-pool": {"pool_id": pool, "member_ids": members, "monitored": True}},
    timeout_seconds=float(cfg.get("timeout") or 60)))
for member in members:
    MemberDrain(f"ep-az1-6443-member-{member[:8]}-drain",
                DrainInputs.declare(pool_id=pool, member_id=member, drain_seconds=1),
                opts=pulumi.ResourceOptions(depends_on=[gate]))
pulumi.export("ready", gate.ready)
pulumi.export("statuses", gate.statuses)
'''


def engine_env() -> dict:
    """The environment lab/engine/env.sh sets up (PATH with the built CLI, PULUMI_HOME, no downloads).

    When the build for this checkout is missing (lab/engine/ changed since the last ``lab/engine/build.sh``), the most recent
    cached build is used: these tests exercise the dynamic-provider host, which every build carries."""
    out = subprocess.run(["bash", "-c", ". lab/engine/env.sh >/dev/null 2>&1 && env -0"], cwd=ROOT, capture_output=True)
    if out.returncode == 0:
        return dict(item.split("=", 1) for item in out.stdout.decode().split("\0") if "=" in item)
    cache = Path(os.environ.get("HA_ENDPOINT_CACHE") or Path.home() / ".cache" / "ha-endpoint")
    builds = sorted((cache / "engine").glob("*/bin/pulumi"), key=lambda p: p.stat().st_mtime)
    if not builds:
        pytest.fail("the Pulumi engine is not built: run lab/engine/build.sh (make test builds it first)")
    return {"PATH": f"{builds[-1].parent}:{os.environ['PATH']}", "PULUMI_HOME": str(cache / "pulumi-home"),
            "PULUMI_SKIP_UPDATE_CHECK": "true", "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true"}


class Project:
    """A temporary Pulumi project running PROGRAM on a file backend, with the repository importable."""

    def __init__(self, tmp: Path, program: str = PROGRAM) -> None:
        self.dir = tmp / "proj"
        self.dir.mkdir()
        venv = ROOT / ".venv"
        (self.dir / "Pulumi.yaml").write_text(
            f"name: readiness-engine\nruntime:\n  name: python\n  options:\n    virtualenv: {venv}\n")
        (self.dir / "__main__.py").write_text(program)
        (tmp / "state").mkdir()
        self.env = {**os.environ, **engine_env(), "PULUMI_BACKEND_URL": f"file://{tmp / 'state'}",
                    "PULUMI_CONFIG_PASSPHRASE": "readiness", "PULUMI_PYTHON_CMD": str(venv / "bin" / "python"),
                    "PYTHONPATH": str(ROOT)}
        self.run("stack", "init", "dev")

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        proc = subprocess.run(["pulumi", *args, "--non-interactive"], cwd=self.dir, env=self.env,
                              capture_output=True, text=True, timeout=600)
        if check and proc.returncode != 0:
            pytest.fail(f"pulumi {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
        return proc

    def configure(self, zone: Zone, members: list[str], timeout: float = 60) -> None:
        for key, value in (("lb", zone.lb_id), ("pool", zone.pool_id), ("members", json.dumps(members)),
                           ("timeout", str(timeout))):
            self.run("config", "set", key, value)

    def outputs(self) -> dict:
        return json.loads(self.run("stack", "output", "--json").stdout)


@pytest.fixture
def project(tmp_path):
    project = Project(tmp_path)
    yield project
    project.run("destroy", "--yes", check=False)


@pytest.fixture
def zone(localcloud, cloud_cleanup) -> Zone:
    return build_zone(localcloud.conn, localcloud.seed["az1_subnet_id"], cloud_cleanup.name, cloud_cleanup.add)


def weight(zone: Zone, member_id: str) -> int:
    return retry(zone.conn.load_balancer.get_member, member_id, zone.pool_id).weight


def test_up_stores_a_plain_reference_and_no_credentials_and_a_second_preview_changes_nothing(
        localcloud, zone, project):
    members = [zone.add_member() for _ in range(2)]
    project.configure(zone, members)
    project.run("up", "--yes")
    assert project.outputs() == {"ready": True, "statuses": {m: "ACTIVE/ONLINE" for m in members}}
    state = project.run("stack", "export").stdout
    deployment = json.loads(state)["deployment"]
    dynamic = [r for r in deployment["resources"] if r["type"] in (contract.READINESS_TYPE, contract.DRAIN_TYPE)]
    assert len(dynamic) == 3
    for resource in dynamic:
        serialized = resource["outputs"]["__provider"]
        assert isinstance(serialized, str), "the serialized provider is not stored as a secret"
        assert b"ha_endpoint.gates" in base64.b64decode(serialized)
    secrets = json.loads(Path(localcloud.paths.secrets).read_text())
    assert not [name for name, value in secrets.items() if value in state], "no credential in the state"
    project.run("preview", "--expect-no-changes")


def test_rollout_drains_the_old_member_only_after_its_replacement_is_online(localcloud, zone, project, cloud_cleanup):
    old, keep = zone.add_member(), zone.add_member()
    project.configure(zone, [old, keep])
    project.run("up", "--yes")

    new = zone.add_member()
    cloud_cleanup.add("member", new)
    localcloud.faults.member_down(new)
    project.configure(zone, [keep, new])
    events: dict = {}

    def watch():
        while "drained" not in events:
            if "online" not in events and zone.member_label(new) == "ACTIVE/ONLINE":
                events["online"] = time.monotonic()
            if weight(zone, old) == 0:
                events["drained"] = time.monotonic()
            time.sleep(0.1)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    release = threading.Timer(4.0, localcloud.faults.member_clear, args=(new,))
    release.start()
    project.run("up", "--yes")
    watcher.join(30)
    assert events["online"] < events["drained"], events
    assert weight(zone, keep) == 1 and weight(zone, new) == 1
    assert project.outputs()["statuses"] == {m: "ACTIVE/ONLINE" for m in sorted([keep, new])}


def test_a_failed_gate_stops_the_update_before_any_drain(localcloud, zone, project, cloud_cleanup):
    old, keep = zone.add_member(), zone.add_member()
    project.configure(zone, [old, keep])
    project.run("up", "--yes")
    new = zone.add_member()
    cloud_cleanup.add("member", new)
    localcloud.faults.member_down(new)
    zone.wait_member(new, "ACTIVE/ERROR")
    project.configure(zone, [keep, new], timeout=4)
    proc = project.run("up", "--yes", check=False)
    assert proc.returncode != 0
    output = " ".join((proc.stdout + proc.stderr).split())
    expected = (
        f"load balancer {zone.lb_id}: 1 of 2 members not ready after 4s (requirement: provisioning ACTIVE and "
        f"operating ONLINE): member {new} in pool ep-az1-6443-pool ({zone.pool_id}) is ACTIVE/ERROR. Load balancer "
        f"{zone.lb_id} is ACTIVE/DEGRADED."
    )
    assert expected in output, output[-3000:]
    assert weight(zone, old) == 1, "the old member was not drained"

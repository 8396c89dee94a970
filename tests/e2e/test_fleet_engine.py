"""The fleet command (scripts/fleet.py) on the local cloud: three stacks of one fleet directory, two endpoints and
one that its preview refuses (one zone: an HA endpoint needs two), brought up by one command two at a time; a no-op
preview over the fleet, then destroy. What a user reads: the exit status, the JSON report, and the cloud.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from localcloud.testing import Cleanup
from tests.e2e.cloud_checks import loadbalancers_named, resolve_a
from tests.e2e.pulumi_cli import CONFIG_KEY, REPO

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

PREFIX = "fleet-e2e"
MEMBERS = {"az1": ("cp-0", "10.10.1.10"), "az2": ("cp-1", "10.10.2.10"), "az3": ("cp-2", "10.10.3.10")}
FLEET = {"fleet-e2e-a": ("az1", "az2"), "fleet-e2e-b": ("az2", "az3"), "fleet-e2e-lone": ("az3",)}


def endpoint(name: str, zones: tuple[str, ...]) -> dict:
    return {
        "name": name, "loadBalancerProvider": "ovn", "floatingNetwork": "public", "allowedCidrs": ["0.0.0.0/0"],
        "zones": {az: {"subnet": f"cp-{az}"} for az in zones},
        "listeners": [{"port": 6443, "monitor": {"type": "TCP", "delay": 3, "timeout": 2, "maxRetries": 2,
                                                 "maxRetriesDown": 3}}],
        "members": [{"name": MEMBERS[az][0], "address": MEMBERS[az][1], "az": az} for az in zones],
        "memberPlacement": "own-zone",
        "dns": {"dnsZone": "example.test.", "record": name, "ttl": 30, "publish": "when-ready"},
        "readiness": {"timeoutSeconds": 300, "require": "online"},
    }


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory, pulumi_environment, localcloud):
    sweep = Cleanup(localcloud)
    sweep.prefix = PREFIX
    leftovers = sweep.run()
    assert not leftovers, leftovers
    directory = tmp_path_factory.mktemp("fleet")
    backend = tmp_path_factory.mktemp("fleet-backend")
    for name, zones in FLEET.items():
        config = {"openstack:cloud": pulumi_environment.get("OS_CLOUD", "localcloud"),
                  CONFIG_KEY: endpoint(name, zones)}
        (directory / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    environment = {**pulumi_environment, "PULUMI_BACKEND_URL": f"file://{backend}"}
    yield directory, environment
    fleet(environment, "destroy", directory)


def fleet(environment: dict, action: str, *paths, parallel: int = 2) -> tuple[int, dict, str]:
    process = subprocess.run([sys.executable, str(REPO / "scripts/fleet.py"), action, *map(str, paths),
                              "--parallel", str(parallel), "--json", "-"], cwd=REPO, env=environment,
                             capture_output=True, text=True, timeout=1200, stdin=subprocess.DEVNULL)
    report = json.loads(process.stdout) if process.stdout.strip().startswith("{") else {}
    return process.returncode, report, process.stderr


def by_stack(report: dict) -> dict[str, dict]:
    return {entry["stack"]: entry for entry in report["stacks"]}


def test_one_command_brings_up_the_fleet_and_a_refused_stack_fails_alone(fleet_dir, cloud, localcloud):
    directory, environment = fleet_dir
    code, report, stderr = fleet(environment, "up", directory)
    stacks = by_stack(report)
    assert code == 1, stderr[-3000:]  # one stack failed: the command says so
    assert stacks["fleet-e2e-lone"]["result"] == "refused", stacks["fleet-e2e-lone"]
    assert "an HA endpoint needs at least 2" in stacks["fleet-e2e-lone"]["error"]
    for name in ("fleet-e2e-a", "fleet-e2e-b"):
        assert stacks[name]["result"] == "succeeded", (stacks[name], stderr[-3000:])
        assert stacks[name]["published_zones"] == list(FLEET[name])
        assert stacks[name]["changes"].get("create", 0) > 10
        assert len(resolve_a(f"{name}.example.test.")) == 2
        assert {lb.name for lb in loadbalancers_named(cloud, f"{name}-")} == {f"{name}-{az}-lb" for az in FLEET[name]}
    assert not loadbalancers_named(cloud, "fleet-e2e-lone-")  # refused at preview: nothing created
    assert "fleet up: 2 of 3 succeeded" in stderr

    code, report, stderr = fleet(environment, "preview", directory / "Pulumi.fleet-e2e-a.yaml",
                                 directory / "Pulumi.fleet-e2e-b.yaml")
    assert code == 0, stderr[-3000:]
    assert all(entry["changes"] == {} for entry in report["stacks"]), report

    code, report, stderr = fleet(environment, "destroy", directory)
    assert code == 0, stderr[-3000:]
    assert not loadbalancers_named(cloud, f"{PREFIX}-")
    assert not resolve_a("fleet-e2e-a.example.test.")

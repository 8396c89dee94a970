"""Every example configuration the documentation shows (README.md and every page under docs/) passes the component's
validation and the whole policy pack: what the documentation promises, `make up` can do (the pack runs first and
would stop a documented configuration)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from policy_harness import run_preview, run_program_for_pack
from ha_endpoint.core.cloud_facts import AdoptedListener
from tests.mocks.adopted import capo_lb
from tests.mocks.cloud import FakeCloud
from tests.mocks.machines_api import FakeMachinesApi, machine, serving

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCKS = [(page, kind, body) for page in PAGES
          for kind, body in re.findall(r"```(yaml|python)\n(.*?)```", page.read_text(), re.S)]
YAML_EXAMPLES = [yaml.safe_load(body)["config"]["ha-endpoint:endpoint"] for _, kind, body in BLOCKS
                 if kind == "yaml" and "ha-endpoint:endpoint:" in body]
PYTHON_EXAMPLES = [(page.relative_to(ROOT), body) for page, kind, body in BLOCKS
                   if kind == "python" and "HaEndpoint(" in body]


def test_the_documentation_shows_examples():
    """The configuration page's example of every kind of key, and the Python example of the usage page."""
    assert YAML_EXAMPLES and PYTHON_EXAMPLES
    assert {str(page) for page, _ in PYTHON_EXAMPLES} >= {"docs/usage.md"}


@pytest.mark.parametrize("endpoint", YAML_EXAMPLES, ids=lambda e: e["name"])
@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_each_configuration_example_passes_validation_and_the_pack(endpoint, preview, tmp_path):
    source = (endpoint.get("memberSources") or {}).get("clusterApi")
    if source is None:
        assert run_preview(endpoint, _cloud_for(endpoint, preview), preview=preview).violations() == []
        return
    # members from Cluster API machines: a management cluster (tests/mocks/machines_api.py) with one control-plane
    # Machine of the example's cluster in each zone, on the zone's subnet of the fake cloud (10.10.<n>.0/24)
    machines = [machine(f"{source['cluster']}-cp-{n}", az, f"10.10.{n}.30", cluster=source["cluster"],
                        namespace=source.get("namespace", "default"))
                for n, az in enumerate(sorted(endpoint["zones"]), start=1)]
    with serving(FakeMachinesApi(machines), tmp_path) as kubeconfig:
        example = {**endpoint, "memberSources": {"clusterApi": {**source, "kubeconfig": str(kubeconfig)}}}
        run = run_preview(example, preview=preview)
    assert run.violations() == []
    assert sorted(run.facts()["members"]) == sorted(m["metadata"]["name"] for m in machines)


def _cloud_for(endpoint: dict, preview: bool) -> FakeCloud:
    """The fake cloud, holding the load balancer an example adopts (docs/adoption.md) in CAPO's shape on the
    example's provider, with a listener, pool and monitor of the example's first listener."""
    cloud = FakeCloud.dev(preview=preview)
    for az, zone in endpoint["zones"].items():
        if "adopt" in zone:
            listener = endpoint["listeners"][0]
            ovn = endpoint.get("loadBalancerProvider") == "ovn"
            capo_lb(cloud, zone["adopt"]["loadBalancer"], provider=endpoint.get("loadBalancerProvider", "amphora"),
                    availability_zone=None if ovn else az, vip_subnet_id=cloud.subnet_id(zone["subnet"]),
                    listeners=(AdoptedListener("listener-1", listener["port"], "TCP", "pool-1", "TCP", "monitor-1",
                                               listener["monitor"]["type"]),))
    return cloud


@pytest.mark.parametrize("page, source", PYTHON_EXAMPLES, ids=[f"python-{n}" for n in range(len(PYTHON_EXAMPLES))])
def test_each_python_example_runs_and_passes_the_pack(page, source):
    run = run_program_for_pack(lambda: exec(compile(source, str(page), "exec"), {}), FakeCloud.dev(preview=True))
    assert any(r.type == "haendpoint:index:HaEndpoint" for r in run.registrations)
    assert run.violations() == []

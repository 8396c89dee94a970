"""The dev stack as `make up` runs it (Pulumi.dev.yaml: the ovn provider on the local cloud's data plane) and the
amphora shape beside it (Pulumi.amphora.yaml): each file, as it is, builds under the fake cloud and passes the whole
policy pack; the dev stack's load balancers are ovn ones, with TCP monitors and no AZ pinned (what the real provider
takes: tests/e2e/test_ovn_engine.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ha_endpoint.core import contract
from tests.policies.policy_harness import run_preview

ROOT = Path(__file__).resolve().parents[2]


def endpoint_of(stack_file: str) -> dict:
    return yaml.safe_load((ROOT / stack_file).read_text())["config"]["ha-endpoint:endpoint"]


@pytest.mark.parametrize("stack_file", ["Pulumi.dev.yaml", "Pulumi.amphora.yaml"])
@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_the_stack_file_passes_the_whole_pack(stack_file, preview):
    run = run_preview(endpoint_of(stack_file), preview=preview)
    assert run.violations() == []


def test_the_dev_stack_runs_ovn_load_balancers_with_tcp_monitors_and_no_availability_zone():
    run = run_preview(endpoint_of("Pulumi.dev.yaml"), preview=False)
    lbs = [r for r in run.registrations if r.type == contract.LOADBALANCER_TYPE]
    assert len(lbs) == 3
    assert {lb.inputs.get("loadbalancerProvider") for lb in lbs} == {"ovn"}
    assert all(not lb.inputs.get("availabilityZone") for lb in lbs)
    monitors = [r for r in run.registrations if r.type == contract.MONITOR_TYPE]
    assert monitors and {m.inputs["type"] for m in monitors} == {"TCP"}

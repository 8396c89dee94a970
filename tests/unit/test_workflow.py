"""The pull-request workflow users copy (.github/workflows/preview.yml) cannot be turned against them."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

WORKFLOW = Path(__file__).resolve().parents[2] / ".github/workflows/preview.yml"


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def _steps() -> list[dict]:
    return [step for job in _workflow()["jobs"].values() for step in job["steps"]]


def test_every_action_is_pinned_by_commit():
    uses = [step["uses"] for step in _steps() if "uses" in step]
    assert uses and all(re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", use) for use in uses), uses


def test_the_pack_that_judges_a_pull_request_comes_from_the_base_branch():
    steps = _steps()
    base = [step for step in steps if step.get("with", {}).get("path") == "base"]
    assert base and base[0]["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    preview = next(step for step in steps if step.get("id") == "preview")
    assert "--policy-pack base/policies" in preview["run"] and "--policy-pack policies" not in preview["run"]


def test_code_from_forks_never_gets_the_credentials():
    workflow = _workflow()
    triggers = workflow.get(True, workflow.get("on"))  # YAML 1.1 reads `on` as True
    assert "pull_request_target" not in triggers and "pull_request" in triggers
    job = workflow["jobs"]["preview"]
    assert job["if"] == "github.event.pull_request.head.repo.full_name == github.repository"
    assert all(step.get("with", {}).get("persist-credentials") is False
               for step in job["steps"] if "actions/checkout@" in step.get("uses", ""))


def test_the_cli_is_a_pinned_release_checked_against_its_checksum():
    install = next(step["run"] for step in _steps() if "Pulumi CLI" in step.get("name", ""))
    assert "sha256sum --check" in install and _workflow()["env"]["PULUMI_VERSION"] == "3.272.0"

"""Every example configuration README.md shows passes the component's validation and the whole policy pack: what the
documentation promises, `make up` can do (the pack runs first and would stop a documented configuration)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from policy_harness import run_preview, run_program_for_pack
from tests.mocks.cloud import FakeCloud

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()
BLOCKS = re.findall(r"```(yaml|python)\n(.*?)```", README, re.S)
YAML_EXAMPLES = [yaml.safe_load(body)["config"]["ha-endpoint:endpoint"] for kind, body in BLOCKS
                 if kind == "yaml" and "ha-endpoint:endpoint:" in body]
PYTHON_EXAMPLES = [body for kind, body in BLOCKS if kind == "python" and "HaEndpoint(" in body]


def test_the_readme_shows_examples():
    assert YAML_EXAMPLES and PYTHON_EXAMPLES


@pytest.mark.parametrize("endpoint", YAML_EXAMPLES, ids=lambda e: e["name"])
@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_each_configuration_example_passes_validation_and_the_pack(endpoint, preview):
    assert run_preview(endpoint, preview=preview).violations() == []


@pytest.mark.parametrize("source", PYTHON_EXAMPLES, ids=lambda s: f"python-{PYTHON_EXAMPLES.index(s)}")
def test_each_python_example_runs_and_passes_the_pack(source):
    run = run_program_for_pack(lambda: exec(compile(source, "README.md", "exec"), {}), FakeCloud.dev(preview=True))
    assert any(r.type == "haendpoint:index:HaEndpoint" for r in run.registrations)
    assert run.violations() == []

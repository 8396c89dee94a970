"""The fleet command (scripts/fleet.py) without the engine: which stacks a run takes, shards, secrets, the report,
and one stack's failure not stopping the others. Its real runs (two stacks on the local cloud) are
tests/e2e/test_fleet_engine.py's."""

from __future__ import annotations

import importlib.util
import json
import sys
import threading
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[2] / "scripts/fleet.py"


def load():
    if "fleet" not in sys.modules:
        spec = importlib.util.spec_from_file_location("fleet", PATH)
        module = importlib.util.module_from_spec(spec)
        sys.modules["fleet"] = module
        spec.loader.exec_module(module)
    return sys.modules["fleet"]


fleet = load()


def stack_files(directory: Path, *names: str, secrets_provider: bool = False) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:
        (directory / f"Pulumi.{name}.yaml").write_text(
            ("secretsprovider: hashivault://x\n" if secrets_provider else "") + "config: {}\n")
    return directory


def test_a_directory_gives_its_stack_files_and_a_file_itself(tmp_path):
    stack_files(tmp_path / "a", "one", "two")
    (tmp_path / "a" / "Pulumi.yaml").write_text("name: ha-endpoint\n")
    other = stack_files(tmp_path / "b", "three") / "Pulumi.three.yaml"
    stacks = fleet.find_stacks([str(tmp_path / "a"), str(other)])
    assert [(s.name, s.directory.name) for s in stacks] == [("one", "a"), ("three", "b"), ("two", "a")]


def test_bad_paths_are_all_named_and_nothing_runs(tmp_path):
    stack_files(tmp_path / "a", "one")
    stack_files(tmp_path / "b", "one")
    (tmp_path / "empty").mkdir()
    (tmp_path / "c").mkdir()
    stack_files(tmp_path / "c", "x")
    (tmp_path / "c" / "Pulumi.yaml").write_text("name: someone-else\n")
    with pytest.raises(fleet.FleetError) as error:
        fleet.find_stacks([str(tmp_path / "a"), str(tmp_path / "b"), str(tmp_path / "empty"),
                           str(tmp_path / "nope.yaml"), str(tmp_path / "c")])
    message = str(error.value)
    assert "stack 'one' is given twice" in message and "rename one file" in message
    assert "empty: no stack file" in message
    assert "nope.yaml: not a stack file" in message
    assert "a project other than 'ha-endpoint'" in message


def test_shards_split_the_fleet_without_overlap(tmp_path):
    stacks = fleet.find_stacks([str(stack_files(tmp_path, *(f"s{i}" for i in range(7))))])
    shards = [fleet.shard(stacks, f"{k}/3") for k in (1, 2, 3)]
    assert sorted(s.name for part in shards for s in part) == sorted(s.name for s in stacks)
    assert [len(part) for part in shards] == [3, 2, 2]
    for bad in ("0/3", "4/3", "x", "1-3"):
        with pytest.raises(fleet.FleetError, match="give K/N with 1 <= K <= N"):
            fleet.shard(stacks, bad)


def test_a_stack_without_a_way_to_its_secrets_is_named(tmp_path):
    stacks = fleet.find_stacks([str(stack_files(tmp_path / "p", "plain")),
                                str(stack_files(tmp_path / "v", "vault", secrets_provider=True))])
    with pytest.raises(fleet.FleetError, match=r"Pulumi.plain.yaml: set PULUMI_CONFIG_PASSPHRASE") as error:
        fleet.check_secrets(stacks, {})
    assert "vault" not in str(error.value)
    fleet.check_secrets(stacks, {"PULUMI_CONFIG_PASSPHRASE": ""})  # an empty passphrase is a passphrase
    fleet.check_secrets(stacks[1:], {})


def test_published_zones_and_the_reason_of_a_failure():
    class Value:
        def __init__(self, value):
            self.value = value
    zones = {"az1": {"published": True}, "az2": {"published": False, "notReadyReason": "x"}, "az3": {"published": 1}}
    assert fleet.published_zones({"zones": Value(zones)}) == ["az1", "az3"]
    assert fleet.published_zones({}) == []
    text = "Updating (x)\n  pulumi:pulumi:Stack ...\nerror: update failed\n   more\n"
    assert fleet.first_error(text) == "error: update failed"
    assert fleet.first_error("a\nlast words\n") == "last words"


def test_one_failed_stack_leaves_the_others_running_and_fails_the_command(tmp_path, monkeypatch, capsys):
    directory = stack_files(tmp_path, "a", "b", "c")
    (directory / "Pulumi.yaml").write_text("name: ha-endpoint\n")
    ran = []
    lock = threading.Lock()

    def run_stack(action, stack, outcome, _lock):
        with lock:
            ran.append(stack.name)
        if stack.name == "b":
            outcome.result, outcome.error = "failed", "error: the cloud said no"
        else:
            outcome.result, outcome.changes, outcome.published_zones = "succeeded", {"create": 3}, ["az1"]
        outcome.seconds = 1.0

    monkeypatch.setattr(fleet, "run_stack", run_stack)
    monkeypatch.setattr(fleet, "workspace", lambda directory: None)
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "x")
    report_file = tmp_path / "report.json"
    assert fleet.main(["up", str(directory), "--parallel", "2", "--json", str(report_file)]) == 1
    assert sorted(ran) == ["a", "b", "c"]
    report = json.loads(report_file.read_text())
    assert (report["succeeded"], report["failed"]) == (2, 1)
    assert {s["stack"]: s["result"] for s in report["stacks"]} == {"a": "succeeded", "b": "failed", "c": "succeeded"}
    out = capsys.readouterr().out
    assert "fleet up: 2 of 3 succeeded" in out and "the cloud said no" in out


def test_usage_errors_exit_2_before_anything_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(fleet, "run", lambda *a: pytest.fail("nothing may run"))
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE", raising=False)
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE_FILE", raising=False)
    assert fleet.main(["preview", str(stack_files(tmp_path, "a"))]) == 2
    assert "set PULUMI_CONFIG_PASSPHRASE" in capsys.readouterr().err

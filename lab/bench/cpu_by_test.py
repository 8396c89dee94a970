"""What each test costs the machine's cores, run one at a time (issue 53: which tests the suite's budget goes to).

    .venv/bin/python lab/bench/cpu_by_test.py tests/e2e/test_engine_lifecycle.py tests/e2e/test_fleet_engine.py
    .venv/bin/python lab/bench/cpu_by_test.py --json cpu.jsonl -- tests/e2e -k "not k8s"

`make test` keeps both cores busy, so its wall time follows the CPU its tests cost, and a test's own duration there
says more about its neighbours than about itself (an `up` of the dev shape took 149 s in the suite and 31 s alone).
This runs the given tests in one pytest process, without workers, and reads the machine's busy CPU seconds
(/proc/stat: every process, the local cloud's services included) before and after each test, setup and teardown
included: on an otherwise idle machine that is what the test costs. A started local cloud idles at about 0.07 of a
core, which each row includes. Arguments after the options (or after ``--``) go to pytest as they are; scripts/env.sh
must have been sourced for the e2e tier (the engine on PATH), as for pytest by hand.

Prints one row per test (CPU seconds, wall seconds, cores busy), the costliest first, and the totals per file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab")]

from bench.lib.machine import machine_cpu_seconds  # noqa: E402


class Plugin:
    """A pytest plugin: the machine's busy seconds and the wall time from each test's start to its end."""

    def __init__(self, out: Path):
        self.out, self.started = out, {}

    def pytest_runtest_logstart(self, nodeid, location):
        self.started[nodeid] = (machine_cpu_seconds(), time.monotonic())

    def pytest_runtest_logfinish(self, nodeid, location):
        cpu, wall = self.started.pop(nodeid)
        with self.out.open("a") as rows:
            rows.write(json.dumps({"test": nodeid, "cpu": round(machine_cpu_seconds() - cpu, 1),
                                   "wall": round(time.monotonic() - wall, 1)}) + "\n")


def run_pytest(out: Path, arguments: list[str]) -> int:
    """pytest in this process, one test at a time (no xdist workers), with :class:`Plugin` writing to ``out``."""
    import pytest

    return int(pytest.main(["-p", "no:cacheprovider", "-n", "0", "-q", *arguments], plugins=[Plugin(out)]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="also keep the rows here (JSON lines)")
    options, pytest_arguments = parser.parse_known_args()
    pytest_arguments = [a for a in pytest_arguments if a != "--"]
    if not pytest_arguments:
        parser.error("name the tests to run (pytest's arguments)")
    with tempfile.TemporaryDirectory() as tmp:
        out = options.json or Path(tmp) / "rows.jsonl"
        out.write_text("")
        code = run_pytest(out, pytest_arguments)
        rows = [json.loads(line) for line in out.read_text().splitlines() if line]
    print(f"\n{'CPU s':>7} {'wall s':>7} {'cores':>5}  test (pytest exit {code}; run one at a time, machine-wide CPU)")
    for row in sorted(rows, key=lambda row: -row["cpu"]):
        cores = row["cpu"] / row["wall"] if row["wall"] else 0.0
        print(f"{row['cpu']:7.1f} {row['wall']:7.1f} {cores:5.2f}  {row['test']}")
    files: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for row in rows:
        files[row["test"].split("::")[0]][0] += row["cpu"]
        files[row["test"].split("::")[0]][1] += row["wall"]
    print(f"\n{'CPU s':>7} {'wall s':>7}  file")
    for name, (cpu, wall) in sorted(files.items(), key=lambda item: -item[1][0]):
        print(f"{cpu:7.1f} {wall:7.1f}  {name}")
    print(f"{sum(c for c, _ in files.values()):7.1f} {sum(w for _, w in files.values()):7.1f}  all")
    return code


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())

"""`make test-unit` against its budget (issue 53: at most 60 s on this 2-core machine): wall time, CPU time and load.

The machine is shared (other checkouts' suites and clouds run beside this one), so a wall time alone says little:
each round prints the load average before and after it and the CPU-seconds `make test-unit` and everything it started
used (user + system), which other processes' load changes much less. To compare two revisions, run this script on
each, one after the other (a checkout of the older revision can run this file from a copy outside the tree: it only
runs `make test-unit` in the directory given).

Prints one line per round and the medians:
  round  wall s  CPU s  passed  load before (1, 5, 15 min)  load after

Run: .venv/bin/python lab/bench/unit_budget_figures.py [--rounds N] [--repo DIR]   (the first round also installs what
`make test-unit` installs when it is missing; its figures say so only through its wall time)
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUDGET_SECONDS = 60.0


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def run_once(repo: Path) -> tuple[float, float, int, str, str]:
    """(wall s, CPU s of make and its children, tests passed, load before, load after) of one `make test-unit`."""
    before_load = load()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(["make", "--no-print-directory", "test-unit"], cwd=repo, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"make test-unit failed in {repo} (exit {done.returncode}); its last lines:\n{done.stdout[-3000:]}"
                 f"{done.stderr[-2000:]}")
    passed = re.search(r"(\d+) passed", done.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, int(passed.group(1)) if passed else 0, before_load, load()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout whose `make test-unit` runs")
    args = parser.parse_args()
    print(f"make test-unit in {args.repo} on {os.cpu_count()} cores (budget {BUDGET_SECONDS:.0f} s)")
    print(f"{'round':>5} {'wall s':>7} {'CPU s':>7} {'passed':>6}  {'load before':<17} load after")
    rows = []
    for index in range(1, args.rounds + 1):
        wall, cpu, passed, before_load, after_load = run_once(args.repo)
        rows.append((wall, cpu))
        print(f"{index:5d} {wall:7.1f} {cpu:7.1f} {passed:6d}  {before_load:<17} {after_load}", flush=True)
    wall = statistics.median(w for w, _ in rows)
    cpu = statistics.median(c for _, c in rows)
    print(f"median: {wall:.1f} s wall ({wall / BUDGET_SECONDS:.2f} of the budget), {cpu:.1f} CPU-seconds "
          f"({cpu / (os.cpu_count() or 1):.1f} s if every core ran it alone and never waited)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

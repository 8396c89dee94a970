"""What a running local cloud costs the cores at idle, by service, over a window.

    .venv/bin/python lab/bench/cloud_idle_figures.py                  # 120 s window, the current cloud
    .venv/bin/python lab/bench/cloud_idle_figures.py --seconds 60 --json

Each service's CPU-seconds are read at the start and at the end of the window (:mod:`bench.lib.cloud_cpu`: every
process below a PID file of the cloud's ``run`` directory, with its children that exited) and the differences
printed per service, with the machine's busy CPU (:mod:`bench.lib.machine`) over the same window beside them, so
what is not the cloud's shows as the rest. Run it on a cloud that has settled (a minute after ``up``) with nothing
else busy: what it prints is the cloud's idle cost, which ``make test`` pays once per cloud (up to three) for the whole
run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab")]

from bench.lib.cloud_cpu import service_cpu_seconds  # noqa: E402
from bench.lib.machine import machine_cpu_seconds  # noqa: E402


def sample(seconds: float) -> dict:
    """The window's length, the machine's busy CPU-seconds and each service's, costliest first."""
    machine0, started, before = machine_cpu_seconds(), time.monotonic(), service_cpu_seconds()
    time.sleep(seconds)
    machine1, ended, after = machine_cpu_seconds(), time.monotonic(), service_cpu_seconds()
    used = {name: total - before.get(name, 0.0) for name, total in after.items()}
    return {"seconds": round(ended - started, 1), "machine_busy": round(machine1 - machine0, 2),
            "services": {name: round(cpu, 2) for name, cpu in sorted(used.items(), key=lambda item: -item[1])}}


def print_table(result: dict) -> None:
    window = result["seconds"]
    print(f'{"service":26} {"CPU-s":>7} {"% core":>7}   ({window:.0f} s window)')
    total = sum(result["services"].values())
    for name, cpu in result["services"].items():
        print(f"{name:26} {cpu:7.2f} {100 * cpu / window:6.2f}%")
    print(f'{"the cloud, total":26} {total:7.2f} {100 * total / window:6.2f}%')
    busy = result["machine_busy"]
    print(f'{"machine busy (/proc/stat)":26} {busy:7.2f} {100 * busy / window:6.2f}%')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    options = parser.parse_args()
    result = sample(options.seconds)
    print_table(result)
    if options.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Where octavia-api's request threads spend their time: a summary of a py-spy profile taken while a fleet runs.

Record octavia-api's uWSGI worker (the child of the master, `pgrep -f 'uwsgi.*9876'`: the higher PID) while
`lab/bench/fleet_figures.py` runs, with py-spy (PyPI; not a project dependency: a venv of its own), idle threads
included, in py-spy's raw (collapsed) format; then summarise it:

    python3 -m venv /tmp/pyspy && /tmp/pyspy/bin/pip install py-spy
    .venv/bin/python lab/bench/fleet_figures.py --sizes 1 8 --no-serial &
    /tmp/pyspy/bin/py-spy record --pid <worker> --idle --threads --format raw --rate 20 --duration 420 \
        --nonblocking -o /tmp/octavia-api.collapsed
    .venv/bin/python lab/bench/octavia_profile_summary.py /tmp/octavia-api.collapsed

It prints, for the request threads' samples that have a Python frame (the rest wait in uWSGI for a request): the
thread-seconds per kind of wait (the provider's work the request waits for, MySQL, Keystone), and per API
controller the Octavia frame it waited in. Samples are counted at the rate given (`--rate`, default 20 per second).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter

DIST = re.compile(r" \(/usr/lib/python3/dist-packages/")


def short(frame: str) -> str:
    return DIST.sub(" (", frame)


def summarise(lines, rate: float) -> tuple[Counter, Counter]:
    kinds: Counter = Counter()
    waits: Counter = Counter()
    for line in lines:
        stack, _, count = line.rstrip().rpartition(" ")
        if not count.isdigit():
            continue
        frames, n = stack.split(";"), int(count)
        if "uWSGIWorker" not in frames[0] or len(frames) <= 1:
            continue
        seconds = n / rate
        if "OvnProviderDriver.__del__" in stack:
            kinds["the provider's work (OvnProviderDriver.__del__ joins its helper thread)"] += seconds
            continue
        kinds["MySQL" if "pymysql" in stack else "Keystone (auth_token)" if "keystonemiddleware" in stack
              else "other"] += seconds
        controllers = [f for f in frames if "/controllers/" in f]
        octavia = [f for f in frames if "(octavia/" in short(f)]
        if controllers:
            waits[(short(controllers[0]).split(" (")[0], short(octavia[-1]) if octavia else short(frames[-1]))] += \
                seconds
    return kinds, waits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile", help="py-spy record --format raw output")
    parser.add_argument("--rate", type=float, default=20.0, help="the --rate it was recorded at")
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args(argv)
    with open(args.profile) as lines:
        kinds, waits = summarise(lines, args.rate)
    busy = sum(kinds.values())
    print(f"octavia-api request threads, with a Python frame: {busy:.0f} thread-seconds")
    print("\n| where | thread-seconds | share |\n| --- | --- | --- |")
    for kind, seconds in kinds.most_common():
        print(f"| {kind} | {seconds:.0f} | {seconds / busy:.0%} |")
    print("\n| controller | waiting in | thread-seconds |\n| --- | --- | --- |")
    for (controller, frame), seconds in waits.most_common(args.top):
        print(f"| {controller} | `{frame}` | {seconds:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

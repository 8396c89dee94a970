"""What the DNS watcher's polls cost the local cloud, this checkout beside another revision.

    . scripts/env.sh; .venv/bin/python lab/bench/watcher_figures.py --against REV [--seconds 45] [--interval 1] [--rounds 2]
    (after `make up`)

Users run the watcher for as long as the endpoint lives (``python -m ha_endpoint.watch``, or in a cluster:
docs/kubernetes.md), so each of its polls is paid again every ``--interval`` seconds (5 by default) for ever. This
runs the real watcher (``--dry-run --no-reach``: it reads the cloud and writes nothing; no connect to the zones'
addresses, which costs the cloud nothing) on the dev stack's outputs, from this checkout and from ``REV`` (``git
archive`` into a temporary directory, ``PYTHONPATH`` first), alternated, ``--rounds`` windows of ``--seconds`` each,
and prints the cloud's CPU-seconds per window (its own processes only: lab/bench/lib/cloud_cpu.py) and per poll.
Run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab")]

from bench.import_figures import tree_environment  # noqa: E402
from bench.lib.cloud_cpu import costliest, service_cpu_seconds, used_since  # noqa: E402
from bench.up_cost_figures import revision_tree, revisions  # noqa: E402


def window(name: str, env: dict, outputs: str, seconds: float, interval: float) -> None:
    """One watcher from ``env``'s package for ``seconds``; prints its row."""
    before, started = service_cpu_seconds(), time.monotonic()
    watcher = subprocess.Popen([sys.executable, "-m", "ha_endpoint.watch", "--outputs", "-", "--cloud", "localcloud",
                                "--dry-run", "--no-reach", "--interval", str(interval)], cwd=ROOT, env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    watcher.stdin.write(outputs)
    watcher.stdin.close()
    time.sleep(seconds)
    watcher.send_signal(signal.SIGTERM)
    log = watcher.stdout.read()  # it logs a line per change, so the pipe never fills meanwhile
    watcher.wait(timeout=30)
    used, wall = used_since(before), time.monotonic() - started
    if "stopped" not in log:
        raise SystemExit(f"the watcher of {name} did not run to its stop:\n{log}")
    polls = int(wall / interval)  # its cadence is steady: a poll every interval (watch/watcher.py)
    cloud = sum(used.values())
    print(f"| {name} | {polls} | {cloud:.1f} | {cloud / polls * 1000:.0f} | {costliest(used, 3)} |", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", required=True, help="the revision to compare this checkout with (e.g. HEAD~1)")
    parser.add_argument("--seconds", type=float, default=45.0, help="length of each window (default 45)")
    parser.add_argument("--interval", type=float, default=1.0, help="the watcher's --interval (default 1)")
    parser.add_argument("--rounds", type=int, default=2, help="windows of each revision, alternated (default 2)")
    args = parser.parse_args(argv)
    revision, here = revisions(args.against)
    outputs = subprocess.run([str(ROOT / "scripts/stack.sh"), "outputs"], cwd=ROOT, check=True, capture_output=True,
                             text=True).stdout
    zones = json.loads(outputs)["zones"]
    pools = sum(len(zone.get("poolIds") or {}) for zone in zones.values())
    with tempfile.TemporaryDirectory(prefix="watcher-figures-") as scratch:
        trees = {f"this checkout ({here})": ROOT, revision: revision_tree(revision, Path(scratch) / "tree")}
        print(f"the DNS watcher on the dev stack ({len(zones)} zones, {pools} pools), --interval {args.interval:g}, "
              f"{args.seconds:.0f} s per window, {args.rounds} round(s) alternated")
        print("| watcher | polls | cloud CPU-s | cloud CPU ms per poll | costliest services (CPU-s) |")
        print("| --- | --- | --- | --- | --- |")
        for _ in range(args.rounds):
            for name, tree in trees.items():
                window(name, tree_environment(tree), outputs, args.seconds, args.interval)
    return 0


if __name__ == "__main__":
    sys.exit(main())

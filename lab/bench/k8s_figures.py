"""What the local Kubernetes control plane costs (issue 28, lab/localcloud/k8s).

Prints:
  - the builds of the Kubernetes parts (lab/engine/build.sh --k8s: etcd, kube-apiserver + kubectl, the pulumi-kubernetes
    plugin): as recorded when each was built (its BUILD_INFO: wall and CPU seconds; which Go caches were warm then
    is not recorded: lab/engine/README.md has the measured cold run), the cached path measured now, and with --cold
    all three built now from empty Go caches in temp dirs (GOMODCACHE, GOCACHE, HA_ENDPOINT_CACHE: 17 min measured on 2 shared cores);
  - the cluster: three etcd members and three kube-apiservers on 127.0.0.1 started in a temp dir, the time until
    every member is healthy and every API server ready, each process's RSS and PSS and their totals, the time to
    stop them; with --rounds N, N clusters one after another (medians of the start times).

Run: .venv/bin/python lab/bench/k8s_figures.py [--cold] [--rounds N]     (no cloud needed)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab")]

from localcloud.k8s import cluster, layout  # noqa: E402


def part_dirs(env: dict[str, str] | None = None) -> tuple[float, list[Path]]:
    """(seconds, the parts' cache dirs) of `lab/engine/build.sh --k8s` (builds what is missing)."""
    started = time.monotonic()
    done = subprocess.run([str(ROOT / "lab" / "engine" / "build.sh"), "--k8s"], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=True, timeout=7200)
    return time.monotonic() - started, [Path(line) for line in done.stdout.split()]


def recorded(dirs: list[Path]) -> list[str]:
    return [(part / "BUILD_INFO").read_text().splitlines()[0] for part in dirs]


def builds(cold: bool) -> None:
    seconds, dirs = part_dirs()
    print("builds of the Kubernetes parts (lab/engine/build.sh --k8s):")
    for line in recorded(dirs):
        print(f"  as built: {line}")
    print(f"  cached (nothing to build): {seconds:.2f} s")
    if cold:
        with tempfile.TemporaryDirectory(prefix="k8s-cold-") as scratch:
            env = {**os.environ, "GOMODCACHE": f"{scratch}/mod", "GOCACHE": f"{scratch}/build",
                   "HA_ENDPOINT_CACHE": f"{scratch}/cache"}
            seconds, cold_dirs = part_dirs(env)
            for line in recorded(cold_dirs):
                print(f"  cold: {line}")
            print(f"  cold, all three (empty GOMODCACHE and GOCACHE): {seconds:.1f} s")
            subprocess.run(["chmod", "-R", "u+w", scratch], check=False)  # the module cache is read-only


def mib(value: float) -> str:
    return f"{value / 1048576:.0f} MiB"


def one_cluster(bins: cluster.Binaries, state: Path) -> float:
    plan = cluster.local_layout("bench", state)
    layout.save(plan)
    try:
        started = cluster.up(plan, bins)
        usage = cluster.memory(plan)
        print(f"  ready in {started.seconds:.1f} s: etcd x3 healthy {started.etcd_seconds:.1f} s, then "
              f"kube-apiserver x3 ready {started.api_seconds:.1f} s")
        for program in ("etcd", "kube-apiserver"):
            mine = [u for u in usage if u.program == program]
            print(f"  {program:14} x{len(mine)}: RSS {' + '.join(mib(u.rss) for u in mine)} = "
                  f"{mib(sum(u.rss for u in mine))}; PSS {mib(sum(u.pss for u in mine))}")
        print(f"  total: RSS {mib(sum(u.rss for u in usage))}, PSS {mib(sum(u.pss for u in usage))}")
        return started.seconds
    finally:
        stopping = time.monotonic()
        cluster.down(plan)
        print(f"  stopped in {time.monotonic() - stopping:.1f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cold", action="store_true", help="also build the parts from empty Go caches")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    builds(args.cold)
    bins = cluster.binaries()
    sizes = {path.name: path.stat().st_size for path in (bins.etcd, bins.kube_apiserver, bins.kubectl, bins.provider)}
    print("binaries: " + ", ".join(f"{name} {mib(size)}" for name, size in sizes.items()))
    times = []
    for round_ in range(args.rounds):
        print(f"cluster (3 etcd members + 3 kube-apiservers on 127.0.0.1), round {round_ + 1}:")
        with tempfile.TemporaryDirectory(prefix="k8s-bench-") as state:
            times.append(one_cluster(bins, Path(state)))
    if args.rounds > 1:
        print(f"start time: median {statistics.median(times):.1f} s, min {min(times):.1f} s, max {max(times):.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

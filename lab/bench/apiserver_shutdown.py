"""What a kept connection gets from a kube-apiserver being stopped: `/readyz` against a read of an object.

The rollout's clients (tests/e2e/rollout.py `REQUEST`) read an object, not `/readyz`. This prints why, measured: one
kube-apiserver v1.34.4 (and its etcd) on 127.0.0.1 (lab/localcloud/k8s), two client-go loops on kept connections
(lab/bench/failover/clientgo, one clientset each, a request every millisecond), one GETting `/readyz`, one the `default`
Namespace, as the cluster's admin. The API server is stopped (SIGTERM, as the rollout's kcp-cleanup step does) while
both loop; per path, what the stopping server did with the requests sent between the SIGTERM and its exit: answered,
answered with an error, or (its listener closed) none (a new connection, which in a rollout the endpoint sends to
another server). Repeated `--runs` times.

    .venv/bin/python lab/bench/apiserver_shutdown.py [--runs 3] [--delays 0 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab"), str(ROOT / "components")]

from localcloud import procs  # noqa: E402
from localcloud.k8s import cluster, layout as layouts  # noqa: E402
from tests.e2e.k8s_clients import build_client_go  # noqa: E402
from tests.e2e.rollout import REQUEST  # noqa: E402

PATHS = ("/readyz", REQUEST)


def kind(line: dict) -> str:
    """What the stopping server did with one request: answered it ("ok"), answered it with an error (its /readyz
    500 names the failing checks), or was not there to connect to (its listener closed: in a rollout the endpoint
    sends that new connection to another server, so it is not counted)."""
    if line["ok"]:
        return "ok"
    error = line.get("error", "")
    if "dial tcp" in error or "connection refused" in error:
        return "no listener"
    return "[-]shutdown" if "[-]shutdown" in error + line.get("answer", "") else "error: " + error[:80]


def one_run(layout, bins, client_go: Path, work: Path, run: int, delay: float) -> dict[str, Counter]:
    credentials = cluster.certificates(layout)
    cluster.up(layout, bins)
    node = layout.nodes[0]
    if delay:   # started again with the flag (kubeadm sets none: 0, the lab's)
        cluster.stop_process(layout, node, "kube-apiserver")
        argv = [*cluster.apiserver_argv(layout, node, bins.kube_apiserver), f"--shutdown-delay-duration={delay}s"]
        procs.start(f"kube-apiserver {node.name}", argv, layout.pidfile(node, "kube-apiserver"),
                    layout.log(node, "kube-apiserver"), cwd=layout.node_dir(node))
        cluster.wait_until(lambda: cluster.api_ready(node, credentials), "kube-apiserver", 120)
    loops = {}
    for i, path in enumerate(PATHS):
        lines = work / f"run{run}-{i}.jsonl"
        out = lines.open("w")
        loops[path] = (subprocess.Popen([str(client_go), "-kubeconfig", str(layout.kubeconfig), "-duration", "120s",
                                         "-interval", "1ms", "-path", path], stdout=out, stderr=subprocess.STDOUT),
                       out, lines, time.monotonic())
    time.sleep(3)
    stopping = time.monotonic()
    cluster.stop_process(layout, node, "kube-apiserver")   # SIGTERM; returns once it exited
    exited = time.monotonic()
    time.sleep(0.5)
    counts: dict[str, Counter] = {}
    for path, (process, out, lines, began) in loops.items():
        process.terminate()
        process.wait(30)
        out.close()
        counted = Counter()
        for text in lines.read_text().splitlines():
            try:
                line = json.loads(text)
            except ValueError:
                continue
            if stopping - began <= line["start"] and line["end"] <= exited - began:
                counted[kind(line)] += 1
        counts[path] = counted
    cluster.down(layout)
    print(f"shutdown delay {delay:g} s, run {run + 1}: the API server exited {exited - stopping:.1f} s after SIGTERM",
          flush=True)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--delays", type=float, nargs="+", default=[0.0, 3.0],
                        help="kube-apiserver --shutdown-delay-duration values, in seconds (0: kubeadm's default)")
    args = parser.parse_args(argv)
    bins = cluster.binaries()
    cache = Path(os.environ.get("HA_ENDPOINT_CACHE", Path.home() / ".cache" / "ha-endpoint"))
    client_go = build_client_go(cache)
    work = Path(tempfile.mkdtemp(prefix="apiserver-shutdown-"))
    plan = cluster.local_layout("shutdown", work / "cluster")
    layout = replace(plan, nodes=plan.nodes[:1])   # one etcd member, one API server
    layouts.save(layout)
    rows = [(delay, run, one_run(layout, bins, client_go, work, run, delay))
            for delay in args.delays for run in range(args.runs)]
    print("\n| shutdown delay (s) | run | path | answered | answered with an error "
          "| no listener (elsewhere in a rollout) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for delay, run, counts in rows:
        for path in PATHS:
            c = counts[path]
            errors = "; ".join(f"{k} x{v}" for k, v in c.items() if k not in ("ok", "no listener")) or "0"
            print(f"| {delay:g} | {run + 1} | `{path}` | {c['ok']} | {errors} | {c['no listener']} |")
    shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())

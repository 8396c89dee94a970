"""``python -m localcloud.k8s up|down|status``: one Kubernetes cluster (lab/localcloud/k8s/__init__.py).

    .venv/bin/python -m localcloud.k8s up [--state DIR] [--name NAME] [--san NAME_OR_IP ...]
    .venv/bin/python -m localcloud.k8s status [--state DIR]
    .venv/bin/python -m localcloud.k8s down [--state DIR]
    .venv/bin/python -m localcloud.k8s up|down|status --on-cloud [--san ...]   # on the cloud's data plane (oncloud.py)

Without --on-cloud the three nodes share 127.0.0.1 and the state (certificates, keys, etcd data, logs, PID files,
admin.kubeconfig) is kept in DIR, by default ``$HA_ENDPOINT_CACHE/k8s/<name>`` (~/.cache/ha-endpoint/k8s/local).
With it, each node runs in the network namespace of a Nova server of its AZ (k8s-0..k8s-2) of the local cloud named
by HA_ENDPOINT_STATE, and the state is ``<cloud state>/k8s/kube``; `lab/localcloud/fault member-down k8s-1` stops that
node's API server (member-up starts it). Never in the repository. ``up`` prints the start
time, every process's RSS and PSS, and how to reach the API servers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..settings import cache_dir
from . import cluster, layout


def default_state(name: str) -> Path:
    return cache_dir() / "k8s" / name


def new_layout(name: str, state: Path, sans: list[str]) -> layout.Layout:
    if (state / "layout.json").exists():
        return layout.load(state).with_sans(*sans)
    return cluster.local_layout(name, state).with_sans(*sans)


def mib(value: int) -> str:
    return f"{value / 1048576:.0f} MiB"


def print_memory(found: list[cluster.Usage]) -> None:
    for usage in found:
        print(f"  {usage.program:15} {usage.node:10} pid {usage.pid:<8} "
              f"RSS {mib(usage.rss):>8}  PSS {mib(usage.pss):>8}")
    print(f"  total: RSS {mib(sum(u.rss for u in found))}, PSS {mib(sum(u.pss for u in found))} "
          f"({len(found)} processes)")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m localcloud.k8s", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("up", "down", "status"))
    parser.add_argument("--name", default=None, help="the cluster's name (default: local; on the cloud: kube)")
    parser.add_argument("--state", type=Path)
    parser.add_argument("--on-cloud", action="store_true",
                        help="on the local cloud's data plane: a node per AZ in a Nova server's namespace")
    parser.add_argument("--san", action="append", default=[], help="a DNS name or IP for the API servers' certificates")
    args = parser.parse_args(argv)
    cloud = None
    if args.on_cloud:
        from localcloud.settings import Paths

        from . import oncloud
        cloud = Paths()
        args.name = args.name or oncloud.NAME
        state = oncloud.state_dir(cloud, args.name)
    else:
        args.name = args.name or "local"
        state = args.state or default_state(args.name)
    if args.command == "up":
        if cloud is not None:
            plan = oncloud.prepare(cloud, tuple(args.san), args.name)
        else:
            plan = new_layout(args.name, state, args.san)
            layout.save(plan)
        started = cluster.up(plan, cluster.binaries())
        print(f"k8s: cluster {plan.name} ready in {started.seconds:.1f} s (etcd {started.etcd_seconds:.1f} s, "
              f"API servers {started.api_seconds:.1f} s); state {state}")
        for node in plan.nodes:
            print(f"  {node.name}: kube-apiserver {node.api_url}, etcd {node.etcd_client_url} "
                  f"(peer {node.etcd_peer_url})")
        print_memory(cluster.memory(plan))
        if cloud is None:
            print(f"k8s: kubectl --kubeconfig {plan.kubeconfig} get --raw /readyz")
        else:
            print("k8s: the nodes' addresses are on the cloud's subnets; reach the API servers through an endpoint: "
                  "STACK=k8s make up (README, \"Kubernetes\")")
        return 0
    if not (state / "layout.json").exists():
        print(f"k8s: no cluster in {state}", file=sys.stderr)
        return 1
    plan = layout.load(state)
    if args.command == "down":
        stopped = cluster.down(plan)
        if cloud is not None:
            oncloud.hand_back(cloud, state)
        print(f"k8s: stopped {', '.join(stopped) or 'nothing (nothing ran)'}")
    else:
        print_memory(cluster.memory(plan))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""A fleet on the local cloud: N endpoint stacks of the dev shape brought up and destroyed by one command.

    .venv/bin/python lab/bench/fleet_figures.py                  # N = 1, 2, 4, 8, each at --parallel N and at 1
    .venv/bin/python lab/bench/fleet_figures.py --sizes 1 2      # a quicker look
    .venv/bin/python lab/bench/fleet_figures.py --no-serial      # only --parallel N

Each case writes N stack files (the dev shape: three zones with their own member each, one TCP listener; names and
records ``fleet-bench-<i>``) into a fresh fleet directory with a state backend of its own, runs ``scripts/fleet.py up``
and then ``destroy`` over it, and reads the fleet's JSON report: the wall time, the time per endpoint, and where the
steps' time went (seconds summed over each service's resource steps: Octavia, Neutron, Designate, our gates; they
overlap, so they say what dominates, not a wall time). Beside them, the CPU the `up` took: the whole machine's
(every process, the local cloud's services included, from /proc/stat) and the fleet command's own process tree's (the
engines, language hosts, providers and gates: getrusage of the waited children), with how many of the machine's cores
were busy on average. A case whose machine CPU-seconds are about its cores times its wall time is bound by the
machine: no parallelism makes it faster there. The last line is one JSON object of every case.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab")]

from bench.lib.cloud_cpu import service_cpu_seconds  # noqa: E402
from bench.lib.machine import machine_cpu_seconds  # noqa: E402

from tests.e2e.pulumi_cli import CONFIG_KEY, project_environment  # noqa: E402

MEMBERS = {"az1": ("cp-0", "10.10.1.10"), "az2": ("cp-1", "10.10.2.10"), "az3": ("cp-2", "10.10.3.10")}


def dev_shape(name: str) -> dict:
    return {
        "name": name, "loadBalancerProvider": "ovn", "floatingNetwork": "public", "allowedCidrs": ["0.0.0.0/0"],
        "zones": {az: {"subnet": f"cp-{az}"} for az in MEMBERS},
        "listeners": [{"port": 6443, "monitor": {"type": "TCP", "delay": 3, "timeout": 2, "maxRetries": 2,
                                                 "maxRetriesDown": 3}}],
        "members": [{"name": member, "address": address, "az": az} for az, (member, address) in MEMBERS.items()],
        "memberPlacement": "own-zone",
        "dns": {"dnsZone": "example.test.", "record": name, "ttl": 30, "publish": "when-ready"},
        "readiness": {"timeoutSeconds": 900, "require": "online"},
    }


SERVICE_GROUPS = (("octavia-api", "octavia-api"), ("octavia", "octavia (worker, driver agent, health)"),
                  ("neutron", "neutron"), ("ovn", "ovn + ovs"), ("ovs", "ovn + ovs"), ("keystone", "keystone"),
                  ("designate", "designate + named"), ("named", "designate + named"), ("mariadb", "mariadb"),
                  ("mysqld", "mariadb"), ("rabbitmq", "rabbitmq"))


def cloud_cpu_seconds() -> dict[str, float]:
    """CPU-seconds the local cloud's services have used (:func:`bench.lib.cloud_cpu.service_cpu_seconds`), grouped as
    SERVICE_GROUPS names them; the rest of its services as "other"."""
    used: dict[str, float] = {}
    for service, seconds in service_cpu_seconds().items():
        group = next((name for prefix, name in SERVICE_GROUPS if service.startswith(prefix)), "other")
        used[group] = used.get(group, 0.0) + seconds
    return used


def children_cpu_seconds() -> float:
    """CPU-seconds of this process's waited children and their waited descendants."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def fleet(environment: dict, action: str, directory: Path, parallel: int) -> tuple[float, dict]:
    started = time.monotonic()
    process = subprocess.run([sys.executable, str(ROOT / "scripts/fleet.py"), action, str(directory),
                              "--parallel", str(parallel), "--json", "-"], cwd=ROOT, env=environment,
                             capture_output=True, text=True, stdin=subprocess.DEVNULL)
    seconds = time.monotonic() - started
    report = json.loads(process.stdout) if process.stdout.strip().startswith("{") else {}
    if process.returncode != 0:
        sys.exit(f"fleet {action} over {directory} exited {process.returncode}:\n{process.stderr[-4000:]}")
    return seconds, report


def case(size: int, parallel: int) -> dict:
    environment = project_environment()
    environment["OS_CLOUD"] = environment.get("OS_CLOUD", "localcloud")
    with tempfile.TemporaryDirectory(prefix="fleet-bench-") as scratch:
        directory, backend = Path(scratch) / "fleet", Path(scratch) / "state"
        directory.mkdir()
        backend.mkdir()
        environment["PULUMI_BACKEND_URL"] = f"file://{backend}"
        for i in range(size):
            config = {"openstack:cloud": environment["OS_CLOUD"], CONFIG_KEY: dev_shape(f"fleet-bench-{i}")}
            (directory / f"Pulumi.fleet-bench-{i}.yaml").write_text(yaml.safe_dump({"config": config}))
        machine, runner, cloud = machine_cpu_seconds(), children_cpu_seconds(), cloud_cpu_seconds()
        up_seconds, report = fleet(environment, "up", directory, parallel)
        machine, runner = machine_cpu_seconds() - machine, children_cpu_seconds() - runner
        cloud = {name: round(seconds - cloud.get(name, 0.0), 1) for name, seconds in cloud_cpu_seconds().items()}
        destroy_seconds, _ = fleet(environment, "destroy", directory, parallel)
    services: dict[str, float] = {}
    for stack in report["stacks"]:
        for service, seconds in stack.get("resource_seconds", {}).items():
            services[service] = round(services.get(service, 0) + seconds, 1)
    return {"endpoints": size, "parallel": parallel, "up_s": round(up_seconds, 1),
            "per_endpoint_s": round(up_seconds / size, 1), "destroy_s": round(destroy_seconds, 1),
            "slowest_stack_s": max(s["seconds"] for s in report["stacks"]),
            "published": sum(len(s["published_zones"]) for s in report["stacks"]), "step_seconds": services,
            "machine_cpu_s": round(machine, 1), "fleet_cpu_s": round(runner, 1),
            "cores_busy": round(machine / up_seconds, 2),
            "cloud_cpu_s": dict(sorted(cloud.items(), key=lambda item: -item[1]))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--no-serial", action="store_true", help="skip the --parallel 1 cases")
    args = parser.parse_args()
    results = []
    for size in args.sizes:
        for parallel in sorted({size, 1} if not args.no_serial else {size}, reverse=True):
            result = case(size, parallel)
            results.append(result)
            print(f"N={size} parallel={parallel}: up {result['up_s']} s ({result['per_endpoint_s']} s per endpoint), "
                  f"destroy {result['destroy_s']} s, {result['published']} zones published", flush=True)
    one = next((r["up_s"] for r in results if r["endpoints"] == 1), None)
    print(f"\nfleet figures {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} (dev shape: 3 zones, 1 member each)")
    print(f"| endpoints | parallel | up (s) | per endpoint (s) | x one endpoint | destroy (s) | machine CPU (s) | "
          f"fleet's own CPU (s) | cores busy (of {os.cpu_count()}) | step seconds by service |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        ratio = f"{r['up_s'] / one:.2f}" if one else "-"
        steps = ", ".join(f"{k} {v}" for k, v in sorted(r["step_seconds"].items()))
        print(f"| {r['endpoints']} | {r['parallel']} | {r['up_s']} | {r['per_endpoint_s']} | {ratio} | "
              f"{r['destroy_s']} | {r['machine_cpu_s']} | {r['fleet_cpu_s']} | {r['cores_busy']} | {steps} |")
    for r in results:
        cloud = ", ".join(f"{name} {seconds}" for name, seconds in r["cloud_cpu_s"].items())
        rest = round(r["machine_cpu_s"] - r["fleet_cpu_s"] - sum(r["cloud_cpu_s"].values()), 1)
        print(f"N={r['endpoints']} parallel={r['parallel']}: CPU-s by process: the fleet's own {r['fleet_cpu_s']}; the "
              f"cloud's services {cloud}; anything else on the machine {rest}")
    if one:
        base = next(r for r in results if r["endpoints"] == 1)
        for r in results:
            floor = r["machine_cpu_s"] / (os.cpu_count() or 1)
            print(f"N={r['endpoints']} parallel={r['parallel']}: its CPU alone needs at least {floor:.1f} s on "
                  f"{os.cpu_count()} cores = {floor / one:.2f} x one endpoint ({base['machine_cpu_s']} CPU-s for one)")
    print(json.dumps({f"n{r['endpoints']}-p{r['parallel']}": r for r in results}))


if __name__ == "__main__":
    main()

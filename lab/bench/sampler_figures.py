"""What the e2e tests' samplers cost the local cloud while they watch an endpoint (issue 53: the suite's CPU).

    .venv/bin/python lab/bench/sampler_figures.py [--seconds 45] [--against REV]   (after `make up`)

The rollout tests sample the cloud while an update runs, in a thread beside the engine (tests/e2e/cloud_checks.py):
the rollout sampler (each zone's fewest ONLINE members and the published zones), the pool sampler (each pool's
members, with their weights) and, in the Kubernetes tests, the member agent's passes. Each request costs the cloud's
API tens of milliseconds of CPU (octavia-api about 40-60 ms per read on this machine), and a sampler asks again as
soon as its pause ends, so what it costs is paid for as long as the update runs, which the suite's load stretches.

Prints first what one read costs the cloud (``--requests`` of each kind, one after the other: the reads the samplers,
the gates and the agents make), then one row per window of ``--seconds`` on the dev stack as it stands (nothing is
changed): idle, then each
sampler at its default interval (with ``--against``, also the samplers of that revision's tests/e2e/cloud_checks.py,
alternated with this checkout's): the samples taken, how far apart they came, and the cloud's CPU-seconds (the
costliest services). Run it on an otherwise idle machine: the cloud's figures count its own processes only.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab")]

from bench.lib.cloud_cpu import costliest, service_cpu_seconds, used_since  # noqa: E402
from tests.e2e.cloud_checks import PoolSampler, RolloutSampler  # noqa: E402


def window(name: str, seconds: float, sampler=None) -> None:
    before, started = service_cpu_seconds(), time.monotonic()
    if sampler is None:
        time.sleep(seconds)
    else:
        with sampler:
            time.sleep(seconds)
    used, wall = used_since(before), time.monotonic() - started
    count = len(sampler.samples) if sampler is not None else 0
    apart = f"{wall / count:.2f} s apart" if count else "-"
    errors = f", {len(sampler.errors)} failed" if sampler is not None and sampler.errors else ""
    print(f"| {name} | {count}{errors} | {apart} | {sum(used.values()):.1f} | {costliest(used, 3)} |", flush=True)


def read_costs(conn, zone: dict, count: int) -> None:
    """The cloud's CPU per read, by kind of read, on one zone of the dev stack."""
    lb, pool = zone["loadbalancerId"], next(iter(zone["poolIds"].values()))
    reads = {
        "a load balancer": lambda: conn.load_balancer.get(f"/lbaas/loadbalancers/{lb}"),
        "a pool's members": lambda: conn.load_balancer.get(f"/lbaas/pools/{pool}/members"),
        "a load balancer's status tree": lambda: conn.load_balancer.get(f"/lbaas/loadbalancers/{lb}/status"),
        "the project's load balancers": lambda: conn.load_balancer.get("/lbaas/loadbalancers"),
        "the project's pools": lambda: conn.load_balancer.get("/lbaas/pools"),
        "a network by name (Neutron)": lambda: conn.network.get("/networks?name=public"),
    }
    print(f"| read ({count} of each) | wall ms | cloud CPU ms | costliest services (ms) |")
    print("| --- | --- | --- | --- |")
    for name, read in reads.items():
        read()
        before, started = service_cpu_seconds(), time.monotonic()
        for _ in range(count):
            read()
        used, wall = used_since(before), time.monotonic() - started
        print(f"| {name} | {wall / count * 1000:.0f} | {sum(used.values()) / count * 1000:.0f} | "
              f"{costliest(used, 2, per=count)} |", flush=True)
    print()


def checks_of(revision: str):
    """tests/e2e/cloud_checks.py as it is at ``revision``, loaded as a module of its own."""
    source = subprocess.run(["git", "show", f"{revision}:tests/e2e/cloud_checks.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory(prefix="sampler-figures-") as scratch:
        path = Path(scratch) / "cloud_checks_then.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location("cloud_checks_then", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up while the classes are made
        spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=45.0, help="length of each window (default 45)")
    parser.add_argument("--against", help="also the samplers of this revision (e.g. HEAD~1), alternated")
    parser.add_argument("--requests", type=int, default=40, help="reads of each kind for their cost (default 40)")
    args = parser.parse_args(argv)
    import openstack

    outputs = json.loads(subprocess.run([str(ROOT / "scripts/stack.sh"), "outputs"], cwd=ROOT, check=True,
                                        capture_output=True, text=True).stdout)
    zones = outputs["zones"]
    conn = openstack.connect(cloud="localcloud")
    name = conn.load_balancer.get_load_balancer(next(iter(zones.values()))["loadbalancerId"]).name
    prefix = name.rsplit("-", 2)[0]  # <endpoint>-<az>-lb -> <endpoint>
    address_zone = {zone["floatingIp"]: az for az, zone in zones.items()}
    pools = {az: next(iter(zone["poolIds"].values())) for az, zone in zones.items()}
    read_costs(conn, next(iter(zones.values())), args.requests)
    print(f"the dev stack's {len(zones)} zones ({prefix}, {outputs['fqdn']}), {args.seconds:.0f} s per window")
    print("| window | samples | cadence | cloud CPU-s | costliest services (CPU-s) |")
    print("| --- | --- | --- | --- | --- |")
    window("idle", args.seconds)
    kinds = {"this checkout": (RolloutSampler, PoolSampler)}
    if args.against:
        then = checks_of(args.against)
        kinds[args.against] = (then.RolloutSampler, then.PoolSampler)
    for which, (rollout_sampler, _) in kinds.items():  # alternated: this checkout's, then the revision's
        rollout = rollout_sampler(conn, prefix, sorted(zones), "example.test.", outputs["fqdn"], address_zone)
        window(f"rollout sampler, {which} (interval {rollout.interval} s)", args.seconds, rollout)
    for which, (_, pool_sampler) in kinds.items():
        pool = pool_sampler(conn, pools, fqdn=outputs["fqdn"])
        window(f"pool sampler, {which} (interval {pool.interval} s, {len(pools)} pools)", args.seconds, pool)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Members at scale: figures for the mock runtime and for the real engine on the local cloud.

    .venv/bin/python lab/bench/scale_figures.py                 # mock figures, and the local cloud at 3 and 30 members
    .venv/bin/python lab/bench/scale_figures.py --members 3 30 90
    .venv/bin/python lab/bench/scale_figures.py --mock-only
    .venv/bin/python lab/bench/scale_figures.py --cloud-only --members 90 --no-rotation --no-cloud-own   # < 20 min
    .venv/bin/python lab/bench/scale_figures.py --cloud-only --members 3 30 90 --rotation-max 30   # the issue's figures
    .venv/bin/python lab/bench/scale_figures.py --mock-only --mock-max-members 1           # the smallest mock case

Mock runtime (Pulumi mocks + the fake cloud of tests/mocks, a preview, one process per case so that peak memory is
the case's own): registrations, seconds, milliseconds per registration and peak RSS, from the dev shape up to 20
zones x 500 members (one listener: 20,205 registrations), plus the size of the facts the component records.

Local cloud (the real engine and provider, 3 zones, one TCP listener, members per zone as given): `up`, a rotation
that replaces every member (make-before-break: new members are created and ready before the old ones go), and
`destroy`, with the cost per member, on the one member path (``per-member``: one Member and one MemberDrain resource
per member; Octavia serializes writes per load balancer, so a zone's members are created one after another; zones run
in parallel; issue 47 removed the batch path, docs/decisions/issue-47-one-write-path.md). During each rotation a
poller lists every pool's members (one call per pool every 0.5 s) and reports the fewest members ONLINE with a
weight above 0 it saw in any pool (the floor: never below the members per zone, since new members serve before old
ones go). Then issue 27's goals are checked: at most 1 s per added member per zone on `up`, a
rotation at 30 per zone at most twice that shape's `up`, destroy at 90 per zone at most 60 s.

The cloud's own cost of a zone's members (openstacksdk directly, one load balancer, one TCP listener, pool and
monitor): N members created one after another, each waited for (what the provider does, and what a make-before-break
rotation needs), against Octavia's batch member update (`PUT /v2/lbaas/pools/{id}/members` with the whole list:
one load-balancer write for all of them), both until every member is ACTIVE and ONLINE: what the removed batch path
would save here.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab")]

MOCK_CASES = ((3, 1, 2), (6, 50, 1), (10, 200, 1), (20, 500, 1))  # zones, members per zone, listeners

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from tests.mocks import FakeCloud, run_component
from tests.mocks.configs import sized_endpoint
zones, members, listeners = map(int, sys.argv[2:5])
raw = sized_endpoint(zones, members, listeners, wide=True)
cloud = FakeCloud.topology(preview=True, zones=zones, fip_count=zones + 5, wide=True)
cpu = lambda: (lambda r: r.ru_utime + r.ru_stime)(resource.getrusage(resource.RUSAGE_SELF))
start, start_cpu = time.perf_counter(), cpu()
run = run_component(raw, cloud, preview=True)
seconds, cpu_seconds = time.perf_counter() - start, cpu() - start_cpu
facts = next(r for r in run.registrations if r["type"] == "haendpoint:index:HaEndpoint")["outputs"]["facts"]
print(json.dumps({"registrations": len(run.registrations), "seconds": seconds, "cpu_seconds": cpu_seconds,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "facts_kib": len(json.dumps(facts)) / 1024}))
"""


PATHS = ("per-member",)
"""The member path the figures measure (the one left since issue 47; the column stays for earlier results)."""


def mock_figures(paths: tuple[str, ...] = PATHS, max_members: int = 0) -> None:
    print("mock runtime (preview under Pulumi mocks, one process per case; CPU s: the run's own, less noisy than wall "
          "on a shared machine; peak: the process's maximum RSS, interpreter and imports included)")
    print(f"  {'zones x members x listeners':28s} {'path':>10s} {'registrations':>13s} {'seconds':>8s} {'CPU s':>7s} "
          f"{'ms/reg':>7s} {'CPU ms/reg':>10s} {'peak MiB':>9s} {'facts KiB':>9s}")
    for zones, members, listeners in MOCK_CASES:
        if max_members and members > max_members:
            continue
        for path in paths:
            out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(zones), str(members), str(listeners),
                                  path], capture_output=True, text=True, timeout=1800)
            if out.returncode != 0:
                print(f"  {zones} x {members} x {listeners} ({path}): failed\n{out.stderr[-2000:]}")
                continue
            figures = json.loads(out.stdout.strip().splitlines()[-1])
            count = figures["registrations"]
            print(f"  {f'{zones} x {members} x {listeners}':28s} {path:>10s} {count:13d} {figures['seconds']:8.1f} "
                  f"{figures['cpu_seconds']:7.1f} {1000 * figures['seconds'] / count:7.2f} "
                  f"{1000 * figures['cpu_seconds'] / count:10.2f} {figures['peak_mib']:9.0f} "
                  f"{figures['facts_kib']:9.0f}")


def cloud_figures(sizes: list[int], with_rotation: bool = True, paths: tuple[str, ...] = PATHS,
                  rotation_max: int = 0) -> dict:
    from localcloud.testing import Cleanup, ensure_up
    from tests.e2e.cloud_checks import PoolSampler
    from tests.e2e.pulumi_cli import PulumiStack, project_environment

    from bench.lib.engine_in_use import describe, engine_environment

    cloud = ensure_up()
    environment = {**engine_environment(project_environment()), "OS_CLIENT_CONFIG_FILE": cloud.clouds_yaml,
                   "OS_CLOUD": "localcloud"}
    print(f"local cloud, real engine: 3 zones, one TCP listener ({describe(environment)})")
    print(f"  {'members/zone':>12s} {'path':>10s} {'up s':>8s} {'s/member':>9s} {'rotation s':>11s} "
          f"{'floor':>6s} {'destroy s':>10s}   per added member/zone: {'up s':>6s} {'rotation s':>10s} "
          f"{'destroy s':>9s}")
    rows: dict[str, list[tuple]] = {path: [] for path in paths}
    for size in sizes:
        for path in paths:
            sweep = Cleanup(cloud)
            sweep.prefix = "scale-api"
            sweep.run()
            floor = float("nan")
            with tempfile.TemporaryDirectory(prefix="scale-figures-") as workdir:
                stack = PulumiStack.create(Path(workdir), "scale", environment)
                try:
                    stack.write_config(_endpoint(size, first_host=10))
                    up = stack.up(policy=False)
                    rotation = None
                    if with_rotation and (not rotation_max or size <= rotation_max):
                        stack.write_config(_endpoint(size, first_host=10 + size))
                        # the fewest members serving (ACTIVE or PENDING_UPDATE, ONLINE, weight > 0) in any pool
                        pools = {pool.name: pool.id for pool in cloud.conn.load_balancer.pools()
                                 if str(pool.name).startswith("scale-api")}
                        with PoolSampler(cloud.conn, pools) as poller:
                            rotation = stack.up(policy=False)
                        floor = min(poller.floor().values()) if poller.samples else float("nan")
                finally:
                    destroy = stack.destroy(check=False)
            row = (size, up.seconds, rotation.seconds if rotation else float("nan"), destroy.seconds, floor)
            first = rows[path][0] if rows[path] else None
            # the cost of a member beyond the smallest size (the fixed cost of the LBs, listeners, DNS taken out)
            marginal = "" if first is None else "".join(
                f" {(now - then) / (size - first[0]):{width}.2f}"
                for now, then, width in zip(row[1:4], first[1:4], (6, 10, 9)))
            rows[path].append(row)
            print(f"  {size:12d} {path:>10s} {up.seconds:8.1f} {up.seconds / size:9.2f} {row[2]:11.1f} "
                  f"{floor:6.0f} {destroy.seconds:10.1f}   {'':22s}{marginal}", flush=True)
    print_goals(rows)
    return rows


def goals(rows: list[tuple]) -> list[tuple[str, str, bool]]:
    """The issue's goals for one path's rows ``(members/zone, up s, rotation s, destroy s, floor)``: (goal, what was
    measured, met?); a goal whose sizes were not measured is left out."""
    by_size = {row[0]: row for row in rows}
    found = []
    first = rows[0] if rows else None
    for size in (30, 90):
        if size in by_size and first is not None and size > first[0]:
            per_member = (by_size[size][1] - first[1]) / (size - first[0])
            found.append((f"up: at most 1 s per added member per zone ({first[0]} -> {size})", f"{per_member:.2f} s",
                          per_member <= 1.0))
    if 30 in by_size and by_size[30][2] == by_size[30][2]:  # a rotation was measured (not NaN)
        ratio = by_size[30][2] / by_size[30][1]
        found.append(("rotation at 30 per zone: at most twice the up", f"{ratio:.2f} x", ratio <= 2.0))
    for size, row in by_size.items():
        if row[4] == row[4]:
            found.append((f"rotation at {size}: never fewer than {size} members serving per pool",
                          f"fewest {row[4]:.0f}", row[4] >= size))
    if 90 in by_size:
        found.append(("destroy at 90 per zone: at most 60 s", f"{by_size[90][3]:.1f} s", by_size[90][3] <= 60))
    return found


def print_goals(rows: dict[str, list[tuple]]) -> None:
    print("  goals (issue 27):")
    for path, measured in rows.items():
        for goal, value, met in goals(measured):
            print(f"    {path:>10s}  {'met    ' if met else 'NOT met'}  {goal}: {value}")


def member_costs(sizes: list[int]) -> None:
    from localcloud.testing import ensure_up

    conn = ensure_up().conn
    print("the cloud's own cost of one zone's members (openstacksdk; until every member is ACTIVE and ONLINE)")
    print(f"  {'members':>8s} {'one by one s':>13s} {'s/member':>9s} {'batch update s':>15s} {'s/member':>9s}")
    for size in sizes:
        one_by_one, batch = _member_costs(conn, size)
        print(f"  {size:8d} {one_by_one:13.1f} {one_by_one / size:9.2f} {batch:15.1f} {batch / size:9.2f}")


def _member_costs(conn, size: int) -> tuple[float, float]:
    lb_api = conn.load_balancer
    subnet = conn.network.find_subnet("cp-az1", ignore_missing=False)
    lb = lb_api.create_load_balancer(name="scale-api-batch-lb", vip_subnet_id=subnet.id, availability_zone="az1")
    active = lambda: lb_api.get_load_balancer(lb.id).provisioning_status == "ACTIVE"  # noqa: E731
    try:
        _wait(active)
        pools = []
        for port in (7001, 7002):
            listener = lb_api.create_listener(loadbalancer_id=lb.id, protocol="TCP", protocol_port=port)
            _wait(active)
            pool = lb_api.create_pool(listener_id=listener.id, protocol="TCP", lb_algorithm="ROUND_ROBIN")
            _wait(active)
            lb_api.create_health_monitor(pool_id=pool.id, type="TCP", delay=5, timeout=3, max_retries=2)
            _wait(active)
            pools.append(pool)
        addresses = [f"10.10.1.{10 + index}" for index in range(size)]
        started = time.monotonic()
        for address in addresses:  # one after another, each waited for
            member = lb_api.create_member(pools[0].id, address=address, protocol_port=7001, subnet_id=subnet.id)
            _wait(lambda: lb_api.get_member(member.id, pools[0].id).provisioning_status == "ACTIVE")
        _wait(lambda: _all_online(lb_api, pools[0].id, size))
        one_by_one = time.monotonic() - started
        started = time.monotonic()
        lb_api.put(f"/lbaas/pools/{pools[1].id}/members", json={"members": [
            {"address": address, "protocol_port": 7002, "subnet_id": subnet.id} for address in addresses]},
            raise_exc=True)
        _wait(active)
        _wait(lambda: _all_online(lb_api, pools[1].id, size))
        batch = time.monotonic() - started
        return one_by_one, batch
    finally:
        lb_api.delete_load_balancer(lb.id, cascade=True, ignore_missing=True)
        _wait(lambda: lb_api.find_load_balancer(lb.id) is None)


def _all_online(lb_api, pool_id: str, size: int) -> bool:
    members = list(lb_api.members(pool_id))
    return len(members) == size and all(m.provisioning_status == "ACTIVE" and m.operating_status == "ONLINE"
                                        for m in members)


def _wait(predicate, timeout: float = 900, interval: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("the cloud did not reach the expected state")
        time.sleep(interval)


def _endpoint(members_per_zone: int, first_host: int) -> dict:
    return {
        "name": "scale-api", "floatingNetwork": "public",
        "zones": {f"az{z}": {"subnet": f"cp-az{z}"} for z in (1, 2, 3)},
        "listeners": [{"port": 6443, "monitor": {"type": "TCP"}}],
        "members": [{"name": f"cp-{z}-{host}", "address": f"10.10.{z}.{host}", "az": f"az{z}"}
                    for z in (1, 2, 3) for host in range(first_host, first_host + members_per_zone)],
        "dns": {"dnsZone": "example.test.", "record": "scale-api", "ttl": 30},
        "readiness": {"timeoutSeconds": 900},
    }


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, nargs="*", default=[3, 30], help="members per zone on the local cloud")
    parser.add_argument("--mock-only", action="store_true")
    parser.add_argument("--cloud-only", action="store_true")
    parser.add_argument("--no-rotation", action="store_true",
                        help="local cloud: up and destroy only (90 members per zone: a rotation alone takes ~14 min)")
    parser.add_argument("--no-cloud-own", action="store_true",
                        help="skip the cloud's own member costs (openstacksdk one by one vs batch update)")
    parser.add_argument("--rotation-max", type=int, default=0,
                        help="local cloud: rotate only the sizes with at most this many members per zone (0: all)")
    parser.add_argument("--mock-max-members", type=int, default=0,
                        help="mock runtime: only the cases with at most this many members per zone (0: every case)")
    return parser


def main(argv: list[str] | None = None) -> None:
    options = parser().parse_args(argv)
    started = time.perf_counter()
    if not options.cloud_only:
        mock_figures(PATHS, options.mock_max_members)
    if not options.mock_only:
        if not options.no_cloud_own:
            member_costs(options.members)
        cloud_figures(options.members, with_rotation=not options.no_rotation, paths=PATHS,
                      rotation_max=options.rotation_max)
    print(f"({time.perf_counter() - started:.0f} s; peak of this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB)")


if __name__ == "__main__":
    main()

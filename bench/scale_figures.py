"""Members at scale: figures for the mock runtime and for the real engine on the local cloud.

    .venv/bin/python bench/scale_figures.py                 # mock figures, and the local cloud at 3 and 30 members
    .venv/bin/python bench/scale_figures.py --members 3 30 90
    .venv/bin/python bench/scale_figures.py --mock-only
    .venv/bin/python bench/scale_figures.py --cloud-only --members 90 --no-rotation --no-cloud-own   # < 20 min

Mock runtime (Pulumi mocks + the fake cloud of tests/mocks, a preview, one process per case so that peak memory is
the case's own): registrations, seconds, milliseconds per registration and peak RSS, from the dev shape up to 20
zones x 500 members (one listener: 20,205 registrations), plus the size of the facts the component records.

Local cloud (the real engine and provider, 3 zones, one TCP listener, members per zone as given): `up`, a rotation
that replaces every member (make-before-break: new members are created and ready before the old ones go), and
`destroy`, with the cost per member. Octavia serializes writes per load balancer, so a zone's members are created
one after another; zones run in parallel.

The cloud's own cost of a zone's members (openstacksdk directly, one load balancer, one TCP listener, pool and
monitor): N members created one after another, each waited for (what the provider does, and what a make-before-break
rotation needs), against Octavia's batch member update (`PUT /v2/lbaas/pools/{id}/members` with the whole list:
one load-balancer write for all of them), both until every member is ACTIVE and ONLINE.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

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


def mock_figures() -> None:
    print("mock runtime (preview under Pulumi mocks, one process per case; CPU s: the run's own, less noisy than wall "
          "on a shared machine; peak: the process's maximum RSS, interpreter and imports included)")
    print(f"  {'zones x members x listeners':28s} {'registrations':>13s} {'seconds':>8s} {'CPU s':>7s} {'ms/reg':>7s} "
          f"{'CPU ms/reg':>10s} {'peak MiB':>9s} {'facts KiB':>9s}")
    for zones, members, listeners in MOCK_CASES:
        out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(zones), str(members), str(listeners)],
                             capture_output=True, text=True, timeout=1800)
        if out.returncode != 0:
            print(f"  {zones} x {members} x {listeners}: failed\n{out.stderr[-2000:]}")
            continue
        figures = json.loads(out.stdout.strip().splitlines()[-1])
        count = figures["registrations"]
        print(f"  {f'{zones} x {members} x {listeners}':28s} {count:13d} {figures['seconds']:8.1f} "
              f"{figures['cpu_seconds']:7.1f} {1000 * figures['seconds'] / count:7.2f} "
              f"{1000 * figures['cpu_seconds'] / count:10.2f} {figures['peak_mib']:9.0f} {figures['facts_kib']:9.0f}")


def cloud_figures(sizes: list[int], with_rotation: bool = True) -> None:
    from localcloud.testing import Cleanup, ensure_up
    from tests.e2e.pulumi_cli import PulumiStack, project_environment

    from bench.lib.engine_in_use import describe, engine_environment

    cloud = ensure_up()
    environment = {**engine_environment(project_environment()), "OS_CLIENT_CONFIG_FILE": cloud.clouds_yaml,
                   "OS_CLOUD": "localcloud"}
    print(f"local cloud, real engine: 3 zones, one TCP listener ({describe(environment)})")
    print(f"  {'members/zone':>12s} {'up s':>8s} {'s/member':>9s} {'rotation s':>11s} {'destroy s':>10s}   "
          f"per added member/zone: {'up s':>6s} {'rotation s':>10s} {'destroy s':>9s}")
    first = None
    for size in sizes:
        sweep = Cleanup(cloud)
        sweep.prefix = "scale-api"
        sweep.run()
        with tempfile.TemporaryDirectory(prefix="scale-figures-") as workdir:
            stack = PulumiStack.create(Path(workdir), "scale", environment)
            try:
                stack.write_config(_endpoint(size, first_host=10))
                up = stack.up(policy=False)
                rotation = None
                if with_rotation:
                    stack.write_config(_endpoint(size, first_host=10 + size))
                    rotation = stack.up(policy=False)
            finally:
                destroy = stack.destroy(check=False)
        row = (size, up.seconds, rotation.seconds if rotation else float("nan"), destroy.seconds)
        # the cost of a member beyond the smallest size (the fixed cost of the LBs, listeners, DNS taken out)
        marginal = "" if first is None else "".join(
            f" {(now - then) / (size - first[0]):{width}.2f}"
            for now, then, width in zip(row[1:], first[1:], (6, 10, 9)))
        first = first or row
        print(f"  {size:12d} {up.seconds:8.1f} {up.seconds / size:9.2f} {row[2]:11.1f} "
              f"{destroy.seconds:10.1f}   {'':22s}{marginal}", flush=True)


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, nargs="*", default=[3, 30], help="members per zone on the local cloud")
    parser.add_argument("--mock-only", action="store_true")
    parser.add_argument("--cloud-only", action="store_true")
    parser.add_argument("--no-rotation", action="store_true",
                        help="local cloud: up and destroy only (90 members per zone: a rotation alone takes ~14 min)")
    parser.add_argument("--no-cloud-own", action="store_true",
                        help="skip the cloud's own member costs (openstacksdk one by one vs batch update)")
    options = parser.parse_args()
    started = time.perf_counter()
    if not options.cloud_only:
        mock_figures()
    if not options.mock_only:
        if not options.no_cloud_own:
            member_costs(options.members)
        cloud_figures(options.members, with_rotation=not options.no_rotation)
    print(f"({time.perf_counter() - started:.0f} s; peak of this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB)")


if __name__ == "__main__":
    main()

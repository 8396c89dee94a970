"""Readiness figures: API calls per poll as members grow, and latency from the last member ONLINE to the gate.

    .venv/bin/python lab/bench/readiness_figures.py            # simulated clock + real openstacksdk over loopback
    .venv/bin/python lab/bench/readiness_figures.py --local-cloud  # also on the local OpenStack (lab/localcloud/up)

Goals (issue 4): API calls per poll constant (one per pool) for 3, 30, 300 members in one pool; latency from the
last member ONLINE to the gate opening at most one poll interval (<= 1 s at the default interval).

Sources of the figures:
- "simulated": the pure waiter with a fake clock (exact, no I/O).
- "loopback": the real openstacksdk and the readiness provider's status source against a small Octavia v2 API on
  127.0.0.1 (tests/unit/gates/octavia_http_fake.py); HTTP requests are counted at the server, time is real.
- "local cloud": the local OpenStack (real Keystone + Octavia + heartbeat daemon) with --local-cloud: a zone built
  as in tests/integration/test_readiness_cloud.py; latency measured against a 20 Hz sampler of the member's
  statuses; member listings counted at the HTTP transport while the provider's own wait (run_wait) runs.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab"), str(ROOT / "tests" / "unit" / "gates")]

from ha_endpoint.backends.octavia import status as cloud  # noqa: E402  (the Octavia backend's member client)
from ha_endpoint.gates.model import LoadBalancerStatus, MemberStatus, PoolExpectation  # noqa: E402
from ha_endpoint.gates.inputs import ReadinessInputs  # noqa: E402
from ha_endpoint.gates.waiter import wait_for_members  # noqa: E402

MEMBER_COUNTS = (3, 30, 300)
ENVIRONMENT_CONNECT = cloud.connect
"""The real connection factory; the loopback figures swap in the fake's and put this back."""
POLLS = 5


class SimClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def default_spec(member_ids, pool_id="pool-1", lb_id="lb-1", timeout=600):
    """The spec MemberReadiness builds from its defaults (interval 1 s)."""
    return ReadinessInputs.of_bag({
        "loadbalancer_id": lb_id,
        "pools": {"api": {"pool_id": pool_id, "member_ids": list(member_ids), "monitored": True}},
        "timeout_seconds": timeout,
    }).wait_spec()


def simulated_calls_per_poll(count: int) -> float:
    clock, calls = SimClock(), []
    ids = [f"m{i}" for i in range(count)]

    def fetch(pool_id):
        calls.append(pool_id)
        oper = "ONLINE" if len(calls) >= POLLS else "OFFLINE"
        return [MemberStatus(m, "ACTIVE", oper) for m in ids]

    result = wait_for_members(default_spec(ids), fetch_pool=fetch,
                              fetch_load_balancer=lambda i: LoadBalancerStatus(i, "ACTIVE", "ONLINE"),
                              clock=clock, sleep=clock.sleep)
    return result.api_calls / result.polls


def loopback_calls_per_poll(count: int) -> tuple[float, int]:
    from octavia_http_fake import FakeOctaviaHTTP

    with FakeOctaviaHTTP() as api:
        cloud.connect = api.connect
        ids = api.add_members("pool-1", count, oper="OFFLINE")
        source = cloud.OctaviaStatusSource()
        clock = SimClock()

        def fetch(pool_id):
            if len(api.member_listings()) == POLLS - 1:
                for member in api.pools[pool_id].values():
                    member[1] = "ONLINE"
            return source.fetch_pool(pool_id)

        result = wait_for_members(default_spec(ids), fetch_pool=fetch, fetch_load_balancer=source.fetch_load_balancer,
                                  clock=clock, sleep=clock.sleep)
        source.close()
        cloud.connect = ENVIRONMENT_CONNECT
        return len(api.member_listings()) / result.polls, len(api.requests)


def simulated_latency(trials: int) -> list[float]:
    rng = random.Random(4)
    latencies = []
    for _ in range(trials):
        online_at = rng.uniform(0, 30)
        clock = SimClock()

        def fetch(pool_id, clock=clock, online_at=online_at):
            oper = "ONLINE" if clock.now >= online_at else "OFFLINE"
            return [MemberStatus(m, "ACTIVE", oper) for m in ("a", "b", "c")]

        result = wait_for_members(default_spec(("a", "b", "c")), fetch_pool=fetch,
                                  fetch_load_balancer=lambda i: LoadBalancerStatus(i, "ACTIVE", "ONLINE"),
                                  clock=clock, sleep=clock.sleep)
        latencies.append(result.waited_seconds - online_at)
    return latencies


def loopback_latency(trials: int) -> list[float]:
    """Wall clock: a thread turns the last member ONLINE at a random moment; the gate's delay after it."""
    from octavia_http_fake import FakeOctaviaHTTP

    rng = random.Random(7)
    latencies = []
    with FakeOctaviaHTTP() as api:
        cloud.connect = api.connect
        for trial in range(trials):
            pool = f"pool-{trial}"
            ids = api.add_members(pool, 3)
            api.pools[pool][ids[-1]][1] = "OFFLINE"
            flipped: list[float] = []

            def flip(delay=rng.uniform(0.2, 2.5), member=api.pools[pool][ids[-1]]):
                time.sleep(delay)
                with api.lock:
                    member[1] = "ONLINE"
                    flipped.append(time.monotonic())

            thread = threading.Thread(target=flip)
            source = cloud.OctaviaStatusSource()
            thread.start()
            wait_for_members(default_spec(ids, pool_id=pool), fetch_pool=source.fetch_pool,
                             fetch_load_balancer=source.fetch_load_balancer, clock=time.monotonic, sleep=time.sleep)
            opened = time.monotonic()
            thread.join()
            source.close()
            latencies.append(opened - flipped[0])
    cloud.connect = ENVIRONMENT_CONNECT
    return latencies


def summary(values: list[float]) -> str:
    return (f"max {max(values):.3f} s, p50 {statistics.median(values):.3f} s, mean {statistics.mean(values):.3f} s "
            f"over {len(values)} trials")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--local-cloud", action="store_true",
                        help="also measure on the local cloud (lab/localcloud/up; started if not running)")
    parser.add_argument("--trials", type=int, default=10, help="wall-clock latency trials (default 10)")
    args = parser.parse_args()
    import warnings

    warnings.simplefilter("ignore")

    print("API calls per poll, members in one pool (goal: constant, 1 per pool)")
    print(f"  {'members':>7}  {'simulated':>9}  {'loopback HTTP':>13}")
    for count in MEMBER_COUNTS:
        sim = simulated_calls_per_poll(count)
        http, _total = loopback_calls_per_poll(count)
        print(f"  {count:>7}  {sim:>9.2f}  {http:>13.2f}")
    print()
    print("Latency from the last member ONLINE to the gate opening, default interval 1 s (goal: <= 1 s)")
    print(f"  simulated clock:        {summary(simulated_latency(1000))}")
    print(f"  loopback HTTP, wall:    {summary(loopback_latency(args.trials))}")
    if args.local_cloud:
        cloud_figures(args.trials)
    else:
        print("  local cloud:            skipped (give --local-cloud with lab/localcloud/up running)")
    return 0


class ListingCounter:
    """Counts HTTP GETs of Octavia member listings made by this process (at the requests transport)."""

    def __init__(self) -> None:
        import requests.adapters

        self.count = 0
        original = requests.adapters.HTTPAdapter.send

        def send(adapter, request, *a, **kw):
            if request.method == "GET" and "/members" in request.url and ":9876/" in request.url:
                self.count += 1
            return original(adapter, request, *a, **kw)

        requests.adapters.HTTPAdapter.send = send


def cloud_figures(trials: int) -> None:
    """The same figures on the local cloud (real Keystone + Octavia + heartbeat daemon)."""
    sys.path.insert(0, str(ROOT / "tests" / "integration"))
    from localcloud.testing import Cleanup, ensure_up
    from test_readiness_cloud import build_zone, gate_latency

    from ha_endpoint.gates.provider import run_wait

    counter = ListingCounter()
    local = ensure_up()
    cleanup = Cleanup(local)
    try:
        zone = build_zone(local.conn, local.seed["az1_subnet_id"], cleanup.name, cleanup.add)
        latencies = [gate_latency(zone, local.faults, cleanup.add, hold_seconds=1.0 + 0.37 * i) for i in range(trials)]
        print(f"  local cloud, wall:      {summary(latencies)}")
        print()
        print("API calls per poll on the local cloud (HTTP GETs of the member listing per poll)")
        for count in MEMBER_COUNTS:
            members = [{"address": f"10.10.1.{100 + i % 10}", "protocol_port": 7000 + i // 10,
                        "subnet_id": zone.subnet_id} for i in range(count)]
            zone.wait_lb(timeout=300)
            local.conn.load_balancer.put(f"/lbaas/pools/{zone.pool_id}/members", json={"members": members})
            wanted = {(m["address"], m["protocol_port"]) for m in members}
            ids = [m.id for m in local.conn.load_balancer.members(zone.pool_id)  # PENDING_* right after the PUT
                   if (m.address, m.protocol_port) in wanted]
            before = counter.count
            result = run_wait(ReadinessInputs.of_bag(zone.props(ids, timeout_seconds=300)))
            listings = counter.count - before
            print(f"  {count:>7} members: {listings} listings over {result.polls} polls = "
                  f"{listings / result.polls:.2f} per poll (gate open after {result.waited_seconds:.1f} s, "
                  f"{result.waited_seconds / result.polls:.2f} s per poll)")
    finally:
        leftovers = cleanup.run()
        if leftovers:
            print("cleanup left:", *leftovers, sep="\n  ")
    rollout_figures(local)


def rollout_figures(local) -> None:
    """Replace every member of two zones under the real engine, sampled every 0.2 s (bench/lib/readiness_rollout.py)."""
    import tempfile

    from localcloud.testing import Cleanup
    from bench.lib.readiness_rollout import run_rollout

    print()
    print("Rollout safety: every member of two zones replaced under the real engine, sampled every 0.2 s")
    cleanup = Cleanup(local)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            figures = run_rollout(local, cleanup, Path(tmp))
    finally:
        cleanup.run()
    print(f"  min ONLINE members per pool (goal >= 1):       {figures['min_online_per_pool']}")
    print(f"  min ONLINE members with weight > 0 per pool:   {figures['min_serving_per_pool']}")
    print(f"  DNS-published zones with zero ONLINE (goal 0): {figures['published_zones_with_zero_online']}")
    print(f"  ({figures['samples_per_pool']} samples per pool, mean period {figures['mean_sample_period_s']} s, "
          f"update {figures['update_seconds']} s)")


if __name__ == "__main__":
    sys.exit(main())

"""Readiness figures: API calls per poll as members grow, and latency from the last member ONLINE to the gate.

    .venv/bin/python bench/readiness_figures.py            # simulated clock + real openstacksdk over loopback
    .venv/bin/python bench/readiness_figures.py --cloud X  # also on a real cloud (clouds.yaml entry X), see --help

Goals (issue 4): API calls per poll constant (one per pool) for 3, 30, 300 members in one pool; latency from the
last member ONLINE to the gate opening at most one poll interval (<= 1 s at the default interval).

Sources of the figures:
- "simulated": the pure waiter with a fake clock (exact, no I/O).
- "loopback": the real openstacksdk and the readiness provider's status source against a small Octavia v2 API on
  127.0.0.1 (tests/unit/readiness/octavia_http_fake.py); HTTP requests are counted at the server, time is real.
- "cloud": the local OpenStack (real Octavia + heartbeat daemon), when --cloud is given; see
  tests/integration/test_readiness_cloud.py for how members are created there.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "unit" / "readiness")]

from components.readiness import cloud  # noqa: E402
from components.readiness.model import LoadBalancerStatus, MemberStatus, PoolExpectation  # noqa: E402
from components.readiness.inputs import parse_readiness  # noqa: E402
from components.readiness.waiter import wait_for_members  # noqa: E402

MEMBER_COUNTS = (3, 30, 300)
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
    return parse_readiness({
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
    return latencies


def summary(values: list[float]) -> str:
    return (f"max {max(values):.3f} s, p50 {statistics.median(values):.3f} s, mean {statistics.mean(values):.3f} s "
            f"over {len(values)} trials")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cloud", help="clouds.yaml entry of a real cloud to measure on as well")
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
    if args.cloud:
        from readiness_cloud_bench import cloud_figures  # noqa: E402  (phase 2: tests/integration helpers)

        cloud_figures(args.cloud, args.trials)
    else:
        print("  real cloud:             skipped (give --cloud <clouds.yaml entry> with the local cloud up)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

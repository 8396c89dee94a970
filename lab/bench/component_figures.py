"""Benchmark: how long a mock run of HaEndpoint takes per resource, small vs large, measured in one process.

    .venv/bin/python lab/bench/component_figures.py [--repeat N]

Cases (``pulumi up`` mode against the fake cloud of tests/mocks, which allocates and checks like the cloud):

* small: 3 zones x 3 members (one per zone) x 2 listeners,
* large: 6 zones x 300 members (50 per zone, own-zone) x 2 listeners.

Each case runs ``--repeat`` times after a warm-up and the run with the least CPU time counts (on a shared machine
wall time mostly measures the neighbours; CPU time per resource is the figure to compare). Both are shown.
The same cases run twice: with CPython's stock garbage-collector thresholds (700, 10, 10) and with the older
generations' thresholds raised (700, 1000, 1000), because most of the growth of the large case comes from full
collections walking every live Output, future and resource of the Pulumi runtime. Under each case a
second line measures the Pulumi mock runtime alone (as many bare Member resources, a do-nothing mock) as a floor.
Goal: under 2 ms per resource and the large case within 1.5x of the small one.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab")]

import pulumi  # noqa: E402
import pulumi_openstack as openstack  # noqa: E402

from tests.mocks import FakeCloud, run_component, run_program  # noqa: E402
from tests.mocks.configs import sized_endpoint  # noqa: E402

CASES = {"small 3z x 3m x 2l": (3, 1, 2), "large 6z x 300m x 2l": (6, 50, 2)}
TUNED_THRESHOLDS = (700, 1000, 1000)  # fewer full collections; generation 0 unchanged


class BareMocks(FakeCloud):
    """A mock that stores nothing and checks nothing: what the Pulumi mock runtime costs by itself."""

    def new_resource(self, args):
        self.registrations.append({"type": args.typ})
        return f"{args.name}-id", dict(args.inputs)


def bare_program(count: int):
    def program():
        parent = pulumi.ComponentResource("bench:index:Bare", "bare")
        opts = pulumi.ResourceOptions(parent=parent)
        for index in range(count):
            openstack.loadbalancer.Member(f"m{index}", pool_id="pool", address="10.0.0.1", protocol_port=1,
                                          opts=opts)
    return program


def measure(run) -> tuple[int, float, float]:
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    count = run()
    return count, (time.perf_counter() - wall) * 1000 / count, (time.process_time() - cpu) * 1000 / count


def component_run(zones: int, per_zone: int, listeners: int):
    def run() -> int:
        result = run_component(sized_endpoint(zones, per_zone, listeners), FakeCloud.topology(zones=zones),
                               preview=False)
        return len(result.registrations)
    return run


def bare_run(count: int):
    def run() -> int:
        run_program(bare_program(count), BareMocks(), preview=False, outputs=lambda _: {})
        return count + 1
    return run


def best(run, repeat: int) -> tuple[int, float, float]:
    results = [measure(run) for _ in range(repeat)]
    return min(results, key=lambda result: result[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; the fastest counts (default 3)")
    repeat = parser.parse_args().repeat
    component_run(3, 1, 2)()  # warm-up: imports, first registrations
    stock = gc.get_threshold()
    print(f"{'case':<24} {'gc thresholds':<22} {'resources':>9} {'wall ms/res':>12} {'cpu ms/res':>11}")
    verdicts = []
    for label, thresholds in (("stock", stock), ("tuned", TUNED_THRESHOLDS)):
        gc.set_threshold(*thresholds)
        figures, floors = {}, {}
        for case, shape in CASES.items():
            figures[case] = best(component_run(*shape), repeat)
            count, wall, cpu = figures[case]
            print(f"{case:<24} {label + str(thresholds):<22} {count:>9} {wall:>12.2f} {cpu:>11.2f}")
            floors[case] = best(bare_run(count - 1), repeat)
            _, wall, cpu = floors[case]
            print(f"{'  pulumi mock runtime':<24} {label + str(thresholds):<22} {count:>9} {wall:>12.2f} {cpu:>11.2f}")
        (_, small, small_cpu), (_, large, large_cpu) = figures.values()
        (_, _, floor_small), (_, _, floor_large) = floors.values()
        met = max(small_cpu, large_cpu) < 2 and large_cpu / small_cpu <= 1.5
        verdicts.append(f"{label} gc: {small_cpu:.2f} -> {large_cpu:.2f} ms/resource cpu "
                        f"({large_cpu / small_cpu:.2f}x; "
                        f"wall {small:.2f} -> {large:.2f}); the mock runtime alone: {floor_small:.2f} -> "
                        f"{floor_large:.2f} ({floor_large / floor_small:.2f}x). Goal (< 2 ms, <= 1.5x) on cpu: "
                        f"{'met' if met else 'NOT met'}")
    gc.set_threshold(*stock)
    print()
    print("\n".join(verdicts))


if __name__ == "__main__":
    main()

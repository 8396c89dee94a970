"""Issue 27's dev-shape `up`: the zone's load balancer as the provider's resources, or as ONE populated create
(``loadBalancerCreate: single-call``), through the real engine, side by side in one run.

Prints, for a shape file (default Pulumi.dev.yaml, the dev stack: ovn), medians of ``--rounds`` interleaved rounds:

  - the cloud's own time to build the shape's three zones at once (bench/engine_figures.py's chain, with the shape's
    provider, listeners and monitors) and an empty program's `up` (the engine's fixed overhead): the goal's budget;
  - the component with ``memberUpdates: batch`` and ``loadBalancerCreate: per-object`` (the provider's load
    balancer, listener, pool and monitor resources), `up`, a no-change `up`, and `destroy`;
  - the same with ``loadBalancerCreate: single-call`` (one LoadBalancerTree per zone), the same three;
  - the readiness hold the shape's monitor costs under the ovn provider (it is in both `up`s:
    ``ha_endpoint.core.predicates.online_hold_seconds``);
  - where the single-call `up`'s time goes (the engine's event log, bench/lib/event_timings.py);
  - whether the cloud's amphora provider finishes a fully populated create (one populated load balancer posted
    directly: are its listeners and pools ACTIVE once it is?).

Run: .venv/bin/python bench/single_call_figures.py [--rounds N] [--shape Pulumi.dev.yaml]
     (needs engine/build.sh and `make localcloud`)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "components"))

import yaml  # noqa: E402

from bench.engine_figures import chain_of, engine_on_local_cloud, zones_in_parallel  # noqa: E402
from bench.lib import event_timings  # noqa: E402
from ha_endpoint.core import predicates  # noqa: E402
from tests.e2e.pulumi_cli import PulumiStack, with_openstack_plugin  # noqa: E402

MODES = ("per-object", "single-call")


def shape_of(path: Path, mode: str) -> dict:
    endpoint = yaml.safe_load(path.read_text())["config"]["ha-endpoint:endpoint"]
    name = f"bench-{mode.split('-')[0]}"
    return {**endpoint, "name": name, "dns": {**endpoint["dns"], "record": name}, "memberUpdates": "batch",
            "loadBalancerCreate": mode}


def hold_seconds(shape: dict) -> float:
    """The longest readiness hold of the shape's monitors under its provider."""
    provider = shape.get("loadBalancerProvider", "amphora")
    holds = [predicates.online_hold_seconds(provider, m.get("delay", 5), m.get("timeout", 3),
                                            m.get("maxRetriesDown", 3))
             for m in (listener.get("monitor") or {} for listener in shape["listeners"]) if m]
    return max(holds, default=0)


def amphora_populated_create(conn) -> str:
    """Post one populated load balancer under amphora; what its listeners and pools are once it is ACTIVE."""
    subnet = conn.network.find_subnet("cp-az1", ignore_missing=False)
    body = {"name": "bench-populated-amphora", "vip_subnet_id": subnet.id, "availability_zone": "az1",
            "provider": "amphora", "listeners": [{
                "name": "bench-populated-listener", "protocol": "TCP", "protocol_port": 6443, "default_pool": {
                    "name": "bench-populated-pool", "protocol": "TCP", "lb_algorithm": "ROUND_ROBIN",
                    "healthmonitor": {"type": "TCP", "delay": 5, "timeout": 3, "max_retries": 2},
                    "members": [{"address": "10.10.1.10", "protocol_port": 6443, "subnet_id": subnet.id}]}}]}
    lb = conn.load_balancer.post("/lbaas/loadbalancers", json={"loadbalancer": body}).json()["loadbalancer"]
    try:
        deadline = time.monotonic() + 120
        while conn.load_balancer.get_load_balancer(lb["id"]).provisioning_status != "ACTIVE":
            if time.monotonic() > deadline:
                return "the load balancer was not ACTIVE after 120 s"
            time.sleep(0.2)
        time.sleep(5)
        listeners = [l.provisioning_status for l in conn.load_balancer.listeners(loadbalancer_id=lb["id"])]
        pools = [p.provisioning_status for p in conn.load_balancer.pools(loadbalancer_id=lb["id"])]
        return f"load balancer ACTIVE; 5 s later its listeners {listeners}, its pools {pools}"
    finally:
        conn.load_balancer.delete_load_balancer(lb["id"], cascade=True, ignore_missing=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="rounds of both modes, interleaved; medians")
    parser.add_argument("--shape", type=Path, default=ROOT / "Pulumi.dev.yaml", help="the stack file to copy")
    options = parser.parse_args()
    cloud, environment, plugin = engine_on_local_cloud()
    figures: dict[str, list[dict]] = {mode: [] for mode in MODES}
    empty_ups: list[float] = []
    parallel: list[float] = []   # the cloud's own time to build the shape's three zones at once
    with tempfile.TemporaryDirectory(prefix="single-call-figures-") as workdir:
        env = with_openstack_plugin(environment, plugin, Path(workdir) / "home")
        empty = PulumiStack.program(Path(workdir) / "empty", "empty", "bench", "import pulumi\n", env)
        stacks = {}
        for mode in MODES:
            stacks[mode] = PulumiStack.create(Path(workdir) / mode, "bench", env)
            stacks[mode].write_config(shape_of(options.shape, mode))
        chain = chain_of(shape_of(options.shape, "single-call"))
        for number in range(options.rounds):
            parallel.append(zones_in_parallel(cloud.clouds_yaml, chain=chain))
            empty_ups.append(empty.up(policy=False).seconds)
            for mode in (MODES if number % 2 == 0 else MODES[::-1]):
                stack = stacks[mode]
                row: dict = {}
                try:
                    seconds, code, output, events = event_timings.run_logged(
                        stack, "up", "--yes", "--non-interactive", "--skip-preview")
                    if code != 0:
                        raise RuntimeError(f"{mode}: pulumi up failed ({code}):\n{output[-3000:]}")
                    row.update(up_s=seconds, up_events=events)
                    seconds, code, output, _ = event_timings.run_logged(
                        stack, "up", "--yes", "--non-interactive", "--skip-preview")
                    row.update(noop_up_s=seconds, noop_changes="no change" if " updated" not in output
                               and " created" not in output else "CHANGES")
                finally:
                    seconds, code, output, events = event_timings.run_logged(
                        stack, "destroy", "--yes", "--non-interactive", "--skip-preview")
                    row.update(destroy_s=seconds, destroy_events=events)
                    if code != 0:
                        print(f"{mode}: pulumi destroy failed ({code}):\n{output[-3000:]}")
                figures[mode].append(row)
                print(f"round {number + 1}, {mode}: up {row['up_s']:.1f} s, no-change up {row['noop_up_s']:.1f} s "
                      f"({row['noop_changes']}), destroy {row['destroy_s']:.1f} s", flush=True)
    shape = shape_of(options.shape, "single-call")

    def median(mode: str, key: str) -> float:
        return statistics.median(row[key] for row in figures[mode])

    print(f"medians of {options.rounds} round(s), shape {options.shape.name} ({len(shape['zones'])} zones, "
          f"{len(shape['listeners'])} listener(s), {len(shape['members'])} members, provider "
          f"{shape.get('loadBalancerProvider', 'amphora')}), memberUpdates batch, the unpatched OpenStack plugin")
    budget = statistics.median(parallel) + statistics.median(empty_ups)
    hold = hold_seconds(shape)
    print(f"  the cloud's own time for the three zones at once     {statistics.median(parallel):6.2f} s")
    print(f"  an empty program's up                                {statistics.median(empty_ups):6.2f} s")
    print(f"  the readiness hold of the provider's early ONLINE    {hold:6.2f} s (in every up of this shape)")
    for mode in MODES:
        up = median(mode, "up_s")
        print(f"  loadBalancerCreate {mode:12s} up / no-change up / destroy  {up:6.2f} s / "
              f"{median(mode, 'noop_up_s'):.2f} s / {median(mode, 'destroy_s'):.2f} s;  ratio up / (three zones at "
              f"once + empty up) {up / budget:.2f}, without the hold {(up - hold) / budget:.2f}")
    print(f"  single-call / per-object, up                         "
          f"{median('single-call', 'up_s') / median('per-object', 'up_s'):6.2f}")
    print(f"  goal (issue 27): ratio at most 1.2: single-call {median('single-call', 'up_s') / budget:.2f}")
    typical = sorted(figures["single-call"], key=lambda r: r["up_s"])[(len(figures["single-call"]) - 1) // 2]
    event_timings.report("single-call, up", typical["up_s"], typical["up_events"])
    typical = sorted(figures["per-object"], key=lambda r: r["up_s"])[(len(figures["per-object"]) - 1) // 2]
    event_timings.report("per-object, up", typical["up_s"], typical["up_events"])
    print(f"amphora, one populated create posted directly: {amphora_populated_create(cloud.conn)}")


if __name__ == "__main__":
    main()

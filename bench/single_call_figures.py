"""Issue 27's ratio the way not built: each zone's load balancer as ONE populated create, through the real engine.

The dev shape's `up` (the component, the provider's resources) waits for nine serialized provider steps per zone
(load balancer, then per listener: listener, pool, monitor, member), each polled by the provider's state-change
wait (a check at once, then 1 s, 2 s, 4 s apart) where the cloud needs ~0.3 s; notes-issue-27.md puts the floor of
that design at ~19 s, a ratio of ~1.6 against the goal's 1.2. Octavia also takes a load balancer with its listeners,
pools, monitors and members in one POST. This benchmark measures what that would give, side by side in one run:

  - the cloud's own time for the three zones built at once (bench/engine_figures.py `zones_in_parallel`: each zone's
    chain, one call after another, polled at 0.1 s) and an empty program's `up` (the engine's fixed overhead);
  - the component's dev shape (Pulumi.amphora.yaml's shape, memberUpdates per-member), `up` and `destroy`;
  - a sketch program: per zone one dynamic resource that POSTs the populated load balancer and polls its status
    tree every 0.2 s until it is ACTIVE with every member ONLINE, then the same steps the component takes after its
    readiness gate (a floating IP allocated beside it and associated with the VIP port, the multi-value and per-zone
    A records), with the provider's resources; `up` and `destroy` (a cascade delete);
  - each `up`'s ratio up / (three zones at once + empty-program up), and where the sketch's time goes.

The sketch is a measurement, not the component: no security groups, drains, adoption, drift or pack views; updates
are not written (a changed input replaces the load balancer). It answers one question: can an `up` through the
engine reach the goal with fewer serialized steps?

Run: .venv/bin/python bench/single_call_figures.py [--rounds N]   (needs `make engine localcloud`)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.engine_figures import Variant, dev_shaped_endpoint, engine_on_local_cloud  # noqa: E402
from bench.lib import event_timings  # noqa: E402
from tests.e2e.pulumi_cli import PulumiStack, with_openstack_plugin  # noqa: E402

SKETCH = "bench-sc"

PROGRAM = r'''
"""The dev shape with one populated load-balancer create per zone (bench/single_call_figures.py)."""
import json
import time

import pulumi
import pulumi_openstack as openstack
from pulumi.dynamic import CreateResult, Resource, ResourceProvider

POLL = 0.2
SHAPE = json.loads(pulumi.Config().require("shape"))


class _PopulatedLoadBalancer(ResourceProvider):
    """POST /v2/lbaas/loadbalancers with every listener, pool, monitor and member; ready when the status tree
    shows the load balancer ACTIVE and every member ONLINE."""

    def create(self, props):
        import openstack as sdk
        from openstack import exceptions
        conn = sdk.connect()
        response = conn.load_balancer.post("/lbaas/loadbalancers", json={"loadbalancer": props["body"]},
                                           raise_exc=False)
        exceptions.raise_from_response(response)
        lb = response.json()["loadbalancer"]
        deadline = time.monotonic() + 600
        while True:
            response = conn.load_balancer.get(f"/lbaas/loadbalancers/{lb['id']}/status", raise_exc=False)
            exceptions.raise_from_response(response)
            tree = response.json()["statuses"]["loadbalancer"]
            if tree["provisioning_status"] == "ERROR":
                raise RuntimeError(f"load balancer {lb['id']} went to ERROR")
            members = [m for listener in tree.get("listeners", []) for pool in listener.get("pools", [])
                       for m in pool.get("members", [])]
            if tree["provisioning_status"] == "ACTIVE" and members and \
                    all(m["operating_status"] == "ONLINE" for m in members):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"load balancer {lb['id']}: not ACTIVE with every member ONLINE in 600 s")
            time.sleep(POLL)
        return CreateResult(lb["id"], {**props, "vip_port_id": lb["vip_port_id"]})

    def delete(self, id, props):
        import openstack as sdk
        conn = sdk.connect()
        conn.load_balancer.delete_load_balancer(id, cascade=True, ignore_missing=True)
        deadline = time.monotonic() + 600
        while conn.load_balancer.find_load_balancer(id) is not None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"load balancer {id} not gone after 600 s")
            time.sleep(POLL)


class PopulatedLoadBalancer(Resource):
    vip_port_id: pulumi.Output[str]

    def __init__(self, name, body, opts=None):
        super().__init__(_PopulatedLoadBalancer(), name, {"body": body, "vip_port_id": None}, opts)


name = SHAPE["name"]
public = openstack.networking.get_network(name=SHAPE["floatingNetwork"], external=True)
zone_id = openstack.dns.get_dns_zone(name=SHAPE["dns"]["dnsZone"]).id
addresses = []
for az, zone in SHAPE["zones"].items():
    subnet = openstack.networking.get_subnet(name=zone["subnet"])
    listeners = []
    for listener in SHAPE["listeners"]:
        monitor = {"type": listener["monitor"]["type"], "delay": listener["monitor"].get("delay", 5),
                   "timeout": listener["monitor"].get("timeout", 3),
                   "max_retries": listener["monitor"].get("maxRetries", 2),
                   "max_retries_down": listener["monitor"].get("maxRetriesDown", 3)}
        if "path" in listener["monitor"]:
            monitor["url_path"] = listener["monitor"]["path"]
        port = listener.get("memberPort", listener["port"])
        listeners.append({
            "name": f"{name}-{az}-{listener['port']}-listener", "protocol": "TCP",
            "protocol_port": listener["port"], "allowed_cidrs": SHAPE.get("allowedCidrs", []),
            "default_pool": {
                "name": f"{name}-{az}-{listener['port']}-pool", "protocol": "TCP", "lb_algorithm": "ROUND_ROBIN",
                "healthmonitor": monitor,
                "members": [{"name": f"{m['name']}-{port}", "address": m["address"], "protocol_port": port,
                             "subnet_id": subnet.id} for m in SHAPE["members"] if m["az"] == az]}})
    lb = PopulatedLoadBalancer(f"{name}-{az}-lb", {
        "name": f"{name}-{az}-lb", "vip_subnet_id": subnet.id, "availability_zone": az,
        "provider": SHAPE["loadBalancerProvider"], "listeners": listeners})
    fip = openstack.networking.FloatingIp(f"{name}-{az}-fip", pool=public.name)
    association = openstack.networking.FloatingIpAssociate(f"{name}-{az}-fip-assoc", floating_ip=fip.address,
                                                           port_id=lb.vip_port_id)
    addresses.append(association.floating_ip)  # published once associated, as the component's records are
    openstack.dns.RecordSet(f"{name}-{az}-dns", zone_id=zone_id, name=f"{SHAPE['dns']['record']}-{az}.{SHAPE['dns']['dnsZone']}",
                            type="A", ttl=SHAPE["dns"]["ttl"], records=[addresses[-1]])
openstack.dns.RecordSet(f"{name}-dns", zone_id=zone_id, name=f"{SHAPE['dns']['record']}.{SHAPE['dns']['dnsZone']}",
                        type="A", ttl=SHAPE["dns"]["ttl"], records=addresses)
pulumi.export("addresses", addresses)
'''


def sketch_shape() -> dict:
    """The component's dev shape (bench/engine_figures.py), under names of its own."""
    shape = dev_shaped_endpoint()
    return {**shape, "name": SKETCH, "dns": {**shape["dns"], "record": SKETCH}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="measurements of each program, interleaved; medians")
    options = parser.parse_args()
    cloud, environment, plugin = engine_on_local_cloud()
    with tempfile.TemporaryDirectory(prefix="single-call-figures-") as workdir:
        component = Variant("component", plugin, environment, Path(workdir) / "component")
        sketch = PulumiStack.program(Path(workdir) / "sketch", "single-call", "bench", PROGRAM,
                                     with_openstack_plugin(environment, plugin, Path(workdir) / "sketch-home"))
        sketch.run("config", "set", "shape", json.dumps(sketch_shape()))
        sketch.run("config", "set", "openstack:cloud", "localcloud")
        rounds: list[dict] = []
        for number in range(options.rounds):
            figures = component.round(cloud.conn)   # the cloud's three zones at once, the empty up, the component
            budget = figures["parallel_chain"] + figures["empty_up_s"]
            try:
                seconds, code, output, events = event_timings.run_logged(
                    sketch, "up", "--yes", "--non-interactive", "--skip-preview")
                if code != 0:
                    raise RuntimeError(f"pulumi up of the sketch failed ({code}):\n{output[-3000:]}")
            finally:
                destroy_s, destroy_code, destroy_output, destroy_events = event_timings.run_logged(
                    sketch, "destroy", "--yes", "--non-interactive", "--skip-preview")
                if destroy_code != 0:
                    print(f"pulumi destroy of the sketch failed ({destroy_code}):\n{destroy_output[-3000:]}")
            rounds.append({"budget": budget, "parallel_chain": figures["parallel_chain"],
                           "empty_up_s": figures["empty_up_s"], "component_up_s": figures["dev_up_s"],
                           "component_destroy_s": figures["dev_destroy_s"], "component_ratio": figures["parallel_ratio"],
                           "sketch_up_s": seconds, "sketch_destroy_s": destroy_s, "sketch_ratio": seconds / budget,
                           "up_events": events, "destroy_events": destroy_events})
            print(f"round {number + 1}: three zones at once {figures['parallel_chain']:.1f} s, empty up "
                  f"{figures['empty_up_s']:.2f} s; component up {figures['dev_up_s']:.1f} s (ratio "
                  f"{figures['parallel_ratio']:.2f}); one populated create per zone up {seconds:.1f} s (ratio "
                  f"{seconds / budget:.2f})", flush=True)

    def median(key: str) -> float:
        return statistics.median(r[key] for r in rounds)

    print(f"medians of {len(rounds)} round(s), the engine's own OpenStack plugin (unpatched)")
    print(f"  the cloud's own time for the three zones at once   {median('parallel_chain'):6.2f} s")
    print(f"  an empty program's up                              {median('empty_up_s'):6.2f} s")
    print(f"  component (provider resources), up / destroy       {median('component_up_s'):6.2f} s / "
          f"{median('component_destroy_s'):.2f} s   ratio {median('component_ratio'):.2f}")
    print(f"  one populated create per zone, up / destroy        {median('sketch_up_s'):6.2f} s / "
          f"{median('sketch_destroy_s'):.2f} s   ratio {median('sketch_ratio'):.2f}")
    print(f"  goal (issue 27): ratio at most 1.2: the component {'meets' if median('component_ratio') <= 1.2 else 'misses'}"
          f" it; one populated create per zone {'would meet' if median('sketch_ratio') <= 1.2 else 'would miss'} it")
    typical = sorted(rounds, key=lambda r: r["sketch_up_s"])[(len(rounds) - 1) // 2]
    print("where the sketch's time goes (engine event log of its median round)")
    event_timings.report("one populated create per zone, up", typical["sketch_up_s"], typical["up_events"])
    event_timings.report("one populated create per zone, destroy", typical["sketch_destroy_s"],
                         typical["destroy_events"])


if __name__ == "__main__":
    main()

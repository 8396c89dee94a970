"""Figures of the real engine on the local cloud, measured side by side in one run.

Prints:
  - the engine build: warm (cache present) measured now; cold as recorded by the last cold build (BUILD_INFO), or
    measured now with --cold (empties GOMODCACHE/GOCACHE into temp dirs: ~15 min on 2 cores);
  - `pulumi preview` and `pulumi up` wall time of the dev stack's shape (--shape dev, the default: Pulumi.dev.yaml,
    Octavia's ovn provider, 3 zones, 1 listener, 3 members; --shape amphora: Pulumi.amphora.yaml, 2 listeners), and
    of an empty Python program (the engine's fixed overhead), in private copies of the project;
  - the critical path of ONE zone of that shape built directly with openstacksdk, one call after another, each
    polled at 0.1 s: LB -> ACTIVE, per listener (2) listener, pool, monitor, member -> ONLINE, floating IP, recordset;
  - the ratio up / (one zone's chain + empty-program overhead): goal <= 1.5, i.e. zones are built in parallel;
  - the ratio up / limit, the limit counted as issue 53 states it: the three zones' chains at once + the health-proof
    window any correct gate must wait (under ovn the provider says ONLINE before its first check:
    predicates.online_hold_seconds from the monitor's settings, 20 s for the dev shape; 0 under amphora) + an empty
    up: goal <= 1.1 on the shape's own members, <= 1.2 at 30 members per zone (--members 30: that many serving Nova
    servers per zone, booted first, ten minutes or so; the chains then create a zone's members one after another,
    each waited for ACTIVE and ONLINE, as Octavia's one write at a time per load balancer makes any client do);
  - the neutron-lbaas warnings an `up` prints, and the dev shape's destroy beside the cloud's own time to delete one
    zone (cascade delete of its load balancer, its floating IP and recordset);
  - where the time of the dev shape's `up` and `destroy` goes (lab/bench/lib/event_timings.py: per-resource steps from
    the engine's event log, and the chain of steps that explains the wall time);
  - unpatched/patched side by side in the same run: the engine's own OpenStack plugin (unpatched, as users run it)
    and the same plugin built with lab/engine/openstack/patches (engine part "openstack-patched", opt-in, built by
    `lab/engine/build.sh --part openstack-patched` when the cache has none: a minute or two with warm Go caches;
    --no-patched skips it).

The machine is shared and its load moves the cloud's own speed from one minute to the next, so each round measures
one zone's chain right before the up it is compared with, and --rounds N interleaves the two plugins (unpatched,
patched, patched, unpatched, ...) and prints medians.

Run: .venv/bin/python lab/bench/engine_figures.py [--cold] [--no-patched] [--rounds N] [--events-dir DIR] [--members N]
     (needs lab/engine/build.sh and `make localcloud`)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab")]

import yaml  # noqa: E402

from bench.lib import event_timings  # noqa: E402
from ha_endpoint.core import predicates  # noqa: E402
from bench.lib.engine_in_use import describe, engine_environment  # noqa: E402
from localcloud.testing import ensure_up  # noqa: E402
from tests.e2e.pulumi_cli import PulumiStack, patched_openstack_plugin, project_environment, with_openstack_plugin  # noqa: E402

ENDPOINT = "bench-api"


def timed(action) -> float:
    started = time.monotonic()
    action()
    return time.monotonic() - started


def engine_build(cold: bool) -> dict[str, float]:
    figures = {"warm_s": timed(lambda: subprocess.run(["lab/engine/build.sh"], cwd=ROOT, check=True,
                                                      capture_output=True))}
    if cold:
        with tempfile.TemporaryDirectory() as modcache, tempfile.TemporaryDirectory() as gocache:
            env = {**os.environ, "GOMODCACHE": modcache, "GOCACHE": gocache,
                   "HA_ENDPOINT_CACHE": str(Path(modcache) / "cache")}
            figures["cold_s"] = timed(lambda: subprocess.run(["lab/engine/build.sh"], cwd=ROOT, env=env, check=True,
                                                             capture_output=True))
    else:
        info = Path(os.environ.get("HA_ENDPOINT_CACHE", Path.home() / ".cache/ha-endpoint")) / "engine/current"
        figures["recorded"] = (info / "BUILD_INFO").read_text().strip() if (info / "BUILD_INFO").exists() else "-"
    return figures


SHAPES = {"dev": "Pulumi.dev.yaml", "amphora": "Pulumi.amphora.yaml"}
"""--shape: whose stack file the measured endpoint copies (dev: Octavia's ovn provider; amphora: the amphora one)."""


def shaped_endpoint(shape: str, servers: dict | None = None) -> dict:
    """The shape's endpoint under the bench's name; ``servers`` (az -> Nova servers): those as its members instead of
    the shape's own, each given by server id (the component finds its port and address)."""
    endpoint = yaml.safe_load((ROOT / SHAPES[shape]).read_text())["config"]["ha-endpoint:endpoint"]
    endpoint = {**endpoint, "name": ENDPOINT, "dns": {**endpoint["dns"], "record": ENDPOINT}}
    if servers is not None:
        endpoint["members"] = [{"name": server.name, "server": server.id, "az": az}
                               for az, zone in servers.items() for server in zone]
    return endpoint


def member_addresses(endpoint: dict, servers: dict | None = None) -> dict[str, list[str]]:
    """az -> the addresses of its members: the shape's own, or the servers' fixed addresses."""
    if servers is not None:
        return {az: [next(a["addr"] for addrs in server.addresses.values() for a in addrs) for server in zone]
                for az, zone in servers.items()}
    found: dict[str, list[str]] = {}
    for member in endpoint["members"]:
        found.setdefault(member["az"], []).append(member["address"])
    return found


def listener_monitors(endpoint: dict) -> tuple[tuple[int, dict], ...]:
    """Each listener's port with its monitor's settings (the component's defaults where the stack file gives none)."""
    listeners = []
    for listener in endpoint["listeners"]:
        monitor = listener.get("monitor") or {}
        listeners.append((listener["port"], {"delay": monitor.get("delay", 5), "timeout": monitor.get("timeout", 3),
                                              "max_retries": monitor.get("maxRetries", 2),
                                              "max_retries_down": monitor.get("maxRetriesDown", 3)}))
    return tuple(listeners)


def chain_of(endpoint: dict, addresses: dict[str, list[str]] | None = None) -> dict:
    """What one zone's chain builds for this endpoint: its provider (None: the cloud's default, amphora), whether its
    load balancer is pinned to the AZ, its algorithm, each listener's port and monitor, and each zone's member
    addresses (``addresses``, else the shape's own)."""
    provider = endpoint.get("loadBalancerProvider")
    return {"provider": None if provider in (None, "amphora") else provider,
            "pin_az": predicates.pins_availability_zone(provider),
            "lb_algorithm": predicates.OVN_METHOD if predicates.is_ovn(provider) else "ROUND_ROBIN",
            "listeners": listener_monitors(endpoint), "members": addresses or member_addresses(endpoint)}


def health_proof_seconds(endpoint: dict) -> float:
    """The window any correct gate must wait after a member's ONLINE before it may count it: under ovn the provider
    says ONLINE before the first check (predicates.online_hold_seconds, from the monitor's settings); the longest of
    the endpoint's listeners (they are held at once). 0 where the provider reports OFFLINE until a check passed."""
    provider = endpoint.get("loadBalancerProvider")
    return max(predicates.online_hold_seconds(provider, monitor["delay"], monitor["timeout"],
                                              monitor["max_retries_down"])
               for _, monitor in listener_monitors(endpoint))


def engine_on_local_cloud():
    """The local cloud (started if needed), the environment the engine runs in against it (printed), and the
    engine's own OpenStack plugin (unpatched, as users run it)."""
    cloud = ensure_up()
    environment = {**engine_environment(project_environment()), "OS_CLIENT_CONFIG_FILE": cloud.clouds_yaml,
                   "OS_CLOUD": "localcloud"}
    print(describe(environment), flush=True)
    return cloud, environment, Path(environment["HA_ENGINE_BIN"]).parent / "plugins" / "pulumi-resource-openstack"


class Variant:
    """One OpenStack plugin under test: its own PULUMI_HOME, an empty program and a dev-shaped stack."""

    def __init__(self, label: str, plugin: Path, environment: dict[str, str], workdir: Path, endpoint: dict,
                 addresses: dict[str, list[str]] | None = None):
        self.label, self.plugin = label, plugin
        self.chain, self.health_proof_s = chain_of(endpoint, addresses), health_proof_seconds(endpoint)
        self.clouds_yaml = environment["OS_CLIENT_CONFIG_FILE"]
        env = with_openstack_plugin(environment, plugin, workdir / "home")
        empty = workdir / "empty"
        empty.mkdir(parents=True)
        (empty / "Pulumi.yaml").write_text("name: empty\nruntime:\n  name: python\n  options:\n"
                                           "    toolchain: pip\n    virtualenv: .venv\n")
        (empty / "__main__.py").write_text("import pulumi\n")
        (empty / ".venv").symlink_to(ROOT / ".venv")
        self.empty = PulumiStack(empty, "bench", env)
        self.empty.run("stack", "init", "bench", "--non-interactive")
        self.dev = PulumiStack.create(workdir / "dev", "bench", env)
        self.dev.write_config(endpoint)
        self.rounds: list[dict] = []

    def previews(self) -> dict[str, float]:
        return {"empty_preview_s": self.empty.preview(policy=False).seconds,
                "dev_preview_s": self.dev.preview(policy=False).seconds,
                "dev_preview_with_policies_s": self.dev.preview().seconds}

    def round(self, conn) -> dict:
        """One measurement: one zone's chain (openstacksdk) just before, the empty program's up, the dev shape's up
        and destroy with their event logs."""
        figures: dict = {"chain": one_zone_chain(conn, self.chain),
                         "parallel_chain": zones_in_parallel(self.clouds_yaml, self.chain),
                         "empty_up_s": self.empty.up(policy=False).seconds}
        try:
            seconds, code, output, events = event_timings.run_logged(
                self.dev, "up", "--yes", "--non-interactive", "--skip-preview")
            if code != 0:
                raise RuntimeError(f"pulumi up of the dev shape failed ({code}):\n{output[-3000:]}")
            figures.update(dev_up_s=seconds, up_events=events, lbaas_warnings=output.count("neutron-lbaas"),
                           dev_resources=len(self.dev.resources()))
        finally:
            seconds, code, output, events = event_timings.run_logged(
                self.dev, "destroy", "--yes", "--non-interactive", "--skip-preview")
            figures.update(dev_destroy_s=seconds, destroy_events=events)
            if code != 0:
                print(f"pulumi destroy of the dev shape failed ({code}):\n{output[-3000:]}")
        budget = figures["chain"]["total"] + figures["empty_up_s"]
        figures["ratio"] = figures["dev_up_s"] / budget
        figures["parallel_ratio"] = figures["dev_up_s"] / (figures["parallel_chain"] + figures["empty_up_s"])
        # issue 53's limit: the cloud's own time for the zones at once + the health-proof window a correct gate must
        # wait (the chain's ONLINE comes before it under ovn) + an empty up
        figures["limit_s"] = figures["parallel_chain"] + self.health_proof_s + figures["empty_up_s"]
        figures["limit_ratio"] = figures["dev_up_s"] / figures["limit_s"]
        self.rounds.append(figures)
        return figures

    def median(self, key: str) -> float:
        return statistics.median(r[key] for r in self.rounds)

    def median_round(self) -> dict:
        """The round whose up is the median one (its event logs are the ones reported)."""
        ordered = sorted(self.rounds, key=lambda r: r["dev_up_s"])
        return ordered[(len(ordered) - 1) // 2]


def wait_for(predicate, timeout: float = 120, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError("the cloud did not reach the expected state")


def one_zone_chain(conn, chain: dict, az: str = "az1") -> dict[str, float]:
    """One zone built one call after another, each step waited for, as the engine's critical path must (``chain``:
    the provider, whether the load balancer is pinned to the AZ, the algorithm, each listener's port and monitor)."""
    lb_api = conn.load_balancer
    subnet = conn.network.find_subnet(f"cp-{az}", ignore_missing=False)
    public = conn.network.find_network("public", ignore_missing=False)
    zone = conn.dns.find_zone("example.test.", ignore_missing=False)
    steps: dict[str, float] = {}
    created = {}
    active = lambda getter, ident: lambda: getter(ident).provisioning_status == "ACTIVE"
    started = time.monotonic()
    try:
        t = time.monotonic()
        lb = lb_api.create_load_balancer(name=f"{ENDPOINT}-chain-{az}-lb", vip_subnet_id=subnet.id,
                                         **({"availability_zone": az} if chain["pin_az"] else {}),
                                         **({"provider": chain["provider"]} if chain["provider"] else {}))
        created["lb"] = lb
        wait_for(active(lb_api.get_load_balancer, lb.id))
        steps["loadbalancer"] = time.monotonic() - t
        for port, monitor in chain["listeners"]:  # one after another: Octavia serializes writes on one LB
            t = time.monotonic()
            listener = lb_api.create_listener(loadbalancer_id=lb.id, protocol="TCP", protocol_port=port)
            wait_for(active(lb_api.get_load_balancer, lb.id))
            steps[f"listener {port}"] = time.monotonic() - t
            t = time.monotonic()
            pool = lb_api.create_pool(listener_id=listener.id, protocol="TCP", lb_algorithm=chain["lb_algorithm"])
            wait_for(active(lb_api.get_load_balancer, lb.id))
            steps[f"pool {port}"] = time.monotonic() - t
            t = time.monotonic()
            lb_api.create_health_monitor(pool_id=pool.id, type="TCP", **monitor)
            wait_for(active(lb_api.get_load_balancer, lb.id))
            steps[f"monitor {port}"] = time.monotonic() - t
            t = time.monotonic()
            addresses = chain["members"][az]
            for address in addresses:   # one after another, each waited for: one write at a time per load balancer
                member = lb_api.create_member(pool.id, address=address, protocol_port=port, subnet_id=subnet.id)
                wait_for(lambda: (lambda m: m.provisioning_status == "ACTIVE" and m.operating_status == "ONLINE")(
                    lb_api.get_member(member.id, pool.id)), timeout=300)
            steps[f"member {port} online" if len(addresses) == 1 else
                  f"{len(addresses)} members {port} online"] = time.monotonic() - t
        t = time.monotonic()
        fip = conn.network.create_ip(floating_network_id=public.id, port_id=lb.vip_port_id)
        created["fip"] = fip
        steps["floating_ip"] = time.monotonic() - t
        t = time.monotonic()
        recordset = conn.dns.create_recordset(zone, name=f"{ENDPOINT}-chain-{az}.example.test.", type="A",
                                              records=[fip.floating_ip_address], ttl=30)
        created["recordset"] = recordset
        wait_for(lambda: conn.dns.get_recordset(recordset, zone).status == "ACTIVE")
        steps["recordset"] = time.monotonic() - t
        steps["total"] = time.monotonic() - started
    finally:
        # The cloud's own time to delete the zone: recordset, floating IP, then the load balancer with everything in
        # it in one call (cascade), waited for until gone; the steps run one after another, as a destroy would.
        t = time.monotonic()
        if "recordset" in created:
            conn.dns.delete_recordset(created["recordset"], zone, ignore_missing=True)
            wait_for(lambda: conn.dns.find_recordset(zone, created["recordset"].id) is None, timeout=120)
        if "fip" in created:
            conn.network.delete_ip(created["fip"], ignore_missing=True)
        if "lb" in created:
            lb_api.delete_load_balancer(created["lb"].id, cascade=True, ignore_missing=True)
            wait_for(lambda: lb_api.find_load_balancer(created["lb"].id) is None, timeout=300)
        steps["delete (cascade)"] = time.monotonic() - t
    return steps


def zones_in_parallel(clouds_yaml: str, chain: dict, azs=("az1", "az2", "az3")) -> float:
    """The dev shape's three zones built at once, each zone's chain in a thread of its own with a connection of its
    own: how long the cloud itself takes to build them in parallel (seconds until the last chain is done)."""
    import openstack

    def build(az: str) -> float:
        return one_zone_chain(openstack.connect(cloud="localcloud"), chain, az)["total"]

    os.environ["OS_CLIENT_CONFIG_FILE"] = clouds_yaml
    with ThreadPoolExecutor(len(azs)) as pool:
        return max(pool.map(build, azs))


@contextmanager
def member_servers(cloud, per_zone: int | None) -> Iterator[dict | None]:
    """``per_zone`` serving Nova servers in each zone (az -> servers), removed afterwards; None: the shape's own
    members (nothing booted)."""
    if per_zone is None:
        yield None
        return
    from tests.e2e.ovn_endpoint import serving_servers

    started = time.monotonic()
    wanted = {(az, i): (f"{ENDPOINT}-m-{az}-{i}", az) for az in ("az1", "az2", "az3") for i in range(per_zone)}
    with serving_servers(cloud, f"{ENDPOINT}-m-", wanted, timeout=1200) as made:
        print(f"{len(made)} serving servers booted in {time.monotonic() - started:.0f} s", flush=True)
        yield {az: [made[(az, i)] for i in range(per_zone)] for az in ("az1", "az2", "az3")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold", action="store_true", help="also measure a cold engine build (~15-25 min)")
    parser.add_argument("--no-patched", action="store_true", help="skip the runs with the patched plugin")
    parser.add_argument("--rounds", type=int, default=1,
                        help="measurements per plugin, interleaved (unpatched, patched, patched, ...); medians")
    parser.add_argument("--events-dir", type=Path, help="also write each run's event log (JSON) there")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="dev",
                        help="the measured endpoint copies this stack file's (default dev: ovn; amphora)")
    parser.add_argument("--members", type=int, metavar="N",
                        help="N serving Nova servers per zone as the members instead of the shape's own (booted "
                        "first, cleaned up after; 30: issue 53's second goal)")
    options = parser.parse_args()
    build = engine_build(options.cold)
    patched = None if options.no_patched else patched_openstack_plugin()
    cloud, environment, current = engine_on_local_cloud()
    with tempfile.TemporaryDirectory(prefix="engine-figures-") as workdir, member_servers(cloud, options.members) as servers:
        endpoint = shaped_endpoint(options.shape, servers)
        addresses = member_addresses(endpoint, servers)
        variants = [Variant("unpatched", current, environment, Path(workdir) / "unpatched", endpoint, addresses)]
        if patched is not None:
            variants.append(Variant("patched", patched, environment, Path(workdir) / "patched", endpoint, addresses))
        previews = {v.label: v.previews() for v in variants}
        for number in range(options.rounds):
            for variant in (variants if number % 2 == 0 else list(reversed(variants))):
                figures = variant.round(cloud.conn)
                print(f"round {number + 1} {variant.label}: up {figures['dev_up_s']:.1f} s, destroy "
                      f"{figures['dev_destroy_s']:.1f} s, one zone's chain {figures['chain']['total']:.1f} s "
                      f"(three at once {figures['parallel_chain']:.1f} s), ratio {figures['ratio']:.2f} "
                      f"(against three at once {figures['parallel_ratio']:.2f})", flush=True)
                if options.events_dir:
                    options.events_dir.mkdir(parents=True, exist_ok=True)
                    for kind in ("up", "destroy"):
                        (options.events_dir / f"{variant.label}-{number + 1}-{kind}.json").write_text(
                            json.dumps(figures[f"{kind}_events"]))
    after = variants[0]  # the engine's own (unpatched) plugin
    print("engine build")
    print(f"  warm (cache present)           {build['warm_s']:8.2f} s")
    if "cold_s" in build:
        print(f"  cold (empty Go caches)         {build['cold_s']:8.1f} s")
    else:
        print("  cold: as recorded by the last build (the cache's engine/<key>/BUILD_INFO):")
        for line in build["recorded"].splitlines():
            print(f"    {line}")
    typical = after.median_round()
    print("one zone's critical path, openstacksdk, one step after another (then its deletion), in the median round")
    for step, seconds in typical["chain"].items():
        print(f"  {step:30s} {seconds:8.2f} s")
    print(f"real engine, the engine's own provider (unpatched, as users run it), medians of {len(after.rounds)} round(s)")
    print(f"  empty program: preview {previews['unpatched']['empty_preview_s']:.2f} s, up {after.median('empty_up_s'):.2f} s")
    print(f"  dev shape ({typical['dev_resources']} resources): preview {previews['unpatched']['dev_preview_s']:.2f} s, "
          f"with policy pack {previews['unpatched']['dev_preview_with_policies_s']:.2f} s, up {after.median('dev_up_s'):.2f} s, "
          f"destroy {after.median('dev_destroy_s'):.2f} s (the cloud deletes one zone in "
          f"{statistics.median(r['chain']['delete (cascade)'] for r in after.rounds):.2f} s)")
    print(f"  neutron-lbaas warnings printed by the up: {max(r['lbaas_warnings'] for r in after.rounds)}")
    ratios = ", ".join(f"{r['ratio']:.2f}" for r in after.rounds)
    print(f"ratio up / (one zone's chain + empty-program up), each round against the chain measured just before it: "
          f"{ratios}; median {after.median('ratio'):.2f}   (goal <= 1.5: zones in parallel)")
    print(f"the cloud's own time for the three zones built at once (openstacksdk, three threads): median "
          f"{after.median('parallel_chain'):.2f} s; up / (that + empty-program up): median "
          f"{after.median('parallel_ratio'):.2f}")
    per_zone = max(len(addresses) for addresses in after.chain["members"].values())
    print(f"the limit counted as issue 53 states it ({per_zone} member(s) per zone): the zones at once "
          f"{after.median('parallel_chain'):.2f} s + the health-proof window a correct gate must wait "
          f"{after.health_proof_s:.0f} s + an empty up {after.median('empty_up_s'):.2f} s = "
          f"{after.median('limit_s'):.2f} s; up / limit: median {after.median('limit_ratio'):.2f}   "
          f"(goal <= {1.2 if per_zone >= 30 else 1.1})")
    print("where the time goes (engine event log of the median round)")
    event_timings.report("dev shape up", typical["dev_up_s"], typical["up_events"])
    event_timings.report("dev shape destroy", typical["dev_destroy_s"], typical["destroy_events"])
    if patched is None:
        print("patched provider: skipped (--no-patched)")
    for other in variants[1:]:
        print(f"side by side, interleaved in the same run (medians of {len(after.rounds)}): unpatched provider "
              f"({current.parents[1].name}) -> {other.label} ({other.plugin.parents[1].name})")
        for key, label in (("dev_up_s", "dev shape up s"), ("dev_destroy_s", "dev shape destroy s"),
                           ("lbaas_warnings", "neutron-lbaas warnings"), ("empty_up_s", "empty program up s"),
                           ("ratio", "ratio"), ("parallel_ratio", "ratio against 3 zones at once")):
            print(f"  {label:28s} {after.median(key):8.2f} -> {other.median(key):8.2f}")
        print(f"where the time went with {other.label} (median round)")
        typical = other.median_round()
        event_timings.report("dev shape up", typical["dev_up_s"], typical["up_events"])
        event_timings.report("dev shape destroy", typical["dev_destroy_s"], typical["destroy_events"])


if __name__ == "__main__":
    main()

"""Figures of the real engine on the local cloud, measured side by side in one run.

Prints:
  - the engine build: warm (cache present) measured now; cold as recorded by the last cold build (BUILD_INFO), or
    measured now with --cold (empties GOMODCACHE/GOCACHE into temp dirs: ~15 min on 2 cores);
  - `pulumi preview` and `pulumi up` wall time of the dev stack's shape (3 zones, 2 listeners, 3 members), and of
    an empty Python program (the engine's fixed overhead), in private copies of the project;
  - the critical path of ONE zone of that shape built directly with openstacksdk, one call after another, each
    polled at 0.1 s: LB -> ACTIVE, per listener (2) listener, pool, monitor, member -> ONLINE, floating IP, recordset;
  - the ratio up / (one zone's chain + empty-program overhead): goal <= 1.5, i.e. zones are built in parallel;
  - the neutron-lbaas warnings an `up` prints, and the dev shape's destroy beside the cloud's own time to delete one
    zone (cascade delete of its load balancer, its floating IP and recordset);
  - where the time of the dev shape's `up` and `destroy` goes (bench/event_timings.py: per-resource steps from the
    engine's event log, and the chain of steps that explains the wall time);
  - before/after in the same run: the same figures with the OpenStack plugin built without engine/openstack/patches
    (engine part "openstack-unpatched", built by `engine/build.sh --part openstack-unpatched` when the cache has
    none: a few minutes with warm Go caches; --no-before skips it).

Run: .venv/bin/python bench/engine_figures.py [--cold] [--no-before]    (needs `make engine localcloud`)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from bench.lib import event_timings  # noqa: E402
from localcloud.testing import ensure_up  # noqa: E402
from tests.e2e.pulumi_cli import PulumiStack, project_environment  # noqa: E402

ENDPOINT = "bench-api"


def timed(action) -> float:
    started = time.monotonic()
    action()
    return time.monotonic() - started


def engine_build(cold: bool) -> dict[str, float]:
    figures = {"warm_s": timed(lambda: subprocess.run(["engine/build.sh"], cwd=ROOT, check=True,
                                                      capture_output=True))}
    if cold:
        with tempfile.TemporaryDirectory() as modcache, tempfile.TemporaryDirectory() as gocache:
            env = {**os.environ, "GOMODCACHE": modcache, "GOCACHE": gocache,
                   "HA_ENDPOINT_CACHE": str(Path(modcache) / "cache")}
            figures["cold_s"] = timed(lambda: subprocess.run(["engine/build.sh"], cwd=ROOT, env=env, check=True,
                                                             capture_output=True))
    else:
        info = Path(os.environ.get("HA_ENDPOINT_CACHE", Path.home() / ".cache/ha-endpoint")) / "engine/current"
        figures["recorded"] = (info / "BUILD_INFO").read_text().strip() if (info / "BUILD_INFO").exists() else "-"
    return figures


def dev_shaped_endpoint() -> dict:
    dev = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())["config"]["ha-endpoint:endpoint"]
    return {**dev, "name": ENDPOINT, "dns": {**dev["dns"], "record": ENDPOINT}}


def engine_runs(environment: dict[str, str], workdir: Path) -> dict[str, float]:
    empty = workdir / "empty"
    empty.mkdir(parents=True)
    (empty / "Pulumi.yaml").write_text("name: empty\nruntime:\n  name: python\n  options:\n"
                                       "    toolchain: pip\n    virtualenv: .venv\n")
    (empty / "__main__.py").write_text("import pulumi\n")
    (empty / ".venv").symlink_to(ROOT / ".venv")
    empty_stack = PulumiStack(empty, "bench", environment)
    empty_stack.run("stack", "init", "bench", "--non-interactive")
    figures = {"empty_preview_s": empty_stack.preview(policy=False).seconds,
               "empty_up_s": empty_stack.up(policy=False).seconds}
    stack = PulumiStack.create(workdir / "dev", "bench", environment)
    stack.write_config(dev_shaped_endpoint())
    try:
        figures["dev_preview_s"] = stack.preview(policy=False).seconds
        figures["dev_preview_with_policies_s"] = stack.preview().seconds
        seconds, code, output, events = event_timings.run_logged(
            stack, "up", "--yes", "--non-interactive", "--skip-preview")
        if code != 0:
            raise RuntimeError(f"pulumi up of the dev shape failed ({code}):\n{output[-3000:]}")
        figures["dev_up_s"], figures["up_events"] = seconds, events
        figures["lbaas_warnings"] = output.count("neutron-lbaas")
        figures["dev_resources"] = len(stack.resources())
    finally:
        seconds, code, output, events = event_timings.run_logged(
            stack, "destroy", "--yes", "--non-interactive", "--skip-preview")
        figures["dev_destroy_s"], figures["destroy_events"] = seconds, events
        if code != 0:
            print(f"pulumi destroy of the dev shape failed ({code}):\n{output[-3000:]}")
    return figures


def wait_for(predicate, timeout: float = 120, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError("the cloud did not reach the expected state")


def one_zone_chain(conn) -> dict[str, float]:
    """One zone built one call after another, each step waited for, as the engine's critical path must."""
    lb_api = conn.load_balancer
    subnet = conn.network.find_subnet("cp-az1", ignore_missing=False)
    public = conn.network.find_network("public", ignore_missing=False)
    zone = conn.dns.find_zone("example.test.", ignore_missing=False)
    steps: dict[str, float] = {}
    created = {}
    active = lambda getter, ident: lambda: getter(ident).provisioning_status == "ACTIVE"
    started = time.monotonic()
    try:
        t = time.monotonic()
        lb = lb_api.create_load_balancer(name=f"{ENDPOINT}-chain-lb", vip_subnet_id=subnet.id, availability_zone="az1")
        created["lb"] = lb
        wait_for(active(lb_api.get_load_balancer, lb.id))
        steps["loadbalancer"] = time.monotonic() - t
        for port in (6443, 22623):  # the dev shape's two listeners: Octavia serializes writes on one LB
            t = time.monotonic()
            listener = lb_api.create_listener(loadbalancer_id=lb.id, protocol="TCP", protocol_port=port)
            wait_for(active(lb_api.get_load_balancer, lb.id))
            steps[f"listener {port}"] = time.monotonic() - t
            t = time.monotonic()
            pool = lb_api.create_pool(listener_id=listener.id, protocol="TCP", lb_algorithm="ROUND_ROBIN")
            wait_for(active(lb_api.get_load_balancer, lb.id))
            steps[f"pool {port}"] = time.monotonic() - t
            t = time.monotonic()
            lb_api.create_health_monitor(pool_id=pool.id, type="TCP", delay=5, timeout=3, max_retries=2)
            wait_for(active(lb_api.get_load_balancer, lb.id))
            steps[f"monitor {port}"] = time.monotonic() - t
            t = time.monotonic()
            member = lb_api.create_member(pool.id, address="10.10.1.10", protocol_port=port, subnet_id=subnet.id)
            wait_for(lambda: (lambda m: m.provisioning_status == "ACTIVE" and m.operating_status == "ONLINE")(
                lb_api.get_member(member.id, pool.id)))
            steps[f"member {port} online"] = time.monotonic() - t
        t = time.monotonic()
        fip = conn.network.create_ip(floating_network_id=public.id, port_id=lb.vip_port_id)
        created["fip"] = fip
        steps["floating_ip"] = time.monotonic() - t
        t = time.monotonic()
        recordset = conn.dns.create_recordset(zone, name=f"{ENDPOINT}-chain.example.test.", type="A",
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
            wait_for(lambda: lb_api.find_load_balancer(created["lb"].id) is None, timeout=120)
        steps["delete (cascade)"] = time.monotonic() - t
    return steps


def unpatched_plugin() -> Path:
    """The OpenStack plugin built without engine/openstack/patches: the engine part "openstack-unpatched", which
    engine/build.sh builds (or reuses from its cache) and whose cache dir it prints."""
    out = subprocess.run(["engine/build.sh", "--part", "openstack-unpatched"], cwd=ROOT, check=True,
                         capture_output=True, text=True)
    return Path(out.stdout.strip().splitlines()[-1]) / "plugins" / "pulumi-resource-openstack"


def variant_environment(base: dict[str, str], plugin: Path, home: Path) -> dict[str, str]:
    """The project environment with ``plugin`` installed as the OpenStack plugin in its own PULUMI_HOME."""
    home.mkdir(parents=True, exist_ok=True)
    env = {**base, "PULUMI_HOME": str(home)}
    version = (plugin.parents[1] / "openstack-plugin-version").read_text().strip()
    subprocess.run(["pulumi", "plugin", "install", "resource", "openstack", version, "--file", str(plugin),
                    "--reinstall"], env=env, check=True, capture_output=True)
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold", action="store_true", help="also measure a cold engine build (~15-25 min)")
    parser.add_argument("--no-before", action="store_true", help="skip the runs with the unpatched plugin")
    options = parser.parse_args()
    build = engine_build(options.cold)
    before = None if options.no_before else unpatched_plugin()
    cloud = ensure_up()
    environment = {**project_environment(), "OS_CLIENT_CONFIG_FILE": cloud.clouds_yaml, "OS_CLOUD": "localcloud"}
    chain = one_zone_chain(cloud.conn)
    current = Path(environment["HA_ENGINE_BIN"]).parent / "plugins" / "pulumi-resource-openstack"
    with tempfile.TemporaryDirectory(prefix="engine-figures-") as workdir:
        runs = engine_runs(variant_environment(environment, current, Path(workdir) / "home-after"),
                           Path(workdir) / "after")
        previous = None
        if before is not None:
            previous = engine_runs(variant_environment(environment, before, Path(workdir) / "home-before"),
                                   Path(workdir) / "before")
    print("engine build")
    print(f"  warm (cache present)           {build['warm_s']:8.2f} s")
    if "cold_s" in build:
        print(f"  cold (empty Go caches)         {build['cold_s']:8.1f} s")
    else:
        print("  cold: as recorded by the last build (engine/<key>/BUILD_INFO):")
        for line in build["recorded"].splitlines():
            print(f"    {line}")
    print("one zone's critical path, openstacksdk, one step after another (then its deletion)")
    for step, seconds in chain.items():
        print(f"  {step:30s} {seconds:8.2f} s")
    budget = chain["total"] + runs["empty_up_s"]
    print("real engine, patched provider (engine/openstack/patches)")
    print(f"  empty program: preview {runs['empty_preview_s']:.2f} s, up {runs['empty_up_s']:.2f} s")
    print(f"  dev shape ({runs['dev_resources']} resources): preview {runs['dev_preview_s']:.2f} s, "
          f"with policy pack {runs['dev_preview_with_policies_s']:.2f} s, up {runs['dev_up_s']:.2f} s, "
          f"destroy {runs['dev_destroy_s']:.2f} s (the cloud deletes one zone in {chain['delete (cascade)']:.2f} s)")
    print(f"  neutron-lbaas warnings printed by the up: {runs['lbaas_warnings']}")
    print(f"ratio up / (one zone's chain + empty-program up) = {runs['dev_up_s']:.2f} / {budget:.2f} = "
          f"{runs['dev_up_s'] / budget:.2f}   (goal <= 1.5: zones in parallel)")
    print("where the time goes (engine event log)")
    event_timings.report("dev shape up", runs["dev_up_s"], runs["up_events"])
    event_timings.report("dev shape destroy", runs["dev_destroy_s"], runs["destroy_events"])
    if previous is None:
        print("before (unpatched provider): skipped (--no-before)")
        return
    print(f"side by side, the same run: unpatched provider ({before.parents[1].name}) -> patched "
          f"({current.parents[1].name})")
    for key, label in (("dev_up_s", "dev shape up s"), ("dev_destroy_s", "dev shape destroy s"),
                       ("lbaas_warnings", "neutron-lbaas warnings"), ("empty_up_s", "empty program up s"),
                       ("dev_preview_s", "dev shape preview s")):
        print(f"  {label:28s} {previous[key]:8.2f} -> {runs[key]:8.2f}")
    print(f"  ratio                        {previous['dev_up_s'] / budget:8.2f} -> {runs['dev_up_s'] / budget:8.2f}")
    print("where the time went before (unpatched provider)")
    event_timings.report("dev shape up", previous["dev_up_s"], previous["up_events"])
    event_timings.report("dev shape destroy", previous["dev_destroy_s"], previous["destroy_events"])


if __name__ == "__main__":
    main()

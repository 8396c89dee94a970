"""What a client sees when the endpoint loses an AZ: failover measured with real clients on the local cloud's data
plane.

    .venv/bin/python lab/bench/failover_figures.py                      # every way, without and with the watcher
    .venv/bin/python lab/bench/failover_figures.py --ways az-down --watcher with --duration 90

A throwaway stack (`failover`, endpoint `fo-api`: three zones on the ovn provider, one serving Nova server per zone
behind a TCP listener on 6443 with a TCP health monitor, the A record's TTL 30 s) is deployed; then for each way of
losing az2 (tests/e2e/failover.py: ``members``, its member server stops serving; ``az-down``, its chassis stops;
``lb-deleted``, its load balancer is deleted out of band) the clients of tests/e2e/failover.py loop over the
endpoint's name for ``--duration`` seconds while az2 is lost ``--lose-at`` seconds in, and stays lost until the loop
ends; then az2 is brought back and the next way starts once every zone answers and the name lists the three addresses.
With ``--watcher with``, `python -m ha_endpoint.watch` runs beside them with its defaults, so the dead address leaves
the A record while the clients loop. Printed per way and client: requests made, failed and lost in the end, the
longest time without an answer, when the client was answered steadily again after the loss, the slowest request;
when az2's address left DNS and came back; new clients' first answers once it had left; then a Markdown table for
the README (the same figures tests/e2e/test_ovn_engine.py asserts on).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab")]

ENDPOINT = "fo-api"
ZONES = ("az1", "az2", "az3")
LOST = "az2"
PORT = 6443
TTL = 30


def endpoint_config(servers: dict[str, str]) -> dict:
    return {
        "name": ENDPOINT, "loadBalancerProvider": "ovn", "floatingNetwork": "public",
        "zones": {zone: {"subnet": f"cp-{zone}"} for zone in ZONES},
        "listeners": [{"port": PORT, "monitor": {"type": "TCP", "delay": 3, "timeout": 2, "maxRetries": 2,
                                                 "maxRetriesDown": 3}}],
        "members": [{"name": f"node-{zone}", "server": servers[zone], "az": zone} for zone in ZONES],
        "dns": {"dnsZone": "example.test.", "record": ENDPOINT, "ttl": TTL},
        "readiness": {"timeoutSeconds": 300},
    }


def ask(address: str) -> str:
    from localcloud.dataplane import reach
    import ssl
    import urllib.request
    tls = ssl.create_default_context()
    tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE
    reach.check(address)
    with urllib.request.urlopen(f"https://{address}:{PORT}/", timeout=2, context=tls) as response:
        return response.read().decode().strip()


def main() -> None:
    from tests.e2e import failover

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ways", default=",".join(failover.WAYS))
    parser.add_argument("--watcher", choices=("without", "with", "both"), default="both")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds each client loops per way")
    parser.add_argument("--lose-at", type=float, default=5.0, help="seconds into the loop az2 is lost")
    args = parser.parse_args()
    ways = [w for w in args.ways.split(",") if w]
    unknown = sorted(set(ways) - set(failover.WAYS))
    if unknown:
        parser.error(f"--ways: {', '.join(unknown)} not among {', '.join(failover.WAYS)}")
    watchers = {"without": [False], "with": [True], "both": [False, True]}[args.watcher]

    from localcloud.testing import Cleanup, ensure_up
    from tests.e2e.pulumi_cli import PulumiStack, project_environment
    from bench.lib.engine_in_use import describe, engine_environment

    cloud = ensure_up()
    cache = Path(os.environ.get("HA_ENDPOINT_CACHE", Path.home() / ".cache" / "ha-endpoint"))
    go_client = failover.build_go_client(cache)
    environment = {**engine_environment(project_environment()), "OS_CLIENT_CONFIG_FILE": cloud.clouds_yaml,
                   "OS_CLOUD": "localcloud"}
    print(f"failover: 3 zones on the ovn provider, TTL {TTL} s, TCP monitor delay 3 s timeout 2 s (down after 3 "
          f"failures); az2 lost {args.lose_at:.0f} s into a {args.duration:.0f} s loop, one request per client every "
          f"0.5 s; the watcher with its defaults ({describe(environment)})", flush=True)
    cleanup = Cleanup(cloud)
    cleanup.prefix = ENDPOINT
    cleanup.run()
    conn = cloud.conn
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="failover-") as workdir:
        stack = PulumiStack.create(Path(workdir), "failover", environment)
        try:
            image = conn.image.find_image("cirros", ignore_missing=False).id
            servers = {zone: conn.compute.create_server(
                name=f"{ENDPOINT}-{zone}", image_id=image, flavor_id="1", availability_zone=zone,
                networks=[{"uuid": cloud.seed[f"{zone}_network_id"]}]) for zone in ZONES}
            servers = {zone: conn.compute.wait_for_server(s, interval=1, wait=240) for zone, s in servers.items()}
            stack.write_config(endpoint_config({zone: s.id for zone, s in servers.items()}))
            up = stack.up(policy=False)
            print(f"  stack up {up.seconds:.1f}s", flush=True)
            outputs = stack.outputs()
            failover.settle(outputs["fqdn"].rstrip("."), {z: o["floatingIp"] for z, o in outputs["zones"].items()},
                            ask)
            for watcher in watchers:
                for way in ways:
                    print(f"  {way}, {'with' if watcher else 'without'} the watcher ...", flush=True)
                    outcome = failover.measure(cloud, stack, way, LOST, [servers[LOST].name], PORT, ask, go_client,
                                               args.duration, args.lose_at, () if watcher else None)
                    for row in outcome.rows:
                        print(f"    {failover.row_line(row)}", flush=True)
                    print(f"    az2 {failover.summary(outcome)}", flush=True)
                    rows += outcome.rows
        finally:
            stack.destroy(check=False)
            left = cleanup.run()
            if left:
                print(f"  left behind: {left}")
    print()
    print(failover.table(rows))
    print("\n".join(failover.goal_lines(rows, TTL)))


if __name__ == "__main__":
    main()

"""Adopting a running cluster's endpoint (issue 50, docs/adoption.md): from one load balancer to one per zone, and
back, with real clients on the local cloud's data plane.

    .venv/bin/python bench/adopt_figures.py                 # both cases (endpoint is a DNS name; is the floating IP)
    .venv/bin/python bench/adopt_figures.py --cases fip

For each case a single load balancer is made the way CAPO makes its API server's (openstacksdk, not the component):
``k8s-clusterapi-cluster-default-adopt-kubeapi`` on cp-az1 (ovn provider), a TCP listener on 6443, a SOURCE_IP_PORT
pool with a TCP health monitor (delay 10 s), the three dev nodes cp-0..cp-2 (10.10.N.10) as members, a floating IP
on its VIP; in the ``name`` case also the A record ``adopt.example.test.`` -> that floating IP (a user-provided
``controlPlaneEndpoint`` name). Clients loop through the name and through the floating IP (tests/e2e/failover.py's,
the bounded ones) while a throwaway stack runs the move: ``pulumi up`` of an endpoint whose az1 adopts that load
balancer (``zones.az1.adopt``) and that adds az2 and az3, published under the same name. Then, with the clients
looping again, the undo: ``pulumi up`` with the adopted zone alone (az2's and az3's addresses leave the record
before their load balancers go), then ``pulumi destroy`` (the adopted objects are retained). Printed per phase and
client: requests, failed, longest time without an answer; what the preview showed for the adopted objects; what
serves afterwards. The last line is one JSON object: ``{"name": {...}, "fip": {...}, "undo": {...}}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ENDPOINT = "adopt-api"
CAPO = "k8s-clusterapi-cluster-default-adopt-kubeapi"
RECORD = "adopt"
DNS_ZONE = "example.test."
FQDN = f"{RECORD}.{DNS_ZONE}"
PORT = 6443
TTL = 30
NODES = {"az1": ("cp-0", "10.10.1.10"), "az2": ("cp-1", "10.10.2.10"), "az3": ("cp-2", "10.10.3.10")}
CLIENTS = ("curl-3s", "go", "requests-3s")
CASES = ("name", "fip")


def endpoint_config(zones: tuple[str, ...]) -> dict:
    """The move's endpoint: az1 adopts CAPO's load balancer, the others are built; members the dev nodes."""
    return {
        "name": ENDPOINT, "loadBalancerProvider": "ovn", "floatingNetwork": "public", "allowedCidrs": ["0.0.0.0/0"],
        "zones": {az: {"subnet": f"cp-{az}", **({"adopt": {"loadBalancer": CAPO}} if az == "az1" else {})}
                  for az in zones},
        "listeners": [{"port": PORT, "monitor": {"type": "TCP", "delay": 3, "timeout": 2, "maxRetries": 2,
                                                 "maxRetriesDown": 3}}],
        "members": [{"name": NODES[az][0], "address": NODES[az][1], "az": az} for az in zones],
        "dns": {"dnsZone": DNS_ZONE, "record": RECORD, "ttl": TTL},
        "readiness": {"timeoutSeconds": 300},
    }


def ask(address: str) -> str:
    import ssl
    import urllib.request

    tls = ssl.create_default_context()
    tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE
    with urllib.request.urlopen(f"https://{address}:{PORT}/", timeout=3, context=tls) as response:
        return response.read().decode().strip()


def wait_active(conn, lb_id: str) -> None:
    conn.load_balancer.wait_for_load_balancer(lb_id, status="ACTIVE", failures=["ERROR"], interval=0.5, wait=120)


def capo_create(conn, cleanup, with_record: bool) -> dict:
    """The load balancer tree, floating IP and (``with_record``) A record, as CAPO makes them."""
    subnets = {az: conn.network.find_subnet(f"cp-{az}", ignore_missing=False) for az in NODES}
    lb = cleanup.add("load_balancer", conn.load_balancer.create_load_balancer(
        name=CAPO, vip_subnet_id=subnets["az1"].id, provider="ovn", description="Created by cluster-api-provider-openstack"))
    wait_active(conn, lb.id)
    listener = conn.load_balancer.create_listener(name=f"{CAPO}-{PORT}", loadbalancer_id=lb.id, protocol="TCP",
                                                  protocol_port=PORT)
    wait_active(conn, lb.id)
    pool = conn.load_balancer.create_pool(name=f"{CAPO}-{PORT}", listener_id=listener.id, protocol="TCP",
                                          lb_algorithm="SOURCE_IP_PORT")
    wait_active(conn, lb.id)
    conn.load_balancer.create_health_monitor(name=f"{CAPO}-{PORT}", pool_id=pool.id, type="TCP", delay=10, timeout=5,
                                             max_retries=5, max_retries_down=3)
    wait_active(conn, lb.id)
    for az, (node, address) in NODES.items():
        conn.load_balancer.create_member(pool, name=f"adopt-control-plane-{node}", address=address,
                                         protocol_port=PORT, subnet_id=subnets[az].id)
        wait_active(conn, lb.id)
    lb = conn.load_balancer.get_load_balancer(lb.id)
    public = conn.network.find_network("public", ignore_missing=False)
    fip = cleanup.add("floating_ip", conn.network.create_ip(floating_network_id=public.id, port_id=lb.vip_port_id,
                                                            description=f"Floating IP for API load balancer {CAPO}"))
    made = {"lb": lb.id, "fip": fip.floating_ip_address, "fip_id": fip.id, "record": None}
    if with_record:
        zone = conn.dns.find_zone(DNS_ZONE, ignore_missing=False)
        record = conn.dns.create_recordset(zone, name=FQDN, type="A", records=[fip.floating_ip_address], ttl=TTL)
        cleanup.add("recordset", record, zone=zone.id)
        made["record"] = record.id
    return made


def eventually(what: str, check, timeout: float = 180.0):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            found = check()
            if found:
                return found
        except Exception as error:  # noqa: BLE001 (not yet)
            last = error
        time.sleep(1)
    raise TimeoutError(f"{what}: not within {timeout:.0f}s (last: {last})")


def loops(case: str, fip: str, server, go_client, name_exists: bool) -> dict:
    from tests.e2e import failover

    through = {"fip": f"https://{fip}:{PORT}/"}
    if name_exists:
        through["name"] = f"https://{FQDN.rstrip('.')}:{PORT}/"
    return {via: failover.Loop(url, server, go_client, duration=3600, clients=CLIENTS).start()
            for via, url in through.items()}


def rows_of(phase: str, case: str, running: dict) -> list[dict]:
    rows = []
    for via, loop in running.items():
        loop.end_now()
        for row in loop.rows(0.0):
            rows.append({**row, "phase": phase, "case": case, "via": via})
    return rows


def line(row: dict) -> str:
    return (f"| {row['case']} | {row['phase']} | {row['via']} | {row['client']} | {row['requests']} | {row['failed']} "
            f"| {row['longest_gap']:.1f} |")


def adopted_lines(preview: str) -> list[str]:
    """The preview's lines about the adopted objects (import, then update) and the record."""
    keep = ("import", "~ ", "=>", "+-", "-+", "warning")
    return [text.rstrip() for text in preview.splitlines() if any(key in text for key in keep)][:40]


def run_case(case: str, cloud, stack, go_client, server, cleanup) -> list[dict]:
    from tests.e2e import failover

    conn = cloud.conn
    made = capo_create(conn, cleanup, with_record=case == "name")
    fip = made["fip"]
    eventually(f"CAPO's floating IP {fip} answers", lambda: ask(fip))
    if case == "name":
        eventually(f"{FQDN} -> {fip}", lambda: failover.resolve(FQDN, server) == [fip])
    print(f"\n{case}: CAPO's load balancer {made['lb']} serves {fip}" +
          (f", {FQDN} -> {fip}" if case == "name" else " (no DNS name: the endpoint is the address)"), flush=True)
    rows: list[dict] = []
    stack.write_config(endpoint_config(("az1", "az2", "az3")))
    preview = stack.preview()
    print("  preview (adopted objects):")
    for text in adopted_lines(preview.stdout):
        print(f"    {text}")
    running = loops(case, fip, server, go_client, name_exists=case == "name")
    up = stack.up()
    outputs = stack.outputs()
    addresses = sorted(zone["floatingIp"] for zone in outputs["zones"].values())
    eventually(f"{FQDN} lists the three zones", lambda: sorted(failover.resolve(FQDN, server)) == addresses)
    time.sleep(TTL / 3)
    rows += rows_of("move", case, running)
    print(f"  move: pulumi up {up.seconds:.1f}s; {FQDN} -> {', '.join(addresses)}; {fip} answers "
          f"{ask(fip)!r}", flush=True)
    for zone, values in sorted(outputs["zones"].items()):
        print(f"    {zone}: load balancer {values['loadbalancerId']} floating IP {values['floatingIp']} "
              f"ready {values['ready']}")
    for row in rows:
        print(f"    {line(row)}", flush=True)
    running = loops(case, fip, server, go_client, name_exists=True)
    stack.write_config(endpoint_config(("az1",)))
    back = stack.up()
    gone = stack.destroy()
    time.sleep(TTL / 3)
    rows += rows_of("undo", case, running)
    lb = conn.load_balancer.get_load_balancer(made["lb"])
    ip = conn.network.get_ip(made["fip_id"])
    record = failover.resolve(FQDN, server) if case == "name" else None
    print(f"  undo: pulumi up (az1 alone) {back.seconds:.1f}s, destroy {gone.seconds:.1f}s; load balancer {lb.name} "
          f"{lb.provisioning_status}/{lb.operating_status}, floating IP {ip.floating_ip_address} on "
          f"{'its VIP' if ip.port_id == lb.vip_port_id else ip.port_id}, answers {ask(fip)!r}" +
          (f"; {FQDN} -> {', '.join(record)}" if record is not None else ""), flush=True)
    for row in rows:
        if row["phase"] == "undo":
            print(f"    {line(row)}")
    return rows


def totals(rows: list[dict]) -> dict:
    return {"requests": sum(row["requests"] for row in rows), "failed": sum(row["failed"] for row in rows),
            "longest_gap": round(max((row["longest_gap"] for row in rows), default=0.0), 1)}


def main() -> None:
    from tests.e2e import failover

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args()
    cases = [case for case in args.cases.split(",") if case]
    if set(cases) - set(CASES):
        parser.error(f"--cases: among {', '.join(CASES)}")

    from bench.lib.engine_in_use import describe, engine_environment
    from localcloud.testing import Cleanup, ensure_up
    from tests.e2e.pulumi_cli import PulumiStack, project_environment

    cloud = ensure_up()
    cache = Path(os.environ.get("HA_ENDPOINT_CACHE", Path.home() / ".cache" / "ha-endpoint"))
    go_client = failover.build_go_client(cache)
    server = failover.dns_server()
    environment = {**engine_environment(project_environment()), "OS_CLIENT_CONFIG_FILE": cloud.clouds_yaml,
                   "OS_CLOUD": "localcloud"}
    print(f"adopt: CAPO's single load balancer (ovn) -> one per zone and back; clients {', '.join(CLIENTS)} every "
          f"0.5 s, TTL {TTL} s ({describe(environment)})", flush=True)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="adopt-") as workdir:
        stack = PulumiStack.create(Path(workdir), "adopt", environment)
        for case in cases:
            cleanup = Cleanup(cloud)
            cleanup.prefix = ENDPOINT
            try:
                rows += run_case(case, cloud, stack, go_client, server, cleanup)
            finally:
                stack.destroy(check=False)
                left = cleanup.run()
                if left:
                    print(f"  left behind: {left}")
    print("\n| case | phase | through | client | requests | failed | longest without an answer (s) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print(line(row))
    print(json.dumps({
        "name": totals([row for row in rows if row["case"] == "name" and row["phase"] == "move" and
                        row["via"] == "name"]),
        "fip": totals([row for row in rows if row["case"] == "fip" and row["phase"] == "move" and
                       row["via"] == "fip"]),
        "undo": totals([row for row in rows if row["phase"] == "undo"]),
    }))


if __name__ == "__main__":
    main()

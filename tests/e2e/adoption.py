"""Adopting a running cluster's endpoint with real clients (issue 50, docs/adoption.md): what
lab/bench/adopt_figures.py prints and tests/e2e/test_adoption_engine.py asserts (one implementation of both).

A single load balancer is made the way CAPO makes its API server's (openstacksdk, not the component):
``k8s-clusterapi-cluster-default-adopt-kubeapi`` on cp-az1 (ovn provider), a TCP listener on 6443, a SOURCE_IP_PORT
pool with a TCP health monitor (delay 10 s), the three dev nodes cp-0..cp-2 (10.10.N.10) as members, a floating IP
on its VIP; in the ``name`` case also the A record ``adopt.example.test.`` -> that floating IP (a user-provided
``controlPlaneEndpoint`` name). Clients (tests/e2e/failover.py's bounded ones) loop through the floating IP and, where
it exists, the name, while a stack runs the move: ``pulumi up`` of an endpoint whose az1 adopts that load balancer
and that adds az2 and az3 under the same name. Then, with the clients looping again, the undo: ``pulumi up`` with the
adopted zone alone, then ``pulumi destroy``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

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
    keep = ("import", "~ ", "=>", "+-", "-+", "tags", "warning")
    return [text.rstrip() for text in preview.splitlines() if any(key in text for key in keep)][:60]


@dataclass
class Outcome:
    """One case: the clients' rows (phase ``move`` / ``undo``, ``via`` name / fip) and what served afterwards."""

    rows: list[dict] = field(default_factory=list)
    preview: str = ""
    original_after_move: str = ""
    published_after_move: list[str] = field(default_factory=list)
    zones_ready: dict[str, bool] = field(default_factory=dict)
    adopted_lb_kept: bool = False
    lb_after_undo: str = ""
    fip_on_vip_after_undo: bool = False
    original_after_undo: str = ""
    record_after_undo: list[str] = field(default_factory=list)


def run_case(case: str, cloud, stack, go_client, server, cleanup, say=print) -> Outcome:
    """The move and the undo of one case (``name`` or ``fip``) on ``stack`` (empty), the CAPO objects registered
    with ``cleanup``; ``say`` prints the progress."""
    from tests.e2e import failover

    conn = cloud.conn
    out = Outcome()
    made = capo_create(conn, cleanup, with_record=case == "name")
    fip = made["fip"]
    eventually(f"CAPO's floating IP {fip} answers", lambda: ask(fip))
    if case == "name":
        eventually(f"{FQDN} -> {fip}", lambda: failover.resolve(FQDN, server) == [fip])
    say(f"\n{case}: CAPO's load balancer {made['lb']} serves {fip}" +
        (f", {FQDN} -> {fip}" if case == "name" else " (no DNS name: the endpoint is the address)"))
    stack.write_config(endpoint_config(("az1", "az2", "az3")))
    out.preview = stack.preview().stdout
    say("  preview (adopted objects):")
    for text in adopted_lines(out.preview):
        say(f"    {text}")
    running = loops(case, fip, server, go_client, name_exists=case == "name")
    up = stack.up()
    outputs = stack.outputs()
    addresses = sorted(zone["floatingIp"] for zone in outputs["zones"].values())
    eventually(f"{FQDN} lists the three zones", lambda: sorted(failover.resolve(FQDN, server)) == addresses)
    time.sleep(TTL / 3)
    out.rows += rows_of("move", case, running)
    out.original_after_move = ask(fip)
    out.published_after_move = sorted(failover.resolve(FQDN, server))
    out.zones_ready = {zone: bool(values["ready"]) for zone, values in outputs["zones"].items()}
    out.adopted_lb_kept = outputs["zones"]["az1"]["loadbalancerId"] == made["lb"] and \
        outputs["zones"]["az1"]["floatingIp"] == fip
    say(f"  move: pulumi up {up.seconds:.1f}s; {FQDN} -> {', '.join(addresses)}; {fip} answers "
        f"{out.original_after_move!r}")
    for zone, values in sorted(outputs["zones"].items()):
        say(f"    {zone}: load balancer {values['loadbalancerId']} floating IP {values['floatingIp']} "
            f"ready {values['ready']}")
    for row in out.rows:
        say(f"    {line(row)}")
    # the undo's clients: through the address, and through the name where the cluster's endpoint is the name (in
    # the fip case the name is the stack's own, deleted with it)
    running = loops(case, fip, server, go_client, name_exists=case == "name")
    stack.write_config(endpoint_config(("az1",)))
    back = stack.up()
    gone = stack.destroy()
    time.sleep(TTL / 3)
    undo = rows_of("undo", case, running)
    out.rows += undo
    lb = conn.load_balancer.get_load_balancer(made["lb"])
    ip = conn.network.get_ip(made["fip_id"])
    out.lb_after_undo = f"{lb.provisioning_status}/{lb.operating_status}"
    out.fip_on_vip_after_undo = ip.port_id == lb.vip_port_id
    out.original_after_undo = ask(fip)
    out.record_after_undo = failover.resolve(FQDN, server) if case == "name" else []
    say(f"  undo: pulumi up (az1 alone) {back.seconds:.1f}s, destroy {gone.seconds:.1f}s; load balancer {lb.name} "
        f"{out.lb_after_undo}, floating IP {ip.floating_ip_address} on "
        f"{'its VIP' if out.fip_on_vip_after_undo else ip.port_id}, answers {out.original_after_undo!r}" +
        (f"; {FQDN} -> {', '.join(out.record_after_undo)}" if case == "name" else ""))
    for row in undo:
        say(f"    {line(row)}")
    return out


def totals(rows: list[dict]) -> dict:
    """Requests and failed summed over ``rows``, and the longest time any of them went without an answer."""
    return {"requests": sum(row["requests"] for row in rows), "failed": sum(row["failed"] for row in rows),
            "longest_gap": round(max((row["longest_gap"] for row in rows), default=0.0), 1)}

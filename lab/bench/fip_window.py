"""How long after Neutron answers a floating IP's association does the address answer TCP (Octavia's ovn provider)?

    .venv/bin/python lab/bench/fip_window.py                 # 6 rounds on the first local cloud
    .venv/bin/python lab/bench/fip_window.py --busy 12       # the same with 12 busy processes beside it (CPU starved)

The endpoint publishes a zone's floating IP as soon as its association answers (the association waits for the zone's
gate, so the members are ONLINE by then). Under the ovn provider, Neutron's answer does not mean the address serves:
the provider sees the association as an OVN northbound event, queues it on its one helper thread and only then adds
the floating IP to the OVN load balancer's VIPs (ovn-octavia-provider 3.1.2, ``helper.py``
``vip_port_update_handler`` -> ``handle_vip_fip``). This script measures that window: one throwaway ovn load
balancer on ``cp-az1`` (listener 6443, a TCP monitor, member ``cp-0``), then per round a new floating IP associated
with its VIP port and TCP connects to it every 20 ms until one succeeds. It deletes the floating IPs and the load
balancer it created (by id) at the end, also after a failure.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import uuid

import openstack

from ha_endpoint.watch.observe import tcp_reach


def wait_active(conn, lb_id: str) -> None:
    conn.load_balancer.wait_for_load_balancer(lb_id, status="ACTIVE", failures=["ERROR"], interval=0.5, wait=300)


def first_answer(address: str, port: int, limit: float) -> float | None:
    """Seconds until ``address:port`` accepts a TCP connection, by the watcher's own probe (None: not within
    ``limit``)."""
    reach = tcp_reach(timeout=0.3)
    start = time.monotonic()
    while time.monotonic() - start < limit:
        if reach(address, port) is None:
            return time.monotonic() - start
        time.sleep(0.02)
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--busy", type=int, default=0, help="busy processes started beside it (CPU load)")
    options = parser.parse_args()
    conn = openstack.connect(cloud=os.environ.get("OS_CLOUD", "localcloud"))
    name = "fip-window-" + uuid.uuid4().hex[:6]
    subnet = conn.network.find_subnet("cp-az1", ignore_missing=False)
    public = conn.network.find_network("public", ignore_missing=False)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(options.busy)]
    lb = conn.load_balancer.create_load_balancer(name=name, vip_subnet_id=subnet.id, provider="ovn")
    windows: list[float | None] = []
    try:
        wait_active(conn, lb.id)
        listener = conn.load_balancer.create_listener(name=name, loadbalancer_id=lb.id, protocol="TCP",
                                                      protocol_port=6443)
        wait_active(conn, lb.id)
        pool = conn.load_balancer.create_pool(name=name, listener_id=listener.id, protocol="TCP",
                                              lb_algorithm="SOURCE_IP_PORT")
        wait_active(conn, lb.id)
        conn.load_balancer.create_health_monitor(pool_id=pool.id, type="TCP", delay=3, timeout=2, max_retries=2)
        wait_active(conn, lb.id)
        member = conn.load_balancer.create_member(pool.id, address="10.10.1.10", protocol_port=6443,
                                                  subnet_id=subnet.id)
        wait_active(conn, lb.id)
        while conn.load_balancer.get_member(member.id, pool.id).operating_status != "ONLINE":
            time.sleep(0.5)
        vip_port = conn.load_balancer.get_load_balancer(lb.id).vip_port_id
        for round_ in range(options.rounds):
            fip = conn.network.create_ip(floating_network_id=public.id, description=name)
            try:
                asked = time.monotonic()
                conn.network.update_ip(fip, port_id=vip_port)
                answered = time.monotonic() - asked
                window = first_answer(fip.floating_ip_address, 6443, 60)
            finally:
                conn.network.delete_ip(fip)
            windows.append(window)
            shown = "never (60 s)" if window is None else f"{window:.2f} s after"
            print(f"round {round_ + 1}: the association answered in {answered:.2f} s; TCP answered {shown}",
                  flush=True)
            time.sleep(1)
    finally:
        for process in busy:
            process.kill()
        conn.load_balancer.delete_load_balancer(lb.id, cascade=True)
    known = [window for window in windows if window is not None]
    longest = f"longest {max(known):.2f} s" if known else "none answered"
    never = f", {len(windows) - len(known)} never answered" if known and len(known) < len(windows) else ""
    print(f"fip window ({options.busy} busy processes beside it): {len(windows)} rounds, {longest}{never}")


if __name__ == "__main__":
    main()

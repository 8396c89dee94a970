"""The endpoint on the local cloud's OVN provider with serving Nova servers as its members: what
tests/e2e/test_ovn_engine.py and tests/e2e/test_members_at_scale.py share (the stack's shape, booting the servers and
waiting until the data plane serves them, asking a zone's address who answers, over and over while an update runs,
and whether a drained member still got new connections; the OVN northbound rows of load balancers).
"""

from __future__ import annotations

import csv
import re
import ssl
import threading
import time
import urllib.request
from contextlib import contextmanager
from typing import Any, Hashable, Iterator, Optional

from localcloud.dataplane import ovn, reach
from localcloud.testing import Cleanup, eventually

ZONES = ("az1", "az2", "az3")
PORT = 6443                                   # TLS passes through the TCP listener to the member's API port
MONITOR = {"type": "TCP", "delay": 3, "timeout": 2, "maxRetries": 2, "maxRetriesDown": 3}
TLS = ssl.create_default_context()
TLS.check_hostname, TLS.verify_mode = False, ssl.CERT_NONE


def endpoint_config(name: str, members: list[dict], ttl: int = 30, zones: tuple[str, ...] = ZONES,
                    **readiness) -> dict:
    """The dev stack's shape on the ovn provider under ``name`` (in ``zones``): one TCP listener with a TCP monitor,
    ``members`` (``[{name, server, az}]``: given by server id), the record ``name`` published when ready;
    ``readiness`` adds to the readiness settings (or replaces timeoutSeconds 300, require online)."""
    return {
        "name": name,
        "loadBalancerProvider": "ovn",
        "floatingNetwork": "public",
        "zones": {zone: {"subnet": f"cp-{zone}"} for zone in zones},
        "listeners": [{"port": PORT, "monitor": dict(MONITOR)}],
        "members": members,
        "dns": {"dnsZone": "example.test.", "record": name, "ttl": ttl, "publish": "when-ready"},
        "readiness": {"timeoutSeconds": 300, "require": "online", **readiness},
    }


def ask(address: str, timeout: float = 2.0) -> str:
    """What the member behind ``address`` answers on the API port: ``<server name> <az>``."""
    reach.check(address)
    with urllib.request.urlopen(f"https://{address}:{PORT}/", timeout=timeout, context=TLS) as response:
        return response.read().decode().strip()


CLIENT_TIMEOUT = 10.0
"""How long a rotation's client waits for an answer: client-go's TLS handshake timeout (10 s; its dial timeout is
30 s). A 2 s timeout failed one request of about 3000 in a CI run's rotation (2026-12-03, three clouds on 2 cores;
which packet was late was not established): a client of the endpoint waits longer than that (a lost SYN alone is
resent after 1 s). Slow answers are kept and printed instead (:attr:`ZoneAskers.slow`), so a stall stays visible."""

SLOW = 2.0
"""An answer that took longer than this is listed in :attr:`ZoneAskers.slow`."""


class ZoneAskers:
    """One client per zone asking that zone's address (:func:`ask`) over and over while an update runs (a new
    connection per request, :data:`CLIENT_TIMEOUT`); every answer (the answering server's name) is kept with the time
    its request started (``time.monotonic()``, to compare with a PoolSampler's listings), every failure with its
    seconds since the block began (to read in a message), and every answer slower than :data:`SLOW` in ``slow``
    (seconds since the block began, how long it took), printed by the tests. Bounded: stops when the block ends."""

    def __init__(self, addresses: dict[str, str]):
        self.addresses = addresses
        self.answers: dict[str, list[tuple[float, str]]] = {zone: [] for zone in addresses}
        self.failures: dict[str, list[tuple[float, str]]] = {zone: [] for zone in addresses}
        self.slow: dict[str, list[tuple[float, float]]] = {zone: [] for zone in addresses}
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._loop, args=(zone,), daemon=True) for zone in addresses]

    def __enter__(self) -> "ZoneAskers":
        self.started = time.monotonic()
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)

    def _loop(self, zone: str) -> None:
        while not self._stop.is_set():
            at = time.monotonic()
            try:
                self.answers[zone].append((at, ask(self.addresses[zone], CLIENT_TIMEOUT).split()[0]))
                took = time.monotonic() - at
                if took > SLOW:
                    self.slow[zone].append((round(at - self.started, 2), round(took, 2)))
            except Exception as error:  # noqa: BLE001 (every failure is what the test counts)
                self.failures[zone].append((round(at - self.started, 2), repr(error)))
            self._stop.wait(0.1)


DRAIN_TAKES_EFFECT = 2.0
"""Seconds after Octavia lists a drain applied (the member ACTIVE again at weight 0, admin down under ovn) within
which the data plane may still open a connection to it: OVN's northd and ovn-controller turn the load balancer's new backend
list into flows (measured well under 1 s), and a request counts from its start, so one started just before may be
answered by it."""


def _answers_after_drain(sampler, askers: ZoneAskers, zone: str, names: dict[str, str],
                         taken_out: bool = False) -> dict[str, list[float]]:
    """Per drained member (``names``: member address -> the server name it answers with): the starts of the requests
    it answered in ``zone`` over :data:`DRAIN_TAKES_EFFECT` seconds after the pool poller (``sampler``:
    tests/e2e/cloud_checks.PoolSampler keyed by zone) first listed its drain applied (weight 0, admin down; with
    ``taken_out``, a member the configuration takes out: admin down, its weight kept), in seconds after that listing,
    sorted. Fails when a member of ``names`` left the pool without a listing of its applied drain (nothing to measure
    from)."""
    drained = sampler.admin_down_applied(zone) if taken_out else sampler.drain_applied(zone)
    missing = sorted(set(names) - set(drained))
    assert not missing, f"{zone}: never listed drained (weight 0, admin down, ACTIVE) before going: {missing}"
    return {name: sorted(at - drained[address] for at, answered in askers.answers[zone]
                         if answered == name and at > drained[address] + DRAIN_TAKES_EFFECT)
            for address, name in names.items()}


def new_connections_after_drain(sampler, askers: ZoneAskers, zone: str, names: dict[str, str],
                                within: Optional[float] = None, taken_out: bool = False) -> list[str]:
    """The answers in ``zone`` from a drained member (``taken_out``: taken out by the configuration) to a request
    started over :data:`DRAIN_TAKES_EFFECT` seconds after its drain applied (:func:`_answers_after_drain`); with
    ``within``, only requests started in the ``within`` seconds after that."""
    return [f"{name} answered a request started {since:.1f}s after its drain applied"
            for name, starts in _answers_after_drain(sampler, askers, zone, names, taken_out).items()
            for since in starts if within is None or since <= DRAIN_TAKES_EFFECT + within]


def bursts_after_drain(sampler, askers: ZoneAskers, zone: str, names: dict[str, str],
                       gap: float = 2.0) -> dict[str, list[tuple[float, float]]]:
    """Per drained member, the answers of :func:`_answers_after_drain` as bursts (first and last request start,
    seconds after the drain applied; answers over ``gap`` s apart start a new burst). A member the provider took back
    and the drain's watch took out again shows as one short burst."""
    result: dict[str, list[tuple[float, float]]] = {}
    for name, starts in _answers_after_drain(sampler, askers, zone, names).items():
        bursts: list[tuple[float, float]] = []
        for since in starts:
            if bursts and since - bursts[-1][1] <= gap:
                bursts[-1] = (bursts[-1][0], since)
            else:
                bursts.append((since, since))
        result[name] = bursts
    return result


def address_of(server, zone: str) -> str:
    """The server's fixed address on its zone's network (cp-azN-net)."""
    return server.addresses[f"cp-{zone}-net"][0]["addr"]


def boot_servers(localcloud, wanted: dict[Hashable, tuple[str, str]], wave: int = 12,
                 timeout: float = 240) -> dict[Hashable, Any]:
    """Nova servers, ``wanted``: key -> (name, az), each on its AZ's network with Nova's default security group only
    (it admits nothing from outside: the endpoint's members' group must). Created ``wave`` at a time (each wave
    waited for ACTIVE before the next: a burst of creates on this 2-core cloud queues in Nova's one scheduler and
    conductor), then waited for until the data plane serves each one (:func:`wait_serving`). key -> server."""
    conn = localcloud.conn
    image = conn.image.find_image("cirros", ignore_missing=False).id
    keys, made = list(wanted), {}
    for first in range(0, len(keys), wave):
        created = {key: conn.compute.create_server(
            name=wanted[key][0], image_id=image, flavor_id="1", availability_zone=wanted[key][1],
            networks=[{"uuid": localcloud.seed[f"{wanted[key][1]}_network_id"]}]) for key in keys[first:first + wave]}
        for key, server in created.items():
            made[key] = conn.compute.wait_for_server(server, interval=1, wait=timeout)
    wait_serving(localcloud, list(made.values()), timeout)
    return made


@contextmanager
def serving_servers(localcloud, prefix: str, wanted: dict[Hashable, tuple[str, str]],
                    timeout: float = 240) -> Iterator[dict[Hashable, Any]]:
    """:func:`boot_servers` for the block; afterwards everything named ``prefix``… is cleaned up
    (:class:`localcloud.testing.Cleanup`), asserted to leave nothing behind."""
    cleanup = Cleanup(localcloud)
    cleanup.prefix = prefix
    try:
        yield boot_servers(localcloud, wanted, timeout=timeout)
    finally:
        left = cleanup.run()
        assert not left, left


def wait_serving(localcloud, servers: list, timeout: float) -> None:
    """Until each server's port is plugged into its AZ's chassis and its member server runs
    (lab/localcloud/dataplane/members.py: within a second of ACTIVE for a few servers, one plug after another for many)."""
    from localcloud import procs
    from localcloud.dataplane import members
    from localcloud.dataplane.config import DPPaths

    paths = DPPaths(localcloud.paths)

    def every_one_serves() -> bool:
        plugged = {m["server_id"]: port for port, m in members.recorded(localcloud.paths).items() if m}
        waiting = [server.name for server in servers if server.id not in plugged
                   or not procs.alive(members.pidfile(paths, plugged[server.id]), members.SERVER_MARKER)]
        assert not waiting, f"{len(waiting)} servers not serving yet: {', '.join(sorted(waiting)[:10])}"
        return True

    eventually("every server serves on the data plane", every_one_serves, timeout, 0.5)


def ovn_rows(localcloud, lb_ids: set[str], port_ids: set[str], addresses: set[str]) -> list[str]:
    """The OVN northbound rows of these load balancers, ports and floating IPs: Load_Balancer rows (named after the
    Octavia LB, or holding one of ``addresses`` as a VIP: the address itself, not a longer one that starts with it,
    as 172.24.14.206 does 172.24.14.20), NAT rows of the addresses, logical switch ports of the ports or of the load
    balancers."""
    found = []
    for row in _rows(localcloud, "Load_Balancer", "_uuid,name,vips"):
        if row["name"].strip('"') in lb_ids or set(vip_addresses(row["vips"])) & set(addresses):
            found.append(f"Load_Balancer {row['name']} {row['vips']}")
    for row in _rows(localcloud, "NAT", "_uuid,external_ip,logical_ip"):
        if row["external_ip"].strip('"') in addresses or row["logical_ip"].strip('"') in addresses:
            found.append(f"NAT {row['external_ip']} -> {row['logical_ip']}")
    for row in _rows(localcloud, "Logical_Switch_Port", "_uuid,name,external_ids"):
        name = row["name"].strip('"')
        if name in port_ids or any(lb in row["external_ids"] for lb in lb_ids):
            found.append(f"Logical_Switch_Port {name} {row['external_ids']}")
    return found


def vip_addresses(vips: str) -> list[str]:
    """The VIP addresses of an OVN Load_Balancer row's ``vips`` column as ``ovn-nbctl --format=csv`` prints it
    (``{"172.24.4.20:6443"="10.10.1.10:6443", ...}``): the keys' addresses, not the backends'."""
    return re.findall(r'"(\d+\.\d+\.\d+\.\d+):\d+"\s*=', vips)


def _rows(localcloud, table: str, columns: str) -> list[dict[str, str]]:
    keys = columns.split(",")
    out = ovn.nbctl(localcloud.paths, "--format=csv", "--no-headings", f"--columns={columns}", "list", table)
    return [dict(zip(keys, values)) for values in csv.reader(out.splitlines()) if values]

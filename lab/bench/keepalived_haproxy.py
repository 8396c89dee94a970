"""haproxy on each member of a keepalived zone, side by side with today's path (docs/keepalived.md), on the local
cloud's data plane with the keepalived stack up (``STACK=keepalived make up``):

    scripts/stack.sh outputs | .venv/bin/python lab/bench/keepalived_haproxy.py                 # STACK=keepalived
    ... | .venv/bin/python lab/bench/keepalived_haproxy.py --zones az1 --concurrency 1 8 --seconds 5 --no-failover

Two paths to the same floating IP and port (6443), the client and everything up to the VIP holder the same:

* ``direct`` (today): the VIP holder's own listener answers every connection;
* ``haproxy``: Debian's haproxy runs in each of the zone's member namespaces (TCP mode, TLS passed through,
  round robin over the zone's members, kubeadm's HA health check: ``GET /readyz`` over TLS every 1 s, fall 2, rise 2,
  a refused connection redispatched), listening on 9443; a REDIRECT rule in each member's namespace sends
  connections to ``<VIP>:6443`` to it (the member's listener holds 0.0.0.0:6443, so haproxy cannot bind the VIP's port:
  OpenShift's on-premise API VIP does the same). Only the holder receives the VIP's traffic, so only its haproxy works.
  The keepalived configuration, track script included, is unchanged.

Load (``lab/bench/loadgen``, Go, built here): ``--concurrency`` workers for ``--seconds`` each, every request over a new
TCP and TLS connection (``new``) or over one kept-alive connection per worker (``keepalive``, as kubectl and
client-go). The two paths alternate (the first one of each case changes with the concurrency), so a machine that
gets busier mid-run penalises neither. Printed per case: requests/s, failed, latency p50/p99, CPU-milliseconds per
request of the zone's member servers, of its haproxies and of every ovs-vswitchd (the data plane), the machine's busy
cores (every process counts: a machine busy with other work shows here), and how the answers spread over the zone's
members; then the medians of each case over the zones and rounds.

Then, unless ``--no-failover``, per zone and path: a new connection every 0.1 s (lab/bench/keepalived_failover.py's
client) while the holder's listener is stopped for ``--down-seconds`` (``lab/localcloud/fault member-down``), then started
again: failed requests, answers by member, and whether and when the VIP left the holder (its namespace's addresses,
every 0.1 s). The last line is one JSON object of every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab")]

from bench.keepalived_failover import ask, failed  # noqa: E402
from bench.lib.machine import machine_cpu_seconds  # noqa: E402
from localcloud.dataplane import keepalived_nodes, members, netns, ovn  # noqa: E402
from localcloud.dataplane.config import DPPaths  # noqa: E402
from localcloud.settings import AZS, Paths  # noqa: E402
from tests.e2e.failover import build_go_program  # noqa: E402

PORT, HAPROXY_PORT = 6443, 9443
HAPROXY_CONFIG = """global
    maxconn 4096
    stats socket {socket} level admin
defaults
    mode tcp
    timeout connect 1s
    timeout client 60s
    timeout server 60s
    retries 2
    option redispatch
frontend api
    bind :{haproxy_port}
    default_backend members
backend members
    balance roundrobin
    option httpchk
    http-check connect ssl
    http-check send meth GET uri /readyz
    http-check expect status 200
    default-server check verify none inter 1s fall 2 rise 2
{servers}
"""


class Zone:
    """One keepalived zone of the stack's outputs: its floating IP, VIP and members (name -> address, namespace,
    member-server PID file)."""

    def __init__(self, az: str, zone: dict, paths: Paths):
        self.az, self.floating, self.vip = az, zone["floatingIp"], zone["vipAddress"]
        where = keepalived_nodes.member_namespaces()
        ports = {m["name"]: port for port, m in members.recorded(paths).items() if m}
        self.members: dict[str, tuple[str, str, Path]] = {}
        for name, rendered in sorted(zone["keepalived"].items()):
            address = next(line.split()[1] for line in rendered["config"].splitlines()
                           if line.strip().startswith("unicast_src_ip"))
            if address not in where or name not in ports:
                raise SystemExit(f"{az} {name}: no member namespace holds {address}: is the keepalived stack up on "
                                 f"this cloud (HA_ENDPOINT_STATE, LOCALCLOUD_PORT_OFFSET)?")
            self.members[name] = (address, where[address][0], members.pidfile(DPPaths(paths), ports[name]))

    def holder(self) -> str | None:
        for name, (_, ns, _) in self.members.items():
            if f" {self.vip}/32 " in netns.sh("ip", "-4", "-o", "addr", "show", ns=ns, check=False):
                return name
        return None


class Haproxy:
    """haproxy in each member namespace of a zone, and the REDIRECT rules that send the VIP's port to it."""

    def __init__(self, zone: Zone, workdir: Path):
        self.zone, self.workdir = zone, workdir
        self.processes: dict[str, subprocess.Popen] = {}
        self.rule = ["PREROUTING", "-d", zone.vip, "-p", "tcp", "--dport", str(PORT), "-j", "REDIRECT",
                     "--to-ports", str(HAPROXY_PORT)]

    def start(self) -> None:
        servers = "\n".join(f"    server {name} {address}:{PORT}"
                            for name, (address, _, _) in self.zone.members.items())
        for name, (_, ns, _) in self.zone.members.items():
            conf = self.workdir / f"haproxy-{name}.cfg"
            conf.write_text(HAPROXY_CONFIG.format(socket=self.socket(name), haproxy_port=HAPROXY_PORT,
                                                  servers=servers))
            log = (self.workdir / f"haproxy-{name}.log").open("ab")
            self.processes[name] = subprocess.Popen(["ip", "netns", "exec", ns, "haproxy", "-db", "-f", str(conf)],
                                                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 15
        while set(self.up_servers()) != set(self.zone.members):  # the health checks' verdict, not a timer
            if time.monotonic() > deadline:
                raise SystemExit(f"{self.zone.az}: haproxy's checks did not find every member up within 15 s "
                                 f"({self.states()}); see {self.workdir}/haproxy-*.log")
            time.sleep(0.2)

    def socket(self, name: str) -> Path:
        return self.workdir / f"haproxy-{name}.sock"

    def stat(self, name: str) -> list[dict[str, str]]:
        with socket.socket(socket.AF_UNIX) as unix:
            unix.connect(str(self.socket(name)))
            unix.sendall(b"show stat\n")
            text = b"".join(iter(lambda: unix.recv(65536), b"")).decode()
        header, *rows = [line for line in text.splitlines() if line]
        keys = header.lstrip("# ").split(",")
        return [dict(zip(keys, row.split(","))) for row in rows]

    def states(self) -> dict[str, dict[str, str]]:
        """haproxy (by member) -> each server's check status."""
        result = {}
        for name in self.processes:
            try:
                result[name] = {row["svname"]: row["status"] for row in self.stat(name)
                                if row["svname"] in self.zone.members}
            except OSError as error:
                result[name] = {"socket": type(error).__name__}
        return result

    def up_servers(self) -> list[str]:
        """The servers every haproxy of the zone has UP."""
        states = self.states()
        return [server for server in self.zone.members
                if all(state.get(server) == "UP" for state in states.values())]

    def redirect(self, on: bool) -> None:
        for _, ns, _ in self.zone.members.values():
            present = subprocess.run(["ip", "netns", "exec", ns, "iptables", "-t", "nat", "-C", *self.rule],
                                     capture_output=True).returncode == 0
            if on and not present:
                netns.sh("iptables", "-t", "nat", "-A", *self.rule, ns=ns)
            elif not on and present:
                netns.sh("iptables", "-t", "nat", "-D", *self.rule, ns=ns)

    def stop(self) -> None:
        self.redirect(False)
        for process in self.processes.values():
            process.terminate()
            process.wait(10)


def process_cpu(pids: list[int]) -> float:
    """CPU-seconds of these processes and their live descendants."""
    tick, parents, own = os.sysconf("SC_CLK_TCK"), {}, {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry)], own[int(entry)] = int(fields[1]), (int(fields[11]) + int(fields[12])) / tick
    wanted, total = set(pids), 0.0
    for pid in own:
        ancestor = pid
        while ancestor and ancestor not in wanted:
            ancestor = parents.get(ancestor, 0)
        total += own[pid] if ancestor else 0.0
    return total


def load_case(loadgen: Path, zone: Zone, haproxy: Haproxy, path: str, connections: str, concurrency: int,
              seconds: float, paths: Paths) -> dict:
    haproxy.redirect(path == "haproxy")
    holder = zone.holder()
    member_pids = [int(pidfile.read_text()) for _, _, pidfile in zone.members.values()]
    switch_pids = [pid for az in AZS if (pid := ovn.running(paths, f"ovs-vswitchd-{az}"))]
    groups = {"members": member_pids, "haproxy": [process.pid for process in haproxy.processes.values()],
              "ovs-vswitchd": switch_pids}
    before = {group: process_cpu(pids) for group, pids in groups.items()}
    machine, wall = machine_cpu_seconds(), time.monotonic()
    done = subprocess.run([str(loadgen), "-addr", f"{zone.floating}:{PORT}", "-concurrency", str(concurrency),
                           "-duration", f"{seconds}s"] + (["-keepalive"] if connections == "keepalive" else []),
                          capture_output=True, text=True, check=True)
    wall, machine = time.monotonic() - wall, machine_cpu_seconds() - machine
    figures = json.loads(done.stdout)
    requests = max(figures["requests"], 1)
    cpu = {group: (process_cpu(pids) - before[group]) * 1000 / requests for group, pids in groups.items()}
    return {"az": zone.az, "path": path, "connections": connections, "concurrency": concurrency, "holder": holder,
            "rps": figures["requests"] / figures["seconds"], "requests": figures["requests"],
            "failed": sum(figures["failed"].values()), "p50_ms": figures["p50_ms"], "p99_ms": figures["p99_ms"],
            "cpu_ms": {**cpu, "machine": machine * 1000 / requests}, "cores_busy": machine / wall,
            "answers": {answer.split()[0]: n for answer, n in sorted(figures["answers"].items())}}


def failover(zone: Zone, haproxy: Haproxy, path: str, down_seconds: float) -> dict:
    """The holder's listener stopped for ``down_seconds``, then started again, with a request every 0.1 s."""
    haproxy.redirect(path == "haproxy")
    holder = zone.holder()
    if holder is None:
        raise SystemExit(f"{zone.az}: no member holds the VIP {zone.vip}")
    log: list[tuple[float, str]] = []
    holders: list[tuple[float, str | None]] = []
    stop = threading.Event()

    def client() -> None:
        while not stop.is_set():
            started = time.monotonic()
            log.append((started, ask(zone.floating)))
            time.sleep(max(0.0, 0.1 - (time.monotonic() - started)))

    def watch() -> None:
        while not stop.is_set():
            holders.append((time.monotonic(), zone.holder()))
            time.sleep(0.1)

    threads = [threading.Thread(target=client), threading.Thread(target=watch)]
    for thread in threads:
        thread.start()
    time.sleep(2)
    t0 = t1 = time.monotonic()
    try:
        subprocess.run(["lab/localcloud/fault", "member-down", holder], cwd=ROOT, check=True, capture_output=True)
        time.sleep(down_seconds)
    finally:   # the member serves again whatever happened
        t1 = time.monotonic()
        subprocess.run(["lab/localcloud/fault", "member-up", holder], cwd=ROOT, check=True, capture_output=True)
        time.sleep(5)
        stop.set()
        for thread in threads:
            thread.join()
    down = [(t - t0, who) for t, who in log if t0 <= t < t1]
    back = [(t - t1, who) for t, who in log if t >= t1]
    lost = [(t - t0, who) for t, who in log if t >= t0 and failed(who)]
    left = next((t - t0 for t, who in holders if t >= t0 and who != holder), None)
    taken = next(((t - t0, who) for t, who in holders if t >= t0 and who not in (holder, None)), None)
    return {"az": zone.az, "path": path, "holder": holder, "requests": len(down) + len(back),
            "failed": len(lost), "failed_kinds": dict(Counter(who for _, who in lost)),
            "failed_from_s": lost[0][0] if lost else None, "failed_to_s": lost[-1][0] if lost else None,
            "answers_down": dict(Counter(who.split()[0] for _, who in down if not failed(who))),
            "vip_left_holder_s": left, "vip_taken_s": taken[0] if taken else None,
            "vip_taken_by": taken[1] if taken else None, "vip_after": zone.holder(), "down_seconds": t1 - t0}


def table(cases: list[dict], cores: int) -> str:
    lines = ["| zone | connections | concurrency | path | requests/s | failed | p50 (ms) | p99 (ms) | "
             "members' CPU (ms/req) | haproxy CPU (ms/req) | ovs-vswitchd CPU (ms/req) | "
             f"cores busy (of {cores}) | answers by member |", "| " + " | ".join(["---"] * 13) + " |"]
    for c in cases:
        cpu = c["cpu_ms"]
        lines.append(f"| {c['az']} | {c['connections']} | {c['concurrency']} | {c['path']} | {c['rps']:.0f} | "
                     f"{c['failed']} | {c['p50_ms']:.1f} | {c['p99_ms']:.1f} | {cpu['members']:.2f} | "
                     f"{cpu['haproxy']:.2f} | {cpu['ovs-vswitchd']:.2f} | "
                     f"{c['cores_busy']:.2f} | {', '.join(f'{k} {v}' for k, v in c['answers'].items())} |")
    return "\n".join(lines)


def summary(cases: list[dict]) -> str:
    """The cases of each (connections, concurrency, path) over every zone and round: medians, and the holder's share
    of the answers; on the haproxy rows, requests/s and p50 against the direct path's."""
    lines = ["| connections | concurrency | path | cases | requests/s | p50 (ms) | p99 (ms) | members' CPU (ms/req) | "
             "haproxy CPU (ms/req) | ovs-vswitchd CPU (ms/req) | holder's share | requests/s, p50 vs direct |",
             "| " + " | ".join(["---"] * 12) + " |"]
    keys = sorted({(c["connections"], c["concurrency"]) for c in cases}, key=lambda k: (k[0] != "new", k[1]))
    for connections, concurrency in keys:
        medians = {}
        for path in ("direct", "haproxy"):
            group = [c for c in cases if (c["connections"], c["concurrency"], c["path"]) == (connections, concurrency,
                                                                                            path)]
            if not group:
                continue
            m = medians[path] = {key: statistics.median(c[key] for c in group) for key in ("rps", "p50_ms", "p99_ms")}
            cpu = {key: statistics.median(c["cpu_ms"][key] for c in group)
                   for key in ("members", "haproxy", "ovs-vswitchd")}
            share = statistics.median(c["answers"].get(c["holder"], 0) / max(sum(c["answers"].values()), 1)
                                      for c in group)
            versus = (f"{m['rps'] / medians['direct']['rps']:.2f}, {m['p50_ms'] / medians['direct']['p50_ms']:.2f}"
                      if path == "haproxy" and "direct" in medians else "")
            lines.append(f"| {connections} | {concurrency} | {path} | {len(group)} | {m['rps']:.0f} | "
                         f"{m['p50_ms']:.1f} | {m['p99_ms']:.1f} | {cpu['members']:.2f} | {cpu['haproxy']:.2f} | "
                         f"{cpu['ovs-vswitchd']:.2f} | {share:.0%} | {versus} |")
    return "\n".join(lines)


def failover_table(rows: list[dict]) -> str:
    lines = ["| zone | path | holder stopped | requests | failed (kinds) | failed from .. to (s) | "
             "answers while it was down | VIP left the holder at (s) | VIP taken at (s) | VIP afterwards |",
             "| " + " | ".join(["---"] * 10) + " |"]
    for r in rows:
        kinds = ", ".join(f"{n} {kind[len('failed('):-1] if kind.startswith('failed(') else 'empty answer'}"
                          for kind, n in r["failed_kinds"].items())
        span = "-" if r["failed_from_s"] is None else f"{r['failed_from_s']:.2f} .. {r['failed_to_s']:.2f}"
        left = "never" if r["vip_left_holder_s"] is None else f"{r['vip_left_holder_s']:.2f}"
        taken = "never" if r["vip_taken_s"] is None else f"{r['vip_taken_s']:.2f} (by {r['vip_taken_by']})"
        lines.append(f"| {r['az']} | {r['path']} | {r['holder']} | {r['requests']} | {r['failed']}"
                     f"{f' ({kinds})' if kinds else ''} | {span} | "
                     f"{', '.join(f'{k} {v}' for k, v in sorted(r['answers_down'].items()))} | {left} | {taken} | "
                     f"{r['vip_after']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--zones", nargs="+", default=["az1", "az2", "az3"])
    parser.add_argument("--concurrency", nargs="+", type=int, default=[1, 8, 32])
    parser.add_argument("--connections", nargs="+", choices=["new", "keepalive"], default=["new", "keepalive"])
    parser.add_argument("--seconds", type=float, default=8.0, help="each load case's length")
    parser.add_argument("--rounds", type=int, default=1, help="the load cases again, each round after the last")
    parser.add_argument("--down-seconds", type=float, default=10.0, help="how long the holder's listener is stopped")
    parser.add_argument("--no-failover", action="store_true")
    args = parser.parse_args(argv)
    if shutil.which("haproxy") is None:
        raise SystemExit("haproxy is not installed on this machine: apt-get install haproxy (Debian's package)")
    text = "" if sys.stdin.isatty() else sys.stdin.read()
    try:
        outputs = json.loads(text)
    except ValueError:
        raise SystemExit("stdin: not the keepalived stack's outputs; run `STACK=keepalived scripts/stack.sh outputs | "
                         ".venv/bin/python lab/bench/keepalived_haproxy.py`") from None
    paths = Paths()
    unknown = sorted(set(args.zones) - set(outputs.get("zones") or {}))
    if unknown:
        raise SystemExit(f"--zones: {', '.join(unknown)} not in the stack's outputs (pipe `scripts/stack.sh outputs` "
                         f"of the keepalived stack into this script)")
    cache = Path(os.environ.get("HA_ENDPOINT_CACHE", Path.home() / ".cache" / "ha-endpoint"))
    loadgen = build_go_program(ROOT / "lab" / "bench" / "loadgen", cache / "bin" / "loadgen")
    workdir = paths.root / "haproxy-bench"
    workdir.mkdir(exist_ok=True)
    cores = os.cpu_count() or 1
    print(f"haproxy {subprocess.run(['haproxy', '-v'], capture_output=True, text=True).stdout.split()[2]}; "
          f"{cores} cores; load average at start {os.getloadavg()[0]:.1f}", flush=True)
    cases, failovers = [], []
    for az in args.zones:
        zone = Zone(az, outputs["zones"][az], paths)
        haproxy = Haproxy(zone, workdir)
        try:
            haproxy.start()
            steps = [(connections, concurrency) for _ in range(args.rounds) for connections in args.connections
                     for concurrency in args.concurrency]
            for i, (connections, concurrency) in enumerate(steps):
                order = ("direct", "haproxy") if i % 2 == 0 else ("haproxy", "direct")
                for path in order:
                    cases.append(load_case(loadgen, zone, haproxy, path, connections, concurrency, args.seconds, paths))
                    print(table(cases[-1:], cores).splitlines()[-1], flush=True)
            if not args.no_failover:
                for path in ("direct", "haproxy"):
                    failovers.append(failover(zone, haproxy, path, args.down_seconds))
                    print(failover_table(failovers[-1:]).splitlines()[-1], flush=True)
                    deadline = time.monotonic() + 15   # the stopped member back in every haproxy before the next
                    while set(haproxy.up_servers()) != set(zone.members) and time.monotonic() < deadline:
                        time.sleep(0.2)
        finally:
            haproxy.stop()
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}\n")
    print(table(cases, cores))
    print(f"\nmedians over the zones and rounds (load average {os.getloadavg()[0]:.1f}):\n")
    print(summary(cases))
    if failovers:
        print()
        print(failover_table(failovers))
    print(json.dumps({"cases": cases, "failovers": failovers, "cores": cores}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

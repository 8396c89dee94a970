"""What a client sees when the endpoint loses an AZ: failover measured with real clients on the local cloud's data plane.

    .venv/bin/python bench/failover_figures.py                      # every way, without and with the watcher
    .venv/bin/python bench/failover_figures.py --ways az-down --watcher with --duration 90

A throwaway stack (`failover`, endpoint `fo-api`: three zones on the ovn provider, one serving Nova server per zone
behind a TCP listener on 6443 with a TCP health monitor, the A record's TTL 30 s) is deployed; then for each way of
losing az2, three clients loop over the endpoint's name for ``--duration`` seconds while az2 is lost ``--lose-at``
seconds in, and stays lost until the loop ends:

- ``members``: az2's member server stops serving (`localcloud/fault server-down`): its load balancer has no live
  member and drops what it gets (OVN answers no reset);
- ``az-down``: az2's chassis stops (`localcloud/fault az-down az2`): its floating IP goes dark;
- ``lb-deleted``: az2's load balancer is deleted out of band (cascade): its floating IP leads nowhere.

After each way az2 is brought back (`server-up`, `az-up`, or `pulumi up --refresh`, which builds the load balancer
again) and the next way starts once every zone answers and the name lists the three addresses.

The clients resolve the name at the local cloud's DNS server before every request, with no cache (what a client sees
once its resolver's cache has expired: the TTL bounds how much later that happens), and open a new connection each
time, with their own defaults:

- ``curl``: curl 7.88 (a new process per request; the addresses named answered, in its order, handed over with
  ``--resolve``); no timeout of its own, each unanswered address costs the kernel's SYN retries;
- ``go``: Go's net/http with the standard dialer (bench/failover/main.go, built here): the addresses in order, each
  with a share of the 30 s dial timeout, as kubectl and client-go do;
- ``requests``: Python requests (bench/failover/requests_client.py): urllib3 tries the addresses in order, each with
  the kernel's connect timeout (requests sets none).

With ``--watcher with``, `python -m ha_endpoint.watch` runs beside them (``--interval 2``, 3 polls each way), so the
dead address leaves the A record while the clients loop. Printed per way and client: requests made and failed, the
longest time without an answer, and when the client was answered steadily again after the loss (the end of its first
answered request after its last failure), then a Markdown table for the README.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ENDPOINT = "fo-api"
ZONES = ("az1", "az2", "az3")
LOST = "az2"
PORT = 6443
TTL = 30
WAYS = ("members", "az-down", "lb-deleted")
CLIENTS = ("curl", "go", "requests")
WATCH_ARGS = ("--interval", "2", "--unhealthy-polls", "3", "--healthy-polls", "3")


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


@dataclass
class Request:
    start: float
    end: float
    ok: bool
    answer: str = ""
    error: str = ""


@dataclass
class Figures:
    client: str
    requests: list[Request] = field(default_factory=list)

    def row(self, lose_at: float, duration: float) -> dict:
        done = sorted(self.requests, key=lambda r: r.start)
        failed = [r for r in done if not r.ok]
        answered = [r.end for r in done if r.ok]
        marks = [0.0, *answered, max(duration, max((r.end for r in done), default=0.0))]
        longest = max(b - a for a, b in zip(marks, marks[1:]))
        steady = None
        if failed:
            last_failure = max(r.end for r in failed)
            later = [r.end for r in done if r.ok and r.start >= last_failure]
            steady = (min(later) - lose_at) if later else None
        slowest = max((r.end - r.start for r in done), default=0.0)
        return {"client": self.client, "requests": len(done), "failed": len(failed), "longest_gap": longest,
                "steady_after": steady, "slowest": slowest,
                "errors": sorted({r.error.split(":")[0] for r in failed})[:3]}


def resolve(name: str, server: tuple[str, int]) -> list[str]:
    import dns.message
    import dns.query
    import dns.rdatatype
    answer = dns.query.udp(dns.message.make_query(name, "A"), server[0], port=server[1], timeout=2)
    return [item.address for rrset in answer.answer if rrset.rdtype == dns.rdatatype.A for item in rrset]


def curl_loop(url: str, name: str, server: tuple[str, int], duration: float, interval: float,
              out: Figures, began: float) -> None:
    while time.monotonic() - began < duration:
        start = time.monotonic() - began
        try:
            addresses = resolve(name, server)
        except Exception as error:  # noqa: BLE001 (a failed resolution is a failed request)
            out.requests.append(Request(start, time.monotonic() - began, False, error=f"resolve: {error}"))
            time.sleep(interval)
            continue
        run = subprocess.run(["curl", "-sk", "--resolve", f"{name}:{PORT}:{','.join(addresses)}", url],
                             capture_output=True, text=True)
        end = time.monotonic() - began
        out.requests.append(Request(start, end, run.returncode == 0, run.stdout.strip()[:80],
                                    "" if run.returncode == 0 else f"curl exit {run.returncode}"))
        time.sleep(interval)


def process_loop(command: list[str], out: Figures, began: float) -> subprocess.Popen:
    """Start a client that prints one JSON line per request; its lines are read into ``out`` (times shifted to
    ``began``)."""
    offset = time.monotonic() - began
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def read() -> None:
        for line in proc.stdout:
            data = json.loads(line)
            out.requests.append(Request(data["start"] + offset, data["end"] + offset, bool(data.get("ok")),
                                        data.get("answer", ""), data.get("error", "")))
    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    proc.reader = thread  # type: ignore[attr-defined]
    return proc


def build_go_client(cache: Path) -> Path:
    binary = cache / "bin" / "hafailover"
    source = ROOT / "bench" / "failover"
    newest = max(p.stat().st_mtime for p in source.glob("*.go"))
    if not binary.exists() or binary.stat().st_mtime < newest:
        binary.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["go", "build", "-o", str(binary), "."], cwd=source, check=True,
                       env={**os.environ, "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"})
    return binary


class Scenario:
    """The deployed stack, its servers, and the means to lose and restore az2."""

    def __init__(self, cloud, stack, servers: dict[str, object]):
        self.cloud, self.stack, self.servers = cloud, stack, servers
        self.outputs = stack.outputs()

    @property
    def fqdn(self) -> str:
        return self.outputs["fqdn"]

    def addresses(self) -> dict[str, str]:
        return {zone: self.outputs["zones"][zone]["floatingIp"] for zone in ZONES}

    def lose(self, way: str) -> None:
        faults = self.cloud.faults
        if way == "members":
            faults.server_down(self.servers[LOST].name)
        elif way == "az-down":
            faults.az_down(LOST)
        elif way == "lb-deleted":
            self.cloud.conn.load_balancer.delete_load_balancer(self.outputs["zones"][LOST]["loadbalancerId"],
                                                                cascade=True)
        else:
            raise ValueError(way)

    def restore(self, way: str) -> None:
        faults = self.cloud.faults
        if way == "members":
            faults.server_up(self.servers[LOST].name)
        elif way == "az-down":
            faults.az_up(LOST)
        elif way == "lb-deleted":
            self._wait(lambda: self._lb_gone(), 120, "the deleted load balancer is gone")
            self.stack.up("--refresh", policy=False)
            self.outputs = self.stack.outputs()
        self.settle()

    def _lb_gone(self) -> bool:
        lb = self.cloud.conn.load_balancer.find_load_balancer(self.outputs["zones"][LOST]["loadbalancerId"])
        return lb is None or lb.provisioning_status == "DELETED"

    def settle(self) -> None:
        """Every zone answers and the name lists every zone's address (after a way, or the watcher's restore)."""
        from localcloud.dataplane import reach
        import ssl
        import urllib.request
        tls = ssl.create_default_context()
        tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE

        def answers(address: str) -> bool:
            reach.check(address)
            try:
                with urllib.request.urlopen(f"https://{address}:{PORT}/", timeout=2, context=tls) as response:
                    return response.status == 200
            except OSError:
                return False
        for zone, address in self.addresses().items():
            self._wait(lambda: answers(address), 180, f"{zone} answers")
        self._wait(lambda: set(resolve(self.fqdn, dns_server())) == set(self.addresses().values()), 180,
                   "the name lists every zone")

    @staticmethod
    def _wait(predicate, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what}: not within {timeout:.0f}s")
            time.sleep(1)


def dns_server() -> tuple[str, int]:
    from localcloud.settings import HOST, PORTS
    return HOST, PORTS["named"]


def measure(scenario: Scenario, way: str, watcher: bool, go_client: Path, duration: float, lose_at: float,
            interval: float) -> list[dict]:
    name = scenario.fqdn.rstrip(".")
    url = f"https://{name}:{PORT}/"
    server = dns_server()
    figures = {client: Figures(client) for client in CLIENTS}
    watch = None
    if watcher:
        watch = subprocess.Popen(
            [sys.executable, "-m", "ha_endpoint.watch", "--outputs", "-", "--stack",
             f"ha-endpoint/{scenario.stack.stack}", *WATCH_ARGS], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, env=scenario.stack.env)
        watch.stdin.write(json.dumps(scenario.outputs))
        watch.stdin.close()
        watch.stdin = None  # closed: communicate() must not flush it
        time.sleep(8)  # its first polls: every zone stably healthy
    began = time.monotonic()
    curl = threading.Thread(target=curl_loop, args=(url, name, server, duration, interval, figures["curl"], began),
                            daemon=True)
    curl.start()
    go = process_loop([str(go_client), "-url", url, "-dns", f"{server[0]}:{server[1]}", "-duration",
                       f"{duration}s", "-interval", f"{interval}s"], figures["go"], began)
    requests_ = process_loop([sys.executable, str(ROOT / "bench" / "failover" / "requests_client.py"), url,
                              f"{server[0]}:{server[1]}", str(duration), str(interval)], figures["requests"], began)
    time.sleep(max(0.0, lose_at - (time.monotonic() - began)))
    scenario.lose(way)
    lost_at = time.monotonic() - began
    curl.join()
    for proc in (go, requests_):
        proc.wait()
        proc.reader.join(timeout=10)
    log = ""
    if watch is not None and way == "lb-deleted":  # its outputs name the deleted load balancer: `up` brings a new one
        log = stop(watch)
    scenario.restore(way)  # a watcher still running puts az2's address back once az2 serves again
    if watch is not None and not log:
        log = stop(watch)
    rows = [figures[client].row(lost_at, duration) for client in CLIENTS]
    for row in rows:
        row.update(way=way, watcher=watcher)
    if log:
        actions = [line for line in log.splitlines() if " removing " in line or " restoring " in line]
        print("    watcher: " + ("; ".join(actions) or "no action"))
    return rows


def stop(watch: subprocess.Popen) -> str:
    watch.send_signal(signal.SIGTERM)
    return watch.communicate(timeout=30)[0]


def fmt(row: dict) -> str:
    steady = "-" if row["steady_after"] is None and not row["failed"] else (
        "never" if row["steady_after"] is None else f"{row['steady_after']:.1f}")
    return (f"| {row['way']} | {'yes' if row['watcher'] else 'no'} | {row['client']} | {row['requests']} | "
            f"{row['failed']} | {row['longest_gap']:.1f} | {steady} | {row['slowest']:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ways", default=",".join(WAYS))
    parser.add_argument("--watcher", choices=("without", "with", "both"), default="both")
    parser.add_argument("--duration", type=float, default=150.0, help="seconds each client loops per way")
    parser.add_argument("--lose-at", type=float, default=10.0, help="seconds into the loop az2 is lost")
    parser.add_argument("--interval", type=float, default=0.5, help="pause after each request")
    args = parser.parse_args()
    ways = [w for w in args.ways.split(",") if w]
    unknown = sorted(set(ways) - set(WAYS))
    if unknown:
        parser.error(f"--ways: {', '.join(unknown)} not among {', '.join(WAYS)}")
    watchers = {"without": [False], "with": [True], "both": [False, True]}[args.watcher]

    from localcloud.testing import Cleanup, ensure_up
    from tests.e2e.pulumi_cli import PulumiStack, project_environment
    from bench.lib.engine_in_use import describe, engine_environment

    cloud = ensure_up()
    cache = Path(os.environ.get("HA_ENDPOINT_CACHE", Path.home() / ".cache" / "ha-endpoint"))
    go_client = build_go_client(cache)
    environment = {**engine_environment(project_environment()), "OS_CLIENT_CONFIG_FILE": cloud.clouds_yaml,
                   "OS_CLOUD": "localcloud"}
    print(f"failover: 3 zones on the ovn provider, TTL {TTL} s, TCP monitor delay 3 s timeout 2 s (down after 3 "
          f"failures); az2 lost {args.lose_at:.0f} s into a {args.duration:.0f} s loop, one request per client every "
          f"{args.interval} s ({describe(environment)})", flush=True)
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
            scenario = Scenario(cloud, stack, servers)
            scenario.settle()
            for watcher in watchers:
                for way in ways:
                    print(f"  {way}, {'with' if watcher else 'without'} the watcher ...", flush=True)
                    found = measure(scenario, way, watcher, go_client, args.duration, args.lose_at, args.interval)
                    for row in found:
                        print(f"    {row['client']:9s} {row['requests']:4d} requests, {row['failed']:3d} failed, "
                              f"longest without an answer {row['longest_gap']:6.1f}s, steady after "
                              f"{row['steady_after'] if row['steady_after'] is None else round(row['steady_after'], 1)}"
                              f", slowest request {row['slowest']:.1f}s {row['errors']}", flush=True)
                    rows += found
        finally:
            stack.destroy(check=False)
            left = cleanup.run()
            if left:
                print(f"  left behind: {left}")
    print("\n| way az2 is lost | watcher | client | requests | failed | longest without an answer (s) | steady "
          "after the loss (s) | slowest request (s) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print(fmt(row))


if __name__ == "__main__":
    main()

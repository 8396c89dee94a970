"""A control-plane rollout behind the endpoint with real clients (issue 48): what lab/bench/rollout_figures.py prints and
tests/e2e/test_k8s_rollout.py asserts (one implementation of both).

On the local cloud's data plane: a Kubernetes control plane (lab/localcloud/k8s: etcd + kube-apiserver v1.34.4) on Nova
servers of its own (``ro-0``..``ro-8``, three per AZ on k8s-net at 10.10.10.31-39, each in its data-plane network
namespace, as lab/localcloud/k8s/oncloud.py hands a node over; generation g of AZ i is ``ro-(3g+i)``, generation 0
holds etcd), this project's endpoint in front of them (a real ``pulumi up``), a management cluster on 127.0.0.1 (one
etcd + one kube-apiserver) serving Cluster API v1.14.2's Machine CRD, the member agent (``python -m
ha_endpoint.agent``), and kubectl and client-go looping a read of the ``default`` Namespace (``REQUEST``) through
the endpoint's DNS name (tests/e2e/k8s_clients.py).

Cluster API's controllers are not run: :func:`rollout` drives KubeadmControlPlane's documented sequence, one
machine per AZ in turn:
  1. a new Machine in the zone (labels cluster-name + control-plane, failureDomain, status.addresses) and its API
     server started on a new Nova server of that zone; KCP waits until it is ready, and (as KCP does once the
     kube-apiserver pod is ready) sets the Machine's ``APIServerPodHealthy`` condition True when its /readyz answers;
  2. the old Machine deleted: the Machine controller keeps its finalizer while any
     ``pre-drain.delete.hook.machine.cluster.x-k8s.io/*`` annotation is on it (``Cluster.delete_as_cluster_api``);
  3. KCP's ``pre-terminate.../kcp-cleanup`` removes the machine's etcd member, after which its API server stops
     serving: here its kube-apiserver is stopped (SIGTERM); KCP moves on once the Machine is gone.
What differs from a real KCP rollout: etcd is not rolled (three members stay on generation 0 for the whole run);
"ready" is the new kube-apiserver's /readyz (KCP waits for the Node and etcd member too); one agent replica.
"""

from __future__ import annotations

import datetime

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

from localcloud.dataplane import members, nodes
from localcloud.k8s import cluster, layout as layouts, oncloud
from localcloud.k8s.layout import Layout, Node
from localcloud.settings import AZS, PROJECT, USER, load_secrets
from tests.e2e import management

REPO = Path(__file__).resolve().parents[2]
NAME = "rollout"
PORT = 6443
REQUEST = "/api/v1/namespaces/default"
"""What the clients GET, as the cluster's admin: an object, read from etcd, as a controller's requests are. Not
``/readyz``: that is each server's own readiness, for load balancers. A stopping kube-apiserver fails it
(``[-]shutdown``) on purpose while it still answers everything else, and client-go's kept connection to the old
server outlives its member (the ovn load balancer keeps established flows when a backend leaves), so a client
polling /readyz on it sees that server's own answer (docs/agent.md). Its other requests are served until the server
closes the connection (HTTP/2 GOAWAY), and client-go then sends them on a new connection, through the endpoint."""
AGENT_TAG = "ha-endpoint:agent="
MEMBER_STATUS = "ha-endpoint.io/member"
ROLL = nodes.NodeSet(nodes.KUBERNETES.group, nodes.KUBERNETES.description,
                     tuple((f"ro-{n}", AZS[n % 3], f"10.10.10.{31 + n}") for n in range(9)),
                     nodes.KUBERNETES.rules, nodes.KUBERNETES.network)
"""Generation g (0, 1, 2) of AZ i is ro-(3g+i): gen 0 holds etcd."""


CLOCK = time.time() - time.monotonic()
"""Wall clock minus this process's monotonic clock: the agent's log lines (UTC to the millisecond) on its marks."""


def agent_events(log_file: Path) -> list[tuple[float, str]]:
    """The agent's log lines as (this process's monotonic time, text)."""
    found = []
    for line in log_file.read_text(errors="replace").splitlines():
        stamp, _, text = line.partition(" ")
        try:
            at = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
        except ValueError:
            continue
        found.append((at.timestamp() - CLOCK, text))
    return found


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def wait_for(check, what: str, timeout: float, step: float = 0.5):
    """The agent e2e tests' wait (tests/e2e/management.py), every 0.5 s by default."""
    return management.wait_for(check, what, timeout, step)


def plugged(cloud, servers: dict[str, str], timeout: float = 90.0) -> list[dict]:
    """The data plane's record of each ROLL server, in ROLL's order, once plugged (oncloud.plugged for ROLL)."""
    deadline = time.monotonic() + timeout
    while True:
        by_server = {m["server_id"]: m for m in members.recorded(cloud).values() if m}
        found = [by_server.get(servers[name]) for name, _, _ in ROLL.nodes]
        if all(found):
            return found
        if time.monotonic() > deadline:
            raise TimeoutError("the data plane has not plugged every ro-* server")
        time.sleep(0.5)


def prepare_nodes(cloud, fqdn: str) -> tuple[Layout, Layout, list[dict]]:
    """The nine servers ensured, plugged and handed over; (etcd layout: gen 0, layout of all nine, plugged)."""
    from localcloud.rest import Client

    seeded = json.loads(cloud.seeded.read_text())
    user = Client(USER, load_secrets(cloud)["user"], PROJECT).login()
    servers = nodes.ensure(user, {az: seeded[f"{az}_subnet_id"] for az in AZS},
                           {az: seeded[f"{az}_network_id"] for az in AZS}, seeded["image_id"], seeded["flavor"],
                           timeout=300, nodeset=ROLL)
    found = plugged(cloud, servers)
    state = oncloud.state_dir(cloud, NAME)
    all_nodes = tuple(Node(f"{NAME}-{n + 1}", m["ip"], 6443, 2379, 2380, ("ip", "netns", "exec", m["namespace"]))
                      for n, m in enumerate(found))
    everything = Layout(NAME, state, all_nodes, (fqdn, "127.0.0.1"))
    etcd = replace(everything, nodes=all_nodes[:3])
    if (state / "layout.json").exists():
        oncloud.forget(layouts.load(state))   # an earlier run's: a fresh etcd cluster
    layouts.save(everything)                  # `lab/localcloud/down` and the cleanup stop every node by it
    for member, node in zip(found, all_nodes):
        oncloud.hand_over(cloud, member, everything, node.name)
    return etcd, everything, found


def start_apiserver(etcd: Layout, everything: Layout, node: Node, bins) -> float:
    """``node``'s kube-apiserver (talking to gen 0's etcd members) started; seconds until /readyz answers."""
    for directory in (everything.state, everything.node_dir(node)):
        directory.mkdir(parents=True, exist_ok=True)
        os.chmod(directory, 0o700)
    credentials = cluster.certificates(everything)
    cluster.start_process(etcd, node, "kube-apiserver", bins)
    return cluster.wait_until(lambda: cluster.api_ready(node, credentials), f"kube-apiserver {node.name}", 180,
                              everything.log(node, "kube-apiserver"))


def endpoint_kubeconfig(everything: Layout, fqdn: str, path: Path) -> Path:
    """The cluster admin's kubeconfig whose server is the endpoint's name (what the clients use)."""
    from ha_endpoint.kubernetes.kubeconfig import KubeconfigUser, render_kubeconfig

    credentials = cluster.certificates(everything)
    certificate, key = credentials.admin.pem()
    path.write_text(render_kubeconfig(f"https://{fqdn}:{PORT}", NAME, f"{NAME}-admin", credentials.ca.read_text(),
                                      KubeconfigUser(client_certificate=certificate, client_key=key)))
    path.chmod(0o600)
    return path


class Management:
    """The management cluster on 127.0.0.1: one etcd member, one kube-apiserver, Cluster API's Machine CRD."""

    def __init__(self, state: Path, bins):
        plan = cluster.local_layout(f"{NAME}-mgmt", state)
        self.plan = replace(plan, nodes=plan.nodes[:1])
        layouts.save(self.plan)
        cluster.up(self.plan, bins)
        try:
            self.api = management.Cluster(self.plan, bins)
            self.api.install_machines()
        except BaseException:  # its etcd and API server stopped: the caller gets no Management to take down
            cluster.down(self.plan)
            raise

    def status(self, machine: str) -> str:
        """The agent's status annotation on the Machine ('' when none, or the Machine is gone)."""
        found = self.api.machine(machine) or {}
        return (found.get("metadata", {}).get("annotations") or {}).get(MEMBER_STATUS, "")

    def serving(self, machine: str) -> bool:
        return self.status(machine).startswith("serving")

    def down(self) -> None:
        cluster.down(self.plan)


def start_agent(cloud, mgmt: Management, outputs: Path, drain: float, log_file: Path, identity: str = "rollout-agent"
                ) -> tuple[subprocess.Popen, int]:
    """One ``python -m ha_endpoint.agent`` keeping the stack's pools following the cluster ``prod``'s Machines (on
    k8s-subnet in every zone), with the project user's credentials; (the process, its metrics port)."""
    subnet = cloud.conn.network.find_subnet(nodes.KUBERNETES.network[1]).id
    port = free_port()
    argv = [sys.executable, "-m", "ha_endpoint.agent", "--outputs", str(outputs), "--cluster", "prod",
            "--kubeconfig", str(mgmt.plan.kubeconfig), "--drain", str(drain),
            "--identity", identity, "--port", str(port)]  # --interval as users run it: the default 5 s
    for az in AZS:
        argv += ["--member-subnet", f"{az}={subnet}"]
    agent = subprocess.Popen(argv, stdout=log_file.open("w"), stderr=subprocess.STDOUT,
                             env={**os.environ, "OS_CLIENT_CONFIG_FILE": cloud.clouds_yaml, "OS_CLOUD": "localcloud"},
                             start_new_session=True, cwd=REPO)
    return agent, port


def stop_agent(agent: subprocess.Popen | None) -> None:
    if agent is not None and agent.poll() is None:
        agent.terminate()
        try:
            agent.wait(30)
        except subprocess.TimeoutExpired:
            agent.kill()
            agent.wait(30)


def rollout(case: str, mgmt: Management, etcd: Layout, everything: Layout, bins, old_gen: int, new_gen: int,
            marks: list) -> list[dict]:
    """KCP's sequence for the three AZs; what each step took."""
    steps, counted = [], {}
    for i, az in enumerate(AZS):
        old, new = everything.nodes[3 * old_gen + i], everything.nodes[3 * new_gen + i]
        old_machine, new_machine = f"cp-{old_gen}-{i}", f"cp-{new_gen}-{i}"
        began = time.monotonic()
        mgmt.api.add_machine(new_machine, az, new.address, api_server_healthy=False)   # 1. the new machine first
        ready = start_apiserver(etcd, everything, new, bins)
        answered = time.monotonic()
        mgmt.api.api_server_healthy(new_machine)   # KCP: APIServerPodHealthy True once its API server is ready
        patched = time.monotonic()
        marks.append((answered, f"{new_machine} ({new.address}) API server ready"))
        if case == "agent":   # when the agent counts it as capacity (its status annotation), beside KCP's sequence
            threading.Thread(target=capacity_after, args=(mgmt, new_machine, answered, counted), daemon=True).start()
        released = mgmt.api.delete_as_cluster_api(old_machine, timeout=600)   # 2. deleted, hooks honoured
        seen_released = time.monotonic()
        marks.append((seen_released, f"{old_machine} pre-drain hooks released"))
        cluster.stop_process(etcd, old, "kube-apiserver")          # 3. kcp-cleanup: the old API server stops
        marks.append((time.monotonic(), f"{old_machine} ({old.address}) API server stopped"))
        wait_for(lambda: mgmt.api.machine(old_machine) is None, f"{old_machine} gone", 60, 0.3)
        steps.append({"az": az, "new": new_machine, "new_ready_s": round(ready, 1), "old": old_machine,
                      "counted": counted, "answered": answered, "patched": patched,
                      "deleted": seen_released - released, "seen_released": seen_released,
                      "hook_released_s": round(released, 1), "step_s": round(time.monotonic() - began, 1)})
        log(f"{case}: {az}: {new_machine} ready in {ready:.1f} s; {old_machine}'s hooks released after "
            f"{released:.1f} s; its API server stopped")
    return steps


def capacity_after(mgmt: Management, machine: str, answered: float, counted: dict) -> None:
    """Seconds from the machine's API server answering until the agent's annotation says `serving`."""
    deadline = answered + 180
    while time.monotonic() < deadline:
        if mgmt.serving(machine):
            counted[machine] = round(time.monotonic() - answered, 1)
            return
        time.sleep(0.5)


class MemberStates:
    """The pools' members as Octavia lists them, sampled every 0.5 s while a case runs: each change of an agent
    member's (admin state, provisioning/operating status), with its time; and, per sample, the zones (``pools``:
    pool id -> AZ) none of whose members is in service and ONLINE (what a client needs of a zone)."""

    def __init__(self, conn, pools: dict[str, str]):
        self.conn, self.pools, self.changes, self._last, self._names = conn, pools, [], {}, {}
        self.unserved: list[tuple[float, str]] = []
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> "MemberStates":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.is_set():
            seen = set()
            for pool, az in self.pools.items():
                try:
                    listed = list(self.conn.load_balancer.members(pool))
                except Exception:  # noqa: BLE001  (a missed sample, not a figure)
                    continue
                if not any(m.is_admin_state_up and m.operating_status == "ONLINE" for m in listed):
                    self.unserved.append((time.monotonic(), az))
                for m in listed:
                    if not any(tag.startswith(AGENT_TAG) for tag in (m.tags or [])):
                        continue
                    key = (pool, m.id)
                    seen.add(key)
                    self._names[key] = m.name
                    what = f"{'up' if m.is_admin_state_up else 'down'} {m.provisioning_status}/{m.operating_status}"
                    if self._last.get(key) != what:
                        self._last[key] = what
                        self.changes.append((time.monotonic(), m.name, what))
            for key in set(self._last) - seen:
                self.changes.append((time.monotonic(), self._names.get(key, key[1][:8]), "gone"))
                del self._last[key]
            self.samples += 1
            self._stop.wait(0.5)

    def of(self, machine: str, since: float = float("-inf")) -> list[str]:
        """The states Octavia listed the machine's member in, in order, from ``since`` (a monotonic time) on."""
        return [what for at, name, what in self.changes if name == machine and at >= since]


def measured(case: str, loop_factory, work, tail: float) -> tuple[list[dict], object]:
    loop = loop_factory().start()
    time.sleep(5)
    result = work()
    time.sleep(tail)
    loop.end_now()
    failures = [(request.start, figures.client, request.error) for figures in loop.figures.values()
                for request in figures.requests if not request.ok]
    return [dict(row, case=case, began=loop.began, failures=sorted(failures)) for row in loop.rows(0.0)], result


def window(loop, case: str, start: float, end: float) -> list[dict]:
    """Per client, the requests the loop started between ``start`` and ``end`` (seconds since it began) as one case's
    rows (as :func:`measured`'s): a loop that runs through several cases, counted per case."""
    from tests.e2e.failover import Figures, Request

    rows = []
    for figures in loop.figures.values():
        inside = [Request(r.start - start, r.end - start, r.ok, r.answer, r.error)
                  for r in list(figures.requests) if start <= r.start < end]
        row = Figures(figures.client, inside).row(0.0, end - start)
        failures = sorted((r.start + start, figures.client, r.error) for r in inside if not r.ok)
        rows.append(dict(row, case=case, began=loop.began + start, failures=failures))
    return rows


def totals(rows: list[dict]) -> dict:
    return {"requests": sum(r["requests"] for r in rows), "failed": sum(r["failed"] for r in rows),
            "longest_gap_s": round(max(r["longest_gap"] for r in rows), 1)}


def table(rows: list[dict]) -> str:
    lines = ["| case | client | requests | failed | longest gap (s) |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        gap = f"{'≥ ' if r['cut'] is not None else ''}{r['longest_gap']:.1f}"
        lines.append(f"| {r['case']} | {r['client']} | {r['requests']} | {r['failed']} | {gap} |")
    return "\n".join(lines)


def shown(error: str) -> str:
    """A failed request's error, short: a /readyz answer's failing checks (``[-]shutdown failed``), else its start."""
    failing = re.findall(r"\[-\]([\w/-]+)", error.replace("\\n", "\n"))
    if failing:
        return f"{error[:40]}... failing: {', '.join('[-]' + check for check in failing)}"
    return error[:110]


def failures_line(rows: list[dict], limit: int = 8) -> str:
    """The rows' failed requests (s since the clients started, client, error), the first ``limit``."""
    failures = sorted(f for r in rows for f in r["failures"])
    return ("; ".join(f"{t:.1f} {c} {shown(e)}" for t, c, e in failures[:limit]) or "none") + \
        (f"; ... {len(failures) - limit} more" if len(failures) > limit else "")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def published(fqdn: str) -> list[str]:
    from tests.e2e.failover import dns_server, resolve
    try:
        return resolve(fqdn, dns_server())
    except Exception:  # noqa: BLE001
        return []


def delete_servers(cloud) -> None:
    """The ro-* servers and their ports (made by prepare_nodes)."""
    conn = cloud.conn
    for name, _, _ in ROLL.nodes:
        server = conn.compute.find_server(name)
        if server:
            conn.compute.delete_server(server)
    for name, _, _ in ROLL.nodes:
        server = conn.compute.find_server(name)
        if server:
            conn.compute.wait_for_delete(server, wait=120)
        port = conn.network.find_port(name)
        if port:
            conn.network.delete_port(port)


def clean_up(cloud, stack, everything: Layout | None, mgmt: Management | None, say=log) -> None:
    """Everything the run made, each part whatever happened to the others: the stack, the cluster's processes,
    its nodes handed back, the management cluster, the servers."""
    for name, what in (("stack", lambda: stack and stack.destroy(check=False)),
                       ("cluster", lambda: everything and cluster.down(everything)),
                       ("hand back", lambda: everything and oncloud.hand_back(cloud.paths, everything.state)),
                       ("management", lambda: mgmt and mgmt.down()),
                       ("servers", lambda: delete_servers(cloud))):
        try:
            what()
        except Exception as error:  # noqa: BLE001
            say(f"cleanup {name}: {error}")

"""Start, wait for, measure and stop the local cluster's processes: three etcd members forming one cluster and three
kube-apiservers, each talking to every member. No kubelet, scheduler or controller manager: API objects only.

Every process starts in a session of its own with a PID file (``localcloud.procs``), under its node's ``wrap`` (a
network namespace later), and is stopped by that PID only. Readiness is asked over TLS: etcd's ``/health`` with the
API servers' etcd client certificate, each API server's ``/readyz`` with the admin's.
"""

from __future__ import annotations

import http.client
import os
import ssl
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from localcloud import procs
from localcloud.ports import listening_pids
from localcloud.settings import LAB, REPO

from . import layout as layouts
from . import pki
from .layout import Layout, Node

SERVICE_CIDR = "10.96.0.0/12"
SERVICE_IP = "10.96.0.1"
"""The ``kubernetes`` Service's cluster IP (the first of the range), in every API server's certificate."""
HEARTBEAT_MS, ELECTION_MS = 250, 2500
"""etcd's Raft timing: 2.5x its defaults (100/1000 ms), for a 2-core machine shared with other builds and tests,
where a 1 s election timeout turns a busy moment into a leader election."""


@dataclass(frozen=True)
class Binaries:
    etcd: Path
    kube_apiserver: Path
    kubectl: Path
    provider: Path
    """The pulumi-kubernetes provider plugin (``pulumi-resource-kubernetes``)."""
    provider_version: str
    capi_conversion: Path
    """Cluster API's conversion webhook for Cluster (lab/engine/capi-conversion)."""


def binaries() -> Binaries:
    """The Kubernetes parts of the engine's cache, built first if missing (``lab/engine/build.sh --k8s``: seconds when
    cached, minutes on a cold machine)."""
    built = subprocess.run([str(LAB / "engine" / "build.sh"), "--k8s"], cwd=REPO, capture_output=True, text=True,
                           timeout=3600)
    if built.returncode != 0:
        raise RuntimeError(f"lab/engine/build.sh --k8s failed ({built.returncode}):\n{built.stderr[-3000:]}")
    etcd, kube, provider, conversion = (Path(line) for line in built.stdout.split())  # ENGINE_K8S_PARTS' order
    return Binaries(etcd / "bin" / "etcd", kube / "bin" / "kube-apiserver", kube / "bin" / "kubectl",
                    provider / "plugins" / "pulumi-resource-kubernetes",
                    (provider / "kubernetes-plugin-version").read_text().strip(),
                    conversion / "bin" / "capi-conversion")


def ports_in_use(ports: list[int]) -> set[int]:
    return set(listening_pids(ports))


def local_layout(name: str, state: Path) -> Layout:
    """Three nodes on 127.0.0.1, on the first free port base that no local cloud can take (layout.py)."""
    return layouts.local(name, state, layouts.free_base(ports_in_use))


@dataclass(frozen=True)
class Credentials:
    """What a client of the cluster needs, as file paths (PEM)."""

    ca: Path
    admin: pki.KeyPair
    etcd_ca: Path
    etcd_client: pki.KeyPair


def certificates(layout: Layout) -> Credentials:
    """Every certificate and key of the cluster, made (or reused) under ``layout.pki``."""
    cluster_ca = pki.Authority(layout.pki, "ca", f"{layout.name}-ca")
    etcd_ca = pki.Authority(layout.pki, "etcd-ca", f"{layout.name}-etcd-ca")
    for node in layout.nodes:
        local = (node.address, "127.0.0.1", "localhost", node.name)
        etcd_ca.issue(f"etcd-{node.name}", node.name, server=True, client=True, sans=local)  # serving and peer
        cluster_ca.issue(f"apiserver-{node.name}", "kube-apiserver", server=True,
                         sans=(*local, *pki.SERVICE_NAMES, SERVICE_IP, *layout.sans))
    pki.service_account_keys(layout.pki)
    return Credentials(ca=cluster_ca.pair.cert,
                       admin=cluster_ca.issue("admin", f"{layout.name}-admin", client=True,
                                              organization=pki.ADMIN_GROUP),
                       etcd_ca=etcd_ca.pair.cert,
                       etcd_client=etcd_ca.issue("apiserver-etcd-client", "kube-apiserver-etcd-client", client=True))


def etcd_argv(layout: Layout, node: Node, binary: Path) -> list[str]:
    tls = layout.pki / f"etcd-{node.name}"
    ca = layout.pki / "etcd-ca.crt"
    members = ",".join(f"{member.name}={member.etcd_peer_url}" for member in layout.nodes)
    return [*node.wrap, str(binary), f"--name={node.name}", f"--data-dir={layout.etcd_data(node)}",
            f"--listen-client-urls={node.etcd_client_url}", f"--advertise-client-urls={node.etcd_client_url}",
            f"--listen-peer-urls={node.etcd_peer_url}", f"--initial-advertise-peer-urls={node.etcd_peer_url}",
            f"--initial-cluster={members}", f"--initial-cluster-token={layout.name}", "--initial-cluster-state=new",
            "--client-cert-auth", f"--trusted-ca-file={ca}", f"--cert-file={tls}.crt", f"--key-file={tls}.key",
            "--peer-client-cert-auth", f"--peer-trusted-ca-file={ca}", f"--peer-cert-file={tls}.crt",
            f"--peer-key-file={tls}.key", f"--heartbeat-interval={HEARTBEAT_MS}", f"--election-timeout={ELECTION_MS}"]


def apiserver_argv(layout: Layout, node: Node, binary: Path) -> list[str]:
    p = layout.pki
    return [*node.wrap, str(binary), f"--advertise-address={node.address}", f"--bind-address={node.address}",
            f"--secure-port={node.api_port}", f"--tls-cert-file={p}/apiserver-{node.name}.crt",
            f"--tls-private-key-file={p}/apiserver-{node.name}.key", f"--client-ca-file={p}/ca.crt",
            "--etcd-servers=" + ",".join(member.etcd_client_url for member in layout.nodes),
            f"--etcd-cafile={p}/etcd-ca.crt", f"--etcd-certfile={p}/apiserver-etcd-client.crt",
            f"--etcd-keyfile={p}/apiserver-etcd-client.key", f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={p}/sa.pub", f"--service-account-signing-key-file={p}/sa.key",
            "--authorization-mode=Node,RBAC", "--profiling=false"]


def _marker(layout: Layout, node: Node, program: str) -> str:
    """A flag with a path of this cluster's state, which tells the PID file's process apart from any other."""
    return (f"--data-dir={layout.etcd_data(node)}" if program == "etcd"
            else f"--tls-cert-file={layout.pki}/apiserver-{node.name}.crt")


def start_process(layout: Layout, node: Node, program: str, bins: Binaries) -> int:
    """Start ``program`` (etcd or kube-apiserver) of ``node`` unless its PID file names it running; its PID."""
    pidfile = layout.pidfile(node, program)
    running = procs.alive(pidfile, _marker(layout, node, program))
    if running:
        return running
    argv = (etcd_argv(layout, node, bins.etcd) if program == "etcd"
            else apiserver_argv(layout, node, bins.kube_apiserver))
    return procs.start(f"{program} {node.name}", argv, pidfile, layout.log(node, program), cwd=layout.node_dir(node))


def stop_process(layout: Layout, node: Node, program: str) -> bool:
    """Stop ``program`` of ``node`` by its PID file (SIGTERM, then SIGKILL); True if it ran."""
    return procs.stop(layout.pidfile(node, program), _marker(layout, node, program))


def tls_context(ca: Path, client: pki.KeyPair) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(ca))
    context.load_cert_chain(str(client.cert), str(client.key))
    return context


def probe(node_address: str, port: int, path: str, context: ssl.SSLContext, timeout: float = 3.0) -> tuple[int, str]:
    """(HTTP status, body) of GET ``path``; (0, the error) when nothing answered."""
    connection = http.client.HTTPSConnection(node_address, port, context=context, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read().decode(errors="replace")
    except (OSError, http.client.HTTPException) as error:
        return 0, f"{type(error).__name__}: {error}"
    finally:
        connection.close()


def wait_until(check, what: str, timeout: float, log: Optional[Path] = None) -> float:
    """Seconds until ``check()`` gives (200, ...); raises naming ``what``, the last answer and the log's tail."""
    started = time.monotonic()
    status, body = 0, "not asked"
    while time.monotonic() - started < timeout:
        status, body = check()
        if status == 200:
            return time.monotonic() - started
        time.sleep(0.25)
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:]) if log and log.exists() else ""
    raise TimeoutError(f"{what} not ready after {timeout:.0f} s (last answer: {status} {body[:300]})"
                       + (f"\n{log} ends with:\n{tail}" if tail else ""))


@dataclass(frozen=True)
class Started:
    seconds: float
    etcd_seconds: float
    api_seconds: float


def probe_inside(node: Node, url: str, ca: Path, client: pki.KeyPair, timeout: float = 3.0) -> tuple[int, str]:
    """``probe`` from inside the node's network namespace (curl under its ``wrap``): a node on the data plane is not
    reachable from the machine's own namespace."""
    try:
        done = subprocess.run([*node.wrap, "curl", "-s", "--max-time", str(timeout), "--cacert", str(ca),
                               "--cert", str(client.cert), "--key", str(client.key), "-w", "\n%{http_code}", url],
                              capture_output=True, text=True, timeout=timeout + 5)
    except subprocess.TimeoutExpired:
        return 0, "curl did not return"
    body, _, code = done.stdout.rpartition("\n")
    if done.returncode != 0 or not code.isdigit():
        return 0, f"curl exit {done.returncode}: {done.stderr.strip()[:200]}"
    return int(code), body


def etcd_ready(node: Node, credentials: Credentials) -> tuple[int, str]:
    if node.wrap:
        return probe_inside(node, f"{node.etcd_client_url}/health", credentials.etcd_ca, credentials.etcd_client)
    return probe(node.address, node.etcd_client_port, "/health",
                 tls_context(credentials.etcd_ca, credentials.etcd_client))


def api_ready(node: Node, credentials: Credentials) -> tuple[int, str]:
    if node.wrap:
        return probe_inside(node, f"{node.api_url}/readyz", credentials.ca, credentials.admin)
    return probe(node.address, node.api_port, "/readyz", tls_context(credentials.ca, credentials.admin))


def up(layout: Layout, bins: Binaries, timeout: float = 180.0) -> Started:
    """Start what is not running: the three etcd members at once (they wait for each other), then the API servers;
    return once every member is healthy and every API server ready (start and wait times)."""
    started = time.monotonic()
    credentials = etcd_up(layout, bins, timeout)
    etcd_done = time.monotonic()
    for node in layout.nodes:
        start_process(layout, node, "kube-apiserver", bins)
    _wait_all(layout, credentials, "kube-apiserver", timeout, bins)
    write_kubeconfig(layout, layout.nodes[0], credentials, layout.kubeconfig)
    done = time.monotonic()
    return Started(done - started, etcd_done - started, done - etcd_done)


def etcd_up(layout: Layout, bins: Binaries, timeout: float = 180.0) -> Credentials:
    """Start the etcd members that are not running (at once: they wait for each other); return once every member is
    healthy (the cluster's credentials)."""
    for directory in (layout.state, *(layout.node_dir(node) for node in layout.nodes)):
        directory.mkdir(parents=True, exist_ok=True)
        os.chmod(directory, 0o700)  # keys, etcd's data and logs: the owner's only
    credentials = certificates(layout)
    for node in layout.nodes:
        start_process(layout, node, "etcd", bins)
    _wait_all(layout, credentials, "etcd", timeout, bins)
    return credentials


def node_up(layout: Layout, node: Node, bins: Binaries, timeout: float = 120.0) -> float:
    """Start ``node``'s API server again (after ``stop_process``); seconds until it is ready."""
    credentials = certificates(layout)
    start_process(layout, node, "kube-apiserver", bins)
    return wait_until(lambda: api_ready(node, credentials), f"kube-apiserver {node.name} ({node.address})", timeout,
                      layout.log(node, "kube-apiserver"))


RESTARTS = 3
"""How often a process that exited before it was ready is started again while ``up`` waits, as a supervisor
(systemd, the kubelet) would: kube-apiserver exits when a post-start hook fails, e.g. "unable to perform initial IP
and Port allocation check" while etcd answers slowly on a loaded machine (seen in CI)."""


def _wait_all(layout: Layout, credentials: Credentials, program: str, timeout: float, bins: Binaries) -> None:
    ready = etcd_ready if program == "etcd" else api_ready

    def check(node: Node) -> tuple[int, str]:
        if procs.exited(layout.pidfile(node, program)):
            restarts[node.name] += 1
            if restarts[node.name] > RESTARTS:
                return 0, f"exited {RESTARTS + 1} times before it was ready"
            start_process(layout, node, program, bins)
        return ready(node, credentials)

    restarts = {node.name: 0 for node in layout.nodes}
    with ThreadPoolExecutor(len(layout.nodes)) as pool:
        waits = [pool.submit(wait_until, lambda node=node: check(node),
                             f"{program} {node.name} ({node.address})", timeout, layout.log(node, program))
                 for node in layout.nodes]
        for wait in waits:
            wait.result()


def write_kubeconfig(layout: Layout, node: Node, credentials: Credentials, path: Path) -> Path:
    """The admin's kubeconfig for ``node``'s API server, rendered by the product's own ``render_kubeconfig`` (what
    ``ClusterAccess`` hands out), written 0600."""
    from ha_endpoint.kubernetes.kubeconfig import KubeconfigUser, render_kubeconfig

    certificate, key = credentials.admin.pem()
    text = render_kubeconfig(node.api_url, layout.name, f"{layout.name}-admin", credentials.ca.read_text(),
                             KubeconfigUser(client_certificate=certificate, client_key=key))
    pki.write_private(path, text.encode())
    return path


def down(layout: Layout) -> list[str]:
    """Stop every API server, then every etcd member, by PID file; what was running."""
    stopped = []
    for program in ("kube-apiserver", "etcd"):
        for node in layout.nodes:
            if stop_process(layout, node, program):
                stopped.append(f"{program} {node.name}")
    return stopped


@dataclass(frozen=True)
class Usage:
    node: str
    program: str
    pid: int
    rss: int
    pss: int


def memory(layout: Layout) -> list[Usage]:
    """RSS and PSS (bytes) of every running process of the cluster."""
    found = []
    for program in ("etcd", "kube-apiserver"):
        for node in layout.nodes:
            pid = procs.alive(layout.pidfile(node, program), _marker(layout, node, program))
            if pid:
                found.append(Usage(node.name, program, pid, procs.rss_bytes([pid]), procs.pss_bytes([pid])))
    return found

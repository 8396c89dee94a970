"""A fake Kubernetes API serving Cluster API Machines, on 127.0.0.1, for the ``clusterApi`` member source.

A real HTTP server (so the official Kubernetes client runs as it does against a management cluster: kubeconfig,
request, label selector, JSON), holding a list of Machine objects. It answers ``GET
/apis/cluster.x-k8s.io/<version>/namespaces/<namespace>/machines`` for the versions it serves (default v1beta2 and
v1beta1), filtering by namespace and ``labelSelector`` (``key=value`` and ``key``, as the API server does), and
records each request. ``refuse`` makes it answer every request with that status (403: credentials without the
right); a version it does not serve answers 404, as an API server without that CRD version does.
"""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator, Optional
from urllib.parse import parse_qs, urlparse

import yaml


def machine(name: str, az: Optional[str], address: Optional[str], cluster: str = "k8s", namespace: str = "default",
            control_plane: bool = True, address_type: str = "InternalIP", **annotations: str) -> dict[str, Any]:
    """A Machine as Cluster API writes it (v1beta2): labels, ``spec.failureDomain``, ``status.addresses``."""
    labels = {"cluster.x-k8s.io/cluster-name": cluster}
    if control_plane:
        labels["cluster.x-k8s.io/control-plane"] = ""
    spec: dict[str, Any] = {"clusterName": cluster}
    if az is not None:
        spec["failureDomain"] = az
    status: dict[str, Any] = {"phase": "Running"}
    if address is not None:
        status["addresses"] = [{"type": "Hostname", "address": name}, {"type": address_type, "address": address}]
    return {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", "labels": labels,
                         "annotations": dict(annotations)},
            "spec": spec, "status": status}


class FakeMachinesApi:
    """The server's state: the Machines, the versions served, a status to refuse with, the requests seen."""

    def __init__(self, machines: list[dict[str, Any]], versions: tuple[str, ...] = ("v1beta2", "v1beta1")):
        self.machines = machines
        self.versions = versions
        self.refuse: Optional[int] = None
        self.requests: list[str] = []

    def answer(self, path: str) -> tuple[int, dict[str, Any]]:
        url = urlparse(path)
        self.requests.append(path)
        if self.refuse is not None:
            return self.refuse, _status(self.refuse, "Forbidden" if self.refuse == 403 else "Error")
        parts = url.path.strip("/").split("/")
        if len(parts) != 6 or parts[:2] != ["apis", "cluster.x-k8s.io"] or parts[3] != "namespaces" \
                or parts[5] != "machines" or parts[2] not in self.versions:
            return 404, _status(404, "NotFound")
        selector = parse_qs(url.query).get("labelSelector", [""])[0]
        items = [m for m in self.machines if m["metadata"]["namespace"] == parts[4] and _selects(selector, m)]
        return 200, {"apiVersion": f"cluster.x-k8s.io/{parts[2]}", "kind": "MachineList", "metadata": {},
                     "items": items}


def _status(code: int, reason: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason, "code": code,
            "message": f"machines.cluster.x-k8s.io is {reason.lower()}"}


def _selects(selector: str, machine: dict[str, Any]) -> bool:
    labels = machine["metadata"].get("labels") or {}
    for term in filter(None, selector.split(",")):
        key, _, value = term.partition("=")
        if key not in labels or ("=" in term and labels[key] != value):
            return False
    return True


@contextmanager
def serving(api: FakeMachinesApi, directory: Path) -> Iterator[Path]:
    """Serve ``api`` on 127.0.0.1 (a free port) while the block runs; yields the path of a kubeconfig reaching it."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            code, body = api.answer(self.path)
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    kubeconfig = directory / "management.kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "management",
        "clusters": [{"name": "management", "cluster": {"server": f"http://127.0.0.1:{server.server_port}"}}],
        "users": [{"name": "capi", "user": {"token": "test-token"}}],
        "contexts": [{"name": "management", "context": {"cluster": "management", "user": "capi"}}]}))
    try:
        yield kubeconfig
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def agent_member(cloud: Any, pool_name: str, address: str, port: int, tag: str = "ha-endpoint:agent=default/k8s") -> None:
    """What the member agent writes between runs: a member in the pool named ``pool_name`` carrying its tag, not a
    resource of any stack (Octavia then refuses a second member at that address and port in the pool)."""
    from tests.mocks.resources import MEMBER, POOL

    pool_id = next(pool_id for pool_id, state in cloud.kind(POOL).items() if state.get("name") == pool_name)
    cloud.kind(MEMBER)[cloud.new_id()] = {"poolId": pool_id, "address": address, "protocolPort": port,
                                          "name": f"agent-{address}", "tags": [tag], "adminStateUp": True,
                                          "weight": 1}
    cloud.pool_members.setdefault(pool_id, set()).add((address, port))

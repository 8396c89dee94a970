"""What the agent shows: Prometheus metrics (prometheus_client, one registry per agent) and the HTTP server of
``/metrics``, ``/healthz`` (the loop runs) and ``/readyz`` (the Machines are listed and watched), bound to
127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

STATES = ("serving", "joining", "out", "failed")


class Metrics:
    """The agent's metrics (names ``ha_endpoint_agent_*``)."""

    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        self.members = Gauge("ha_endpoint_agent_members", "The agent's members by zone and state (serving: ACTIVE, "
                             "ONLINE and in service; joining; out: admin down, drained or in maintenance; failed)",
                             ["az", "state"], registry=r)
        self.leader = Gauge("ha_endpoint_agent_leader", "1 while this replica holds the Lease", registry=r)
        self.synced = Gauge("ha_endpoint_agent_machines_synced", "1 while the Machines are listed and watched",
                            registry=r)
        self.problems = Gauge("ha_endpoint_agent_machine_problems", "Selected Machines not served (no address, no "
                              "failure domain, a refused value)", registry=r)
        self.hooks_waiting = Gauge("ha_endpoint_agent_hooks_waiting", "Deleting Machines held by our hook",
                                   registry=r)
        self.hooks_held_too_long = Gauge("ha_endpoint_agent_hooks_held_too_long", "Deleting Machines held by our "
                                         "hook longer than --hook-warn-after", registry=r)
        self.hook_wait = Histogram("ha_endpoint_agent_hook_wait_seconds", "From a Machine's deletion to our hook's "
                                   "release", buckets=(5, 10, 20, 30, 45, 60, 90, 120, 300, 600, 1800), registry=r)
        self.reconcile = Histogram("ha_endpoint_agent_reconcile_seconds", "Duration of one reconcile pass",
                                   registry=r)
        self.errors = Counter("ha_endpoint_agent_errors", "Failures by kind (cloud, kubernetes, unsynced)",
                              ["kind"], registry=r)

    def set_members(self, counts: Mapping[tuple[str, str], int], zones: list[str]) -> None:
        for az in zones:
            for state in STATES:
                self.members.labels(az=az, state=state).set(counts.get((az, state), 0))

    def text(self) -> bytes:
        return generate_latest(self.registry)


def serve(metrics: Metrics, live: Callable[[], bool], ready: Callable[[], bool], host: str,
          port: int) -> ThreadingHTTPServer:
    """Start the metrics and probes server in a daemon thread; the caller shuts it down."""
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path == "/metrics":
                self._send(200, metrics.text(), CONTENT_TYPE_LATEST)
            elif self.path in ("/healthz", "/readyz"):
                ok = (live if self.path == "/healthz" else ready)()
                self._send(200 if ok else 503, b"ok\n" if ok else b"not ok\n", "text/plain")
            else:
                self._send(404, b"not found\n", "text/plain")

        def _send(self, code: int, body: bytes, kind: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True, name="agent-http").start()
    return server

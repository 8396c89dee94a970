"""A tiny Octavia v2 API on 127.0.0.1 for driving the real openstacksdk without a cloud.

Serves: version discovery, ``GET /v2/lbaas/pools/{id}/members`` (paginated like Octavia: ``members_links`` with a
``next`` href when more than ``page_size`` members), ``GET /v2/lbaas/loadbalancers/{id}`` and
``PUT /v2/lbaas/pools/{id}/members/{member_id}``, and a load balancer's status tree
(``GET /v2/lbaas/loadbalancers/{id}/status``: one listener per pool of ``lb_pools``). ``failures`` queues HTTP statuses returned by the next requests
(any method, discovery excluded); the entry ``"html"`` answers 200 with an HTML page instead, as a proxy in front of
the API might. Every request path is logged in ``requests``.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional
from urllib.parse import parse_qs, urlparse

REASONS = {401: "Unauthorized", 404: "Not Found", 409: "Conflict", 500: "Internal Server Error",
           503: "Service Unavailable"}


PROXY_PAGE = "<html><body><h1>Maintenance</h1>Back soon.</body></html>"
"""What a proxy in front of the API answers (status 200) instead of the API's JSON."""


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status, REASONS.get(status))
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_html(self) -> None:
        data = PROXY_PAGE.encode()
        self.send_response(200, "OK")
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _route(self, method: str) -> None:
        fake = self.server.fake
        url = urlparse(self.path)
        url = url._replace(path=re.sub(r"^/v2\.0/", "/v2/", url.path))  # a catalog's versioned endpoint
        if not url.path.startswith("/v2/lbaas"):
            port = self.server.server_port
            self._send(200, {"versions": [{"id": "v2.0", "status": "CURRENT",
                                           "links": [{"rel": "self", "href": f"http://127.0.0.1:{port}/v2"}]}]})
            return
        with fake.lock:
            fake.requests.append(f"{method} {self.path}")
            if fake.failures:
                status = fake.failures.pop(0)
                if status == "html":
                    self._send_html()
                else:
                    self._send(status, {"faultstring": f"injected {status}"})
                return
            status, body = fake.answer(method, url.path, parse_qs(url.query), self._body())
        self._send(status, body)

    def _body(self) -> dict:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length)) if length else {}

    def do_GET(self) -> None:
        self._route("GET")

    def do_PUT(self) -> None:
        self._route("PUT")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: "FakeOctaviaHTTP"


class FakeOctaviaHTTP:
    """Context manager: ``with FakeOctaviaHTTP() as api: conn = api.connect()``."""

    def __init__(self, page_size: int = 1000) -> None:
        self.page_size = page_size
        self.pools: dict[str, dict[str, list]] = {}
        self.lbs: dict[str, list[str]] = {}
        self.lb_pools: dict[str, list[str]] = {}   # a load balancer's pools, one listener each (its status tree)
        self.failures: list[int] = []
        self.requests: list[str] = []
        self.member_updates: list[dict] = []   # each PUT of one member: its id and the attributes written
        self.lock = threading.Lock()
        self._server: Optional[_Server] = None

    def __enter__(self) -> "FakeOctaviaHTTP":
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_port}/v2.0"

    @property
    def root_url(self) -> str:
        """The unversioned endpoint, as a Keystone catalog lists Octavia (openstacksdk discovers the version)."""
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_port}"

    def connect(self, cloud: Optional[str] = None) -> Any:
        """A real openstacksdk connection to this fake (no Keystone: auth_type none)."""
        import openstack

        return openstack.connect(
            auth_type="none", load_balancer_endpoint_override=self.url, load_yaml_config=False, load_envvars=False
        )

    def add_members(self, pool_id: str, count: int, prov: str = "ACTIVE", oper: str = "ONLINE") -> list[str]:
        ids = [f"{pool_id}-m{i:04d}" for i in range(count)]
        with self.lock:
            self.pools.setdefault(pool_id, {}).update({m: [prov, oper, 1] for m in ids})
        return ids

    def member_listings(self) -> list[str]:
        return [r for r in self.requests if r.startswith("GET") and "/members" in r]

    def answer(self, method: str, path: str, query: dict, body: dict) -> tuple[int, dict]:
        if m := re.fullmatch(r"/v2/lbaas/pools/([^/]+)/members", path):
            return self._list(m.group(1), query)
        if m := re.fullmatch(r"/v2/lbaas/pools/([^/]+)/members/([^/]+)", path):
            pool = self.pools.get(m.group(1), {})
            member = pool.get(m.group(2))
            if member is None:
                return 404, {"faultstring": f"Member {m.group(2)} not found."}
            self.member_updates.append({"member": m.group(2), **body.get("member", {})})
            member[2] = body.get("member", {}).get("weight", member[2])
            return 200, {"member": self._member(m.group(2), member)}
        if m := re.fullmatch(r"/v2/lbaas/loadbalancers/([^/]+)/status", path):
            if m.group(1) not in self.lb_pools:
                return 404, {"faultstring": f"Load Balancer {m.group(1)} not found."}
            prov, oper = self.lbs.get(m.group(1), ["ACTIVE", "ONLINE"])
            listeners = [{"id": f"listener-{pool}", "pools": [{"id": pool, "members": [
                self._member(member, fields) for member, fields in sorted(self.pools.get(pool, {}).items())]}]}
                for pool in self.lb_pools[m.group(1)]]
            return 200, {"statuses": {"loadbalancer": {"id": m.group(1), "provisioning_status": prov,
                                                       "operating_status": oper, "listeners": listeners}}}
        if m := re.fullmatch(r"/v2/lbaas/loadbalancers/([^/]+)", path):
            prov, oper = self.lbs.get(m.group(1), ["ACTIVE", "ONLINE"])
            return 200, {"loadbalancer": {"id": m.group(1), "provisioning_status": prov, "operating_status": oper}}
        return 404, {"faultstring": "not found"}

    @staticmethod
    def _member(member_id: str, fields: list) -> dict:
        return {"id": member_id, "provisioning_status": fields[0], "operating_status": fields[1], "weight": fields[2]}

    def _list(self, pool_id: str, query: dict) -> tuple[int, dict]:
        if pool_id not in self.pools:
            return 404, {"faultstring": f"Pool {pool_id} not found."}
        ids = sorted(self.pools[pool_id])
        start = ids.index(query["marker"][0]) + 1 if "marker" in query else 0
        chunk = ids[start:start + self.page_size]
        links = []
        if start + self.page_size < len(ids):
            href = f"{self.url[:-5]}/v2/lbaas/pools/{pool_id}/members?limit={self.page_size}&marker={chunk[-1]}"
            links.append({"rel": "next", "href": href})
        members = [self._member(m, self.pools[pool_id][m]) for m in chunk]
        return 200, {"members": members, "members_links": links}

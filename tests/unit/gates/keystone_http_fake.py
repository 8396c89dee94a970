"""A tiny Keystone v3 on 127.0.0.1, so that the real keystoneauth authenticates, re-authenticates and fails as it does
against a real cloud: version discovery (``GET /`` and ``GET /v3``), ``POST /v3/auth/tokens`` with a catalog that
lists one load-balancer endpoint. ``answers`` queues HTTP statuses for the next token requests (401 as Keystone
answers wrong credentials, 404 as it answers a project or user that no longer exists); ``stop()`` makes it
unreachable (connection refused) and ``start()`` brings it back on the same port. ``token_requests`` counts tokens
asked for.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional

ERRORS = {
    401: ("Unauthorized", "The request you have made requires authentication."),
    404: ("Not Found", "Could not find project: ha-endpoint."),
    503: ("Service Unavailable", "The server is currently unavailable."),
}


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: dict, headers: Optional[dict] = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        base = self.server.fake.base_url
        version = {"id": "v3.14", "status": "stable", "links": [{"rel": "self", "href": f"{base}/v3/"}],
                   "media-types": [{"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}]}
        if self.path.rstrip("/") == "/v3":
            self._send(200, {"version": version})
        else:
            self._send(300, {"versions": {"values": [version]}})

    def do_POST(self) -> None:
        fake = self.server.fake
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with fake.lock:
            fake.token_requests += 1
            status = fake.answers.pop(0) if fake.answers else 201
        if status != 201:
            title, message = ERRORS[status]
            self._send(status, {"error": {"code": status, "title": title, "message": message}})
            return
        self._send(201, fake.token_body(), {"X-Subject-Token": f"token-{fake.token_requests}"})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: "FakeKeystoneHTTP"


class FakeKeystoneHTTP:
    """Context manager: ``with FakeKeystoneHTTP(octavia_url) as keystone: conn = keystone.connect()``.

    ``versioned_auth_url``: whether clouds.yaml's auth_url ends in ``/v3`` (keystoneauth then needs no discovery
    document to authenticate) or is the bare root (it must discover, and an unreachable Keystone is a
    ``DiscoveryFailure``).
    """

    def __init__(self, octavia_url: str, versioned_auth_url: bool = False) -> None:
        self.octavia_url = octavia_url
        self.versioned_auth_url = versioned_auth_url
        self.answers: list[int] = []
        self.token_requests = 0
        self.lock = threading.Lock()
        self.port = 0
        self._server: Optional[_Server] = None

    def __enter__(self) -> "FakeKeystoneHTTP":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self) -> None:
        """Listen (again, on the same port after :meth:`stop`)."""
        self._server = _Server(("127.0.0.1", self.port), _Handler)
        self._server.fake = self
        self.port = self._server.server_port
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def auth_url(self) -> str:
        return self.base_url + ("/v3" if self.versioned_auth_url else "")

    def token_body(self) -> dict:
        domain = {"id": "default", "name": "Default"}
        endpoint = {"id": "e1", "interface": "public", "region": "RegionOne", "region_id": "RegionOne",
                    "url": self.octavia_url}
        return {"token": {
            "methods": ["password"], "issued_at": "2024-01-01T00:00:00.000000Z",
            "expires_at": "2099-01-01T00:00:00.000000Z",
            "user": {"id": "u1", "name": "ha-endpoint", "domain": domain},
            "project": {"id": "p1", "name": "ha-endpoint", "domain": domain},
            "roles": [{"id": "r1", "name": "member"}, {"id": "r2", "name": "load-balancer_member"}],
            "catalog": [{"type": "load-balancer", "name": "octavia", "id": "s1", "endpoints": [endpoint]}],
        }}

    def connect(self, cloud: Optional[str] = None, **_: Any) -> Any:
        """A real openstacksdk connection authenticating with a password against this fake."""
        import openstack

        return openstack.connect(
            auth_url=self.auth_url, username="ha-endpoint", password="secret", project_name="ha-endpoint",
            user_domain_name="Default", project_domain_name="Default", region_name="RegionOne",
            load_yaml_config=False, load_envvars=False,
        )

"""A stateful in-memory Octavia for the LoadBalancerTree: load balancers with their listeners, pools, health monitors
and members, served as Octavia's REST API through ``conn.load_balancer.get/post/put/delete`` (the adapter calls
:class:`ha_endpoint.readiness.tree_cloud.OctaviaTreeSource` makes) and ``conn.load_balancer.members`` (its inherited
member listing), with time from a FakeClock. The real OctaviaTreeSource runs over it (tests replace
``ha_endpoint.readiness.cloud.connect``), so its status handling (404, 409, 5xx, 501, DELETED) is exercised too.

What it does as Octavia does (octavia/api/v2/controllers/load_balancer.py and the amphora or ovn driver):

- ``POST /v2/lbaas/loadbalancers`` with listeners (each with a default pool, its health monitor and members) makes
  the whole tree at once: everything PENDING_CREATE, the load balancer answered at once (201); ``create_seconds``
  later the load balancer and everything under it are ACTIVE (members ONLINE). ``stuck_children``: the load balancer
  alone goes ACTIVE, its listeners, pools and monitors stay PENDING_CREATE for good (Octavia 11's amphora driver on
  the local cloud). ``create_error``: the load balancer goes to ERROR instead.
- An HTTP monitor without ``url_path``/``expected_codes``/``http_method`` gets Octavia's defaults (``/``, ``200``,
  ``GET``).
- ``PUT /v2/lbaas/<kind>s/{id}``: 404 for an unknown object; **409** while the load balancer is not ACTIVE; else the
  object and its load balancer are PENDING_UPDATE for ``apply_seconds``, the attributes written at once.
- ``DELETE /v2/lbaas/loadbalancers/{id}?cascade=true``: 404 for an unknown one; 409 while it is PENDING_*; else
  PENDING_DELETE for ``delete_seconds``, then gone with everything under it.
- ``GET /v2/lbaas/<kind>s/{id}``: 404 for an unknown object; ``GET /v2/lbaas/<kind>s?...`` filters on ``name``,
  ``loadbalancer_id`` and ``tags`` (every one of a comma-separated list).

Faults: ``lost_posts`` (a list of ``"504"`` or ``"timeout"``): the next POSTs make the tree and then lose their answer
(a proxy's 504, or no answer at all); ``refuse_posts`` (HTTP statuses, e.g. 501): the next POSTs are refused before
anything is made; ``applies_lb_filter`` false: a listing ignores ``loadbalancer_id`` (lists every load balancer's
objects, as a listing that does not apply a filter it is given would); ``busy(seconds)``: another writer's update lands (the load balancer PENDING_UPDATE: 409s).

Every call is recorded in ``requests`` as ``(method, path, body, params)``.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Optional

import requests
from keystoneauth1 import exceptions as ks_exc

from readiness_fakes import FakeClock

COLLECTIONS = {"loadbalancers": "loadbalancer", "listeners": "listener", "pools": "pool",
               "healthmonitors": "healthmonitor"}


def _response(status: int, body: Optional[dict] = None) -> requests.Response:
    response = requests.Response()
    response.status_code = status
    response.reason = requests.status_codes._codes[status][0].replace("_", " ").title()
    response.headers["Content-Type"] = "application/json"
    response._content = json.dumps(body).encode() if body is not None else b""
    response.url = "http://octavia.fake/v2/lbaas"
    return response


def _error(status: int, text: str) -> requests.Response:
    return _response(status, {"faultcode": "Client" if status < 500 else "Server", "faultstring": text})


@dataclass
class _Pending:
    due: float
    what: str  # "create", "update", "delete"
    object_kind: Optional[str] = None
    object_id: Optional[str] = None


class TreeOctavia:
    """Load balancers and what hangs under them (see the module docstring)."""

    def __init__(self, clock: FakeClock, create_seconds: float = 3.0, apply_seconds: float = 1.0,
                 delete_seconds: float = 2.0) -> None:
        self.clock = clock
        self.create_seconds = create_seconds
        self.apply_seconds = apply_seconds
        self.delete_seconds = delete_seconds
        self.objects: dict[str, dict[str, dict[str, Any]]] = {kind: {} for kind in COLLECTIONS.values()}
        self.members: dict[str, dict[str, dict[str, Any]]] = {}
        self.pending: dict[str, _Pending] = {}
        self.stuck_children = False
        self.create_error = False
        self.lost_posts: list[str] = []
        self.refuse_posts: list[int] = []
        self.applies_lb_filter = True
        self.requests: list[tuple[str, str, Any, dict]] = []
        self.refused: list[tuple[float, str, str]] = []
        self.connections: list[_Connection] = []
        self.tokens = 0
        self._ids = 0

    # ----- what a test asks --------------------------------------------------------------------------------------
    def calls(self, method: str, prefix: str = "") -> list[tuple[str, str, Any, dict]]:
        return [r for r in self.requests if r[0] == method and r[1].startswith(prefix)]

    def load_balancers(self) -> dict[str, dict[str, Any]]:
        self.advance()
        return self.objects["loadbalancer"]

    def under(self, lb_id: str, kind: str) -> list[dict[str, Any]]:
        self.advance()
        return [o for o in self.objects[kind].values() if o["_lb"] == lb_id]

    def busy(self, lb_id: str, seconds: float) -> None:
        """Another writer's update lands now: the load balancer PENDING_UPDATE for ``seconds``."""
        self.advance()
        self.objects["loadbalancer"][lb_id]["provisioning_status"] = "PENDING_UPDATE"
        self.pending[lb_id] = _Pending(self.clock.now + seconds, "update")

    def add_member(self, pool_id: str, address: str, port: int = 6443, tags=(), name: str = "") -> str:
        """A member written by someone else (or another resource), ACTIVE."""
        pool = self.objects["pool"][pool_id]
        member = self._member(pool["_lb"], pool_id, {"address": address, "protocol_port": port, "tags": list(tags),
                                                     "name": name or address})
        member["provisioning_status"], member["operating_status"] = "ACTIVE", "ONLINE"
        return member["id"]

    def add_listener(self, lb_id: str, port: int, tags=(), name: str = "theirs") -> str:
        """A listener (with no pool) someone else added to the load balancer, ACTIVE."""
        listener = self._new("listener", lb_id, {"name": name, "protocol": "TCP", "protocol_port": port,
                                                  "tags": list(tags), "default_pool_id": None})
        listener["provisioning_status"] = "ACTIVE"
        return listener["id"]

    def out_of_band(self, kind: str, object_id: str, **attributes: Any) -> None:
        """Someone changes an object outside the stack (already applied)."""
        self.objects[kind][object_id].update(attributes)

    def remove(self, kind: str, object_id: str) -> None:
        """Someone deletes an object (and what hangs under it) outside the stack."""
        self.advance()
        found = self.objects[kind].pop(object_id)
        if kind == "listener" and found.get("default_pool_id"):
            self.remove("pool", found["default_pool_id"])
        if kind == "pool":
            self.members.pop(object_id, None)
            if found.get("healthmonitor_id"):
                self.remove("healthmonitor", found["healthmonitor_id"])
            for listener in self.objects["listener"].values():
                if listener.get("default_pool_id") == object_id:
                    listener["default_pool_id"] = None
        if kind == "healthmonitor":
            for pool in self.objects["pool"].values():
                if pool.get("healthmonitor_id") == object_id:
                    pool["healthmonitor_id"] = None

    # ----- time --------------------------------------------------------------------------------------------------
    def advance(self) -> None:
        now = self.clock.now
        for lb_id, pending in list(self.pending.items()):
            if now < pending.due:
                continue
            del self.pending[lb_id]
            lb = self.objects["loadbalancer"].get(lb_id)
            if lb is None:
                continue
            if pending.what == "delete":
                for kind in ("listener", "pool", "healthmonitor"):
                    for object_id in [i for i, o in self.objects[kind].items() if o["_lb"] == lb_id]:
                        self.members.pop(object_id, None)
                        del self.objects[kind][object_id]
                del self.objects["loadbalancer"][lb_id]
            elif pending.what == "create":
                if self.create_error:
                    lb["provisioning_status"], lb["operating_status"] = "ERROR", "ERROR"
                    continue
                lb["provisioning_status"], lb["operating_status"] = "ACTIVE", "ONLINE"
                if not self.stuck_children:
                    for kind in ("listener", "pool", "healthmonitor"):
                        for found in self.objects[kind].values():
                            if found["_lb"] == lb_id:
                                found["provisioning_status"], found["operating_status"] = "ACTIVE", "ONLINE"
                    for pool_members in self.members.values():
                        for member in pool_members.values():
                            if member["_lb"] == lb_id:
                                member["provisioning_status"], member["operating_status"] = "ACTIVE", "ONLINE"
            else:
                lb["provisioning_status"] = "ACTIVE"
                if pending.object_kind and pending.object_id in self.objects[pending.object_kind]:
                    self.objects[pending.object_kind][pending.object_id]["provisioning_status"] = "ACTIVE"

    # ----- building ----------------------------------------------------------------------------------------------
    def _new_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}-{self._ids:04d}"

    def _new(self, kind: str, lb_id: str, attributes: dict[str, Any]) -> dict[str, Any]:
        prefix = {"loadbalancer": "lb", "listener": "li", "pool": "po", "healthmonitor": "hm"}[kind]
        object_id = lb_id if kind == "loadbalancer" else self._new_id(prefix)
        found = {"id": object_id, "name": "", "description": "", "tags": [], **attributes, "_lb": lb_id,
                 "provisioning_status": "PENDING_CREATE", "operating_status": "OFFLINE",
                 "loadbalancers": [{"id": lb_id}]}
        self.objects[kind][object_id] = found
        return found

    def _member(self, lb_id: str, pool_id: str, entry: dict[str, Any]) -> dict[str, Any]:
        member = {"id": self._new_id("m"), "name": "", "weight": 1, "tags": [], "subnet_id": None,
                  "monitor_port": None, "monitor_address": None, "admin_state_up": True, "backup": False, **entry,
                  "_lb": lb_id, "provisioning_status": "PENDING_CREATE", "operating_status": "OFFLINE"}
        self.members.setdefault(pool_id, {})[member["id"]] = member
        return member

    def _make_tree(self, body: dict[str, Any]) -> dict[str, Any]:
        lb_id = self._new_id("lb")
        lb = self._new("loadbalancer", lb_id, {
            key: copy.deepcopy(value) for key, value in body.items() if key != "listeners"})
        n = int(lb_id.split("-")[1])
        lb.update(vip_address=f"10.0.0.{n % 250}", vip_port_id=f"port-{lb_id}")
        lb.pop("loadbalancers")
        for entry in body.get("listeners") or []:
            entry = copy.deepcopy(entry)
            pool_entry = entry.pop("default_pool", None)
            listener = self._new("listener", lb_id, {"allowed_cidrs": None, "default_tls_container_ref": None,
                                                      **entry, "default_pool_id": None})
            if pool_entry is None:
                continue
            members = pool_entry.pop("members", []) or []
            monitor_entry = pool_entry.pop("healthmonitor", None)
            pool = self._new("pool", lb_id, {**pool_entry, "healthmonitor_id": None,
                                             "listeners": [{"id": listener["id"]}]})
            listener["default_pool_id"] = pool["id"]
            if monitor_entry is not None:
                if monitor_entry.get("type") in ("HTTP", "HTTPS"):
                    monitor_entry = {"url_path": "/", "expected_codes": "200", "http_method": "GET",
                                     **monitor_entry}
                monitor = self._new("healthmonitor", lb_id, {"url_path": None, "expected_codes": None,
                                                             **monitor_entry, "pools": [{"id": pool["id"]}]})
                pool["healthmonitor_id"] = monitor["id"]
            self.members[pool["id"]] = {}
            for member in members:
                self._member(lb_id, pool["id"], member)
        self.pending[lb_id] = _Pending(self.clock.now + self.create_seconds, "create")
        return lb

    # ----- the API -----------------------------------------------------------------------------------------------
    @staticmethod
    def shown(found: dict[str, Any]) -> dict[str, Any]:
        return {key: copy.deepcopy(value) for key, value in found.items() if not key.startswith("_")}

    def _route(self, path: str) -> tuple[str, Optional[str]]:
        parts = path.strip("/").split("/")
        assert parts[0] == "lbaas" and parts[1] in COLLECTIONS, path
        return COLLECTIONS[parts[1]], (parts[2] if len(parts) > 2 else None)

    def get(self, path: str, params: dict[str, Any]) -> requests.Response:
        kind, object_id = self._route(path)
        if object_id is not None:
            found = self.objects[kind].get(object_id)
            if found is None:
                return _error(404, f"{kind} {object_id} not found.")
            return _response(200, {kind: self.shown(found)})
        listed = []
        for found in self.objects[kind].values():
            if "name" in params and found.get("name") != params["name"]:
                continue
            if "loadbalancer_id" in params and self.applies_lb_filter and found["_lb"] != params["loadbalancer_id"]:
                continue
            if "tags" in params and not set(str(params["tags"]).split(",")) <= set(found.get("tags") or []):
                continue
            listed.append(self.shown(found))
        return _response(200, {f"{kind}s" if kind != "healthmonitor" else "healthmonitors": listed})

    def post(self, path: str, body: dict[str, Any]) -> requests.Response:
        kind, _ = self._route(path)
        assert kind == "loadbalancer", path
        if self.refuse_posts:
            status = self.refuse_posts.pop(0)
            return _error(status, "Provider 'ovn' does not support a requested option: the fully populated create.")
        lb = self._make_tree(body["loadbalancer"])
        if self.lost_posts:
            how = self.lost_posts.pop(0)
            if how == "timeout":
                raise ks_exc.ConnectTimeout("Request to http://octavia.fake/v2/lbaas/loadbalancers timed out")
            return _error(504, "Gateway Time-out")
        return _response(201, {"loadbalancer": self.shown(lb)})

    def put(self, path: str, body: dict[str, Any]) -> requests.Response:
        kind, object_id = self._route(path)
        found = self.objects[kind].get(object_id)
        if found is None:
            return _error(404, f"{kind} {object_id} not found.")
        lb = self.objects["loadbalancer"][found["_lb"]]
        if lb["provisioning_status"] != "ACTIVE":
            self.refused.append((self.clock.now, "PUT", object_id))
            return _error(409, f"Load Balancer {lb['id']} is immutable and cannot be updated.")
        found.update(copy.deepcopy(body[kind]))
        found["provisioning_status"] = "PENDING_UPDATE"
        lb["provisioning_status"] = "PENDING_UPDATE"
        self.pending[lb["id"]] = _Pending(self.clock.now + self.apply_seconds, "update", kind, object_id)
        return _response(200, {kind: self.shown(found)})

    def delete(self, path: str, params: dict[str, Any]) -> requests.Response:
        kind, object_id = self._route(path)
        assert kind == "loadbalancer" and params.get("cascade") == "true", (path, params)
        lb = self.objects["loadbalancer"].get(object_id)
        if lb is None:
            return _error(404, f"Load Balancer {object_id} not found.")
        if lb["provisioning_status"].startswith("PENDING_"):
            self.refused.append((self.clock.now, "DELETE", object_id))
            return _error(409, f"Invalid state {lb['provisioning_status']} of loadbalancer resource {object_id}")
        lb["provisioning_status"] = "PENDING_DELETE"
        self.pending[object_id] = _Pending(self.clock.now + self.delete_seconds, "delete")
        return _response(204)

    def list_members(self, pool_id: str) -> list[SimpleNamespace]:
        if pool_id not in self.objects["pool"]:
            raise _as_exception(_error(404, f"Pool {pool_id} could not be found."))
        return [SimpleNamespace(**{("is_admin_state_up" if k == "admin_state_up" else k): copy.deepcopy(v)
                                   for k, v in m.items() if not k.startswith("_")})
                for m in self.members.get(pool_id, {}).values()]

    def connect(self, cloud: Optional[str] = None, region: Optional[str] = None) -> "_Connection":
        conn = _Connection(self)
        self.connections.append(conn)
        return conn


def _as_exception(response: requests.Response) -> Exception:
    from openstack import exceptions as os_exc
    try:
        os_exc.raise_from_response(response)
    except os_exc.HttpException as exc:
        return exc
    raise AssertionError("not an error response")


class _Proxy:
    """``conn.load_balancer`` as openstacksdk's proxy offers it (the adapter's verbs and the members listing)."""

    def __init__(self, fake: TreeOctavia) -> None:
        self._fake = fake

    def _log(self, method: str, path: str, body: Any, params: Optional[dict]) -> None:
        self._fake.advance()
        self._fake.requests.append((method, path, copy.deepcopy(body), dict(params or {})))

    def get(self, path: str, json: Any = None, params: Optional[dict] = None, **_kwargs: Any) -> requests.Response:
        self._log("GET", path, json, params)
        return self._fake.get(path, params or {})

    def post(self, path: str, json: Any = None, params: Optional[dict] = None, **_kwargs: Any) -> requests.Response:
        self._log("POST", path, json, params)
        return self._fake.post(path, json)

    def put(self, path: str, json: Any = None, params: Optional[dict] = None, **_kwargs: Any) -> requests.Response:
        self._log("PUT", path, json, params)
        return self._fake.put(path, json)

    def delete(self, path: str, json: Any = None, params: Optional[dict] = None,
               **_kwargs: Any) -> requests.Response:
        self._log("DELETE", path, json, params)
        return self._fake.delete(path, params or {})

    def members(self, pool_id: str, **_query: Any):
        self._log("GET", f"/lbaas/pools/{pool_id}/members", None, None)
        return iter(self._fake.list_members(pool_id))


@dataclass
class _Connection:
    fake: TreeOctavia
    closed: bool = False
    load_balancer: _Proxy = field(init=False)
    session: SimpleNamespace = field(init=False)

    def __post_init__(self) -> None:
        self.load_balancer = _Proxy(self.fake)
        self.session = SimpleNamespace(get_token=self._token)

    def _token(self) -> str:
        self.fake.tokens += 1
        return f"token-{self.fake.tokens}"

    def close(self) -> None:
        self.closed = True

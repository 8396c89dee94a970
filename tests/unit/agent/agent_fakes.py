"""A fake management cluster and a fake Octavia that behave like the real ones where the agent's correctness
depends on it, driven by one fake clock (no real sleeps):

- Octavia: every write puts the load balancer in PENDING_UPDATE for ``pending_seconds``; a write meanwhile gets 409
  (openstacksdk's ConflictException, as Octavia answers); a new member is PENDING_CREATE, then ACTIVE and operating
  OFFLINE until its server answers the health monitor for ``health_seconds``, then ONLINE; admin down reads OFFLINE; a
  deleted member is PENDING_DELETE, then gone. Injected faults: 5xx answers.
- Kubernetes: Machines with Cluster API's deletion semantics (a deleting Machine stays, with its
  ``deletionTimestamp``, until no ``pre-drain.delete.hook...`` annotation is left, then it is gone), merge patches
  of annotations, Events, a Lease with resourceVersion conflicts, and an "unreachable" switch.
"""

from __future__ import annotations

import copy
import datetime
import itertools
from dataclasses import dataclass, field
from typing import Any, Optional

import openstack.exceptions as os_exc
import requests

from ha_endpoint.agent.lease import Conflict, LeaseRecord
from ha_endpoint.agent.machines import CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL


def http_error(status: int, cls: type = os_exc.HttpException, details: str = "") -> Exception:
    """An openstacksdk HTTP exception as the SDK raises it for a response with this status."""
    response = requests.Response()
    response.status_code = status
    response.reason = requests.status_codes._codes[status][0].replace("_", " ").title()
    return cls(response=response, details=details or None)


class Clock:
    def __init__(self, now: float = 1_800_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def rfc3339(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class _Member:
    id: str
    pool_id: str
    name: str
    address: str
    protocol_port: int
    tags: list
    admin_state_up: bool
    created: float
    subnet_id: Optional[str] = None
    weight: int = 1
    deleted_at: Optional[float] = None
    healthy_since: Optional[float] = None
    down: bool = False
    """Judged down by its health monitor (operating ERROR): its server is gone."""


class _Obj:
    def __init__(self, **kwargs: Any):
        self.__dict__.update(kwargs)


class FakeOctavia:
    """The load-balancer service (``conn.load_balancer``) of one cloud with pools in load balancers."""

    def __init__(self, clock: Clock, pending_seconds: float = 2.0, health_seconds: float = 6.0):
        self.clock, self.pending_seconds, self.health_seconds = clock, pending_seconds, health_seconds
        self.pools: dict[str, str] = {}  # pool id -> load balancer id
        self.monitored: dict[str, bool] = {}
        self.busy_until: dict[str, float] = {}
        self.members: dict[str, _Member] = {}
        self.up: set[str] = set()  # addresses whose server answers the health monitor
        self.faults: list[int] = []  # HTTP statuses the next calls answer with
        self.conflicts = 0
        self.log: list[tuple[float, str]] = []
        self._ids = itertools.count(1)

    # what the test arranges
    def add_pool(self, pool_id: str, lb_id: str, monitored: bool = True) -> None:
        self.pools[pool_id], self.monitored[pool_id] = lb_id, monitored

    def serve(self, address: str) -> None:
        """The server at ``address`` starts answering health checks."""
        self.up.add(address)
        for m in self.members.values():
            if m.address == address and m.healthy_since is None:
                m.healthy_since = self.clock()

    def stop(self, address: str) -> None:
        self.up.discard(address)
        for m in self.members.values():
            if m.address == address:
                m.healthy_since = None

    def static_member(self, pool_id: str, name: str, address: str, port: int, tags: list, down: bool = False) -> None:
        """A member made by someone else (the component), already ACTIVE: ONLINE, or with ``down`` judged down by
        its health monitor (ERROR: its server is gone)."""
        member = _Member(f"m{next(self._ids)}", pool_id, name, address, port, tags, True, self.clock() - 100,
                         down=down)
        self.members[member.id] = member
        if not down:
            self.serve(address)
            member.healthy_since = self.clock() - 100

    # statuses, computed from the clock
    def _statuses(self, m: _Member) -> tuple[str, str]:
        now = self.clock()
        if m.deleted_at is not None:
            return "PENDING_DELETE", "OFFLINE"
        if now < m.created + self.pending_seconds:
            return "PENDING_CREATE", "OFFLINE"
        if not m.admin_state_up:
            return "ACTIVE", "OFFLINE"
        if not self.monitored[m.pool_id]:
            return "ACTIVE", "NO_MONITOR"
        if m.down:
            return "ACTIVE", "ERROR"
        if m.healthy_since is not None and now >= max(m.healthy_since, m.created) + self.health_seconds:
            return "ACTIVE", "ONLINE"
        return "ACTIVE", "OFFLINE"

    def _sweep(self) -> None:
        for member_id, m in list(self.members.items()):
            if m.deleted_at is not None and self.clock() >= m.deleted_at + self.pending_seconds:
                del self.members[member_id]

    def _answer(self) -> None:
        if self.faults:
            status = self.faults.pop(0)
            raise http_error(status, details=f"injected {status}")

    def _write(self, pool_id: str, what: str) -> None:
        self._answer()
        if pool_id not in self.pools:
            raise http_error(404, os_exc.NotFoundException, "pool not found")
        lb = self.pools[pool_id]
        if self.clock() < self.busy_until.get(lb, 0):
            self.conflicts += 1
            raise http_error(409, os_exc.ConflictException, f"Load Balancer {lb} is immutable and cannot be updated")
        self.busy_until[lb] = self.clock() + self.pending_seconds
        self.log.append((self.clock(), what))

    def _view(self, m: _Member) -> _Obj:
        provisioning, operating = self._statuses(m)
        return _Obj(id=m.id, name=m.name, address=m.address, protocol_port=m.protocol_port, tags=list(m.tags),
                    provisioning_status=provisioning, operating_status=operating, is_admin_state_up=m.admin_state_up,
                    weight=m.weight, subnet_id=m.subnet_id, backup=False, monitor_port=None, monitor_address=None)

    # the openstacksdk calls the agent makes
    def members_of(self, pool_id: str) -> list[_Obj]:
        self._sweep()
        self._answer()
        return [self._view(m) for m in self.members.values() if m.pool_id == pool_id]

    def get_pool(self, pool_id: str) -> _Obj:
        self._answer()
        return _Obj(id=pool_id, health_monitor_id="hm" if self.monitored[pool_id] else None)

    def create_member(self, pool_id: str, **attrs: Any) -> _Obj:
        self._write(pool_id, f"create {attrs['name']}")
        if any(m.address == attrs["address"] and m.protocol_port == attrs["protocol_port"] and m.pool_id == pool_id
               for m in self.members.values()):
            raise http_error(409, os_exc.ConflictException, "Duplicate member")
        m = _Member(f"m{next(self._ids)}", pool_id, attrs["name"], attrs["address"], attrs["protocol_port"],
                    list(attrs.get("tags") or []), attrs.get("admin_state_up", True), self.clock(),
                    attrs.get("subnet_id"))
        if m.address in self.up:
            m.healthy_since = self.clock()
        self.members[m.id] = m
        return self._view(m)

    def update_member(self, member_id: str, pool_id: str, **attrs: Any) -> _Obj:
        self._sweep()
        if member_id not in self.members:
            raise http_error(404, os_exc.NotFoundException, "member not found")
        m = self.members[member_id]
        self._write(pool_id, f"{'admin up' if attrs.get('admin_state_up') else 'admin down'} {m.name}")
        m.admin_state_up = attrs.get("admin_state_up", m.admin_state_up)
        return self._view(m)

    def delete_member(self, member_id: str, pool_id: str, ignore_missing: bool = True) -> None:
        self._sweep()
        if member_id not in self.members or self.members[member_id].deleted_at is not None:
            raise http_error(404, os_exc.NotFoundException, "member not found")
        m = self.members[member_id]
        self._write(pool_id, f"delete {m.name}")
        m.deleted_at = self.clock()

    # what tests read
    def online(self, pool_id: str, name: str) -> bool:
        return any(m.name == name and m.pool_id == pool_id and self._statuses(m) == ("ACTIVE", "ONLINE")
                   for m in self.members.values())

    def named(self, name: str) -> list[_Member]:
        self._sweep()
        return [m for m in self.members.values() if m.name == name]


class FakeDesignate:
    """The endpoint's A record ``api.example.test.`` (TTL ``ttl``) in DNS zone ``example.test.``, its description the
    component's (stack ha-endpoint/dev, endpoint ``api``); each write is logged on the timeline."""

    FQDN = "api.example.test."

    def __init__(self, clock: Clock, log: list, addresses: list[str], ttl: int = 30):
        self.clock, self.log, self.ttl = clock, log, ttl
        self.held = sorted(addresses)
        self.description = "HA endpoint [ha-endpoint ha-endpoint/dev api-dns]"
        self.fail: Optional[Exception] = None

    def zones(self, name: str) -> list[_Obj]:
        return [_Obj(id="dns-zone", name=name)] if name == "example.test." else []

    def recordsets(self, zone: Any, name: str) -> list[_Obj]:
        if self.fail is not None:
            raise self.fail
        return [_Obj(id="rs", type="A", name=name, records=list(self.held), ttl=self.ttl,
                     description=self.description)] if name == self.FQDN else []

    def update_recordset(self, record: Any, records: list[str]) -> None:
        self.held = sorted(records)
        self.log.append((self.clock.now, f"record {' '.join(self.held)}"))


class FakeConnection:
    """What ``ha_endpoint.cloud.connection.connect`` returns, as far as the agent uses it."""

    def __init__(self, octavia: FakeOctavia, dns: Optional[FakeDesignate] = None):
        lb = octavia
        self.load_balancer = _Obj(members=lb.members_of, get_pool=lb.get_pool, create_member=lb.create_member,
                                  update_member=lb.update_member, delete_member=lb.delete_member,
                                  get_load_balancer=lambda lb_id: _Obj(
                                      id=lb_id, description=f"HA endpoint [ha-endpoint ha-endpoint/dev "
                                      f"api-{lb_id.replace('lb', 'az')}-lb]"))
        self.dns = dns
        self.session = _Obj(get_token=lambda: "token")

    def close(self) -> None:
        pass


class Unreachable(ConnectionError):
    """What the official client raises when the API server does not answer (urllib3's errors are OSErrors)."""


HOOK_PREFIX = "pre-drain.delete.hook.machine.cluster.x-k8s.io/"


class FakeCluster:
    """One namespace of a management cluster: Machines, Events, one Lease."""

    def __init__(self, clock: Clock, namespace: str = "default", cluster: str = "prod"):
        self.clock, self.namespace, self.cluster = clock, namespace, cluster
        self.machines: dict[str, dict[str, Any]] = {}
        self.events: list[tuple[str, str, str, bool]] = []
        self.log: list[tuple[float, str]] = []
        self.reachable = True
        self.lease: Optional[LeaseRecord] = None
        self.patches: dict[str, int] = {}
        self._version = itertools.count(1)

    def _check(self) -> None:
        if not self.reachable:
            raise Unreachable("HTTPSConnectionPool(host='127.0.0.1', port=6443): Max retries exceeded")

    # what Cluster API and the tests do
    def add_machine(self, name: str, az: Optional[str] = "az1", address: Optional[str] = None,
                    annotations: Optional[dict] = None, api_server: Optional[str] = "True") -> None:
        """A Machine; ``api_server``: its APIServerPodHealthy condition's status as KubeadmControlPlane sets it
        (None: absent)."""
        self.machines[name] = {
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
            "metadata": {"name": name, "namespace": self.namespace, "uid": f"uid-{name}",
                         "labels": {CLUSTER_NAME_LABEL: self.cluster, CONTROL_PLANE_LABEL: ""},
                         "annotations": dict(annotations or {}), "resourceVersion": str(next(self._version))},
            "spec": {"clusterName": self.cluster, **({"failureDomain": az} if az else {})},
            "status": {"addresses": [{"type": "InternalIP", "address": address}] if address else []}}
        if api_server is not None:
            self.set_api_server(name, api_server, logged=False)

    def set_api_server(self, name: str, status: Optional[str], reason: str = "", logged: bool = True) -> None:
        """KubeadmControlPlane's APIServerPodHealthy condition on the Machine ("True", "False", "Unknown"; None:
        removed)."""
        conditions = [c for c in self.machines[name]["status"].get("conditions", [])
                      if c["type"] != "APIServerPodHealthy"]
        if status is not None:
            conditions.append({"type": "APIServerPodHealthy", "status": status,
                               "reason": reason or ("Running" if status == "True" else "Provisioning"),
                               "lastTransitionTime": rfc3339(self.clock())})
        self.machines[name]["status"]["conditions"] = conditions
        if logged:
            self.log.append((self.clock(), f"APIServerPodHealthy {status} {name}"))

    def set_address(self, name: str, address: str) -> None:
        self.machines[name]["status"]["addresses"] = [{"type": "InternalIP", "address": address}]

    def delete_machine(self, name: str) -> None:
        """``kubectl delete machine``: Cluster API holds it while a pre-drain hook is on it."""
        self.machines[name]["metadata"]["deletionTimestamp"] = rfc3339(self.clock())
        self.log.append((self.clock(), f"delete requested {name}"))
        self._finish(name)

    def _finish(self, name: str) -> None:
        machine = self.machines.get(name)
        if machine and machine["metadata"].get("deletionTimestamp") and not any(
                key.startswith(HOOK_PREFIX) for key in machine["metadata"]["annotations"]):
            del self.machines[name]
            self.log.append((self.clock(), f"machine gone {name}"))

    def annotations(self, name: str) -> dict[str, str]:
        return self.machines[name]["metadata"]["annotations"]

    # MachineApi
    def list(self) -> tuple[list[dict[str, Any]], str]:
        self._check()
        return [copy.deepcopy(m) for m in self.machines.values()], str(next(self._version))

    def watch(self, resource_version: str):
        self._check()
        return iter(())

    def annotate(self, name: str, annotations: dict[str, Optional[str]]) -> dict[str, Any]:
        self._check()
        self.patches[name] = self.patches.get(name, 0) + 1
        meta = self.machines[name]["metadata"]
        for key, value in annotations.items():
            if value is None:
                if key in meta["annotations"] and key.startswith(HOOK_PREFIX):
                    self.log.append((self.clock(), f"hook released {name}"))
                meta["annotations"].pop(key, None)
            else:
                meta["annotations"][key] = value
        meta["resourceVersion"] = str(next(self._version))
        patched = copy.deepcopy(self.machines[name])
        self._finish(name)
        return patched

    def event(self, machine: dict[str, Any], reason: str, message: str, warning: bool = False) -> None:
        self._check()
        self.events.append((machine["metadata"]["name"], reason, message, warning))

    def reasons(self, name: str) -> list[str]:
        return [reason for machine, reason, _, _ in self.events if machine == name]


class FakeLease:
    """The Lease of :class:`FakeCluster` (coordination.k8s.io semantics: 409 on a stale resourceVersion)."""

    def __init__(self, cluster: FakeCluster):
        self.cluster = cluster

    def read(self) -> Optional[LeaseRecord]:
        self.cluster._check()
        return self.cluster.lease

    def create(self, record: LeaseRecord) -> LeaseRecord:
        self.cluster._check()
        if self.cluster.lease is not None:
            raise Conflict("exists")
        self.cluster.lease = LeaseRecord(record.holder, record.duration_seconds, record.renew_time,
                                         record.transitions, str(next(self.cluster._version)))
        return self.cluster.lease

    def replace(self, record: LeaseRecord) -> LeaseRecord:
        self.cluster._check()
        if self.cluster.lease is None or self.cluster.lease.resource_version != record.resource_version:
            raise Conflict("the object has been modified")
        self.cluster.lease = LeaseRecord(record.holder, record.duration_seconds, record.renew_time,
                                         record.transitions, str(next(self.cluster._version)))
        return self.cluster.lease

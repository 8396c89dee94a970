"""Fakes for the readiness tests: a fake clock, scripted status sources and a fake openstacksdk connection."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable, Optional, Sequence, Union

import requests
from openstack import exceptions as os_exc

from ha_endpoint.cloud.errors import AuthExpired, TransientFetchError
from ha_endpoint.gates.model import LoadBalancerStatus, MemberStatus

Frame = Union[dict[str, tuple[str, str]], Exception]
"""One poll's view: member id -> (provisioning, operating), or an exception the listing raises."""


class FakeClock:
    """A clock that advances only when slept on; records every sleep."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0, seconds
        self.sleeps.append(seconds)
        self.now += seconds


@dataclass
class ScriptedSource:
    """Serves one frame per poll (the last frame repeats); a poll starts with a listing of the first pool.

    Attributes:
        frames: per poll, every member's statuses (or an exception).
        pools: pool id -> member ids it lists (members absent from a frame are not listed).
        clock: records the time of each poll.
    """

    frames: Sequence[Frame]
    pools: dict[str, Sequence[str]]
    clock: FakeClock
    lb: LoadBalancerStatus = LoadBalancerStatus("lb-1", "ACTIVE", "ONLINE")
    calls: list[str] = field(default_factory=list)
    poll_times: list[float] = field(default_factory=list)
    reauths: int = 0
    reauth_failures: list[Exception] = field(default_factory=list)
    lb_calls: int = 0
    _poll: int = -1

    def fetch_pool(self, pool_id: str) -> list[MemberStatus]:
        if not self.calls or pool_id == next(iter(self.pools)):
            self._poll += 1
            self.poll_times.append(self.clock.now)
        self.calls.append(pool_id)
        frame = self.frames[min(self._poll, len(self.frames) - 1)]
        if isinstance(frame, Exception):
            raise frame
        return [MemberStatus(m, *frame[m]) for m in self.pools[pool_id] if m in frame]

    def fetch_load_balancer(self, lb_id: str) -> LoadBalancerStatus:
        self.lb_calls += 1
        return self.lb

    def reauth(self) -> None:
        """Counts; raises the next of ``reauth_failures`` first, if any (Keystone unreachable, or refusing)."""
        self.reauths += 1
        if self.reauth_failures:
            raise self.reauth_failures.pop(0)


def http_error(status: int, cls: type = os_exc.HttpException, details: str = "") -> Exception:
    """An openstacksdk HTTP exception as the SDK raises it for a response with this status."""
    response = requests.Response()
    response.status_code = status
    response.reason = requests.status_codes._codes[status][0].replace("_", " ").title()
    return cls(response=response, details=details or None)


def conflict() -> Exception:
    return http_error(409, os_exc.ConflictException, "Load Balancer lb-1 is immutable and cannot be updated.")


def transient(reason: str = "HTTP 503 Service Unavailable") -> TransientFetchError:
    return TransientFetchError(reason)


def expired() -> AuthExpired:
    return AuthExpired("HTTP 401 Unauthorized")


class FakeLoadBalancerProxy:
    """``conn.load_balancer``: members listing, load balancer fetch and member update over a FakeCloud."""

    def __init__(self, cloud: "FakeCloud") -> None:
        self._cloud = cloud

    def members(self, pool_id: str, **query: Any):
        self._cloud.member_list_calls.append(pool_id)
        self._cloud.raise_scheduled("members")
        for member_id, (prov, oper, _weight) in self._cloud.pools[pool_id].items():
            yield SimpleNamespace(id=member_id, provisioning_status=prov, operating_status=oper)

    def get_load_balancer(self, lb_id: str):
        self._cloud.lb_calls += 1
        prov, oper = self._cloud.lb
        return SimpleNamespace(id=lb_id, provisioning_status=prov, operating_status=oper)

    def update_member(self, member_id: str, pool_id: str, **attrs: Any):
        self._cloud.update_calls.append((pool_id, member_id, attrs))
        self._cloud.raise_scheduled("update")
        if pool_id not in self._cloud.pools or member_id not in self._cloud.pools[pool_id]:
            raise http_error(404, os_exc.NotFoundException, f"Member {member_id} not found.")
        prov, oper, weight = self._cloud.pools[pool_id][member_id]
        self._cloud.pools[pool_id][member_id] = (prov, oper, attrs.get("weight", weight))


class FakeConnection:
    def __init__(self, cloud: "FakeCloud", name: Optional[str]) -> None:
        self.name = name
        self.load_balancer = FakeLoadBalancerProxy(cloud)
        self.session = SimpleNamespace(get_token=lambda: cloud.issue_token())
        self.closed = False

    def close(self) -> None:
        self.closed = True


@dataclass
class FakeCloud:
    """An in-memory Octavia: pools of members (provisioning, operating, weight) and scheduled failures.

    ``schedule[op]`` is a list of exceptions raised by the next calls of that operation (``"members"``,
    ``"update"``), one per call, before the call succeeds again. ``on_members`` runs before every listing (to
    change statuses as time passes).
    """

    pools: dict[str, dict[str, tuple[str, str, int]]] = field(default_factory=dict)
    lb: tuple[str, str] = ("ACTIVE", "ONLINE")
    schedule: dict[str, list[Exception]] = field(default_factory=dict)
    member_list_calls: list[str] = field(default_factory=list)
    update_calls: list[tuple[str, str, dict]] = field(default_factory=list)
    connections: list[FakeConnection] = field(default_factory=list)
    tokens: int = 0
    lb_calls: int = 0
    on_members: Optional[Callable[["FakeCloud"], None]] = None

    def raise_scheduled(self, op: str) -> None:
        if op == "members" and self.on_members is not None:
            self.on_members(self)
        pending = self.schedule.get(op)
        if pending:
            raise pending.pop(0)

    def issue_token(self) -> str:
        self.tokens += 1
        return f"token-{self.tokens}"

    def connect(self, cloud: Optional[str] = None) -> FakeConnection:
        conn = FakeConnection(self, cloud)
        self.connections.append(conn)
        return conn

    def set_members(self, pool_id: str, count: int, prov: str = "ACTIVE", oper: str = "ONLINE") -> list[str]:
        ids = [f"{pool_id}-m{i:03d}" for i in range(count)]
        self.pools.setdefault(pool_id, {}).update({m: (prov, oper, 1) for m in ids})
        return ids

"""The Octavia backend's client of the member agent (:class:`ha_endpoint.agent.client.MemberClient`; its
``Backend.agent``): list a pool's members, create, admin up/down and delete the agent's own members, each retried by
the package's one policy (:func:`ha_endpoint.cloud.retry.call_with_retries`: 409 while the load balancer is
PENDING_*, 5xx, connection failures and timeouts are retried; a 403 or a bad request is reported at once).

Built on the backend's gate client (:class:`~.status.OctaviaStatusSource`: one connection, rebuilt on
re-authentication). Which members are the agent's to write is decided by the caller (their tag).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, TypeVar

from ...cloud.connection import http_status
from ...cloud.retry import Backoff, call_with_retries
from ...gates.cloud import translated
from ...gates.errors import FetchFailed
from ...gates.model import LiveMember
from .status import OctaviaStatusSource

T = TypeVar("T")


class AgentOctavia(OctaviaStatusSource):
    """The agent's Octavia client. ``clock`` and ``sleep`` are injected (tests run without real sleeps);
    ``call_timeout`` bounds the retries of one call, in seconds. A 409 says the load balancer is busy with a
    write (the ovn provider's take about a second): retried from 0.5 s on, at most 2 s apart, so that a
    member's create or drain follows the previous write closely (the rollout's figures, docs/agent.md)."""

    service = "Octavia"

    def __init__(self, cloud: Optional[str] = None, region: Optional[str] = None, *,
                 clock: Callable[[], float], sleep: Callable[[float], None], call_timeout: float = 60.0,
                 backoff: Backoff = Backoff(0.5, 1.5, 2.0)) -> None:
        super().__init__(cloud, region)
        self.clock, self.sleep, self.call_timeout, self.backoff = clock, sleep, call_timeout, backoff
        self._monitored: dict[str, bool] = {}

    def connection(self) -> Any:
        """The connection (rebuilt on re-authentication), for the agent's other calls (its record's)."""
        return self._connection()

    def owner_object(self, object_id: str) -> Any:
        """The zone's load balancer, whose description names the endpoint (one ``GET .../loadbalancers/{id}``)."""
        return self._connection().load_balancer.get_load_balancer(object_id)

    def retried(self, action: Callable[[], T]) -> T:
        """``action`` (one cloud call) under the agent's retries."""
        return call_with_retries(action, timeout_seconds=self.call_timeout, clock=self.clock, sleep=self.sleep,
                                 backoff=self.backoff, reauth=self.reauth)

    def members(self, pool_id: str) -> list[LiveMember]:
        """Every member of the pool (whoever made it), with its statuses."""
        return self.retried(lambda: self.list_members(pool_id))

    def monitored(self, pool_id: str) -> bool:
        """Whether the pool has a health monitor (then only ONLINE counts; else NO_MONITOR does too)."""
        if pool_id not in self._monitored:
            def fetch() -> bool:
                with translated(f"fetching pool {pool_id}"):
                    return bool(self._connection().load_balancer.get_pool(pool_id).health_monitor_id)
            self._monitored[pool_id] = self.retried(fetch)
        return self._monitored[pool_id]

    def create(self, pool_id: str, *, name: str, address: str, protocol_port: int, subnet_id: Optional[str],
               tags: list[str], admin_state_up: bool) -> None:
        """Create a member (tagged: the caller's tag says it is the agent's)."""
        attributes: dict[str, Any] = {"name": name, "address": address, "protocol_port": protocol_port,
                                      "tags": tags, "admin_state_up": admin_state_up,
                                      **({"subnet_id": subnet_id} if subnet_id else {})}

        def call() -> None:
            self.calls += 1
            with translated(f"creating member {name} ({address}:{protocol_port}) in pool {pool_id}"):
                self._connection().load_balancer.create_member(pool_id, **attributes)
        self.retried(call)

    def set_admin(self, pool_id: str, member_id: str, up: bool) -> bool:
        """Admin state up (serve) or down (drain: the ovn provider ignores weights); False when it is gone."""
        return self.retried(lambda: self._unless_gone(
            f"setting member {member_id} of pool {pool_id} admin {'up' if up else 'down'}",
            lambda: self._connection().load_balancer.update_member(member_id, pool_id, admin_state_up=up)))

    def delete(self, pool_id: str, member_id: str) -> None:
        """Delete a member (already gone is done)."""
        self.retried(lambda: self._unless_gone(
            f"deleting member {member_id} of pool {pool_id}",
            lambda: self._connection().load_balancer.delete_member(member_id, pool_id, ignore_missing=False)))

    def _unless_gone(self, what: str, write: Callable[[], Any]) -> bool:
        """One counted ``write`` of a member, its failures worded as ``what``; False when the member is gone (404)."""
        self.calls += 1
        try:
            with translated(what):
                write()
        except FetchFailed as exc:
            if exc.__cause__ is not None and http_status(exc.__cause__) == 404:
                return False
            raise
        return True

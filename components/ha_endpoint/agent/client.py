"""What the agent needs of its backend's member client (:class:`MemberClient`): the members of the endpoint's
pools, and writes of its own members, each under the agent's retries. The client is the backend's
(:attr:`ha_endpoint.backends.plugin.Backend.agent`), chosen by the agent's ``--backend`` (its program, at the top,
asks the registry); :mod:`.reconcile` and :mod:`.dns` use only this.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Protocol, TypeVar

from ..gates.model import LiveMember

T = TypeVar("T")


class MemberClient(Protocol):
    """The agent's client of one backend's pools: one connection, rebuilt on re-authentication; a failure retrying
    cannot fix is a :class:`~ha_endpoint.cloud.errors.CloudError` (the Machine being served reports it, and the next
    pass tries again).

    Attributes:
        service: what the agent's events on a Machine call the service it writes to (``<service>: <error>``).
        call_timeout: how long one call is retried, in seconds.
        calls: the calls made.
    """

    service: str
    call_timeout: float
    calls: int

    def retried(self, action: Callable[[], T]) -> T:
        """``action`` (one cloud call) under the agent's retries."""

    def connection(self) -> Any:
        """The connection, for the agent's other calls (its record's: :mod:`.dns`)."""

    def owner_object(self, object_id: str) -> Any:
        """The zone's object whose description proves whose endpoint it is (:func:`ha_endpoint.watch.records.owner_of`):
        one read, not retried."""

    def members(self, pool_id: str) -> list[LiveMember]:
        """Every member of the pool (whoever made it), with its statuses."""

    def monitored(self, pool_id: str) -> bool:
        """Whether the pool has a health monitor (then only ONLINE counts)."""

    def create(self, pool_id: str, *, name: str, address: str, protocol_port: int, subnet_id: Optional[str],
               tags: list[str], admin_state_up: bool) -> None:
        """Create a member, tagged (the tag says it is the agent's)."""

    def set_admin(self, pool_id: str, member_id: str, up: bool) -> bool:
        """Admin state up (serve) or down (drain); False when the member is gone."""

    def delete(self, pool_id: str, member_id: str) -> None:
        """Delete a member (already gone is done)."""

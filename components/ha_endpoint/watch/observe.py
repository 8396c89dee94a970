"""One zone's health: its load balancer's and its pools' members' statuses in one read (:meth:`ZoneSource.fetch_zone`,
through the client of the zone's backend: :func:`ha_endpoint.backends.watching.status_source`; Octavia's status tree),
then, where the watcher runs on a network that reaches them, a TCP connect to the zone's published address on every
port. One read per zone and poll, whatever the number of pools: on the dev stack a poll of its three zones costs the
cloud 176-183 ms of CPU, against 308-421 ms with a load balancer fetch and a member listing per pool
(``lab/bench/watcher_figures.py``, docs/results/2026-12-06-0333-watcher-figures.md).

A zone is unhealthy when its load balancer is gone or in ERROR, when a pool has no ONLINE member, or when its address
does not accept a connection on a port. A poll that cannot tell (Octavia answering 5xx, a timeout, an expired token)
gives no verdict: the zone's streak is left as it was, so an API outage moves nothing.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Protocol, Sequence

from ..cloud.errors import AuthExpired, TransientFetchError
from ..core.outputs import ZoneOutputs
from ..gates.model import DELETED, ERROR, LoadBalancerStatus, MemberStatus, is_online
from .decide import Health

Reach = Callable[[str, int], Optional[str]]
"""``reach(address, port)``: None when a TCP connection is accepted, else why not."""


@dataclass(frozen=True)
class ZoneStatus:
    """One zone's statuses as one read gives them.

    Attributes:
        load_balancer: the zone's load balancer's (or what its backend reads as one, e.g. a VIP port); provisioning
            status ``DELETED`` when it is gone.
        pool_ids: listener port -> the zone's pool of that port, as the zone's outputs name it (or what its backend
            reads as one).
        pools: pool id -> its members' statuses, for every pool the load balancer has now.
    """

    load_balancer: LoadBalancerStatus
    pool_ids: Mapping[str, str]
    pools: Mapping[str, Sequence[MemberStatus]]


class ZoneSource(Protocol):
    """What the watcher polls a zone through: its backend's client, which reads the zone's outputs as its backend
    built them."""

    def fetch_zone(self, zone: ZoneOutputs) -> ZoneStatus:
        """The zone's statuses in one read; the cloud's failures raised as
        :func:`ha_endpoint.gates.cloud.translated` classifies them."""


def tcp_reach(timeout: float = 2.0) -> Reach:
    """A :data:`Reach` that opens (and closes) a TCP connection with ``timeout`` seconds to connect."""
    def reach(address: str, port: int) -> Optional[str]:
        try:
            with socket.create_connection((address, port), timeout=timeout):
                return None
        except OSError as error:
            return f"{address}:{port} does not accept a connection ({error.strerror or type(error).__name__})"
    return reach


def zone_health(source: ZoneSource, zone: ZoneOutputs, reach: Optional[Reach],
                kind: str = "load balancer") -> Optional[Health]:
    """The zone's health now, or None when the cloud could not tell (see the module's docstring); ``kind``: what the
    zone's "load balancer" is, in the watcher's words (its backend's ``Watched.owner_kind``, e.g. a VIP port)."""
    try:
        status = source.fetch_zone(zone)
    except (TransientFetchError, AuthExpired):
        return None
    load_balancer = f"{kind} {status.load_balancer.load_balancer_id}"
    if status.load_balancer.provisioning_status == DELETED:
        return Health(False, f"{load_balancer} is gone")
    if status.load_balancer.provisioning_status == ERROR:
        return Health(False, f"{load_balancer} is {status.load_balancer.label}")
    counts = []
    for port, pool_id in sorted(status.pool_ids.items()):
        if pool_id not in status.pools:
            return Health(False, f"pool {port} ({pool_id}) is gone from {load_balancer}")
        members = status.pools[pool_id]
        online = [member for member in members if is_online(member, monitored=True)]
        if not online:
            seen = ", ".join(sorted(member.label for member in members)) or "no member"
            return Health(False, f"no ONLINE member in pool {port} ({seen})")
        counts.append(f"{len(online)}/{len(members)}")
    if reach is not None and zone.address:
        for port in sorted(status.pool_ids, key=int):
            why = reach(zone.address, int(port))
            if why is not None:
                return Health(False, why)
    answered = f", {zone.address} accepts connections" if reach is not None and zone.address else ""
    return Health(True, f"members ONLINE {' '.join(counts)}{answered}")

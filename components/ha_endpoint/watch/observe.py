"""One zone's health, polled as the readiness gates poll: one load balancer fetch and one member listing per pool
(through the client of the zone's backend: :func:`ha_endpoint.backends.watching.status_source`), then, where the
watcher runs on a network that reaches them, a TCP connect to the zone's published address on every port.

A zone is unhealthy when its load balancer is gone or in ERROR, when a pool has no ONLINE member, or when its address
does not accept a connection on a port. A poll that cannot tell (Octavia answering 5xx, a timeout, an expired token)
gives no verdict: the zone's streak is left as it was, so an API outage moves nothing.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional

from ..cloud.connection import http_status
from ..core.args import DEFAULT_BACKEND
from ..cloud.errors import AuthExpired, TransientFetchError
from ..gates.errors import FetchFailed
from ..gates.model import ERROR, is_online
from .decide import Health

Reach = Callable[[str, int], Optional[str]]
"""``reach(address, port)``: None when a TCP connection is accepted, else why not."""


@dataclass(frozen=True)
class ZoneTarget:
    """What the watcher polls for one zone, from the endpoint stack's ``zones`` and ``ports`` outputs, as the zone's
    backend builds it (:class:`ha_endpoint.backends.plugin.Watched`).

    Attributes:
        zone: the availability zone.
        load_balancer_id: the zone's Octavia load balancer (``loadbalancerId``), or what its backend's status source
            reads as one (e.g. a VIP port).
        pool_ids: listener port -> pool id (``poolIds``), or what its backend's status source reads as one.
        address: what DNS publishes for the zone (``floatingIp``, else ``vipAddress``).
        backend: the registered backend that serves the zone (its ``backend`` key's value).
        owner_suffix: how the name of the object that proves the zone's owner ends, after ``-<zone>-`` (``lb``: its
            load balancer's); its backend's, so not compared (``backend`` is).
    """

    zone: str
    load_balancer_id: str
    pool_ids: Mapping[str, str]
    address: Optional[str]
    backend: str = DEFAULT_BACKEND
    owner_suffix: str = field(default="lb", compare=False)

    @property
    def object_suffix(self) -> str:
        """How the name of the object that proves the zone's owner ends (its description names it)."""
        return f"-{self.zone}-{self.owner_suffix}"


def tcp_reach(timeout: float = 2.0) -> Reach:
    """A :data:`Reach` that opens (and closes) a TCP connection with ``timeout`` seconds to connect."""
    def reach(address: str, port: int) -> Optional[str]:
        try:
            with socket.create_connection((address, port), timeout=timeout):
                return None
        except OSError as error:
            return f"{address}:{port} does not accept a connection ({error.strerror or type(error).__name__})"
    return reach


def zone_health(source, target: ZoneTarget, reach: Optional[Reach]) -> Optional[Health]:
    """The zone's health now, or None when the cloud could not tell (see the module's docstring)."""
    try:
        lb = source.fetch_load_balancer(target.load_balancer_id)
        if lb.provisioning_status == ERROR:
            return Health(False, f"load balancer {target.load_balancer_id} is {lb.label}")
        counts = []
        for port, pool_id in sorted(target.pool_ids.items()):
            members = source.fetch_pool(pool_id)
            online = [member for member in members if is_online(member, monitored=True)]
            if not online:
                seen = ", ".join(sorted(member.label for member in members)) or "no member"
                return Health(False, f"no ONLINE member in pool {port} ({seen})")
            counts.append(f"{len(online)}/{len(members)}")
    except FetchFailed as failed:
        if failed.__cause__ is not None and http_status(failed.__cause__) == 404:
            return Health(False, f"load balancer {target.load_balancer_id} or a pool of it is gone")
        raise
    except (TransientFetchError, AuthExpired):
        return None
    if reach is not None and target.address:
        for port in sorted(target.pool_ids, key=int):
            why = reach(target.address, int(port))
            if why is not None:
                return Health(False, why)
    answered = f", {target.address} accepts connections" if reach is not None and target.address else ""
    return Health(True, f"members ONLINE {' '.join(counts)}{answered}")

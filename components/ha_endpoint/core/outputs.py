"""A zone of the endpoint as its stack's outputs give it to the programs that run beside the endpoint: the DNS watcher
polls it and the member agent writes Cluster API Machines' members into its pools. Each backend reads its own zones'
entries of the ``zones`` output into it (:attr:`ha_endpoint.backends.plugin.Watched.target`, through
:func:`ha_endpoint.backends.watching.targets_of`): one reading of the outputs for both programs. Pure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

from .args import DEFAULT_BACKEND


@dataclass(frozen=True)
class ZoneTarget:
    """One zone, from the endpoint stack's ``zones`` (and ``ports``) outputs, as the zone's backend reads it.

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

    @property
    def pools(self) -> tuple[tuple[int, str], ...]:
        """(listener port, pool id) of each of its pools, by port."""
        return tuple(sorted((int(port), pool) for port, pool in self.pool_ids.items()))

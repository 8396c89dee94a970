"""A zone of the endpoint as its stack's ``zones`` output gives it: :class:`ZoneOutputs`, its keys as the schema types
them for every language, and :class:`ZoneTarget`, what the programs that run beside the endpoint read of it (the DNS
watcher polls it and the member agent writes Cluster API Machines' members into its pools). Each backend reads its own
zones' entries of the ``zones`` output into a target (:attr:`ha_endpoint.backends.plugin.Watched.target`, through
:func:`ha_endpoint.backends.watching.targets_of`): one reading of the outputs for both programs. Pure."""

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

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


class ZoneOutputs:
    """One availability zone of the endpoint, as its ``zones`` output shows it (camelCase keys): the keys of every
    backend, each zone with those of its own (a load balancer's, or a keepalived VIP port's) and the publication's."""

    loadbalancer_id: Optional[str]
    """The zone's load balancer (the octavia backend)."""
    vip_address: Optional[str]
    """The zone's VIP on its subnet."""
    vip_port_id: Optional[str]
    """The Neutron port of the VIP."""
    floating_ip: Optional[str]
    """The zone's floating IP (allocated, or brought by you); none for an internal endpoint."""
    pool_ids: Optional[dict[str, str]]
    """Listener port -> its pool in this zone (the octavia backend)."""
    member_ids: Optional[dict[str, dict[str, str]]]
    """Listener port -> member name -> the member in this zone's pool (the octavia backend)."""
    member_statuses: Optional[dict[str, dict[str, str]]]
    """Listener port -> member name -> its statuses as the last update saw them (e.g. "ACTIVE/ONLINE"; the octavia
    backend)."""
    ready: Optional[bool]
    """Whether the zone's publication gate let it into DNS."""
    not_ready_reason: Optional[str]
    """Why the zone is not ready (readiness.onZoneNotReady: unpublish): what its readiness wait found; none when it
    is ready."""
    published: Optional[bool]
    """Whether the zone's address is in the DNS record now."""
    gate: Optional[str]
    """What the zone's publication waited for (e.g. "members online", "bootstrap: load balancer ACTIVE")."""
    vrrp_group_id: Optional[str]
    """The security group of the zone's members: VRRP between them, clients on the listener ports (the keepalived
    backend)."""
    keepalived: Optional[dict[str, dict[str, Any]]]
    """Member name -> what runs on it (the keepalived backend): ``config``, ``cloud_init``, ``static_pod``,
    ``kubeadm_files``, ``priority`` (docs/keepalived.md, "What runs on the members")."""


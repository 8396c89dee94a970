"""A zone of the endpoint as its stack's ``zones`` output gives it: :class:`ZoneOutputs`, its keys as the schema types
them for every language, and as the programs that run beside the endpoint read them (the DNS watcher polls the zone
and the member agent writes Cluster API Machines' members into its pools): one model of a zone's outputs. Which
object of a zone proves its owner and what its pools are, its backend reads from these keys
(:class:`ha_endpoint.backends.plugin.Watched`, through :func:`ha_endpoint.backends.watching.zones_of`). Pure.

No ``from __future__ import annotations`` here: Pulumi's schema analyzer reads the annotations as types."""

from dataclasses import dataclass, fields
from typing import Any, Mapping, Optional

from pydantic.alias_generators import to_camel

from .contract import published_address


@dataclass(frozen=True)
class ZoneOutputs:
    """One availability zone of the endpoint, as its ``zones`` output shows it (camelCase keys): the keys of every
    backend, each zone with those of its own (a load balancer's, or a keepalived VIP port's) and the publication's."""

    loadbalancer_id: Optional[str] = None
    """The zone's load balancer (the octavia backend)."""
    vip_address: Optional[str] = None
    """The zone's VIP on its subnet."""
    vip_port_id: Optional[str] = None
    """The Neutron port of the VIP."""
    floating_ip: Optional[str] = None
    """The zone's floating IP (allocated, or brought by you); none for an internal endpoint."""
    pool_ids: Optional[dict[str, str]] = None
    """Listener port -> its pool in this zone (the octavia backend)."""
    member_ids: Optional[dict[str, dict[str, str]]] = None
    """Listener port -> member name -> the member in this zone's pool (the octavia backend)."""
    member_statuses: Optional[dict[str, dict[str, str]]] = None
    """Listener port -> member name -> its statuses as the last update saw them (e.g. "ACTIVE/ONLINE"; the octavia
    backend)."""
    ready: Optional[bool] = None
    """Whether the zone's publication gate let it into DNS."""
    not_ready_reason: Optional[str] = None
    """Why the zone is not ready (readiness.onZoneNotReady: unpublish): what its readiness wait found; none when it
    is ready."""
    published: Optional[bool] = None
    """Whether the zone's address is in the DNS record now."""
    gate: Optional[str] = None
    """What the zone's publication waited for (e.g. "members online", "bootstrap: load balancer ACTIVE")."""
    vrrp_group_id: Optional[str] = None
    """The security group of the zone's members: VRRP between them, clients on the listener ports (the keepalived
    backend)."""
    keepalived: Optional[dict[str, dict[str, Any]]] = None
    """Member name -> what runs on it (the keepalived backend): ``config``, ``cloud_init``, ``static_pod``,
    ``kubeadm_files``, ``priority`` (docs/keepalived.md, "What runs on the members")."""

    @classmethod
    def of(cls, entry: Mapping[str, Any]) -> "ZoneOutputs":
        """One zone's entry of the ``zones`` output (camelCase keys, as ``pulumi stack output --json`` gives them);
        a key the type does not have is left out."""
        names = {to_camel(each.name): each.name for each in fields(cls)}
        return cls(**{names[key]: value for key, value in entry.items() if key in names})

    @property
    def pools(self) -> tuple[tuple[int, str], ...]:
        """(listener port, pool id) of each of the zone's pools (``poolIds``), by port."""
        return tuple(sorted((int(port), pool) for port, pool in (self.pool_ids or {}).items()))

    @property
    def address(self) -> Optional[str]:
        """What DNS publishes for the zone: its floating IP, else its VIP address; None when it has neither."""
        return published_address({"floatingIp": self.floating_ip, "vipAddress": self.vip_address})


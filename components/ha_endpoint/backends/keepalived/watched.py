"""The keepalived backend's zones as the DNS watcher watches them (:class:`ha_endpoint.backends.plugin.Watched`).

A keepalived zone of the ``zones`` output has a VIP port (``vipPortId``) and no load balancer; the watcher reads the
VIP port as the zone's "load balancer" and as the one "pool" of each of the endpoint's ``ports``, and its owner is
proven by the VIP port's description (``<endpoint>-<az>-vip``).

The watcher polls it with :class:`VipPortSource`: one ``GET /v2.0/ports/{id}`` of the zone's VIP port per poll,
reported in the shape :func:`ha_endpoint.watch.observe.zone_health` reads (a load balancer and one pool). A VIP port
that exists counts as held: Neutron shows a project's user no VIP holder (``binding:host_id`` is an admin's
attribute, and it keeps the last holder's host when nobody holds the VIP: docs/keepalived.md), so the watcher's TCP
connect to the zone's address decides, and a watcher that does not connect (``--no-reach``) is refused. A VIP port
gone is read as a deleted load balancer is (``DELETED``): the zone is unhealthy. The watcher's messages call it what
it is (:data:`KIND`).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from ...cloud.access_rules import port_reads
from ...cloud.connection import connect, http_status
from ...cloud.errors import AuthExpired
from ...core import contract
from ...core.errors import HaEndpointError
from ...core.outputs import ZoneOutputs
from ...gates.cloud import translated
from ...gates.model import ACTIVE, DELETED, LoadBalancerStatus, MemberStatus
from ...watch.observe import ZoneStatus
from ..plugin import Watched

KIND = "VIP port"
"""What a keepalived zone's object is, in the watcher's words."""
KEYS = ("vipPortId", *contract.PUBLISHED_ADDRESS_KEYS)
"""What the watcher reads of a keepalived zone (a VIP port, no load balancer), with the endpoint's ``ports``."""


def is_vip_zone(out: object) -> bool:
    """Whether one zone of the endpoint's ``zones`` output is a keepalived zone's: a VIP port and no load balancer."""
    return isinstance(out, Mapping) and bool(out.get("vipPortId")) and not out.get("loadbalancerId")


def vip_ports(zones: Optional[Mapping[str, object]]) -> list[str]:
    """The VIP port ids of the endpoint's keepalived zones (:func:`is_vip_zone`)."""
    return [str(out["vipPortId"]) for out in (zones or {}).values() if is_vip_zone(out)]


class VipPortSource:
    """Status fetches of the zones' VIP ports over one connection, dropped when the token is rejected (the next
    poll authenticates again)."""

    def __init__(self, cloud: Optional[str] = None, region: Optional[str] = None, ports: Sequence[int] = ()) -> None:
        self.cloud, self.region, self.ports = cloud, region, tuple(ports)
        self._conn: Any = None

    def _port(self, port_id: str) -> Optional[Any]:
        """The port, or None when Neutron answers 404. Read by id only (``GET /v2.0/ports/{id}``): openstacksdk's
        ``find_port`` follows a 404 with a listing by name, which a watcher's scoped credential is refused
        (:func:`ha_endpoint.cloud.access_rules.port_reads` allows the read by id alone)."""
        try:
            with translated(f"reading VIP port {port_id}"):
                if self._conn is None:
                    self._conn = connect(self.cloud, self.region)
                try:
                    return self._conn.network.get_port(port_id)
                except Exception as error:
                    if http_status(error) == 404:
                        return None
                    raise
        except AuthExpired:
            self._conn = None
            raise

    def fetch_zone(self, zone: ZoneOutputs) -> ZoneStatus:
        """The zone's VIP port read once, as its load balancer and as the pool of every listener port: held while it
        exists, ``DELETED`` once it is gone."""
        port_id = str(zone.vip_port_id)
        port = self._port(port_id)
        return ZoneStatus(LoadBalancerStatus(port_id, ACTIVE if port is not None else DELETED, "VIP port"),
                          {str(listener): port_id for listener in self.ports},
                          {port_id: [MemberStatus(port_id, ACTIVE, "ONLINE")]} if port is not None else {})


def status_source(cloud: Optional[str], region: Optional[str], reach: bool, ports: Sequence[int]) -> VipPortSource:
    """The zones' VIP ports; refused without the connect that decides a zone's health."""
    if not reach:
        raise HaEndpointError("--no-reach: a keepalived zone's health is whether its address answers (Neutron "
                              "does not show who holds a VIP now); run the watcher where it reaches the zones' "
                              "addresses, without --no-reach")
    return VipPortSource(cloud, region, ports)


WATCHED = Watched(
    keys=KEYS, reads_ports=True, shape="a keepalived VIP port (vipPortId, and the endpoint's ports)",
    owns=is_vip_zone, owner_id=lambda zone: str(zone.vip_port_id), owner_suffix="vip", owner_kind=KIND,
    owner_object=lambda conn, port_id: conn.network.get_port(port_id),
    status_source=status_source, reads=lambda zones: port_reads(vip_ports(zones)))
"""How the DNS watcher watches a keepalived endpoint."""

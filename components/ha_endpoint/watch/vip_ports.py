"""The keepalived backend's zones as the watcher polls them: one ``GET /v2.0/ports/{id}`` of the zone's VIP port per
poll, reported in the shapes :func:`ha_endpoint.watch.observe.zone_health` reads (a load balancer and one pool).

A VIP port that exists counts as held: Neutron shows a project's user no VIP holder (``binding:host_id`` is an
admin's attribute, and it keeps the last holder's host when nobody holds the VIP: docs/keepalived.md), so the
watcher's TCP connect to the zone's address decides. A VIP port gone is a zone with no member, as a deleted load
balancer's pool is.
"""

from __future__ import annotations

from typing import Any, Optional

from ..cloud.connection import connect, http_status
from ..cloud.errors import AuthExpired
from ..gates.cloud import translated
from ..gates.model import ACTIVE, LoadBalancerStatus, MemberStatus


class VipPortSource:
    """Status fetches of the zones' VIP ports over one connection, dropped when the token is rejected (the next
    poll authenticates again)."""

    def __init__(self, cloud: Optional[str] = None, region: Optional[str] = None) -> None:
        self.cloud, self.region = cloud, region
        self._conn: Any = None

    def _port(self, port_id: str) -> Optional[Any]:
        """The port, or None when Neutron answers 404. Read by id only (``GET /v2.0/ports/{id}``): openstacksdk's
        ``find_port`` follows a 404 with a listing by name, which a watcher's scoped credential is refused
        (:func:`ha_endpoint.cloud.access_rules.watcher_calls` allows the read by id alone)."""
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

    def fetch_load_balancer(self, port_id: str) -> LoadBalancerStatus:
        port = self._port(port_id)
        return LoadBalancerStatus(port_id, ACTIVE if port is not None else "DELETED", "VIP port")

    def fetch_pool(self, port_id: str) -> list[MemberStatus]:
        return [MemberStatus(port_id, ACTIVE, "ONLINE")] if self._port(port_id) is not None else []

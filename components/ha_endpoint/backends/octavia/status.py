"""The Octavia backend's member client: status fetches and member writes over one connection, which the zones' gates
and drains poll and write through (:attr:`ha_endpoint.backends.plugin.Backend.status_source`; the gates find it in
the registry when they run: :mod:`ha_endpoint.gates.source`), and the DNS watcher polls its zones through.

The connection is :func:`ha_endpoint.cloud.connection.connect` (the seam tests replace here, as ``connect``), the
failures are sorted by :func:`ha_endpoint.cloud.connection.classify`; a failure retrying cannot fix is the gate's
:class:`~ha_endpoint.gates.errors.FetchFailed`.

API cost: :meth:`OctaviaStatusSource.fetch_pool` is one ``GET /v2/lbaas/pools/{pool_id}/members``; openstacksdk
follows ``members_links`` only when Octavia paginates (more members than its ``pagination_max_limit``, 1000 by
default), so a poll costs one call per pool whatever the number of members. The DNS watcher reads a zone with
:meth:`OctaviaStatusSource.fetch_zone`: one ``GET /v2/lbaas/loadbalancers/{id}/status`` (Octavia's status tree),
whatever the number of pools.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from openstack import exceptions

from ...cloud.connection import connect, http_status
from ...gates.cloud import translated
from ...gates.errors import FetchFailed
from ...core.outputs import ZoneOutputs
from ...gates.model import DELETED, LiveMember, LoadBalancerStatus, MemberStatus
from ...watch.observe import ZoneStatus


class OctaviaStatusSource:
    """Status fetches and member writes over one connection, rebuilt on re-authentication.

    Attributes:
        cloud: the clouds.yaml entry to use, or ``None`` for the environment's default.
        region: the region to use, or ``None`` for the entry's (or the environment's).
        calls: API calls made through this source (member listings, load balancer fetches, member updates).
    """

    def __init__(self, cloud: Optional[str] = None, region: Optional[str] = None) -> None:
        self.cloud = cloud
        self.region = region
        self.calls = 0
        self._conn: Any = None

    def _connection(self) -> Any:
        if self._conn is None:
            with translated("building the OpenStack connection (OS_CLOUD / clouds.yaml)"):
                self._conn = connect(self.cloud, self.region) if self.region else connect(self.cloud)
        return self._conn

    def fetch_pool(self, pool_id: str) -> list[MemberStatus]:
        """Every member of the pool with its statuses: one ``GET .../pools/{pool_id}/members``."""
        conn = self._connection()
        self.calls += 1
        with translated(f"listing the members of pool {pool_id}"):
            return [
                MemberStatus(str(m.id), str(m.provisioning_status), str(m.operating_status))
                for m in conn.load_balancer.members(pool_id)
            ]

    def fetch_load_balancer(self, load_balancer_id: str) -> LoadBalancerStatus:
        """The load balancer's provisioning and operating statuses: one ``GET .../loadbalancers/{id}``."""
        conn = self._connection()
        self.calls += 1
        with translated(f"fetching load balancer {load_balancer_id}"):
            lb = conn.load_balancer.get_load_balancer(load_balancer_id)
            return LoadBalancerStatus(str(lb.id), str(lb.provisioning_status), str(lb.operating_status))

    def fetch_zone(self, zone: ZoneOutputs) -> ZoneStatus:
        """The zone's load balancer's statuses and every member of each of its listeners' pools, from Octavia's
        status tree: one ``GET .../loadbalancers/{id}/status`` (what the DNS watcher polls a zone with); provisioning
        status ``DELETED`` when Octavia answers 404 (deleted out of band)."""
        conn = self._connection()
        self.calls += 1
        load_balancer_id = str(zone.loadbalancer_id)
        pool_ids = {str(port): str(pool) for port, pool in (zone.pool_ids or {}).items()}
        with translated(f"reading the status tree of load balancer {load_balancer_id}"):
            try:
                response = conn.load_balancer.get(f"/lbaas/loadbalancers/{load_balancer_id}/status")
                exceptions.raise_from_response(response)
            except exceptions.NotFoundException:
                return ZoneStatus(LoadBalancerStatus(load_balancer_id, DELETED, "OFFLINE"), pool_ids, {})
            tree = response.json()["statuses"]["loadbalancer"]
        pools = {str(pool["id"]): [MemberStatus(str(member["id"]), str(member["provisioning_status"]),
                                                str(member["operating_status"])) for member in pool.get("members", ())]
                 for listener in tree.get("listeners", ()) for pool in listener.get("pools", ())}
        return ZoneStatus(LoadBalancerStatus(load_balancer_id, str(tree["provisioning_status"]),
                                             str(tree["operating_status"])), pool_ids, pools)

    def drain_member(self, pool_id: str, member_id: str, admin_down: bool = False, weight: Optional[int] = 0) -> bool:
        """Take a member out of the pool's new connections: weight 0, and with ``admin_down`` also admin state down
        (for the providers that ignore the weight: :func:`ha_endpoint.core.predicates.drains_admin_down`); ``False``
        when the member (or its pool) no longer exists. ``weight=None`` leaves the weight as it is (a member the
        configuration takes out keeps its weight: admin state down only)."""
        conn = self._connection()
        self.calls += 1
        attributes: dict[str, object] = {**({"weight": weight} if weight is not None else {}),
                                         **({"admin_state_up": False} if admin_down else {})}
        how = ", ".join([*([f"weight {weight}"] if weight is not None else []),
                         *(["admin state down"] if admin_down else [])])
        return _unless_gone(f"draining member {member_id} in pool {pool_id} ({how})",
                            lambda: conn.load_balancer.update_member(member_id, pool_id, **attributes))

    def remove_member(self, pool_id: str, member_id: str) -> bool:
        """Delete one member: one ``DELETE .../pools/{pool_id}/members/{member_id}``; ``False`` when it (or its pool)
        no longer exists."""
        conn = self._connection()
        self.calls += 1
        return _unless_gone(f"deleting member {member_id} in pool {pool_id}",
                            lambda: conn.load_balancer.delete_member(member_id, pool_id, ignore_missing=False))

    def list_members(self, pool_id: str, missing_ok: bool = False) -> list[LiveMember]:
        """Every member of the pool with its address, port, attributes and statuses: one
        ``GET .../pools/{pool_id}/members`` (what a drain's watch reads); with ``missing_ok``, none when
        the pool no longer exists (a drain's watch: nothing left to keep out)."""
        conn = self._connection()
        self.calls += 1
        try:
            with translated(f"listing the members of pool {pool_id}"):
                return [live_member(m) for m in conn.load_balancer.members(pool_id)]
        except FetchFailed as exc:
            if missing_ok and exc.__cause__ is not None and http_status(exc.__cause__) == 404:
                return []
            raise

    def reauth(self) -> None:
        """Drop the connection and authenticate a new one (fetches a fresh token now)."""
        self.close()
        conn = self._connection()
        with translated("re-authenticating"):
            conn.session.get_token()

    def close(self) -> None:
        """Release the connection (a later call builds a new one)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # closing must never mask the outcome of a wait
                pass


def live_member(member: Any) -> LiveMember:
    """An openstacksdk member as a :class:`LiveMember`."""
    def optional(name: str) -> Any:
        value = getattr(member, name, None)
        return value if value not in ("", None) else None

    weight = getattr(member, "weight", None)
    return LiveMember(
        member_id=str(member.id), address=str(member.address), protocol_port=int(member.protocol_port),
        name=str(getattr(member, "name", "") or ""), weight=1 if weight is None else int(weight),
        tags=tuple(getattr(member, "tags", None) or ()), provisioning_status=str(member.provisioning_status),
        operating_status=str(member.operating_status), subnet_id=optional("subnet_id"),
        monitor_port=optional("monitor_port"), monitor_address=optional("monitor_address"),
        admin_state_up=bool(getattr(member, "is_admin_state_up", True) is not False),
        backup=bool(getattr(member, "backup", False)))


def _unless_gone(doing: str, write: Callable[[], object]) -> bool:
    """Make one write to a member: ``True`` when made, ``False`` when the member (or its pool) no longer exists (404);
    any other failure raised as :func:`translated` classifies it."""
    try:
        with translated(doing):
            write()
    except FetchFailed as exc:
        cause = exc.__cause__
        if cause is not None and http_status(cause) == 404:
            return False
        raise
    return True

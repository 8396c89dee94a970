"""The Octavia backend's zones as the DNS watcher watches them (:class:`ha_endpoint.backends.plugin.Watched`): each
zone's load balancer (``loadbalancerId``, whose description proves the owner: ``<endpoint>-<az>-lb``) and its pools
(``poolIds``, listener port -> pool id), polled with the backend's member client, the one its gates poll through
(``Backend.status_source``: :class:`.status.OctaviaStatusSource`), and read with the calls of :mod:`.access`."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ...core import contract
from ...core.outputs import ZoneTarget
from ..plugin import Watched
from .access import watched_calls
from .checks import NAME

KEYS = ("loadbalancerId", "poolIds", *contract.PUBLISHED_ADDRESS_KEYS)
"""What the watcher reads of an Octavia zone in the stack's ``zones`` output."""


def target(az: str, out: Mapping[str, Any], outputs: Mapping[str, Any]) -> Optional[ZoneTarget]:
    """The zone's load balancer and its pools."""
    if not isinstance(out.get("poolIds"), dict):
        return None
    return ZoneTarget(az, out["loadbalancerId"], {str(port): pool for port, pool in out["poolIds"].items()},
                      contract.published_address(out), backend=NAME)


WATCHED = Watched(
    keys=KEYS, reads_ports=False, shape="a load balancer (loadbalancerId, poolIds)",
    owns=lambda out: bool(out.get("loadbalancerId")), target=target,
    owner_object=lambda conn, lb_id: conn.load_balancer.get_load_balancer(lb_id), reads=watched_calls)
"""How the DNS watcher watches an Octavia endpoint."""

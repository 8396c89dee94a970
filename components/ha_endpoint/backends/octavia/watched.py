"""The Octavia backend's zones as the DNS watcher watches them (:class:`ha_endpoint.backends.plugin.Watched`): each
zone's load balancer (``loadbalancerId``, whose description proves the owner: ``<endpoint>-<az>-lb``) and its pools
(``poolIds``, listener port -> pool id), polled with the backend's member client, the one its gates poll through
(``Backend.status_source``: :class:`.status.OctaviaStatusSource`), and read with the calls of :mod:`.access`."""

from __future__ import annotations

from typing import Any, Mapping

from ...core import contract
from ..plugin import Watched
from .access import watched_calls

KEYS = ("loadbalancerId", "poolIds", *contract.PUBLISHED_ADDRESS_KEYS)
"""What the watcher reads of an Octavia zone in the stack's ``zones`` output."""


def owns(out: Mapping[str, Any]) -> bool:
    """A zone with a load balancer and its pools."""
    return bool(out.get("loadbalancerId")) and isinstance(out.get("poolIds"), dict)


WATCHED = Watched(
    keys=KEYS, reads_ports=False, shape="a load balancer (loadbalancerId, poolIds)",
    owns=owns, owner_id=lambda zone: str(zone.loadbalancer_id), owner_suffix="lb", owner_kind="load balancer",
    owner_object=lambda conn, lb_id: conn.load_balancer.get_load_balancer(lb_id), reads=watched_calls)
"""How the DNS watcher watches an Octavia endpoint."""

"""The Octavia backend's calls in the two agents' scoped credentials (:mod:`ha_endpoint.cloud.access_rules`: what a
call and its access rule are, and the calls every backend shares): the member agent's on its pools
(``Backend.agent``'s ``calls``: :mod:`.agent_client`) and the DNS watcher's reads of its zones (``Watched.reads``:
:mod:`.watched`), pinned to the endpoint's load balancers and pools.

- the member agent: per pool of the endpoint, read the pool, list its members, create a member, admin up/down and
  delete a member (any member id of that pool: Octavia's paths name the pool); and Octavia's own read of the members'
  subnet, made with the agent's token; with the endpoint's record, read the zones' load balancers (they prove whose
  record it is) and find and update the record;
- the DNS watcher: per zone, read its load balancer (whose record it is) and its status tree (the zone's health).

Pure: plain values in, plain values out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence

from ...cloud.access_rules import ANY, NETWORK, Call, record_calls, split_record_id

LOAD_BALANCER = "load-balancer"
OCTAVIA_ROOT = "/*/lbaas"
"""Octavia's API root with any version segment: openstacksdk discovers version 2 at ``/v2.0`` on some clouds (the
local one) and ``/v2`` on others; the rest of each path is pinned."""


def agent_calls(pool_ids: Iterable[str], subnet_ids: Iterable[str] = (), record: Optional["RecordAccess"] = None
                ) -> list[Call]:
    """The member agent's calls on the endpoint's pools ``pool_ids``; ``subnet_ids``: the members' subnets it names
    (its ``--member-subnet`` options). Octavia checks a new member's subnet with the caller's token: ``GET
    /v2.0/subnets/<id>`` from Octavia to Neutron, which the credential must allow too (seen on the local cloud: without
    it Octavia answers 400 "Subnet ... not found", Neutron's log a 401). With the endpoint's ``record``: proving whose
    the A record is and taking a zone out of it before the zone's only member leaves (as the watcher does both)."""
    calls: list[Call] = [Call("(Octavia, creating a member in it) network.get_subnet", NETWORK, "GET",
                              f"/v2.0/subnets/{subnet}") for subnet in sorted(set(subnet_ids))]
    for pool in sorted(set(pool_ids)):
        base = f"{OCTAVIA_ROOT}/pools/{pool}"
        calls += [Call("load_balancer.get_pool", LOAD_BALANCER, "GET", base),
                  Call("load_balancer.members", LOAD_BALANCER, "GET", f"{base}/members"),
                  Call("load_balancer.create_member", LOAD_BALANCER, "POST", f"{base}/members"),
                  Call("load_balancer.update_member", LOAD_BALANCER, "PUT", f"{base}/members/{ANY}"),
                  Call("load_balancer.delete_member", LOAD_BALANCER, "DELETE", f"{base}/members/{ANY}")]
    if record is not None:
        calls += load_balancer_reads(record.load_balancer_ids) + record_calls(record.zone_id, record.recordset_id)
    return calls


@dataclass(frozen=True)
class RecordAccess:
    """The endpoint's A record as a credential is pinned to it: the zones' load balancers that prove its owner, and
    its DNS zone and recordset ids (``None`` when unknown: then any)."""

    load_balancer_ids: tuple[str, ...]
    zone_id: Optional[str] = None
    recordset_id: Optional[str] = None


def load_balancer_reads(load_balancer_ids: Iterable[str]) -> list[Call]:
    return [Call("load_balancer.get_load_balancer", LOAD_BALANCER, "GET", f"{OCTAVIA_ROOT}/loadbalancers/{lb}")
            for lb in sorted(set(load_balancer_ids))]


def watcher_reads(load_balancer_ids: Iterable[str] = ()) -> list[Call]:
    """The DNS watcher's reads of the endpoint's load balancers: each one (its description proves whose record it is)
    and its status tree (its pools' members' statuses: :meth:`.status.OctaviaStatusSource.fetch_zone`)."""
    return load_balancer_reads(load_balancer_ids) + [
        Call("load_balancer.get (the status tree)", LOAD_BALANCER, "GET", f"{OCTAVIA_ROOT}/loadbalancers/{lb}/status")
        for lb in sorted(set(load_balancer_ids))]


def zones_objects(zones: Optional[Mapping[str, object]]) -> tuple[list[str], list[str]]:
    """The load balancer ids and pool ids of the endpoint's ``zones`` output (per AZ: loadbalancerId, poolIds)."""
    load_balancers: list[str] = []
    pools: list[str] = []
    for out in (zones or {}).values():
        out = out if isinstance(out, Mapping) else {}
        if out.get("loadbalancerId"):
            load_balancers.append(str(out["loadbalancerId"]))
        ids = out.get("poolIds") or {}
        pools += [str(p) for p in (ids.values() if isinstance(ids, Mapping) else ids) if p]
    return load_balancers, pools


def watched_calls(zones: Mapping[str, object]) -> list[Call]:
    """The watcher's calls on the backend's zones of the ``zones`` output (``Watched.reads``)."""
    return watcher_reads(zones_objects(zones)[0])


def member_agent_calls(zones: Mapping[str, object], subnet_ids: Sequence[str], record_id: Optional[str]) -> list[Call]:
    """The member agent's calls on the endpoint's ``zones`` output, its members' subnets and its A record
    ``record_id`` (``Backend.agent``'s ``calls``)."""
    load_balancers, pools = zones_objects(zones)
    return agent_calls(pools, subnet_ids, RecordAccess(tuple(load_balancers), *split_record_id(record_id)))

"""Every OpenStack call the two agents make between runs, and the Keystone application-credential access rule
(service type, method, path) that allows exactly that call, pinned to this endpoint's objects where the path names
them (docs/security.md).

- the member agent (:mod:`ha_endpoint.agent.octavia`): per pool of the endpoint, read the pool, list its members,
  create a member, admin up/down and delete a member (any member id of that pool: Octavia's paths name the pool);
  and Octavia's own read of the members' subnet, made with the agent's token; read the zones' load balancers, find
  the record and update it (:mod:`ha_endpoint.agent.dns`: a zone leaves DNS before its only member leaves);
- the DNS watcher (:mod:`ha_endpoint.watch`): per zone, what its backend reads (``Watched.reads`` in
  :mod:`ha_endpoint.backends.plugin`: read its load balancer and list its pools' members, or read its VIP port); find
  the DNS zone by name and the record in it, update the record.

keystonemiddleware matches a request when the method and service type are equal and the path matches the rule's
pattern (``*`` or ``{name}``: one path segment, ``**``: any), on the path only: a query string (``?name=``) is never
part of the match (``keystonemiddleware.auth_token._path_matches``). So the zone lookup by name is a rule on
``/v2/zones`` that lets the holder list every zone of the project; that is what access rules cannot narrow.

Pure: plain values in, plain values out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Optional

LOAD_BALANCER = "load-balancer"
DNS = "dns"
NETWORK = "network"
OCTAVIA_ROOT = "/*/lbaas"
"""Octavia's API root with any version segment: openstacksdk discovers version 2 at ``/v2.0`` on some clouds (the
local one) and ``/v2`` on others; the rest of each path is pinned."""
DESIGNATE_ROOT = "/v2"
ANY = "*"
"""One path segment, any value (a member id the agent just created, or an id the component does not know)."""


@dataclass(frozen=True)
class Call:
    """One OpenStack API call an agent makes (``what``: the openstacksdk call) and the rule that allows it."""

    what: str
    service: str
    method: str
    path: str

    def rule(self) -> dict[str, str]:
        """The access rule, as Keystone (and ``openstack.identity.ApplicationCredential.access_rules``) takes it."""
        return {"service": self.service, "method": self.method, "path": self.path}


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


def record_calls(zone_id: Optional[str], recordset_id: Optional[str]) -> list[Call]:
    """Finding the DNS zone by name and the A record in it, and updating the record."""
    zone = f"{DESIGNATE_ROOT}/zones/{zone_id or ANY}"
    return [Call("dns.zones", DNS, "GET", f"{DESIGNATE_ROOT}/zones"),
            Call("dns.recordsets", DNS, "GET", f"{zone}/recordsets"),
            Call("dns.update_recordset", DNS, "PUT", f"{zone}/recordsets/{recordset_id or ANY}")]


def watcher_calls(load_balancer_ids: Iterable[str] = (), pool_ids: Iterable[str] = (), zone_id: Optional[str] = None,
                  recordset_id: Optional[str] = None, vip_port_ids: Iterable[str] = ()) -> list[Call]:
    """The DNS watcher's calls on the endpoint's load balancers and pools, the VIP ports ``vip_port_ids`` it reads by
    id (of zones that have no load balancer), and its A record ``recordset_id`` in DNS zone ``zone_id`` (each ``None``
    when unknown, e.g. an endpoint read through a StackReference: then any zone's or record's id)."""
    calls = load_balancer_reads(load_balancer_ids)
    calls += [Call("load_balancer.members", LOAD_BALANCER, "GET", f"{OCTAVIA_ROOT}/pools/{pool}/members")
              for pool in sorted(set(pool_ids))]
    calls += [Call("network.get_port", NETWORK, "GET", f"/v2.0/ports/{port}") for port in sorted(set(vip_port_ids))]
    return calls + record_calls(zone_id, recordset_id)


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


def split_record_id(record_id: Optional[str]) -> tuple[Optional[str], Optional[str]]:
    """(zone id, recordset id) of a ``openstack.dns.RecordSet``'s id (``<zone id>/<recordset id>``)."""
    if not record_id or "/" not in record_id:
        return None, None
    zone, recordset = record_id.split("/", 1)
    return zone or None, recordset or None

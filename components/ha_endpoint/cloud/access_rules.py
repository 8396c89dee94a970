"""Every OpenStack call the two agents make between runs, and the Keystone application-credential access rule
(service type, method, path) that allows exactly that call, pinned to this endpoint's objects where the path names
them (docs/security.md).

What is here is what every backend shares: what a call and its rule are (:class:`Call`), the endpoint's A record (find
the DNS zone by name and the record in it, update the record: :func:`record_calls`) and a port read by id
(:func:`port_reads`). The calls on a backend's own objects are its own: the member agent's on its pools
(``Backend.agent`` in :mod:`ha_endpoint.backends.plugin`) and the DNS watcher's reads of its zones (``Watched.reads``:
read its load balancer and list its pools' members, or read its VIP port).

keystonemiddleware matches a request when the method and service type are equal and the path matches the rule's
pattern (``*`` or ``{name}``: one path segment, ``**``: any), on the path only: a query string (``?name=``) is never
part of the match (``keystonemiddleware.auth_token._path_matches``). So the zone lookup by name is a rule on
``/v2/zones`` that lets the holder list every zone of the project; that is what access rules cannot narrow.

Pure: plain values in, plain values out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

DNS = "dns"
NETWORK = "network"
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


def record_calls(zone_id: Optional[str], recordset_id: Optional[str]) -> list[Call]:
    """Finding the DNS zone by name and the A record in it, and updating the record."""
    zone = f"{DESIGNATE_ROOT}/zones/{zone_id or ANY}"
    return [Call("dns.zones", DNS, "GET", f"{DESIGNATE_ROOT}/zones"),
            Call("dns.recordsets", DNS, "GET", f"{zone}/recordsets"),
            Call("dns.update_recordset", DNS, "PUT", f"{zone}/recordsets/{recordset_id or ANY}")]


def port_reads(port_ids: Iterable[str]) -> list[Call]:
    """Reading the ports ``port_ids`` by id (``GET /v2.0/ports/{id}``), and no other port."""
    return [Call("network.get_port", NETWORK, "GET", f"/v2.0/ports/{port}") for port in sorted(set(port_ids))]


def split_record_id(record_id: Optional[str]) -> tuple[Optional[str], Optional[str]]:
    """(zone id, recordset id) of a ``openstack.dns.RecordSet``'s id (``<zone id>/<recordset id>``)."""
    if not record_id or "/" not in record_id:
        return None, None
    zone, recordset = record_id.split("/", 1)
    return zone or None, recordset or None

"""The endpoint's A record in Designate: found by the endpoint's name, touched only when it is provably the
endpoint's.

Proof: the record set's description carries the identity the component writes
(:mod:`ha_endpoint.core.identity`: ``[ha-endpoint <project>/<stack> <resource name>]``), and that identity and the
endpoint's name are the ones the zones' load balancers carry (each load balancer's description names its stack and
``<endpoint>-<az>-lb``), and, when the watcher is told which stack it watches, that stack's. Anything else, a record
of the same name made by hand or by another stack included, is refused with the reason, and never written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from ..core import contract
from ..core.errors import HaEndpointError
from ..core.identity import StackIdentity, parse_description


class NotTheEndpoints(HaEndpointError):
    """The record (or a load balancer) does not prove to be the watched endpoint's: the watcher leaves it alone."""


@dataclass(frozen=True)
class Owner:
    """Whose endpoint this is: the stack identity and the endpoint's ``name``."""

    identity: StackIdentity
    endpoint: str


def owner_of(load_balancers: Iterable[tuple[str, Any]], expected: Optional[StackIdentity],
             suffix_of: Callable[[str], str] = lambda zone: f"-{zone}-lb", kind: str = "load balancer") -> Owner:
    """The one owner the zones' load balancers (``(zone, load balancer)``, those that exist; or the object the zone's
    backend proves its owner with, ``suffix_of``: how their names end, ``kind``: what they are) name in their
    descriptions."""
    owners = set()
    for zone, lb in load_balancers:
        parsed = parse_description(getattr(lb, "description", None))
        suffix = suffix_of(zone)
        if parsed is None or not parsed[1].endswith(suffix):
            raise NotTheEndpoints(f"{kind} {lb.id} of zone {zone} carries no endpoint identity in its "
                                  f"description ({getattr(lb, 'description', None)!r}): not watching it")
        owners.add(Owner(parsed[0], parsed[1][: -len(suffix)]))
    if not owners:
        raise NotTheEndpoints(f"none of the zones' {kind}s exists: nothing proves whose record this is; "
                              "not watching (run `pulumi up` to rebuild them, then start the watcher)")
    if len(owners) != 1:
        raise NotTheEndpoints(f"the zones' {kind}s name {len(owners)} owners "
                              f"({', '.join(sorted(f'{o.identity.project}/{o.identity.stack} {o.endpoint}' for o in owners))}): "
                              f"give the watcher one endpoint's outputs")
    [owner] = owners
    if expected is not None and owner.identity != expected:
        raise NotTheEndpoints(f"the {kind}s are stack {owner.identity.project}/{owner.identity.stack}'s, not "
                              f"{expected.project}/{expected.stack}'s: not watching them")
    return owner


class EndpointRecord:
    """The endpoint's A record ``fqdn`` over an openstacksdk connection (``conn.dns``)."""

    def __init__(self, conn: Any, fqdn: str, owner: Owner):
        self.conn, self.fqdn, self.owner = conn, fqdn, owner
        self.name = contract.recordset_name(owner.endpoint)

    def _find(self) -> tuple[Any, Any]:
        domain = self.fqdn.split(".", 1)[1]
        zones = list(self.conn.dns.zones(name=domain))
        if len(zones) != 1:
            raise NotTheEndpoints(f"DNS zone {domain} of {self.fqdn}: {len(zones)} found")
        found = [r for r in self.conn.dns.recordsets(zones[0], name=self.fqdn) if r.type == "A"]
        if len(found) != 1:
            raise NotTheEndpoints(f"A record {self.fqdn}: {len(found)} found (the endpoint publishes exactly one)")
        record = found[0]
        if parse_description(record.description) != (self.owner.identity, self.name):
            raise NotTheEndpoints(
                f"A record {self.fqdn} ({record.id}) is not {self.owner.identity.project}/"
                f"{self.owner.identity.stack}'s record {self.name} (its description: {record.description!r}): "
                f"never written")
        return zones[0], record

    def addresses(self) -> list[str]:
        """The record's addresses now, sorted."""
        return self.read()[0]

    def read(self) -> tuple[list[str], int]:
        """The record's addresses now, sorted, and its TTL in seconds (how long a resolver may keep an answer)."""
        record = self._find()[1]
        return sorted(record.records or []), int(record.ttl or 0)

    def write(self, addresses: list[str]) -> None:
        """Set the record's addresses (checked to be the endpoint's first, every time)."""
        self.conn.dns.update_recordset(self._find()[1], records=list(addresses))

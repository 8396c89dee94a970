"""The endpoint's A record as the agent sees it: before a zone's only member leaves, the agent takes the zone's
address out of the record and waits the record's TTL, so that no client still resolves to a zone about to have no
member (docs/agent.md, "A zone's only member").

The record is found and proven the endpoint's exactly as the DNS watcher proves it (:mod:`ha_endpoint.watch.records`:
the zones' load balancers name the owner, the record's description must name the same), at its first use and again
before every write. The watcher writes only the zones it decided on, so it does not put the zone back while its
member still serves; it does once the zone serves again (a new machine), as ``pulumi up`` does.
"""

from __future__ import annotations

from typing import Mapping, Optional

from ..gates.cloud import translated
from ..watch.records import EndpointRecord, Owner, owner_of
from .client import MemberClient


class AgentRecord:
    """The A record ``fqdn`` of the endpoint whose zones' load balancers are ``load_balancers`` (zone -> id: each
    zone's object that proves the owner, :meth:`MemberClient.owner_object`), over the agent's member client (its connection, its retries: a failure is a :class:`~ha_endpoint.cloud.errors.CloudError`
    of the Machine being served, retried at the next pass); ``addresses``: each zone's published address."""

    def __init__(self, fqdn: str, load_balancers: Mapping[str, str], addresses: Mapping[str, str],
                 cloud: MemberClient) -> None:
        self.fqdn, self.load_balancers, self.zone_addresses, self.cloud = fqdn, dict(load_balancers), \
            dict(addresses), cloud
        self._owner: Optional[Owner] = None

    def _record(self) -> EndpointRecord:
        conn = self.cloud.connection()
        if self._owner is None:
            with translated(f"reading the zones' load balancers to prove whose record {self.fqdn} is"):
                found = [(az, self.cloud.owner_object(lb)) for az, lb in sorted(self.load_balancers.items())]
            self._owner = owner_of(found, None)
        return EndpointRecord(conn, self.fqdn, self._owner)

    def read(self) -> tuple[list[str], int]:
        """The record's addresses now (sorted) and its TTL."""
        def call() -> tuple[list[str], int]:
            with translated(f"reading the A record {self.fqdn}"):
                return self._record().read()
        return self.cloud.retried(call)

    def write(self, addresses: list[str]) -> None:
        def call() -> None:
            with translated(f"writing the A record {self.fqdn}"):
                self._record().write(addresses)
        self.cloud.retried(call)

"""A record set declared beside the endpoint publishes a zone's address only after that zone's readiness.

Under ``publish: when-ready`` the component publishes a zone in DNS only once the zone's readiness resource
(``<endpoint>-<zone>-ready``) has seen its members ready. A program may publish the endpoint's addresses in a record
set of its own: one that takes a zone's floating IP (or VIP) straight from the zone's resources, or lists it as a
literal, is created as soon as the address exists, and DNS sends clients to a zone whose members do not serve yet
(CAPO issue 2763). Such a record set must depend on the zone's readiness resource, directly or through others, as
one built from the endpoint's ``addresses`` or ``zones`` outputs does. Not applied under ``publish: bootstrap``.
"""

from __future__ import annotations

from typing import Any

from ha_endpoint.core import contract

from ..model import Violation
from ..neighbours import neighbours, published_addresses
from ..registry import rule
from ..stack import endpoints, transitive_dependencies


@rule("ha-endpoint-neighbour-dns-readiness",
      "A record set declared beside the endpoint publishes a zone's address only after that zone's "
               "readiness (publish when-ready).")
def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    violations: list[Violation] = []
    recordsets = neighbours(resources, contract.RECORDSET_TYPE)
    for endpoint in endpoints(resources):
        if endpoint.facts is None or endpoint.facts.publish != "when-ready":
            continue  # bootstrap publishes at once; without usable facts ha-endpoint-declared-facts says why
        for recordset in recordsets:
            published = published_addresses(endpoint, recordset)
            waits_for = transitive_dependencies(recordset) if published else []
            for zone, address in published.items():
                gate = endpoint.readiness(zone)
                if gate is not None and any(dependency is gate for dependency in waits_for):
                    continue
                gate_name = contract.readiness_name(endpoint.name, zone)
                violations.append(Violation(
                    f"record set {recordset.name} (declared beside endpoint {endpoint.name}) publishes {address}, "
                    f"zone {zone}'s address, without waiting for {gate_name}: under publish when-ready a zone's "
                    f"address may be published only once its members are ready; take the addresses from the "
                    f"endpoint's addresses output (or its zones output), or make the record set depend on "
                    f"{gate_name}", recordset.urn))
    return violations

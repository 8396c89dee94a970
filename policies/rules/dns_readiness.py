"""Under ``publish: when-ready`` a zone's DNS records wait for that zone's readiness resource.

The readiness resource (``<endpoint>-<zone>-ready``) finishes only when the zone's members are ACTIVE and ONLINE.
A record set that does not depend on it is created as soon as its address exists: DNS would point at a zone whose
members do not serve yet (CAPO issue 2763: the cluster went offline that way).
"""

from __future__ import annotations

from typing import Any

from ha_endpoint.core import contract

from ..model import Violation
from ..registry import rule
from ..stack import judged, transitive_dependencies


@rule("ha-endpoint-dns-readiness-gate",
      "Under publish when-ready, each zone's DNS records depend on that zone's readiness resource.")
def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    violations: list[Violation] = []
    for endpoint, facts in judged(resources):
        if facts.dns is None or facts.publish != "when-ready":
            continue
        published = list(facts.zones)
        for zone in published:
            if endpoint.readiness(zone) is None:
                violations.append(Violation(
                    f"zone {zone} of endpoint {endpoint.name} has no readiness resource "
                    f"{contract.readiness_name(endpoint.name, zone)}; under publish when-ready its address may only "
                    f"be published once its members are ready", endpoint.resource.urn))
        gates = {contract.recordset_name(endpoint.name): published}
        for zone in facts.dns.zone_records:
            gates[contract.zone_recordset_name(endpoint.name, zone)] = [zone]
        for name, zones in gates.items():
            recordset = endpoint.named(name, contract.RECORDSET_TYPE)
            if recordset is None:
                continue  # a missing record set is ha-endpoint-dns-records' finding
            waits_for = transitive_dependencies(recordset)
            for zone in zones:
                gate = endpoint.readiness(zone)
                if gate is None or any(dependency is gate for dependency in waits_for):
                    continue
                violations.append(Violation(
                    f"record set {recordset.name} does not depend on {gate.name}: under publish when-ready zone "
                    f"{zone}'s address could be published before its members are ready; make the record set wait "
                    f"for that readiness resource", recordset.urn))
    return violations

"""The endpoint's A record lists exactly the published zones' addresses (and each per-zone record its own zone's).

DNS that lists an address no load balancer serves sends clients to a dead end; DNS that leaves out a zone wastes
it. At preview the addresses of floating IPs still to be allocated are unknown, so the rule checks where the
records come from: the record set's ``records`` depend on the floating IP (or, for an internal endpoint, the load
balancer's VIP) of each published zone and of no other. When the records are known (e.g. brought floating IPs),
their values are compared: after an update with the ready zones' actual addresses (the endpoint's ``zones``
outputs: a zone whose gate is closed must not be listed), else with the declared addresses, else counted.
"""

from __future__ import annotations

from typing import Any, Optional

from ha_endpoint.core import contract

from ..model import Violation, fully_known, join
from ..registry import rule
from ..stack import direct_dependencies, judged, props


@rule("ha-endpoint-dns-records", "The endpoint's A record lists exactly the addresses of its published zones.")
def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    violations: list[Violation] = []
    for endpoint, facts in judged(resources):
        recordsets = endpoint.of_type(contract.RECORDSET_TYPE)
        if facts.dns is None:
            for recordset in recordsets:
                violations.append(Violation(
                    f"record set {recordset.name} is part of endpoint {endpoint.name}, which declares no DNS name; "
                    "configure dns on the endpoint instead of adding records to it", recordset.urn))
            continue
        published = list(facts.zones)
        unknown = [zone for zone in facts.dns.zone_records if zone not in facts.zones]
        for zone in unknown:
            violations.append(Violation(
                f"endpoint {endpoint.name} declares a record of its own for zone {zone}, but {zone} is not a "
                f"configured zone ({join(facts.zones)})", endpoint.resource.urn))
        expected = {contract.recordset_name(endpoint.name): published}
        for zone in facts.dns.zone_records:
            if zone in facts.zones:
                expected[contract.zone_recordset_name(endpoint.name, zone)] = [zone]
        for name, zones in expected.items():
            recordset = endpoint.named(name, contract.RECORDSET_TYPE)
            if recordset is None:
                violations.append(Violation(
                    f"endpoint {endpoint.name} has DNS configured but no record set {name} publishing zone(s) "
                    f"{join(zones)}", endpoint.resource.urn))
                continue
            violations.extend(_check_recordset(endpoint, recordset, zones))
    return violations


def _check_recordset(endpoint: Any, recordset: Any, zones: list[str]) -> list[Violation]:
    found: list[Violation] = []
    rs_props = props(recordset)
    kind = rs_props.get("type")
    if isinstance(kind, str) and kind.upper() != "A":
        found.append(Violation(
            f"record set {recordset.name} is of type {kind}; the endpoint publishes its zones' IPv4 addresses in an "
            f"A record (type: A)", recordset.urn))
    records = rs_props.get("records")
    if isinstance(records, list) and fully_known(records):
        for value in records:
            if not isinstance(value, str):
                found.append(Violation(f"record set {recordset.name} lists {value!r}, which is not an address; list "
                                       f"each published zone's address", recordset.urn))
        addresses = [value for value in records if isinstance(value, str)]
        return found + _check_values(endpoint, recordset, zones, addresses)
    return found + _check_sources(endpoint, recordset, zones)


def _check_values(endpoint: Any, recordset: Any, zones: list[str], records: list[Any]) -> list[Violation]:
    found: list[Violation] = []
    for value in sorted({value for value in records if records.count(value) > 1}):
        found.append(Violation(f"record set {recordset.name} lists {value} more than once; list each zone's "
                               f"address once", recordset.urn))
    runtime = _runtime(endpoint)
    if runtime is not None:  # after an update: the zones whose gate is open, with their actual addresses
        zones = [zone for zone in zones if zone in runtime]
        addresses = {zone: runtime[zone] for zone in zones}
        which = "ready zones"
    else:
        addresses = {zone: endpoint.facts.zones[zone].floating_ip.address for zone in zones}
        which = "zones"
    if all(isinstance(address, str) and address for address in addresses.values()):
        for zone, address in addresses.items():
            if address not in records:
                found.append(Violation(
                    f"record set {recordset.name} does not list {address}, the published address of zone {zone}; "
                    f"add it", recordset.urn))
        for value in sorted(set(records) - set(addresses.values())):
            found.append(Violation(
                f"record set {recordset.name} lists {value}, which is not the published address of any of its "
                f"{which} ({join(zones)}); remove it", recordset.urn))
    elif len(set(records)) != len(zones):
        found.append(Violation(
            f"record set {recordset.name} lists {len(set(records))} address(es) ({join(records)}) for "
            f"{len(zones)} published zone(s) ({join(zones)}); it must list exactly one address per published zone",
            recordset.urn))
    return found


def _runtime(endpoint: Any) -> Optional[dict[str, str]]:
    """Ready zone -> its address, from the endpoint's outputs (``zones.<az>.ready``, ``floatingIp`` or
    ``vipAddress``) when they are all known (after an update); None otherwise (e.g. at preview)."""
    zones = props(endpoint.resource).get("zones")
    if not isinstance(zones, dict) or not zones or not fully_known(zones):
        return None
    ready: dict[str, str] = {}
    for zone, state in zones.items():
        if not isinstance(state, dict) or not isinstance(state.get("ready"), bool):
            return None
        if state["ready"]:
            address = state.get("floatingIp") or state.get("vipAddress")
            if not isinstance(address, str):
                return None
            ready[zone] = address
    return ready


def _address_zone(endpoint: Any, source: Any) -> Optional[str]:
    """The zone whose address ``source`` gives: any resource of a zone's backend (whatever its type: a floating IP,
    a load balancer's VIP, a port) except the zone's readiness resource, which says when, not what, to publish."""
    zone = endpoint.zone_of(source)
    if zone is None or source.name == contract.readiness_name(endpoint.name, zone):
        return None
    return zone


def _check_sources(endpoint: Any, recordset: Any, zones: list[str]) -> list[Violation]:
    sources = direct_dependencies(recordset, "records") or direct_dependencies(recordset)
    from_zones: list[str] = []
    for source in sources:
        zone = _address_zone(endpoint, source)
        if zone is not None and zone not in from_zones:
            from_zones.append(zone)
    found = []
    for zone in zones:
        if zone not in from_zones:
            found.append(Violation(
                f"record set {recordset.name} does not take zone {zone}'s address: its records depend on no "
                f"floating IP, load balancer or other resource of zone {zone}; publish that zone's address (its floating IP, or "
                f"its VIP for an internal endpoint) in it", recordset.urn))
    for zone in from_zones:
        if zone not in zones:
            found.append(Violation(
                f"record set {recordset.name} takes an address from zone {zone}, which it must not publish "
                f"(it publishes {join(zones)}); remove that address", recordset.urn))
    return found

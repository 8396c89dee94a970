"""What stands beside an HaEndpoint: resources of the same stack, declared outside any endpoint, that attach to one.

A program may add its own resources to what the component built: a member in one of its pools, a rule in one of its
security groups, a record set publishing one of its addresses. The component's checks never see them; the pack does.
A neighbour attaches to an endpoint through a property that refers to one of the endpoint's children: at preview the
engine already knows the property's dependencies (a member's ``poolId`` depends on the pool even before the pool has
an id); once the endpoint exists the value itself is known and is matched against the endpoint's outputs (``zones``
pool ids and addresses, the security group ids) and its declared facts (brought floating IPs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional

from ha_endpoint.core import contract
from ha_endpoint.core.contract import natural_key

from .stack import Endpoint, ancestors, direct_dependencies, props, under_endpoint


def neighbours(resources: Iterable[Any], token: str) -> list[Any]:
    """The resources of type ``token`` that no HaEndpoint parents (at any depth), by name."""
    found = [resource for resource in resources if resource.resource_type == token
             and not under_endpoint(resource.urn or "")
             and not any(ancestor.resource_type == contract.ENDPOINT_TYPE for ancestor in ancestors(resource))]
    return sorted(found, key=lambda resource: natural_key(resource.name or ""))


def zone_outputs(endpoint: Endpoint) -> dict[str, dict[str, Any]]:
    """The endpoint's ``zones`` output (AZ -> that zone's outputs), as far as it is a mapping of mappings."""
    zones = props(endpoint.resource).get("zones")
    if not isinstance(zones, dict):
        return {}
    return {key: value for key, value in zones.items() if isinstance(value, dict)}


def _output(state: dict[str, Any], key: str) -> Any:
    """One entry of a zone's outputs, camelCase (``poolIds``) or as older versions spelled it (``pool_ids``)."""
    snake = "".join(f"_{char.lower()}" if char.isupper() else char for char in key)
    return state.get(key, state.get(snake))


def _refers_to(resource: Any, prop: str, target: Any) -> bool:
    deps = direct_dependencies(resource, prop) if prop in (resource.property_dependencies or {}) \
        else direct_dependencies(resource)
    return any(dependency is target for dependency in deps)


@dataclass(frozen=True)
class PoolLink:
    """Which of an endpoint's pools a member joins: ``zones`` (one when known; several when its pool id is not known
    at preview and depends on pools of several zones) and ``pools`` (their names, when the pack sees them)."""

    zones: tuple[str, ...]
    pools: tuple[str, ...]

    @property
    def ambiguous(self) -> bool:
        return len(self.zones) > 1

    def describe(self) -> str:
        if len(self.pools) == 1:
            return f"pool {self.pools[0]}"
        if self.ambiguous:
            return f"a pool of zone {', '.join(self.zones[:-1])} or {self.zones[-1]}"
        return f"a pool of zone {self.zones[0]}"


def pool_link(endpoint: Endpoint, member: Any) -> Optional[PoolLink]:
    """The endpoint's pools ``member`` joins, or None when it joins none of them."""
    pool_id = props(member).get("poolId")
    if isinstance(pool_id, str) and pool_id:
        for key, state in zone_outputs(endpoint).items():
            ids = _output(state, "poolIds")
            if isinstance(ids, dict) and pool_id in ids.values():
                names = [contract.pool_name(endpoint.name, key, port) for port, value in ids.items()
                         if value == pool_id]
                return PoolLink((key,), tuple(names))
        for pool in endpoint.of_type(contract.POOL_TYPE):
            if props(pool).get("id") == pool_id and endpoint.zone_of(pool) is not None:
                return PoolLink((endpoint.zone_of(pool),), (pool.name,))
    pools = [pool for pool in endpoint.of_type(contract.POOL_TYPE) if _refers_to(member, "poolId", pool)]
    zones = sorted({zone for zone in map(endpoint.zone_of, pools) if zone is not None}, key=natural_key)
    if not zones:
        return None
    return PoolLink(tuple(zones), tuple(pool.name for pool in pools))


def group_role(endpoint: Endpoint, rule: Any) -> Optional[tuple[str, str]]:
    """Which of the endpoint's security groups ``rule`` belongs to: (``"vip"`` or ``"members"``, the group's name), or
    None."""
    groups = (("vip", contract.vip_secgroup_name(endpoint.name), "vipSecurityGroupId"),
              ("members", contract.members_secgroup_name(endpoint.name), "membersSecurityGroupId"))
    group_id = props(rule).get("securityGroupId")
    outputs = props(endpoint.resource)
    for role, name, output in groups:
        group = endpoint.named(name, contract.SECGROUP_TYPE)
        known_ids = [outputs.get(output)] + ([props(group).get("id")] if group is not None else [])
        if isinstance(group_id, str) and group_id and group_id in known_ids:
            return role, name
        if group is not None and _refers_to(rule, "securityGroupId", group):
            return role, name
    return None


def published_addresses(endpoint: Endpoint, recordset: Any) -> dict[str, str]:
    """Zone -> how ``recordset`` publishes that zone's address (the address itself when known, else the resource it
    takes it from): its records taken from a resource of the zone (other than the zone's readiness resource, which
    says when, not what), or a known record equal to the zone's address (its floating IP or VIP, from the endpoint's
    outputs or a brought floating IP in its facts)."""
    found: dict[str, str] = {}
    for source in direct_dependencies(recordset, "records") or direct_dependencies(recordset):
        if not any(source is child for child in endpoint.children):
            continue
        zone = endpoint.zone_of(source)
        if zone is not None and source.name != contract.readiness_name(endpoint.name, zone):
            found.setdefault(zone, f"the address of {source.name}")
    records = props(recordset).get("records")
    if isinstance(records, list):
        addresses = zone_addresses(endpoint)
        for value in records:
            for zone, known in addresses.items():
                if isinstance(value, str) and value in known:
                    found[zone] = value
    return {zone: found[zone] for zone in sorted(found, key=natural_key)}


def zone_addresses(endpoint: Endpoint) -> dict[str, set[str]]:
    """Zone -> the addresses known to be the zone's (floating IP, VIP, published address)."""
    addresses: dict[str, set[str]] = {}
    for key, state in zone_outputs(endpoint).items():
        for output in ("floatingIp", "vipAddress", "publishedAddress"):
            value = _output(state, output)
            if isinstance(value, str) and value:
                addresses.setdefault(key, set()).add(value)
    if endpoint.facts is not None:
        for key, zone in endpoint.facts.zones.items():
            if zone.floating_ip.address:
                addresses.setdefault(key, set()).add(zone.floating_ip.address)
    return addresses

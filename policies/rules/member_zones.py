"""Every member belongs to a configured zone; under own-zone placement every zone's pools have enough members.

A zone whose load balancer has no member is published in DNS like any other and answers with connection errors:
clients that pick its address fail until they try another. A member taken out (``enabled: false``, i.e. admin state
down, or weight 0: :func:`ha_endpoint.core.predicates.member_in_service`, the rule the component's validation asks
too) is no capacity: a zone whose only members are taken out has none.
"""

from __future__ import annotations

from typing import Any

from ha_endpoint.backends.octavia import rules as octavia
from ha_endpoint.core import contract, predicates

from ..model import Violation, as_int, join, number
from ..registry import rule, whole_number
from ..stack import direct_dependencies, judged, props

CONFIG = {"minMembersPerZone": whole_number(1, "Members each zone's pools need under own-zone placement.")}


@rule("ha-endpoint-member-zones",
      "Every member is in a configured zone, and (own-zone placement) every zone has enough members.",
      config=CONFIG)
def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    minimum = as_int(config.get("minMembersPerZone")) or 1
    violations: list[Violation] = []
    for endpoint, facts in judged(resources):
        urn = endpoint.resource.urn
        for member in facts.members.values():
            if member.az not in facts.zones:
                violations.append(Violation(
                    f"member {member.name} of endpoint {endpoint.name} is in zone '{member.az}', which is not "
                    f"configured; use one of {join(facts.zones)}, or add '{member.az}' under zones with its "
                    f"subnet", urn))
        if facts.member_placement != "own-zone":
            continue
        for key, zone in facts.zones.items():
            if zone.backend != octavia.NAME:
                continue  # pools are Octavia's; another backend declares its members in the facts only
            # the members the member agent holds (declared, no resource of the stack: docs/members.md) serve too
            held = {m.address for m in facts.members.values() if m.held_by_agent and m.az == key and m.weight > 0}
            pools = endpoint.in_zone(contract.POOL_TYPE, key)
            members = endpoint.in_zone(contract.MEMBER_TYPE, key)
            for pool in pools or [None]:
                in_pool = members if pool is None else [m for m in members if _pool_of(m, pools) is pool]
                serving = {_member_key(m) for m in in_pool if _in_service(m)} | held
                out = {_member_key(m) for m in in_pool} - serving
                count = len(serving)
                if count >= minimum:
                    continue
                where = f"pool {pool.name}" if pool is not None else "its load balancer"
                taken = (f" in service ({len(out)} more taken out: {predicates.TAKEN_OUT}, which is no capacity)"
                         if out else "")
                back = "put taken-out members back (enabled: true, weight above 0), " if out else ""
                violations.append(Violation(
                    f"zone {key} of endpoint {endpoint.name} has {count} member(s){taken} in {where}, fewer than "
                    f"the {minimum} required under own-zone placement; {back}add members with az: {key}, remove the "
                    f"zone, or set memberPlacement: all-zones", pool.urn if pool is not None else urn))
    return violations


def _pool_of(member: Any, pools: list[Any]) -> Any:
    """The pool a member resource joins: its ``poolId``'s dependency (known at preview), else a matching id."""
    for dependency in direct_dependencies(member, "poolId"):
        if dependency in pools:
            return dependency
    pool_id = props(member).get("poolId")
    for pool in pools:
        if isinstance(pool_id, str) and pool_id and props(pool).get("id") == pool_id:
            return pool
    for dependency in direct_dependencies(member):
        if dependency in pools:
            return dependency
    return None


def _in_service(member: Any) -> bool:
    """Whether a registered member is capacity: admin state up, weight above 0."""
    found = props(member)
    return predicates.member_in_service(found.get("adminStateUp"), number(found.get("weight")))


def _member_key(member: Any) -> str:
    address = props(member).get("address")
    return address if isinstance(address, str) and address else member.name

"""The members of a member set (``memberUpdates: batch``) as the pack judges them: one view per member, shaped like
the ``openstack.loadbalancer.Member`` resource it stands for under ``memberUpdates: per-member`` (that type token,
the name that resource would have, its camelCase properties, its pool dependency, its zone), so that every rule that
judges members judges each member of a set as it judges a member resource, with the same messages. A violation about
one of them points at the set (its URN), which is what the engine registered. A set's members join the pool the set
fills (:func:`set_pool`): the pool its ``pool_id`` depends on.

A set whose member list is not known at preview (a whole list computed from Outputs) yields no view; the rules that
count members skip its pool then (:func:`unknown_sets`) rather than report it empty.
"""

from __future__ import annotations

from typing import Any, Optional

from ha_endpoint.core import contract

from .model import UNKNOWN, PartView, props_of


def is_member_set(resource: Any) -> bool:
    return resource.resource_type in contract.MEMBER_SET_TYPES


def _members(resource: Any) -> Any:
    return props_of(resource).get("members")


def set_pool(resource: Any, pools: list[Any]) -> Optional[Any]:
    """The pool among ``pools`` that the member set ``resource`` fills: one its ``pool_id`` depends on; else None."""
    for dependency in (resource.property_dependencies or {}).get("pool_id", []) or []:
        if any(dependency is pool for pool in pools):
            return dependency
    return None


def member_views(resource: Any, pools: Optional[list[Any]] = None) -> list[PartView]:
    """One view per member of the member set ``resource``; their ``poolId`` depends on the pool the set fills among
    ``pools`` (:func:`set_pool`), else on what the set's ``pool_id`` depends on."""
    props = props_of(resource)
    members = props.get("members")
    if not isinstance(members, list):
        return []
    pool = set_pool(resource, pools or [])
    pool_dependencies = [pool] if pool is not None else \
        list((resource.property_dependencies or {}).get("pool_id", []) or [])
    views = []
    for entry in members:
        if not isinstance(entry, dict):
            continue
        address, name = entry.get("address"), entry.get("name")
        key = address if isinstance(address, str) and address != UNKNOWN else f"by-name-{name}"
        views.append(PartView(
            contract.MEMBER_TYPE, contract.member_name_in_set(resource.name, key), resource.urn,
            {"name": name, "address": address, "protocolPort": entry.get("protocol_port"),
             "monitorPort": entry.get("monitor_port"), "subnetId": entry.get("subnet_id"),
             "weight": entry.get("weight"), "adminStateUp": entry.get("admin_state_up", True),
             "poolId": props.get("pool_id"), "tags": props.get("tags")},
            resource.parent, list(resource.dependencies or []), {"poolId": pool_dependencies}, resource))
    return views


def unknown_sets(resources: list[Any]) -> list[Any]:
    """The member sets among ``resources`` whose member list is not known (at preview)."""
    return [r for r in resources if is_member_set(r) and not isinstance(_members(r), list)]

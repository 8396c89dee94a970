"""The members of a member set (``memberUpdates: batch``) as the pack judges them: one view per member, shaped like
the ``openstack.loadbalancer.Member`` resource it stands for under ``memberUpdates: per-member`` (that type token,
the name that resource would have, its camelCase properties, its pool dependency, its zone), so that every rule that
judges members judges each member of a set as it judges a member resource, with the same messages. A violation about
one of them points at the set (its URN), which is what the engine registered.

A set whose member list is not known at preview (a whole list computed from Outputs) yields no view; the rules that
count members skip its pool then (:func:`unknown_sets`) rather than report it empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ha_endpoint.core import contract

from .model import UNKNOWN, plain


@dataclass
class MemberView:
    """One member of a member set, as a member resource (``resource_type``, ``name``, ``urn``, ``props``,
    ``parent``, ``dependencies``, ``property_dependencies``: what the rules read of a resource)."""

    resource_type: str
    name: str
    urn: str
    props: dict[str, Any]
    parent: Any
    dependencies: list[Any] = field(default_factory=list)
    property_dependencies: dict[str, list[Any]] = field(default_factory=dict)
    member_set: Optional[Any] = None


def is_member_set(resource: Any) -> bool:
    return resource.resource_type in contract.MEMBER_SET_TYPES


def _members(resource: Any) -> Any:
    return plain(resource.props).get("members") if resource.props is not None else None


def member_views(resource: Any) -> list[MemberView]:
    """One view per member of the member set ``resource``."""
    props = plain(resource.props) if resource.props is not None else {}
    members = props.get("members")
    if not isinstance(members, list):
        return []
    pool_dependencies = list((resource.property_dependencies or {}).get("pool_id", []) or [])
    views = []
    for entry in members:
        if not isinstance(entry, dict):
            continue
        address, name = entry.get("address"), entry.get("name")
        key = address if isinstance(address, str) and address != UNKNOWN else f"by-name-{name}"
        views.append(MemberView(
            contract.MEMBER_TYPE, contract.member_name_in_set(resource.name, key), resource.urn,
            {"name": name, "address": address, "protocolPort": entry.get("protocol_port"),
             "monitorPort": entry.get("monitor_port"), "subnetId": entry.get("subnet_id"),
             "weight": entry.get("weight"), "poolId": props.get("pool_id"), "tags": props.get("tags")},
            resource.parent, list(resource.dependencies or []), {"poolId": pool_dependencies}, resource))
    return views


def unknown_sets(resources: list[Any]) -> list[Any]:
    """The member sets among ``resources`` whose member list is not known (at preview)."""
    return [r for r in resources if is_member_set(r) and not isinstance(_members(r), list)]

"""A zone's load balancer created in one call (``loadBalancerCreate: single-call``) as the pack judges it: one view per
part of the LoadBalancerTree, shaped like the ``openstack.loadbalancer`` resource it stands for under the provider's
resources (``LoadBalancer``, ``Listener``, ``Pool``, ``Monitor``: that type token, the name, the camelCase properties,
the dependency on the part it belongs to, the zone), so that every rule that judges load balancers, listeners, pools
and health monitors judges each part of a tree as it judges such a resource, with the same messages. A violation
about a part points at the tree (its URN), which is what the engine registered.

Every part is an object of its own, and the parts refer to one another as the provider's resources do: a listener's
``loadbalancerId`` depends on its load balancer's view, a pool's ``listenerId`` on its listener's, a monitor's
``poolId`` on its pool's. What the program takes from the tree itself (a member set's ``pool_id``, a member beside the
endpoint taking a pool id out of the tree's ``pool_ids``) depends on the tree, which stands for each of its parts
(:func:`refers_to`); a member set names its pool (``pool_name``: :func:`policies.member_sets.set_pool`). An id the
tree's outputs give (``listener_ids``, ``pool_ids``, ``monitor_ids``, by port, after the update) is the part's ``id``
and the id its children refer to; before, that id is unknown, as a provider resource's is at preview.

A listener that is not known at preview (the whole list computed from Outputs, or one entry, its pool or its monitor
not known) yields no view; the rules that count listeners, pools or monitors skip such a tree's zone then
(:func:`unknown_trees`) rather than report them missing.
"""

from __future__ import annotations

from typing import Any, Optional

from ha_endpoint.core import contract

from .model import UNKNOWN, PartView, as_int, props_of


def is_tree(resource: Any) -> bool:
    return resource.resource_type in contract.TREE_TYPES


def _known(entry: Any) -> bool:
    """A listener entry whose parts are all known: itself and its pool (mappings), its monitor (a mapping or None)."""
    return isinstance(entry, dict) and isinstance(entry.get("pool"), dict) and (
        entry.get("monitor") is None or isinstance(entry.get("monitor"), dict))


def tree_views(resource: Any) -> list[PartView]:
    """One view per part of the load balancer tree ``resource``: its load balancer, then for each listener that is
    known the listener, its pool and its health monitor (when it has one). The members a listener lists are left out:
    the member set of its pool gives them (:func:`policies.member_sets.member_views`)."""
    props = props_of(resource)
    tags = props.get("tags")

    def part(token: str, name: Any, fallback: str, values: dict[str, Any], links: dict[str, list[Any]]
             ) -> PartView:
        return PartView(token, name if isinstance(name, str) and name else fallback, resource.urn, values,
                        resource.parent, list(resource.dependencies or []), links, resource)

    balancer = part(contract.LOADBALANCER_TYPE, props.get("name"), resource.name,
                    {"name": props.get("name"), "availabilityZone": props.get("availability_zone"),
                     "vipSubnetId": props.get("vip_subnet_id"),
                     "loadbalancerProvider": props.get("loadbalancer_provider"), "tags": tags,
                     "description": props.get("description")}, {})
    views = [balancer]
    listeners = props.get("listeners")
    for index, entry in enumerate(listeners if isinstance(listeners, list) else []):
        if not _known(entry):
            continue
        port = as_int(entry.get("protocol_port"))
        where = f"{resource.name}/listeners[{index}]"
        listener_id, pool_id, monitor_id = (_part_id(props, key, port)
                                            for key in ("listener_ids", "pool_ids", "monitor_ids"))
        listener = part(contract.LISTENER_TYPE, entry.get("name"), where,
                        {"name": entry.get("name"), "protocol": entry.get("protocol"),
                         "protocolPort": entry.get("protocol_port"), "allowedCidrs": entry.get("allowed_cidrs"),
                         "defaultTlsContainerRef": entry.get("default_tls_container_ref"), "loadbalancerId": UNKNOWN,
                         "tags": tags, "description": entry.get("description")} | _id(listener_id),
                        {"loadbalancerId": [balancer]})
        pool_props = entry["pool"]
        pool = part(contract.POOL_TYPE, pool_props.get("name"), f"{where}.pool",
                    {"name": pool_props.get("name"), "protocol": pool_props.get("protocol"),
                     "lbMethod": pool_props.get("lb_method"), "listenerId": listener_id, "tags": tags,
                     "description": pool_props.get("description")} | _id(pool_id),
                    {"listenerId": [listener]})
        views += [listener, pool]
        monitor = entry.get("monitor")
        if isinstance(monitor, dict):
            views.append(part(contract.MONITOR_TYPE, monitor.get("name"), f"{where}.monitor",
                              {"name": monitor.get("name"), "poolId": pool_id, "type": monitor.get("type"),
                               "delay": monitor.get("delay"), "timeout": monitor.get("timeout"),
                               "maxRetries": monitor.get("max_retries"),
                               "maxRetriesDown": monitor.get("max_retries_down"), "urlPath": monitor.get("url_path"),
                               "expectedCodes": monitor.get("expected_codes")} | _id(monitor_id),
                              {"poolId": [pool]}))
    return views


def _part_id(props: dict[str, Any], output: str, port: Optional[int]) -> Any:
    """The id the tree's output ``output`` (port -> id) gives the part of listener ``port``, else UNKNOWN."""
    ids = props.get(output)
    value = ids.get(str(port)) if isinstance(ids, dict) and port is not None else None
    return value if isinstance(value, str) and value else UNKNOWN


def _id(value: Any) -> dict[str, Any]:
    return {"id": value} if value is not UNKNOWN else {}


def refers_to(dependency: Any, target: Any) -> bool:
    """Whether a dependency the engine recorded (``dependency``) is one on ``target``: ``target`` itself, or the tree
    ``target`` is a part of (a value taken from a tree's outputs depends on the tree, which stands for each part)."""
    return dependency is target or (isinstance(target, PartView) and target.whole is not None
                                    and dependency is target.whole)


def part_of(tree: Any, token: str, name: Any, parts: list[Any]) -> Optional[PartView]:
    """The part of ``tree`` among ``parts`` of type ``token`` named ``name``, or None."""
    return next((view for view in parts if isinstance(view, PartView) and view.whole is tree
                 and view.resource_type == token and view.name == name), None)


def unknown_trees(resources: list[Any]) -> list[Any]:
    """The load balancer trees among ``resources`` with a listener that is not known (at preview)."""
    found = []
    for resource in resources:
        if is_tree(resource):
            listeners = props_of(resource).get("listeners")
            if not isinstance(listeners, list) or not all(_known(entry) for entry in listeners):
                found.append(resource)
    return found

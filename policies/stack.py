"""The stack as the pack sees it: each HaEndpoint with its children, their zones, and who depends on whom.

Resources are recognised by the shared naming contract (:mod:`ha_endpoint.core.contract`): type tokens, and names
derived from the endpoint name, the zone and the listener port. A child's zone comes from its EndpointZone ancestor, or
else from its name (``<endpoint>-<zone>-...``). Relations come from what the engine knows at preview: parents,
dependencies and property dependencies (a member's ``poolId`` is unknown before the pool exists, but the engine already
knows the member's ``poolId`` depends on that pool).

Anything with ``resource_type``, ``name``, ``urn``, ``props``, ``parent``, ``dependencies`` and
``property_dependencies`` (e.g. ``pulumi_policy.PolicyResource``) is a resource here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Optional

from ha_endpoint.core import contract
from ha_endpoint.core.contract import natural_key
from ha_endpoint.core.facts import EndpointFacts

from .declared import Declared, read_declared
from .model import plain


def props(resource: Any) -> dict[str, Any]:
    """The resource's properties as plain data (cached on the resource), unknown values as ``UNKNOWN``."""
    return _cached(resource, "_ha_plain_props", lambda: plain(resource.props) if resource.props is not None else {})


def declared(resource: Any) -> Declared:
    """An HaEndpoint's declared facts, parsed once per run (cached on the resource, which every stack rule of the
    run is handed) into the one view the rules read."""
    return _cached(resource, "_ha_declared", lambda: read_declared(props(resource)))


def _cached(resource: Any, key: str, compute: Any) -> Any:
    cached = getattr(resource, key, None)
    if cached is None:
        cached = compute()
        try:
            setattr(resource, key, cached)
        except AttributeError:  # pragma: no cover - objects without a __dict__
            pass
    return cached


def stack_name(urn: str) -> str:
    """The stack part of a URN (``urn:pulumi:<stack>::<project>::<type>::<name>``)."""
    head = urn.split("::", 1)[0]
    return head.split(":", 2)[2] if head.count(":") >= 2 else ""


def under_endpoint(urn: str) -> bool:
    """True when the URN's type chain puts the resource inside an HaEndpoint (any depth)."""
    parts = urn.split("::")
    return len(parts) >= 4 and contract.ENDPOINT_TYPE in parts[2].split("$")[:-1]


def ancestors(resource: Any) -> Iterable[Any]:
    parent = resource.parent
    seen = set()
    while parent is not None and id(parent) not in seen:
        seen.add(id(parent))
        yield parent
        parent = parent.parent


def direct_dependencies(resource: Any, prop: Optional[str] = None) -> list[Any]:
    """The resources a property of ``resource`` depends on (all its dependencies when ``prop`` is None)."""
    if prop is not None:
        return list((resource.property_dependencies or {}).get(prop, []) or [])
    found = list(resource.dependencies or [])
    for deps in (resource.property_dependencies or {}).values():
        found.extend(deps or [])
    return _unique(found)


def transitive_dependencies(resource: Any, prop: Optional[str] = None) -> list[Any]:
    """Every resource ``resource`` (or one of its properties) waits for, directly or through others."""
    start = direct_dependencies(resource, prop)
    seen: dict[int, Any] = {}
    stack = list(start)
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen[id(current)] = current
        stack.extend(direct_dependencies(current))
    return list(seen.values())


def _unique(resources: Iterable[Any]) -> list[Any]:
    seen: dict[int, Any] = {}
    for resource in resources:
        seen.setdefault(id(resource), resource)
    return list(seen.values())


@dataclass
class Endpoint:
    """One HaEndpoint and everything parented under it; ``facts`` are its declared facts when they are usable
    (see :mod:`policies.declared`: ``declared.problems`` and ``declared.unknown`` say why not)."""

    resource: Any
    declared: Declared
    children: list[Any] = field(default_factory=list)

    @property
    def facts(self) -> Optional[EndpointFacts]:
        return self.declared.facts

    @property
    def name(self) -> str:
        return self.facts.name if self.facts is not None else self.resource.name

    @property
    def azs(self) -> list[str]:
        return list(self.facts.zones) if self.facts is not None else []

    def of_type(self, token: str) -> list[Any]:
        """The children of one type, by name (registration order varies from run to run)."""
        return sorted((child for child in self.children if child.resource_type == token), key=_natural)

    def named(self, name: str, token: Optional[str] = None) -> Optional[Any]:
        for child in self.children:
            if child.name == name and (token is None or child.resource_type == token):
                return child
        return None

    def zone_of(self, resource: Any) -> Optional[str]:
        """The configured zone a child belongs to (EndpointZone ancestor first, then its name), else None."""
        by_component = {contract.zone_component_name(self.name, key): key for key in self.azs}
        for ancestor in ancestors(resource):
            if ancestor.resource_type == contract.ZONE_TYPE:
                if ancestor.name in by_component:
                    return by_component[ancestor.name]
                break
        best = None
        for key in self.azs:
            if resource.name.startswith(f"{self.name}-{key}-") and (best is None or len(key) > len(best)):
                best = key
        return best

    def in_zone(self, token: str, zone: str) -> list[Any]:
        return [child for child in self.of_type(token) if self.zone_of(child) == zone]

    def provider(self, zone: Optional[str]) -> Optional[str]:
        """The Octavia provider serving ``zone``: its load balancer's ``loadbalancerProvider``, else the endpoint's
        declared one (also for a child of no zone)."""
        declared = self.facts.load_balancer_provider if self.facts is not None else None
        if zone is None:
            return declared
        providers = [props(lb).get("loadbalancerProvider") for lb in self.in_zone(contract.LOADBALANCER_TYPE, zone)]
        return next((p for p in providers if isinstance(p, str) and p), declared)

    def readiness(self, zone: str) -> Optional[Any]:
        return self.named(contract.readiness_name(self.name, zone))


def _natural(resource: Any) -> list[Any]:
    return natural_key(resource.name)


def endpoints(resources: Iterable[Any]) -> list[Endpoint]:
    """Every HaEndpoint of the stack with its descendants, in registration order."""
    resources = list(resources)
    found: dict[int, Endpoint] = {}
    ordered: list[Endpoint] = []
    for resource in resources:
        if resource.resource_type == contract.ENDPOINT_TYPE:
            endpoint = Endpoint(resource, declared(resource))
            found[id(resource)] = endpoint
            ordered.append(endpoint)
    for resource in resources:
        if resource.resource_type == contract.ENDPOINT_TYPE:
            continue
        for ancestor in ancestors(resource):
            if id(ancestor) in found:
                found[id(ancestor)].children.append(resource)
                break
    return ordered


def judged(resources: Iterable[Any]) -> Iterator[tuple[Endpoint, EndpointFacts]]:
    """Each HaEndpoint whose declared facts are usable, with them (the others are ha-endpoint-declared-facts' and
    ha-endpoint-facts-known-at-preview's to report)."""
    for endpoint in endpoints(resources):
        if endpoint.facts is not None:
            yield endpoint, endpoint.facts

"""The facts an HaEndpoint declares, as the pack reads them: :class:`ha_endpoint.core.facts.EndpointFacts`, validated.

The component records its facts once, in its ``facts`` output (what the engine hands stack policies). Reading them
gives one of three answers, never a crash: the typed facts; the problems that make them unusable (missing, or not
of the model's shape: a member ``az`` given as a list, a port as text); or the paths of the facts not known at
preview (an input the program computes from another resource, e.g. a subnet created in the same stack), which the
component checks itself before it creates any load balancer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ha_endpoint.core.facts import EndpointFacts, FactsProblem, parse_facts

from .model import UNKNOWN


@dataclass(frozen=True)
class Declared:
    """What reading one HaEndpoint's facts gave: ``facts`` when usable, else ``problems`` or ``unknown`` paths."""

    facts: Optional[EndpointFacts]
    problems: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


def read_declared(props: Any) -> Declared:
    """The declared facts in an HaEndpoint's (plain) properties."""
    raw = props.get("facts") if isinstance(props, dict) else None
    if raw is UNKNOWN:
        return Declared(None, unknown=["facts"])
    if raw is None:
        return Declared(None, problems=["facts: missing from the HaEndpoint's outputs; use a component version that "
                                        "declares its facts (ha_endpoint.core.facts), or this pack's matching version"])
    unknown = unknown_paths(raw, "facts")
    if unknown:
        return Declared(None, unknown=unknown)
    try:
        return Declared(parse_facts(raw))
    except FactsProblem as error:
        return Declared(None, problems=error.problems)


def unknown_paths(value: Any, path: str) -> list[str]:
    """The paths inside ``value`` whose value is not known yet (preview)."""
    if value is UNKNOWN:
        return [path]
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in unknown_paths(item, f"{path}.{key}")]
    if isinstance(value, list):
        return [found for index, item in enumerate(value) for found in unknown_paths(item, f"{path}[{index}]")]
    return []

"""One endpoint per name in a stack: a second HaEndpoint with a name (or a zone prefix) already used is refused.

Every child of an endpoint is named from its ``name`` and AZ names (``k8s-api-az1-lb``) and its URN carries its type
chain, not its parent's name: two endpoints called ``k8s-api`` in one program would register each of their ~60
children twice under one URN, and their security groups, load balancers and floating IPs would carry the same names
in the cloud, where the component tells its own objects by name and stack. Renaming one silently (a suffix) would
hide what is almost always a copied block and move every URN of it when the other one goes, so it is refused with the
fix instead. Names also collide through a zone prefix (``a`` with zone ``b-c`` and ``a-b`` with zone ``c`` both make
``a-b-c-lb``): that is refused too.

The names are remembered per program run: per resource monitor (one per ``pulumi up`` or preview; the test harness
makes a new one for each mock program it runs in the same process).
"""

from __future__ import annotations

import weakref
from typing import Any, Iterable

from pulumi.runtime import settings

from ..core.errors import ConfigError, Problem

_CLAIMS: "weakref.WeakKeyDictionary[Any, dict[str, str]]" = weakref.WeakKeyDictionary()
_UNKEYED: dict[str, str] = {}


def _claims() -> dict[str, str]:
    monitor = getattr(settings.SETTINGS, "monitor", None)
    if monitor is None:
        return _UNKEYED
    try:
        return _CLAIMS.setdefault(monitor, {})
    except TypeError:  # a monitor that cannot be weakly referenced: keep the names for the process
        return _UNKEYED


def claim(name: str, azs: Iterable[str], root: str) -> None:
    """Record that this program's next endpoint is ``name`` with zones ``azs`` (configured at ``root``); raise
    :class:`ConfigError` when an endpoint already registered in this program uses the name or a zone prefix."""
    claims = _claims()
    prefixes = {f"{name}-{az}": f"zone {az}" for az in azs}
    problems = []
    clash = next(((prefix, what) for prefix, what in sorted(prefixes.items()) if prefix in claims), None)
    if name in claims and not claims[name].startswith("zone "):
        problems.append(Problem(f"{root}.name", f"endpoint name '{name}' is already used by another HaEndpoint in "
                                f"this stack ({claims[name]}); every resource of an endpoint is named after it, so "
                                "both would register the same resources: give each endpoint its own name"))
    elif name in claims or clash is not None:
        prefix, what = (name, "this endpoint") if name in claims else clash
        problems.append(Problem(f"{root}.name", f"the resources of {what} would be named {prefix}-..., like those of "
                                f"{claims[prefix]}: rename this endpoint so that its name followed by one of its zones is "
                                "not the other's name followed by one of its zones"))
    if problems:
        raise ConfigError(problems)
    owner = f"the endpoint configured at {root}"
    claims[name] = owner
    for prefix, what in prefixes.items():
        claims[prefix] = f"{what} of {owner}"

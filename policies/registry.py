"""Where each rule of the pack is declared, once, with its metadata: the :func:`rule` decorator.

A rule is a pure function from what the engine shows to violations: ``check(resources, config)`` for a stack rule,
``check_resource(resource_type, props, name, urn, config)`` for a resource rule (``resource_types`` says which types
it judges). The decorator records its name, enforcement level, severity, description, configuration schema (with
defaults) and remediation (the function's docstring, else its module's) in :data:`RULES`, in the order the rules are
declared; :mod:`policies.pack` wraps each in a ``pulumi_policy`` policy.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Callable

RULES: list["Rule"] = []
"""Every rule declared so far, in declaration order (the order :mod:`policies.rules` imports them)."""


@dataclass
class Rule:
    """One policy of the pack, as declared (mutable only so that a test can make its check fail)."""

    name: str
    description: str
    enforcement: str
    severity: str
    kind: str
    """``stack`` (``check(resources, config)``) or ``resource`` (``check_resource(...)``)."""
    check: Callable[..., Any]
    config: dict[str, dict[str, Any]] = field(default_factory=dict)
    resource_types: tuple[str, ...] = ()
    remediation: str = ""

    def check_resource(self, *args: Any) -> Any:
        """A resource rule's verdict on one resource (``resource_type, props, name, urn, config``)."""
        return self.check(*args)


def rule(name: str, description: str, *, enforcement: str = "mandatory", severity: str = "high",
         config: dict[str, dict[str, Any]] | None = None,
         resource_types: tuple[str, ...] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare the decorated function as the rule ``name`` (a resource rule when ``resource_types`` is given)."""

    def register(check: Callable[..., Any]) -> Callable[..., Any]:
        doc = check.__doc__ or sys.modules[check.__module__].__doc__ or ""
        RULES.append(Rule(name, description, enforcement, severity, "resource" if resource_types else "stack", check,
                          dict(config or {}), tuple(resource_types), doc.strip()))
        return check

    return register


def whole_number(default: int, description: str, minimum: int = 1) -> dict[str, Any]:
    """The JSON schema of a rule's whole-number setting (``config`` of :func:`rule`)."""
    return {"type": "integer", "minimum": minimum, "default": default, "description": description}

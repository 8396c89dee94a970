"""Run one rule, or the whole pack as the analyzer does, and collect the violation messages."""

from __future__ import annotations

from typing import Any, Optional

from policies.model import plain, with_defaults
from policies.pack import policies
from pulumi_policy import ResourceValidationArgs, StackValidationArgs, StackValidationPolicy


def run_rule(rule: Any, resources: list[Any], config: Optional[dict[str, Any]] = None) -> list[str]:
    """The messages one rule reports for these resources (resource rules run on each resource)."""
    settings = with_defaults(config, rule.CONFIG)
    if rule.KIND == "stack":
        return [v.message for v in rule.check(list(resources), settings)]
    found = []
    for resource in resources:
        if resource.resource_type in rule.RESOURCE_TYPES:
            found += [v.message for v in rule.check_resource(resource.resource_type, plain(resource.props),
                                                             resource.name, resource.urn, settings)]
    return found


def run_pack(resources: list[Any], config: Optional[dict[str, dict[str, Any]]] = None) -> list[tuple[str, str]]:
    """(policy name, message) for every violation the pack's policy objects report, as the analyzer calls them."""
    found: list[tuple[str, str]] = []
    for policy in policies():
        policy_config = (config or {}).get(policy.name)

        def report(message: str, urn: Optional[str] = None, _name: str = policy.name) -> None:
            found.append((_name, message))

        if isinstance(policy, StackValidationPolicy):
            policy.validate(StackValidationArgs(list(resources), policy_config), report)
        else:
            for resource in resources:
                args = ResourceValidationArgs(resource.resource_type, resource.props, resource.urn, resource.name,
                                              resource.opts, None, policy_config)
                policy.validate(args, report)
    return found

"""Run one rule, or the whole pack as the analyzer does, and collect the violation messages."""

from __future__ import annotations

from typing import Any, Optional

from policies.model import plain, with_defaults
from policies.pack import policies
from pulumi_policy import ResourceValidationArgs, StackValidationArgs, StackValidationPolicy


def run_rule(rule: Any, resources: list[Any], config: Optional[dict[str, Any]] = None) -> list[str]:
    """The messages one rule reports for these resources (resource rules run on each resource)."""
    settings = with_defaults(config, rule.config)
    if rule.kind == "stack":
        return [v.message for v in rule.check(list(resources), settings)]
    found = []
    for resource in resources:
        if resource.resource_type in rule.resource_types:
            found += [v.message for v in rule.check_resource(resource.resource_type, plain(resource.props),
                                                             resource.name, resource.urn, settings)]
    return found


def run_pack(resources: list[Any], config: Optional[dict[str, Any]] = None,
             inputs: Optional[dict[str, Any]] = None) -> list[tuple[str, str]]:
    """(policy name, message) for every violation the pack's policy objects report, called as the engine does:
    first each resource policy on every resource's inputs (``inputs``: URN -> props, default: the resource's
    props), then each stack policy on all resources. ``config`` is the pack configuration (policy name -> settings
    or enforcement level); a disabled policy is not called, as in the analyzer."""
    found: list[tuple[str, str]] = []
    pack = policies()

    def settings(name: str) -> Optional[dict[str, Any]]:
        value = (config or {}).get(name)
        if isinstance(value, dict):
            return {key: item for key, item in value.items() if key != "enforcementLevel"}
        return None

    def disabled(name: str) -> bool:
        value = (config or {}).get(name)
        level = value.get("enforcementLevel") if isinstance(value, dict) else value
        return level == "disabled"

    def reporter(name: str):
        def report(message: str, urn: Optional[str] = None) -> None:
            found.append((name, message))
        return report

    for policy in pack:
        if isinstance(policy, StackValidationPolicy) or disabled(policy.name):
            continue
        for resource in resources:
            props = (inputs or {}).get(resource.urn, resource.props)
            args = ResourceValidationArgs(resource.resource_type, props, resource.urn, resource.name,
                                          resource.opts, None, settings(policy.name))
            policy.validate(args, reporter(policy.name))
    for policy in pack:
        if isinstance(policy, StackValidationPolicy) and not disabled(policy.name):
            policy.validate(StackValidationArgs(list(resources), settings(policy.name)), reporter(policy.name))
    order = [policy.name for policy in pack]
    return sorted(found, key=lambda item: order.index(item[0]))

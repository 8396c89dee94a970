"""Wrap the rules in ``pulumi_policy`` policy objects. Building them starts nothing; ``__main__.py`` serves them."""

from __future__ import annotations

from typing import Any

from pulumi_policy import (
    EnforcementLevel, Policy, PolicyConfigSchema, ReportViolation, ResourceValidationArgs,
    ResourceValidationPolicy, Severity, StackValidationArgs, StackValidationPolicy,
)

from .model import plain, with_defaults
from .registry import Rule
from .rules import RULES

PACK_NAME = "ha-endpoint"


def _stack_policy(rule: Rule) -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        config = with_defaults(args.get_config(), rule.config)
        try:
            violations = rule.check(list(args.resources), config)
        except Exception as error:  # noqa: BLE001 - a verdict, never a crash (see unfinished)
            report_violation(unfinished(rule, error), None)
            return
        for violation in violations:
            report_violation(violation.message, violation.urn)

    return StackValidationPolicy(name=rule.name, description=rule.description, validate=validate, **_common(rule))


def _resource_policy(rule: Rule) -> ResourceValidationPolicy:
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        if args.resource_type not in rule.resource_types:
            return
        config = with_defaults(args.get_config(), rule.config)
        try:
            violations = rule.check_resource(args.resource_type, plain(args.props), args.name, args.urn, config)
        except Exception as error:  # noqa: BLE001 - a verdict, never a crash (see unfinished)
            report_violation(unfinished(rule, error), None)
            return
        for violation in violations:
            report_violation(violation.message, None)

    return ResourceValidationPolicy(name=rule.name, description=rule.description, validate=validate,
                                    **_common(rule))


def unfinished(rule: Rule, error: Exception) -> str:
    """The violation a rule that failed reports instead of its verdict. The rules are built to give a verdict on any
    input (tests/policies/test_pack_never_crashes.py); should one still fail, the preview names the policy and the
    error at the policy's enforcement level instead of aborting the whole pack with a traceback, and what the rule
    did not judge is not passed silently."""
    return (f"policy {rule.name} could not finish ({type(error).__name__}: {error}), so it judged nothing in this "
            "stack; this is a bug of the policy pack: report it with this preview's output")


def _common(rule: Rule) -> dict[str, Any]:
    return {
        "enforcement_level": EnforcementLevel(rule.enforcement),
        "display_name": rule.name.replace("ha-endpoint-", "").replace("-", " ").capitalize(),
        "severity": Severity(rule.severity),
        "config_schema": PolicyConfigSchema(properties=dict(rule.config)) if rule.config else None,
        "remediation_steps": rule.remediation or None,
    }


def policies() -> list[Policy]:
    """Every policy of the pack, in a stable order."""
    return [_stack_policy(rule) if rule.kind == "stack" else _resource_policy(rule) for rule in RULES]

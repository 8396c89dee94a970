"""The pipeline: the endpoint's arguments to a checked, typed plan and the facts it declares, in one function.

Data flows one way, each module visited once: validate the arguments (:mod:`ha_endpoint.core.validation`; the
``backend`` key names a registered backend, :mod:`ha_endpoint.backends`) -> decide the cloud the gates poll
(:func:`poll_target`) -> ask the cloud (the lookups of :mod:`ha_endpoint.cloud.lookups`, then what only openstacksdk
answers: the backend's preview, and the DNS zone's records, :mod:`ha_endpoint.cloud.catalog`; every problem of all
at once) -> resolve the members on the facts, once (:func:`ha_endpoint.core.cloud_facts.resolve_members`) -> check
what the cloud facts reveal (:mod:`ha_endpoint.core.checks`) -> plan (:mod:`ha_endpoint.core.plan`) -> declare the
facts (:mod:`ha_endpoint.core.declared`) -> refuse a layout one AZ's loss takes down.

:func:`run` is that flow. :func:`plan_endpoint` is how :class:`ha_endpoint.HaEndpoint` uses it, on the arguments
HaEndpoint checked once and read the member sources of: plain ones go through the rest of the flow at once
(:func:`planned`, what :func:`run` does after validating); with arguments that are Outputs of resources declared beside the component it calls :func:`run` inside
one ``apply`` over the resolved arguments (the same checks, once the values are known), and plans the resources'
names at once from what is known (:mod:`.deferred`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

import pulumi
from pydantic import BaseModel

from .. import backends
from ..cloud.lookups import lookup_cloud_facts
from ..cloud.catalog import ask_at_preview
from ..core.args import EndpointArgs
from ..core.cloud_facts import CloudFacts, adopted_record_taken_over, resolve_members
from ..core.declared import endpoint_facts
from ..core.errors import CloudLookupError, ConfigError, Problem
from ..core.facts import EndpointFacts
from ..core.checks import check_cloud_facts, notices
from ..core.identity import StackIdentity
from ..core.inputs import is_output
from ..core.plan import UNNAMED_STACK, EndpointPlan, PollTarget, make_plan
from ..core.validation import DEFAULT_ROOT, load_endpoint_args
from .deferred import declared_facts, structural_facts


@dataclass(frozen=True)
class Context:
    """Where the pipeline runs: the key prefix of its messages (``root``), the provider its lookups use
    (``invoke_opts``), the stack that owns its objects (``identity``), and the clouds.yaml entry and region the gates
    poll when the caller names them (``cloud``, ``region``; see :func:`poll_target`)."""

    root: str = DEFAULT_ROOT
    invoke_opts: Optional[pulumi.InvokeOptions] = None
    identity: StackIdentity = UNNAMED_STACK
    cloud: Optional[str] = None
    region: Optional[str] = None


def poll_target(args: EndpointArgs, context: Context) -> PollTarget:
    """Which cloud the gates and drains poll, and the preview checks ask (see
    :class:`ha_endpoint.core.plan.PollTarget`): given explicitly (``context.cloud``, else ``readiness.cloud``), else
    the explicit provider's, else the stack's."""
    cloud, region = context.cloud or args.readiness.cloud, context.region or args.readiness.region
    if cloud:
        return PollTarget(cloud, region, "readiness")
    if context.invoke_opts is not None and context.invoke_opts.provider is not None:
        if region:
            raise ConfigError([Problem(f"{context.root}.readiness.region", "readiness.region needs readiness.cloud "
                                       "too: name the clouds.yaml entry the gates poll, or remove the region to poll "
                                       "the provider's own cloud and region")])
        return PollTarget(None, None, "provider")
    return PollTarget(None, region, "stack")


@dataclass(frozen=True)
class Planned:
    """What the pipeline gives: the plan, and the facts the endpoint declares to the policy pack."""

    plan: EndpointPlan
    facts: EndpointFacts


def run(raw: Any, context: Context = Context()) -> Planned:
    """The pipeline over plain arguments (an :class:`EndpointArgs` or the raw configuration): raises
    :class:`ha_endpoint.ConfigError` or :class:`ha_endpoint.CloudLookupError` listing every problem."""
    return planned(load_endpoint_args(raw, context.root, backends.REGISTRY), context)


def planned(args: EndpointArgs, context: Context) -> Planned:
    """The pipeline after validation: ask the cloud, then :func:`decide`."""
    return decide(args, ask_cloud(args, context), context)


def ask_cloud(args: EndpointArgs, context: Context) -> CloudFacts:
    """The cloud facts of ``args``' plain values (the lookups), then what the backend asks at preview (Octavia: its
    AZs, the certificates) and the A records the DNS zone holds already (how the endpoint's records are replaced
    depends on them); every problem of all in one :class:`CloudLookupError`, the backend's first (an unknown AZ is
    named before the network-hint problem it causes)."""
    target = poll_target(args, context)
    if args.member_sources is not None:  # never planned before the member sources are read (HaEndpoint reads them)
        raise ConfigError([Problem(f"{context.root}.memberSources", "the member sources were not read, so the plan "
                                   "would miss their members; give the pipeline the arguments "
                                   "ha_endpoint.members.read_members returns (HaEndpoint does)")])
    backend = backends.lookup(args.backend, context.root)
    try:
        facts, lookups = lookup_cloud_facts(args, context.root, context.invoke_opts, context.identity), []
    except CloudLookupError as error:
        facts, lookups = None, error.problems
    found = backend.preview(args, target, context.root, context.identity.tag, facts.dns_zone_id if facts else None)
    answers = ask_at_preview(args.dns.dns_zone if args.dns is not None else None, target, context.root,
                             facts.dns_zone_id if facts else None)
    if found.problems or answers.problems or lookups:
        raise CloudLookupError(found.problems + answers.problems + lookups)
    facts = replace(facts, members_down=found.members_down, agent_held=found.agent_held)
    if found.adopted:
        # an adopted zone's floating IP is the one on its load balancer's VIP: associated, never created or deleted
        floating = {**{az: adopted.floating_ip for az, adopted in found.adopted.items()
                       if adopted.floating_ip is not None and not isinstance(args.zones[az].floating_ip, str)},
                    **facts.floating_ips}
        facts = replace(facts, adopted=dict(found.adopted), adopted_record=found.adopted_record,
                        floating_ips=floating)
    facts = facts if args.dns is None else replace(facts, published=answers.published)
    if facts.adopted_record is not None and not adopted_record_taken_over(args, facts):
        facts = replace(facts, adopted_record=None)  # a record set at the name that is not the adopted one
    return facts


def checked_plan(args: EndpointArgs, facts: CloudFacts, context: Context,
                 preflight: Optional[pulumi.Output] = None) -> EndpointPlan:
    """The plan of ``args`` on ``facts`` once the checks that need the facts passed (values not known yet are
    ``preflight``'s to judge)."""
    target = poll_target(args, context)
    members = resolve_members(args, facts)  # every member's address, subnet and port, resolved once
    backend = backends.lookup(args.backend, context.root)
    problems = check_cloud_facts(args, facts, members, context.root, context.identity, backend.rules)
    said = notices(args, context.root)
    problems += backend.rules.cloud_facts(args, facts, members, context.root)  # the backend's own, after the shared
    if problems:
        raise ConfigError(problems)
    said += backend.notices(args, context.root)
    settings = {key: getattr(args, key) for key in backend.settings}
    return replace(make_plan(args, facts, members, target, context.identity, preflight, settings),
                   notices=tuple(said))


def decide(args: EndpointArgs, facts: CloudFacts, context: Context = Context()) -> Planned:
    """Check, plan, declare and refuse AZ loss, for arguments whose values are all known (pure: no cloud call)."""
    plan = checked_plan(args, facts, context)
    declared = endpoint_facts(plan)
    _refuse_az_loss(declared, context.root)
    return Planned(plan, declared)


def _refuse_az_loss(declared: EndpointFacts, root: str) -> None:
    """Refuse, before anything is created, a layout where one AZ's loss takes another zone down for certain (the
    mandatory findings of :meth:`ha_endpoint.core.facts.EndpointFacts.az_loss`; the pack reports the others)."""
    problems = [Problem(f"{root}.zones.{finding.zones[0]}.subnet", finding.message)
                for finding in declared.az_loss() if finding.mandatory]
    if problems:
        raise ConfigError(problems)


Path = tuple
"""Where an input is inside the arguments: field names, list indexes and map keys (``("zones", "az1", "subnet")``)."""


def deferred_inputs(args: EndpointArgs) -> list[tuple[Path, pulumi.Output]]:
    """Every input of ``args`` that is not a plain value yet, with where it is (awaitables become Outputs)."""
    found: list[tuple[Path, pulumi.Output]] = []

    def walk(value: Any, path: Path) -> None:
        if isinstance(value, BaseModel):
            for name in type(value).model_fields:
                walk(getattr(value, name), (*path, name))
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                walk(item, (*path, index))
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, (*path, key))
        elif is_output(value):
            found.append((path, value if isinstance(value, pulumi.Output) else pulumi.Output.from_input(value)))

    walk(args, ())
    return found


def resolved_raw(args: EndpointArgs, values: dict[Path, Any]) -> dict[str, Any]:
    """``args`` as raw settings (snake_case keys; the keys that were given only), each deferred input replaced by its
    value in ``values``."""

    def raw(value: Any, path: Path) -> Any:
        if path in values:
            return values[path]
        if isinstance(value, BaseModel) and not any(known[:len(path)] == path for known in values):
            return value  # nothing deferred inside: kept whole (a member keeps the source it came from)
        if isinstance(value, BaseModel):  # only what was given: a default stays a default
            return {name: raw(getattr(value, name), (*path, name)) for name in type(value).model_fields
                    if name in value.model_fields_set}
        if isinstance(value, (list, tuple)):
            return [raw(item, (*path, index)) for index, item in enumerate(value)]
        if isinstance(value, dict):
            return {key: raw(item, (*path, key)) for key, item in value.items()}
        return value

    return raw(args, ())


def plan_endpoint(args: EndpointArgs, context: Context) -> tuple[EndpointPlan, dict[str, Any]]:
    """The plan HaEndpoint builds from and the facts it records (their dumped form, or one Output per entry when some
    arguments are Outputs), from arguments checked once (:func:`ha_endpoint.core.validation.load_endpoint_args`)
    with their member sources read (:func:`ha_endpoint.members.read_members`). Plain ones go through the rest of the
    pipeline at once (:func:`planned`); with Outputs, :func:`run` runs inside one ``apply`` of the resolved
    arguments, and every load balancer and member port waits for it."""
    pending = deferred_inputs(args)
    if not pending:
        result = planned(args, context)
        return result.plan, result.facts.dump()
    facts = ask_cloud(args, context)  # the plain values' facts, known now: the resources are named from them
    paths = [path for path, _ in pending]
    checked = pulumi.Output.all(*[output for _, output in pending]).apply(
        lambda values: run(resolved_raw(args, dict(zip(paths, values))), context))
    resolved_plan = checked.apply(lambda planned: planned.plan)
    plan = checked_plan(args, structural_facts(args, facts, resolved_plan), context,
                        preflight=checked.apply(lambda _: True))
    return plan, declared_facts(checked.apply(lambda planned: planned.facts.dump()), plan)

"""The pipeline: the endpoint's arguments to a checked, typed plan and the facts it declares, in one function.

Data flows one way: validate the arguments (:mod:`ha_endpoint.core.validation`) -> ask the cloud (the preview checks of
:mod:`ha_endpoint.cloud.octavia_checks` and the lookups of :mod:`ha_endpoint.cloud.lookups`, every problem at once)
-> check what the cloud facts reveal (:mod:`ha_endpoint.core.checks`) -> plan (:mod:`ha_endpoint.core.plan`) ->
declare the facts (:mod:`ha_endpoint.core.declared`) -> refuse a layout one AZ's loss takes down.

:func:`run` is that flow. :func:`plan_endpoint` is how :class:`ha_endpoint.HaEndpoint` uses it: with plain
arguments it calls :func:`run` directly; with arguments that are Outputs of resources declared beside the component
it calls :func:`run` inside one ``apply`` over the resolved arguments (the same checks, once the values are known),
and plans the resources' names at once from what is known (:mod:`.deferred`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

import pulumi

from ..cloud.lookups import lookup_cloud_facts
from ..cloud.octavia_checks import check_octavia, published_records
from ..core.args import EndpointArgs
from ..core.checks import check_cloud_facts, refuse_az_loss
from ..core.cloud_facts import CloudFacts
from ..core.declared import endpoint_facts
from ..core.errors import CloudLookupError, ConfigError
from ..core.facts import EndpointFacts
from ..core.identity import StackIdentity
from ..core.plan import UNNAMED_STACK, EndpointPlan, PollTarget, make_plan
from ..core.validation import DEFAULT_ROOT, load_endpoint_args
from .deferred import declared_facts, deferred_inputs, resolved_raw, structural_facts


OCTAVIA = "octavia"
"""The backend whose load balancers Octavia creates (and so whose AZs and certificates Octavia is asked about)."""


@dataclass(frozen=True)
class Context:
    """Where the pipeline runs: the key prefix of its messages (``root``), the provider its lookups use
    (``invoke_opts``), the cloud its gates poll (``target``, also the one the preview checks ask), the stack that owns
    its objects (``identity``) and the backend serving its zones (``backend``: Octavia's preview checks run for
    ``octavia`` only)."""

    root: str = DEFAULT_ROOT
    invoke_opts: Optional[pulumi.InvokeOptions] = None
    target: PollTarget = PollTarget()
    identity: StackIdentity = UNNAMED_STACK
    backend: str = OCTAVIA


@dataclass(frozen=True)
class Planned:
    """What the pipeline gives: the plan, and the facts the endpoint declares to the policy pack."""

    plan: EndpointPlan
    facts: EndpointFacts


def run(raw: Any, context: Context = Context()) -> Planned:
    """The pipeline over plain arguments (an :class:`EndpointArgs` or the raw configuration): raises
    :class:`ha_endpoint.ConfigError` or :class:`ha_endpoint.CloudLookupError` listing every problem."""
    args = load_endpoint_args(raw, context.root)
    return decide(args, ask_cloud(args, context), context)


def ask_cloud(args: EndpointArgs, context: Context) -> CloudFacts:
    """The cloud facts of ``args``' plain values, and what Octavia's answers tell (its AZs, the certificates), every
    problem of both in one :class:`CloudLookupError`: Octavia's first, then the lookups' (an unknown AZ is named
    before the network-hint problem it causes); then the A records the DNS zone holds already (how the endpoint's
    records are replaced depends on them)."""
    octavia = check_octavia(args, context.target, context.root) if context.backend == OCTAVIA else []
    try:
        facts = lookup_cloud_facts(args, context.root, context.invoke_opts, context.identity)
    except CloudLookupError as error:
        raise CloudLookupError(octavia + error.problems) from None
    if octavia:
        raise CloudLookupError(octavia)
    if args.dns is None:
        return facts
    return replace(facts, published=published_records(context.target, facts.dns_zone_id))


def checked_plan(args: EndpointArgs, facts: CloudFacts, context: Context,
                 preflight: Optional[pulumi.Output] = None) -> EndpointPlan:
    """The plan of ``args`` on ``facts`` once the checks that need the facts passed (values not known yet are
    ``preflight``'s to judge)."""
    problems = check_cloud_facts(args, facts, context.root)
    if problems:
        raise ConfigError(problems)
    return make_plan(args, facts, context.target, context.identity, preflight)


def decide(args: EndpointArgs, facts: CloudFacts, context: Context = Context()) -> Planned:
    """Check, plan, declare and refuse AZ loss, for arguments whose values are all known (pure: no cloud call)."""
    plan = checked_plan(args, facts, context)
    declared = endpoint_facts(plan, context.backend)
    refuse_az_loss(declared, context.root)
    return Planned(plan, declared)


def plan_endpoint(args: EndpointArgs, context: Context) -> tuple[EndpointPlan, dict[str, Any]]:
    """The plan HaEndpoint builds from and the facts it records (their dumped form, or one Output per entry when some
    of the validated ``args`` are Outputs). Plain arguments go through the pipeline at once; with Outputs, :func:`run`
    runs inside one ``apply`` of the resolved arguments, and every load balancer and member port waits for it."""
    pending = deferred_inputs(args)
    if not pending:
        planned = run(args, context)
        return planned.plan, planned.facts.dump()
    facts = ask_cloud(args, context)  # the plain values' facts, known now: the resources are named from them
    paths = [path for path, _ in pending]
    checked = pulumi.Output.all(*[output for _, output in pending]).apply(
        lambda values: run(resolved_raw(args, dict(zip(paths, values))), context))
    resolved_plan = checked.apply(lambda planned: planned.plan)
    plan = checked_plan(args, structural_facts(args, facts, resolved_plan), context,
                        preflight=checked.apply(lambda _: True))
    return plan, declared_facts(checked.apply(lambda planned: planned.facts.dump()), plan)

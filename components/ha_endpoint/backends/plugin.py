"""What a backend is: the seam between the endpoint and what serves one availability zone.

A backend is a :class:`Backend`, registered by name in :mod:`ha_endpoint.backends` and chosen by the ``backend``
configuration key. It asks the cloud at preview what only the cloud can tell about it (:attr:`Backend.preview`: every
problem at once, each naming the key and the fix, and what it holds or adopts), says what it allows but a user should
know (:attr:`Backend.notices`), and turns a zone's plan (:class:`ha_endpoint.core.plan.ZonePlan`)
into resources parented to that zone (:attr:`Backend.serve`), handing back a :class:`ZoneServing`: the address DNS
publishes for the zone, the resource that exists once the zone can take traffic at all (what ``bootstrap``
publication waits for), the zone's readiness resource (named ``contract.readiness_name``; what ``when-ready``
publication waits for) and its verdict, and the zone's outputs. DNS (:mod:`ha_endpoint.resources.dns`), the
publication gate (:class:`ha_endpoint.resources.zone.EndpointZone`) and the pack's generic rules use only this; the backend's name
is declared in every zone's facts (``zones.<az>.backend``), and the pack holds a backend's zones to that backend's
own rules alone. Between runs, the DNS watcher (``python -m ha_endpoint.watch``) asks the backend that owns a zone
of the endpoint's outputs how to watch it (:attr:`Backend.watched`, :class:`Watched`, asked through
:mod:`ha_endpoint.backends.watching`); the package's provider host serves the backend's own dynamic resources
(:attr:`Backend.hosted_types`). The zones' member gates and drains poll and write through the backend's member client
(:attr:`Backend.status_source`), which they find in the registry when they run (:mod:`ha_endpoint.gates.source`), and
the member agent (``python -m ha_endpoint.agent``) writes through its own (:attr:`Backend.agent`, :class:`MemberAgent`).

Also here, for every backend: :func:`poll_inputs` (the cloud and region a backend's waits poll: the same as its
resources') and :func:`after_checks` (a value that waits for the plan's preflight, when some inputs are Outputs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

import pulumi

from ..core import contract
from ..core.args import EndpointArgs
from ..core.cloud_facts import AdoptedLoadBalancer, AdoptedRecord
from ..core.errors import Problem
from ..core.plan import PollTarget, ZonePlan
from ..core.checks import NO_RULES, Rules
from ..agent.client import MemberClient
from ..cloud.access_rules import Call
from ..gates.source import StatusSource
from ..core.outputs import ZoneOutputs


@dataclass
class ZoneServing:
    """One zone as its backend built it."""

    published_address: pulumi.Output[Optional[str]]
    """The address DNS gets for this zone once it may be published (a floating IP, else the VIP)."""
    exists: pulumi.CustomResource
    """Exists once the zone can take traffic at all: bootstrap publication waits for it alone."""
    exists_label: str
    """What ``exists`` is, for the zone's ``gate`` output (e.g. "load balancer ACTIVE")."""
    readiness: pulumi.Resource
    """The zone's readiness resource (``contract.readiness_name``): exists once the zone serves."""
    ready: pulumi.Output[bool]
    """The readiness resource's verdict."""
    requirement: str
    """What the readiness resource waits for, for the zone's ``gate`` output (e.g. "members online")."""
    outputs: dict[str, Any] = field(default_factory=dict)
    """The zone's entries in the endpoint's ``zones`` output (e.g. loadbalancer_id, vip_address, floating_ip)."""
    not_ready_reason: Optional[pulumi.Output[Optional[str]]] = None
    """Why the zone is not ready (``readiness.onZoneNotReady: unpublish``); none when it is, or when the backend's
    readiness never leaves a zone out."""


Serve = Callable[[ZonePlan, pulumi.Input[str], pulumi.Resource, Mapping[str, pulumi.Resource]], ZoneServing]
"""``serve(zone, vip_group_id, parent, member_ports)``: create the zone's resources under ``parent``;
``vip_group_id`` is the endpoint's VIP security group; ``member_ports``: the members' ports given the members' group,
by member name (a member is registered after its port admits the backend and deregistered before its port stops
admitting it)."""


def served_when_needed(load: Callable[[], Serve]) -> Serve:
    """A backend's :data:`Serve` whose resource code is loaded (``load()`` imports it and gives its serve) when a zone
    is served, not when the registry loads: a gate's or drain's process, which asks the registry for its member client
    (:mod:`ha_endpoint.gates.source`), then imports no Pulumi provider SDK."""
    def serve(zone: ZonePlan, vip_group_id: pulumi.Input[str], parent: pulumi.Resource,
              member_ports: Mapping[str, pulumi.Resource]) -> ZoneServing:
        return load()(zone, vip_group_id, parent, member_ports)
    return serve

@dataclass(frozen=True)
class Previewed:
    """What a backend found at preview (:attr:`Backend.preview`): every problem (the preview fails on any: a transient
    error never changes the plan), what it holds of the endpoint's members now, and what the zones' ``adopt`` keys take
    over."""

    problems: list[Problem] = field(default_factory=list)
    members_down: Optional[frozenset[tuple[str, str]]] = frozenset()
    """(pool name, member name) of the members held out of service that the configuration may put back, where the
    backend re-creates a member put back (None: not known)."""
    agent_held: frozenset[tuple[str, str, int]] = frozenset()
    """(pool name, address, port) of the members the member agent holds already: ``up`` leaves them to it."""
    adopted: Mapping[str, AdoptedLoadBalancer] = field(default_factory=dict)
    """AZ -> the load balancer that zone's ``adopt`` takes over, as found."""
    adopted_record: Optional[AdoptedRecord] = None
    """The record set at the endpoint's name that publishes the adopted load balancers, as found."""


Preview = Callable[[EndpointArgs, PollTarget, str, str, Optional[str]], Previewed]
"""``preview(args, target, root, identity_tag, dns_zone_id)``: what only the cloud can tell about the backend
(``target``: the cloud the gates poll), asked once before anything is planned; the problems name their key under
``root``; ``identity_tag``: the stack's identity tag (:mod:`ha_endpoint.core.identity`), which tells the stack's own
objects from others'; ``dns_zone_id``: the endpoint's DNS zone, where one is known."""


def no_preview(args: EndpointArgs, target: PollTarget, root: str, identity_tag: str,
               dns_zone_id: Optional[str]) -> Previewed:
    """The preview of a backend that asks the cloud nothing."""
    return Previewed()


Notices = Callable[[EndpointArgs, str], list[Problem]]
"""``notices(args, root)``: what the backend allows but a user should know (warnings; see
:attr:`ha_endpoint.core.plan.EndpointPlan.notices`)."""


def no_notices(args: EndpointArgs, root: str) -> list[Problem]:
    """The notices of a backend that has none."""
    return []


@dataclass(frozen=True)
class Watched:
    """How the DNS watcher watches a backend's zones, read from the endpoint stack's outputs (``fqdn``, ``zones``,
    ``ports``): which zones are the backend's, what the watcher keeps of them, what it polls and which object proves
    whose endpoint it is; the member agent reads the zones the same way. The watcher's Secret
    (:class:`ha_endpoint.kubernetes.WatcherDeployment`) holds what :attr:`keys` names, so a change of them restarts
    every in-cluster watcher of the backend's endpoints."""

    keys: tuple[str, ...]
    """What the watcher reads of one of the backend's zones in the ``zones`` output (camelCase keys)."""
    reads_ports: bool
    """Whether reading its zones needs the endpoint's ``ports`` output too (then the watcher's outputs hold it)."""
    shape: str
    """How one of its zones looks in the outputs, for the refusal of a zone no backend owns (e.g. "a load balancer
    (loadbalancerId, poolIds)")."""
    owns: Callable[[Mapping[str, Any]], bool]
    """``owns(zone_output)``: whether a zone of the ``zones`` output is one of the backend's, with every key the
    backend reads of it."""
    owner_id: Callable[[ZoneOutputs], str]
    """``owner_id(zone)``: the object that stands for one of its zones: the one whose description proves the zone's
    owner, and that its status source reads the zone through."""
    owner_suffix: str
    """How the name of that object ends, after ``<endpoint>-<az>-`` (``lb``: a load balancer's)."""
    owner_kind: str
    """What that object is, in the watcher's words (e.g. "load balancer")."""
    owner_object: Callable[[Any, str], Any]
    """``owner_object(conn, id)``: that object (``id``: its :attr:`owner_id`), over an openstacksdk connection;
    openstacksdk's ``NotFoundException`` when it is gone."""
    reads: Callable[[Mapping[str, Any]], list[Call]]
    """``reads(zones)``: the watcher's calls on the backend's zones (the ``zones`` output, its zones only): its scoped
    credential allows those calls (and the record's, :func:`ha_endpoint.cloud.access_rules.record_calls`)."""
    status_source: Optional[Callable[[Optional[str], Optional[str], bool, Sequence[int]], Any]] = None
    """``status_source(cloud, region, reach, ports)``: the client :func:`ha_endpoint.watch.observe.zone_health` polls
    the zones through (``reach``: whether the watcher connects to the zones' addresses too; ``ports``: the endpoint's
    listener ports); raises :class:`ha_endpoint.core.errors.HaEndpointError` naming the fix when the backend's zones
    cannot be judged so.
    None: the backend's member client (:attr:`Backend.status_source`), the one its gates poll through."""


@dataclass(frozen=True)
class MemberAgent:
    """What the member agent (``python -m ha_endpoint.agent --backend <name>``) needs of a backend whose zones' pools
    it writes Cluster API Machines' members into, and what the agent's scoped credential allows it
    (:class:`ha_endpoint.kubernetes.AgentDeployment`)."""

    client: Callable[..., MemberClient]
    """``client(cloud, region, *, clock, sleep)``: the agent's member client (:class:`ha_endpoint.agent.client.
    MemberClient`), its calls retried with ``clock`` and ``sleep``."""
    calls: Callable[[Mapping[str, Any], Sequence[str], Optional[str]], list[Call]]
    """``calls(zones, subnet_ids, record_id)``: every call the agent makes on the endpoint's ``zones`` output (its
    pools' members), the members' subnets ``subnet_ids`` it names, and its A record ``record_id``
    (``<zone id>/<recordset id>``; None when unknown): its scoped credential allows exactly those."""


@dataclass(frozen=True)
class Backend:
    """A backend as the registry holds it: its name (the ``backend`` key's value, declared in each zone's facts), how
    it serves a zone, what it asks the cloud at preview, how the DNS watcher watches its zones (None: the watcher
    refuses them), its own dynamic resources (``hosted_types``: type name -> ``module:ProviderClass``, served by
    the package's provider host as :data:`ha_endpoint.gates.hosted.HOSTED_TYPES` are), the member client its zones'
    gates and drains poll through (``status_source``) and what the member agent needs of it (``agent``)."""

    name: str
    serve: Serve
    preview: Preview = no_preview
    notices: Notices = no_notices
    watched: Optional[Watched] = None
    hosted_types: Mapping[str, str] = field(default_factory=dict)
    vip_address: bool = False
    """Whether it gives each zone's VIP the address ``zones.<az>.vipAddress`` names (else that key is refused)."""
    adopts: bool = False
    """Whether it takes over an existing load balancer a zone's ``adopt`` names (else that key is refused)."""
    settings: tuple[str, ...] = ()
    """The configuration keys that are its own settings (their snake_case names, e.g. ``load_balancer_provider``):
    every zone's plan carries their values (:attr:`ha_endpoint.core.plan.ZonePlan.settings`)."""
    rules: Rules = NO_RULES
    """Its own rules of a configuration that names it (:class:`ha_endpoint.core.checks.Rules`: its checks of the cloud
    facts, and the words of the allowed CIDRs' IP-version rule); the rules every backend shares are the core's."""
    status_source: Optional[Callable[[Optional[str], Optional[str]], StatusSource]] = None
    """``status_source(cloud, region)``: the member client its zones' gates and drains poll and write through
    (:class:`ha_endpoint.gates.source.StatusSource`; they find it here when they run, by their ``backend`` input:
    :func:`ha_endpoint.gates.source.status_source`), and the DNS watcher's unless :attr:`Watched.status_source` says
    otherwise. None: it has no member gate (a MemberReadiness or MemberDrain declared with it is refused, naming the
    backends that have one)."""
    agent: Optional[MemberAgent] = None
    """What the member agent needs of it (None: the agent refuses it, naming the backends it serves)."""


def provider_path(provider: type) -> str:
    """A dynamic provider class as :attr:`Backend.hosted_types` names it: ``module:Class``."""
    return f"{provider.__module__}:{provider.__qualname__}"


@dataclass(frozen=True)
class PollInputs:
    """The ``cloud``/``region``/``cloud_source`` inputs of a wait: the plan's :class:`PollTarget`, with an explicit
    provider's own ``cloud`` and ``region`` read from that provider (Outputs, known once it is configured)."""

    cloud: pulumi.Input[Optional[str]]
    region: pulumi.Input[Optional[str]]
    cloud_source: str


def poll_inputs(target: PollTarget, parent: pulumi.Resource) -> PollInputs:
    """Where a zone's waits poll: the readiness settings' cloud, else the explicit OpenStack provider's (the one
    ``parent``'s children use), else the stack's (resolved by the dynamic provider from the stack configuration it
    is configured with: ``openstack:cloud`` / ``openstack:region``, then ``OS_CLOUD``)."""
    if target.source == "provider":
        provider = parent.get_provider(contract.MEMBER_TYPE)
        if provider is not None:
            return PollInputs(getattr(provider, "cloud", None), getattr(provider, "region", None), "provider")
    return PollInputs(target.cloud, target.region, target.source)


def after_checks(preflight: Optional[pulumi.Output], value: pulumi.Input[Any]) -> pulumi.Input[Any]:
    """``value``, once ``preflight`` (a zone's or the security plan's) succeeded; ``value`` itself without one."""
    if preflight is None:
        return value
    return pulumi.Output.all(preflight, value).apply(lambda both: both[1])

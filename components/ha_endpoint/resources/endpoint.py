"""HaEndpoint: a highly available multi-AZ API endpoint on OpenStack, as one Pulumi component.

Data flows one way: arguments -> the pipeline (:mod:`ha_endpoint.pipeline`: validation, cloud facts and preview checks,
checks, plan, declared facts) -> resources (:mod:`.security`, :mod:`.zone`, :mod:`.dns`) -> outputs. All checks run
before the component registers itself, so bad input registers nothing. Children inherit the consumer's provider (and the
lookups use it too: ``provider``/``providers`` given in ``opts``, or the parent's).
"""

import os
from collections.abc import Mapping
from typing import Optional

import pulumi

from .. import backends
from ..core import contract
from ..core.args import EndpointArgs
from ..core.identity import StackIdentity
from ..core.outputs import ZoneOutputs
from ..core.validation import load_endpoint_args
from ..members import read_members
from ..pipeline import Context, plan_endpoint
from .dns import addresses_output, create_records
from .security import attach_member_ports, create_security_groups
from .stack_names import claim
from .zone import EndpointZone


def default_provider_cloud(region: Optional[str]) -> tuple[Optional[str], Optional[str]]:
    """The clouds.yaml entry and region the default OpenStack provider uses, as the provider decides them: the stack's
    ``openstack:cloud``/``openstack:region``, else the ``OS_CLOUD``/``OS_REGION_NAME`` of the program's environment
    (``region`` given: kept). (None, ...) when neither names a cloud: the provider then reads ``OS_AUTH_URL`` and the
    other ``OS_*`` variables, and the preview checks say they could not ask.)"""
    config = pulumi.Config("openstack")
    cloud = config.get("cloud") or os.environ.get("OS_CLOUD") or None
    return cloud, region or config.get("region") or (os.environ.get("OS_REGION_NAME") if cloud else None) or None


def consumer_root(name: str) -> str:
    """How error messages name the arguments of an endpoint built by a program (not the stack's configuration)."""
    return f"HaEndpoint({name!r}).args"


class HaEndpoint(pulumi.ComponentResource):
    """One load balancer per availability zone (its ``backend``'s; Octavia's by default), members placed per zone, one
    DNS name over all of them.

    ``args`` is an :class:`EndpointArgs` or the raw configuration mapping (camelCase or snake_case keys; its type
    is written ``EndpointArgs`` alone, which is what Pulumi infers the other languages' schema from). Invalid
    input raises :class:`ha_endpoint.ConfigError`; a name the cloud does not know raises
    :class:`ha_endpoint.CloudLookupError`; both before anything is registered. The component's recorded inputs are
    the resolved cloud facts and a summary of the plan (:mod:`ha_endpoint.core.declared`), read by the policy pack.
    """

    fqdn: pulumi.Output[Optional[str]]
    """The endpoint's DNS name (``record.zone.``, with the trailing dot); none without ``dns``."""
    ports: pulumi.Output[list[int]]
    """The listener ports clients connect to."""
    addresses: pulumi.Output[list[str]]
    """The addresses published in DNS: the ready zones' floating IPs (or VIPs for an internal endpoint), sorted."""
    members_security_group_id: pulumi.Output[str]
    """The security group admitting the load balancers to the members; attach it to the members' ports."""
    vip_security_group_id: pulumi.Output[str]
    """The security group on every VIP port, admitting ``allowedCidrs`` on the listener ports."""
    zones: pulumi.Output[dict[str, ZoneOutputs]]
    """Per availability zone: its load balancer, addresses, pools, members and whether it is ready and published."""

    def __init__(self, name: str, args: EndpointArgs,
                 opts: Optional[pulumi.ResourceOptions] = None, root: Optional[str] = None,
                 cloud: Optional[str] = None, region: Optional[str] = None):
        """``root`` prefixes the key paths of error messages: by default the arguments as the caller wrote them
        (``HaEndpoint('k8s-api').args.members[0].az``); the stack program gives its config key
        (``ha-endpoint:endpoint``). ``cloud`` and ``region`` (or
        ``readiness.cloud``/``readiness.region`` in ``args``) name the clouds.yaml entry and region the readiness
        gates and drains poll; by default the explicit OpenStack provider's own ``cloud``/``region`` when one is
        given in ``opts``, else the default provider's (the stack's ``openstack:cloud``/``openstack:region``, else
        ``OS_CLOUD``/``OS_REGION_NAME``: :func:`default_provider_cloud`). What serves each zone is the backend the
        ``backend`` key of ``args`` names (:mod:`ha_endpoint.backends`; Octavia by default)."""
        root = root or consumer_root(name)
        invoke_opts = invoke_options(opts)
        if cloud is None and (invoke_opts is None or invoke_opts.provider is None):
            cloud, region = default_provider_cloud(region)
        context = Context(root, invoke_opts, StackIdentity(pulumi.get_project(), pulumi.get_stack()), cloud, region)
        # the members of every source, read once into one list (the static ones, and memberSources'), then every
        # check, before anything is registered
        args, unserved = read_members(load_endpoint_args(args, root, backends.REGISTRY), root)
        plan, declared = plan_endpoint(args, context)
        claim(plan.name, [zone.az for zone in plan.zones], root)  # one endpoint per name in a stack
        super().__init__(contract.ENDPOINT_TYPE, name, {"name": plan.name}, opts)
        self.plan = plan
        serve = backends.lookup(plan.backend, root).serve
        for problem in unserved:  # a Machine without an address or failure domain: left out, never guessed
            pulumi.log.warn(f"{problem} (left out of the endpoint's members)", resource=self)
        for notice in plan.notices:  # allowed, but worth knowing (the API open to the internet): said once
            pulumi.log.warn(str(notice), resource=self)
        self.security = create_security_groups(plan.security, self, plan.tags)
        self.member_ports = attach_member_ports(plan.security, self.security, self)
        self.zone_components = {
            zone.az: EndpointZone(zone.component_name, zone, self.security.vip_group.id, serve, self.member_ports,
                                  opts=pulumi.ResourceOptions(parent=self))
            for zone in plan.zones}
        published = list(self.zone_components.values())
        floor = plan.readiness.floor
        self.records = None
        self.zone_records: dict = {}
        if plan.dns is not None:
            self.records, self.zone_records = create_records(plan.dns, published, self, plan.identity, floor)
            self.addresses = self.records.records
        else:
            self.addresses = addresses_output(published, floor)
        self.fqdn = pulumi.Output.from_input(plan.dns.fqdn if plan.dns else None)
        self.ports = pulumi.Output.from_input(sorted(listener.port for listener in plan.zones[0].listeners))
        self.members_security_group_id = self.security.members_group.id
        self.vip_security_group_id = self.security.vip_group.id
        self.zones = pulumi.Output.all(**{az: _zone_outputs(zone, self.addresses)
                                          for az, zone in self.zone_components.items()})
        self.register_outputs({
            "fqdn": self.fqdn, "ports": self.ports, "addresses": self.addresses, "zones": self.zones,
            "membersSecurityGroupId": self.members_security_group_id,
            "vipSecurityGroupId": self.vip_security_group_id,
            # What the policy pack checks (ha_endpoint.core.facts): the engine hands stack policies a component's
            # outputs, so the facts are recorded here, once.
            "facts": declared,
        })


def invoke_options(opts: Optional[pulumi.ResourceOptions]) -> Optional[pulumi.InvokeOptions]:
    """The invoke options matching a component's resource options: the OpenStack provider its children will use
    (``provider``/``providers`` given to the component, else the parent's, else the default provider)."""
    if opts is None:
        return None
    candidates = [opts.provider] if opts.provider is not None else []
    if isinstance(opts.providers, Mapping):
        candidates += list(opts.providers.values())
    elif opts.providers:
        candidates += list(opts.providers)
    provider = next((p for p in candidates if getattr(p, "package", None) == "openstack"), None)
    return pulumi.InvokeOptions(parent=opts.parent, provider=provider)


def _zone_outputs(zone: EndpointZone, addresses: pulumi.Output[list]) -> pulumi.Output[dict]:
    published = pulumi.Output.all(zone.published_address, addresses).apply(
        lambda values: bool(values[0]) and values[0] in (values[1] or []))
    return pulumi.Output.all(**zone.backend_outputs,
                             ready=zone.ready, published=published, gate=zone.gate_kind,
                             notReadyReason=zone.not_ready_reason)

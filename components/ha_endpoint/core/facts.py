"""The endpoint's declared facts: one typed model of what the component hands its policy pack.

The component builds an :class:`EndpointFacts` from its plan (:func:`ha_endpoint.core.declared.endpoint_facts`) and
records it once, as the ``facts`` output of the ``haendpoint:index:HaEndpoint`` resource (plain values, known at
preview, camelCase keys). The pack validates the same model (:func:`parse_facts`): a fact that is missing or malformed
is a violation that names it, never a crash and never a silent pass. One definition, dumped on one side and validated on
the other; ``FACTS_VERSION`` changes when the shape does.

Compact by construction (an endpoint with 20 zones x 500 members declares each subnet once): members and zones refer
to their subnets by id in ``subnets``. Importable without Pulumi (pydantic only).
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from .args import DEFAULT_BACKEND
from .contract import natural_key
from .errors import HaEndpointError
from .predicates import (
    LISTENER_RULE_PROTOCOL, MONITOR_RULE_PROTOCOL, AzFinding, MonitoredListener, RouterView,
    az_loss_findings, zone_routers,
)

FACTS_VERSION = 1


class _Fact(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True,
                              )


class SubnetFact(_Fact):
    """A Neutron subnet as looked up at preview: its CIDR, network and the routers with an interface on it."""

    id: str
    name: str
    cidr: str
    network_id: str
    router_ids: list[str] = Field(default_factory=list)


class RouterFact(_Fact):
    """A router on a path a zone depends on (see :func:`ha_endpoint.core.predicates.zone_routers`)."""

    id: str
    name: str
    az_hints: list[str] = Field(default_factory=list)
    ha: bool = False
    distributed: bool = False
    external_network_id: Optional[str] = None


class NetworkFact(_Fact):
    """A VIP subnet's network and its availability-zone hints (empty: any AZ)."""

    id: str
    name: str
    az_hints: list[str] = Field(default_factory=list)


class FloatingIpFact(_Fact):
    """How a zone is reached from outside: ``allocate`` (the endpoint's own), ``byo`` (brought), ``none`` (internal)."""

    mode: str
    address: Optional[str] = None
    id: Optional[str] = None


class ZoneFact(_Fact):
    """One availability zone of the endpoint: its load balancer's VIP subnet, floating IP and members."""

    az: str
    backend: str = Field(DEFAULT_BACKEND, description="What serves the zone (its registered backend, "
                         "ha_endpoint.backends): the pack holds each backend's zones to that backend's own rules "
                         "(e.g. a load-balancer backend's: a load balancer in the AZ).")
    vip_subnet_id: str
    floating_ip: FloatingIpFact
    members: list[str] = Field(default_factory=list, description="Names of the members in this zone's pools.")
    adopted: bool = Field(False, description="Whether the zone took over an existing load balancer (zones.<az>.adopt, "
                          "docs/adoption.md): one such zone alone is the way back to it, not an HA endpoint.")


class MemberFact(_Fact):
    """A server behind the endpoint."""

    name: str
    az: str
    address: str
    subnet_id: str
    port_id: Optional[str] = None
    weight: int = 1
    source: str = "static"
    """The member source that gave it: static (the members list) or clusterApi (a Cluster API Machine)."""
    held_by_agent: bool = False
    """True when the member agent holds it already: its Octavia member is the agent's, no resource of the stack."""


class MonitorFact(_Fact):
    """The health monitor of a listener's pools."""

    type: str
    port: int
    delay: int
    timeout: int
    max_retries: int
    max_retries_down: int
    url_path: Optional[str] = None

    @field_validator("type", mode="after")
    @classmethod
    def _known_type(cls, value: str) -> str:
        return _one_of(value, MONITOR_RULE_PROTOCOL, "health-monitor type")


class ListenerFact(_Fact, MonitoredListener):
    """One port the endpoint serves, in every zone."""

    port: int
    member_port: int
    protocol: str
    pool_protocol: str
    lb_method: str
    allowed_cidrs: list[str] = Field(default_factory=list)
    monitor: Optional[MonitorFact] = None

    @field_validator("protocol", mode="after")
    @classmethod
    def _known_protocol(cls, value: str) -> str:
        return _one_of(value, LISTENER_RULE_PROTOCOL, "listener protocol")


def _one_of(value: str, known: dict[str, str], what: str) -> str:
    """``value`` when the shared predicates know it (the pack maps it to security-group rules), else a problem."""
    if value.upper() not in known:
        raise ValueError(f"unknown {what} '{value}'; one of {', '.join(known)}")
    return value


class RuleFact(_Fact):
    """One ingress rule the endpoint puts in a security group."""

    protocol: str
    port: Optional[int] = None
    remote_ip_prefix: str
    ethertype: str


class SecurityGroupFact(_Fact):
    name: str
    rules: list[RuleFact] = Field(default_factory=list)


class DnsFact(_Fact):
    """The endpoint's DNS name: one A record over the published zones, and per-zone records when asked."""

    dns_zone_id: str
    dns_zone_name: str
    fqdn: str
    ttl: int
    zone_records: dict[str, str] = Field(default_factory=dict, description="AZ -> its own record's FQDN.")

    @field_validator("zone_records", mode="after")
    @classmethod
    def _in_natural_order(cls, value: dict[str, str]) -> dict[str, str]:
        return natural_order(value)


class ReadinessFact(_Fact):
    require: str
    timeout_seconds: int
    poll_interval_seconds: float
    drain_seconds: int
    on_zone_not_ready: str = "fail"
    min_ready_zones: int = 0
    """The ready zones an update needs before DNS changes (0 with ``fail``: every zone's gate fails the update)."""
    dead_after_seconds: int = 60


class EndpointFacts(_Fact):
    """Everything the pack checks that no single resource input states."""

    version: int = FACTS_VERSION
    name: str
    load_balancer_provider: str
    member_placement: str
    publish: str
    internal: bool
    floating_network_id: Optional[str] = None
    allowed_cidrs: list[str]
    tags: list[str] = Field(default_factory=list)
    subnets: dict[str, SubnetFact]
    routers: dict[str, RouterFact] = Field(default_factory=dict)
    networks: dict[str, NetworkFact] = Field(default_factory=dict)
    zones: dict[str, ZoneFact]
    members: dict[str, MemberFact]
    listeners: list[ListenerFact]
    vip_security_group: SecurityGroupFact
    members_security_group: SecurityGroupFact
    dns: Optional[DnsFact] = None
    readiness: ReadinessFact

    @field_validator("subnets", "zones", "members", mode="after")
    @classmethod
    def _in_natural_order(cls, value: dict[str, Any]) -> dict[str, Any]:
        return natural_order(value)

    def subnet(self, subnet_id: str) -> Optional[SubnetFact]:
        return self.subnets.get(subnet_id)

    def az_loss(self) -> list[AzFinding]:
        """For each pair of zones, whether one survives the loss of the other's AZ (the shared rule, said once in
        :func:`ha_endpoint.core.predicates.az_loss_findings`; the component refuses the mandatory findings, the pack
        reports them all)."""
        routers = {key: RouterView(r.id, r.name, tuple(r.az_hints), r.ha, r.distributed, r.external_network_id)
                   for key, r in self.routers.items()}
        deps: dict[str, tuple[str, ...]] = {}
        vip_networks: dict[str, tuple[str, str, tuple[str, ...]]] = {}
        for key, zone in self.zones.items():
            vip = self.subnets.get(zone.vip_subnet_id)
            if vip is None:
                continue
            members = [self.subnets[m.subnet_id] for name in zone.members
                       for m in [self.members.get(name)] if m is not None and m.subnet_id in self.subnets]
            deps[key] = zone_routers(vip, members, None if self.internal else self.floating_network_id, routers)
            network = self.networks.get(vip.network_id)
            if network is not None:
                vip_networks[key] = (network.id, network.name, tuple(network.az_hints))
        return az_loss_findings({key: zone.az for key, zone in self.zones.items() if key in deps}, deps, routers,
                                vip_networks)

    def dump(self) -> dict[str, Any]:
        """The plain, camelCase form recorded in the component's outputs."""
        return self.model_dump(by_alias=True, mode="json")


def natural_order(mapping: dict[str, Any]) -> dict[str, Any]:
    """``mapping`` with its keys in natural order (the engine hands maps over in any order)."""
    return {key: mapping[key] for key in sorted(mapping, key=natural_key)}


class FactsProblem(HaEndpointError, ValueError):
    """The facts an HaEndpoint declared are missing or do not fit :class:`EndpointFacts`: ``problems`` name each."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


def parse_facts(value: Any) -> EndpointFacts:
    """Validate declared facts (the ``facts`` output, plain values); :class:`FactsProblem` names every bad field."""
    if not isinstance(value, dict):
        raise FactsProblem([f"facts: expected the declared facts as a mapping, got {type(value).__name__}"])
    if value.get("version") != FACTS_VERSION:
        raise FactsProblem([f"facts.version: expected {FACTS_VERSION}, got {value.get('version')!r} (the component "
                            "and the policy pack are of different versions: use the pack of the component's release)"])
    try:
        facts = EndpointFacts.model_validate(value)
    except ValidationError as error:
        raise FactsProblem([
            "facts." + ".".join(str(part) for part in detail["loc"]) + f": {detail['msg']}"
            for detail in error.errors(include_url=False)]) from None
    dangling = dangling_references(facts)
    if dangling:
        raise FactsProblem(dangling)
    return facts


def dangling_references(facts: EndpointFacts) -> list[str]:
    """The references inside ``facts`` to a subnet or member the facts do not declare (the component declares every
    one it refers to: a dangling one would let a check pass unseen)."""
    found = [f"facts.zones.{key}.vipSubnetId: subnet {zone.vip_subnet_id} is not among facts.subnets"
             for key, zone in facts.zones.items() if zone.vip_subnet_id not in facts.subnets]
    found += [f"facts.zones.{key}.members: member {name} is not among facts.members"
              for key, zone in facts.zones.items() for name in zone.members if name not in facts.members]
    found += [f"facts.members.{key}.subnetId: subnet {member.subnet_id} is not among facts.subnets"
              for key, member in facts.members.items() if member.subnet_id not in facts.subnets]
    return found

"""The HA endpoint's public inputs: the configuration contract.

These classes are the schema of `ha-endpoint:endpoint` in a stack's configuration and the arguments of
:class:`ha_endpoint.HaEndpoint`. Keys are camelCase in configuration (``floatingNetwork``) and snake_case in Python
(``floating_network``); both spellings are accepted. Unknown keys are rejected. Field-level rules (ranges, enums,
address syntax) live here; rules that relate several fields (a member's zone must exist, ...) live in
:mod:`ha_endpoint.validation`, so that every problem of a configuration is reported at once.
"""

from __future__ import annotations

import ipaddress
import re
from contextvars import ContextVar
from typing import Any, ClassVar, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

LoadBalancerProvider = Literal["amphora", "ovn"]
MonitorType = Literal["HTTP", "HTTPS", "TCP", "PING", "TLS-HELLO", "UDP-CONNECT", "SCTP"]
ListenerProtocol = Literal["TCP", "UDP", "HTTP", "HTTPS", "TERMINATED_HTTPS", "SCTP"]
LbMethod = Literal["ROUND_ROBIN", "LEAST_CONNECTIONS", "SOURCE_IP", "SOURCE_IP_PORT"]
MemberPlacement = Literal["own-zone", "all-zones"]
PublishMode = Literal["when-ready", "bootstrap"]
ReadinessRequirement = Literal["online", "provisioned"]

Port = Field(ge=1, le=65535)


RENAMED_KEYS: ContextVar[Optional[list[str]]] = ContextVar("RENAMED_KEYS", default=None)
"""Set by :func:`ha_endpoint.validation.load_endpoint_args`: collects a notice per old key name used."""


class _Model(BaseModel):
    """Shared settings: camelCase aliases, snake_case names accepted too, unknown keys forbidden, immutable.

    ``_renamed`` maps a key's former name to its name now (one meaning per word: ``az`` is an availability zone,
    ``dnsZone`` a DNS zone, ``loadBalancerProvider`` Octavia's driver). A former name still works and says what to
    use instead; giving both is an error."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True, str_strip_whitespace=True
    )
    _renamed: ClassVar[dict[str, str]] = {}
    _where: ClassVar[str] = ""

    @model_validator(mode="before")
    @classmethod
    def _former_names(cls, data: Any) -> Any:
        if not cls._renamed or not isinstance(data, dict):
            return data
        data = dict(data)
        for old, new in cls._renamed.items():
            if old not in data:
                continue
            snake = re.sub(r"(?<!^)(?=[A-Z])", "_", new).lower()
            if new in data or snake in data:
                raise ValueError(f"'{old}' is the former name of '{new}'; give only '{new}'")
            data[new] = data.pop(old)
            notices = RENAMED_KEYS.get()
            if notices is not None:
                notice = f"{cls._where}{old} is now {cls._where}{new} (same meaning); rename it, the old name will go"
                if notice not in notices:
                    notices.append(notice)
        return data


class MonitorArgs(_Model):
    """The health monitor of every pool of a listener. Octavia marks a member ONLINE only through it."""

    type: MonitorType = "TCP"
    path: str = Field("/", description="HTTP(S) URL path probed (HTTP and HTTPS monitors only).")
    expected_codes: str = Field("200", description="HTTP status codes counted as healthy, e.g. '200' or '200-204'.")
    delay: int = Field(5, ge=1, le=3600, description="Seconds between probes.")
    timeout: int = Field(3, ge=1, le=3600, description="Seconds a probe may take; must be below delay.")
    max_retries: int = Field(2, ge=1, le=10, description="Successful probes before a member goes ONLINE.")
    max_retries_down: int = Field(3, ge=1, le=10, description="Failed probes before a member goes ERROR.")
    port: Optional[int] = Field(
        None, ge=1, le=65535, description="Port probed on each member; defaults to the member port."
    )

    @field_validator("path")
    @classmethod
    def _path_is_absolute(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError(f"must start with '/', e.g. '/{value}'")
        return value


class ListenerArgs(_Model):
    """One port the endpoint serves; each zone's load balancer gets a listener, a pool and a monitor for it."""

    port: int = Field(ge=1, le=65535, description="Port clients connect to on the endpoint.")
    member_port: Optional[int] = Field(
        None, ge=1, le=65535, description="Port the members listen on; defaults to `port`."
    )
    protocol: ListenerProtocol = Field("TCP", description="Listener and pool protocol; TCP passes TLS through.")
    lb_method: Optional[LbMethod] = Field(
        None, description="Pool algorithm; defaults to ROUND_ROBIN (amphora) or SOURCE_IP_PORT (ovn)."
    )
    monitor: Optional[MonitorArgs] = Field(
        default_factory=MonitorArgs, description="Health monitor; null means none (not recommended)."
    )


class ZoneArgs(_Model):
    """One availability zone of the endpoint: where its load balancer's VIP lives."""

    subnet: str = Field(min_length=1, description="Subnet (name or id) of the LB VIP, mapped to this AZ.")
    floating_ip: Optional[str] = Field(
        None, description="An existing floating IP (IPv4) to associate instead of allocating one; never deleted."
    )
    take_over_floating_ip: bool = Field(
        False, description="Let the endpoint move floatingIp from the port it is associated with now (another "
        "server or load balancer, which then loses it). Off: such an address is refused at preview.")

    @field_validator("floating_ip")
    @classmethod
    def _floating_ip_is_ipv4(cls, value: Optional[str]) -> Optional[str]:
        if value is None:
            return value
        try:
            ipaddress.IPv4Address(value)
        except ValueError:
            raise ValueError(f"'{value}' is not an IPv4 address; give the address of an existing floating IP") from None
        return value


class MemberArgs(_Model):
    """A server behind the endpoint, e.g. one Kubernetes control-plane node."""

    _renamed: ClassVar[dict[str, str]] = {"zone": "az"}
    _where: ClassVar[str] = "members[]."

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", description="Unique member name.")
    address: str = Field(description="The member's IP address on its subnet.")
    az: str = Field(min_length=1, description="Availability zone the member runs in (a key of `zones`).")
    subnet: Optional[str] = Field(None, description="Subnet (name or id) of `address`; defaults to the zone's subnet.")
    port: Optional[str] = Field(
        None, description="Neutron port id of the member; the members' security group is attached to it."
    )
    weight: int = Field(1, ge=0, le=256, description="Share of new connections (0 drains the member).")

    @field_validator("address")
    @classmethod
    def _address_is_ip(cls, value: str) -> str:
        try:
            ipaddress.ip_address(value)
        except ValueError:
            raise ValueError(f"'{value}' is not an IP address") from None
        return value


class DnsArgs(_Model):
    """The endpoint's DNS name in Designate: one A record per published zone, for client-side failover."""

    _renamed: ClassVar[dict[str, str]] = {"zone": "dnsZone"}
    _where: ClassVar[str] = "dns."

    dns_zone: str = Field(description="An existing Designate zone, fully qualified with the trailing dot.")
    record: str = Field(min_length=1, description="Record name inside the zone, e.g. 'api' -> api.<zone>.")
    ttl: int = Field(30, ge=1, le=86400, description="Seconds resolvers may cache the record; keep it <= 60.")
    publish: PublishMode = Field(
        "when-ready",
        description="when-ready: a zone's address is published once its members are ready; "
        "bootstrap: once its load balancer is ACTIVE (first control-plane node).",
    )
    per_zone_records: bool = Field(False, description="Also publish <record>-<az>.<zone> for each zone.")

    @field_validator("dns_zone")
    @classmethod
    def _zone_is_fqdn(cls, value: str) -> str:
        if not value.endswith("."):
            raise ValueError(f"must be fully qualified with a trailing dot, e.g. '{value}.'")
        return value

    @field_validator("record")
    @classmethod
    def _record_is_label(cls, value: str) -> str:
        if value.endswith("."):
            raise ValueError("give the name inside the zone without a trailing dot, e.g. 'api'")
        return value


class ReadinessArgs(_Model):
    """How long and for what the endpoint waits before a zone counts as ready."""

    timeout_seconds: int = Field(600, ge=1, le=86400, description="Give up waiting for members after this long.")
    require: ReadinessRequirement = Field(
        "online", description="online: provisioning ACTIVE and operating ONLINE; provisioned: ACTIVE only."
    )
    poll_interval_seconds: float = Field(1.0, gt=0, le=60, description="Longest pause between two status polls.")
    drain_seconds: int = Field(
        0, ge=0, le=3600, description="Grace a removed member keeps with weight 0 before it is deleted."
    )
    cloud: Optional[str] = Field(
        None, min_length=1, description="clouds.yaml entry the gates and drains poll; default: the one of the "
        "OpenStack provider the endpoint's resources use (the explicit provider's, else openstack:cloud).")
    region: Optional[str] = Field(
        None, min_length=1, description="Region the gates and drains poll; default: the provider's region.")


class EndpointArgs(_Model):
    """A highly available endpoint: one Octavia load balancer per availability zone behind one DNS name."""

    _renamed: ClassVar[dict[str, str]] = {"provider": "loadBalancerProvider"}

    name: str = Field(
        min_length=1, max_length=40, pattern=r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$",
        description="Prefix of every resource name (lowercase letters, digits, '-').",
    )
    load_balancer_provider: LoadBalancerProvider = Field(
        "amphora", description="Octavia provider driver: amphora or ovn.")
    floating_network: Optional[str] = Field(
        None, description="External network (name or id) for floating IPs; omit for an internal endpoint."
    )
    allowed_cidrs: list[str] = Field(
        default_factory=lambda: ["0.0.0.0/0"], min_length=1, description="Client CIDRs admitted to the listeners."
    )
    zones: dict[str, ZoneArgs] = Field(description="Availability zone name -> its VIP subnet.")
    listeners: list[ListenerArgs] = Field(min_length=1, description="Ports the endpoint serves.")
    members: list[MemberArgs] = Field(default_factory=list, description="Servers behind the endpoint.")
    member_placement: MemberPlacement = Field(
        "own-zone", description="own-zone: members join their own zone's LB; all-zones: every zone's LB."
    )
    dns: Optional[DnsArgs] = Field(None, description="DNS name of the endpoint; omit to publish no record.")
    readiness: ReadinessArgs = Field(default_factory=ReadinessArgs, description="Readiness gate of each zone.")
    tags: list[str] = Field(default_factory=list, description="Tags put on every load balancer, e.g. 'production'.")

    @field_validator("allowed_cidrs")
    @classmethod
    def _cidrs_are_networks(cls, values: list[str]) -> list[str]:
        for value in values:
            try:
                ipaddress.ip_network(value, strict=True)
            except ValueError as error:
                raise ValueError(f"'{value}' is not a CIDR ({error}); write e.g. '10.0.0.0/8'") from None
        return values

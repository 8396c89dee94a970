"""The HA endpoint's public inputs: the configuration contract, and the schema other languages see.

These classes are the schema of `ha-endpoint:endpoint` in a stack's configuration, the arguments of
:class:`ha_endpoint.HaEndpoint`, and (through Pulumi's schema inference, ``components/schema.json``) the inputs of
the component in every other language. So they stay in the shapes Pulumi can infer: enumerations are ``StrEnum``
(never ``Literal``), a key with a default is ``Optional`` (a null or absent key takes the default), maps are
``dict[str, T]``, no ``Union`` but ``Optional`` and ``Input`` (``pulumi.Input``'s shape, named in
:mod:`ha_endpoint.core.inputs` so that the core imports no Pulumi). The docstring under each field is its
description, for pydantic and for the schema alike. No ``from __future__ import annotations`` here: the schema
inference reads the annotations as objects.

Keys are camelCase in configuration (``floatingNetwork``) and snake_case in Python (``floating_network``); both
spellings are accepted. Unknown keys are rejected. An ``Input[str]`` key (subnets, the floating network,
brought floating IPs, member addresses, ports and servers, the DNS zone) may be an Output of a resource declared
beside the component: what is a plain value is checked at once, what is an Output is checked once it is known
(at preview when it is, else before any load balancer is created; see :func:`ha_endpoint.pipeline.plan_endpoint`). Field-level rules
(ranges, enums, address syntax) live here; rules that relate several fields live in :mod:`ha_endpoint.core.validation`,
so that every problem of a configuration is reported at once.
"""

import ipaddress
import re
from collections.abc import Mapping
from contextvars import ContextVar
from enum import StrEnum
from typing import Any, Callable, ClassVar, Iterable, Optional

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator
from pydantic.alias_generators import to_camel

from . import predicates
from .inputs import Input, Output, Resource, T  # noqa: F401  (Output and T resolve the forward reference in Input)

DEFAULT_BACKEND = "octavia"
"""The backend that serves the zones when the configuration names none (:mod:`ha_endpoint.backends`)."""


# -- the rules of a field's own syntax, which pydantic runs as it parses (the policy pack decides the expected codes
# too); what a backend's service limits further is the backend's (its :class:`ha_endpoint.core.checks.Rules`) -------

EXPECTED_CODES = re.compile(r"^(\d{3}(\s*,\s*\d{3})*)$|^(\d{3}-\d{3})$")
"""The syntax of a monitor's ``expected_codes``: one code, a comma-separated list, or one range (the load-balancer
API's own pattern)."""


def expected_codes_problem(codes: str) -> Optional[str]:
    """Why ``codes`` is not a list of expected HTTP status codes, or None (see :data:`EXPECTED_CODES`)."""
    if EXPECTED_CODES.match(codes):
        return None
    return (f"'{codes}' is not a status code list: give one code ('200'), codes separated by commas ('200,202') or "
            "one range ('200-204'), each code three digits")


def certificate_ref_problem(ref: str) -> Optional[str]:
    """Why ``ref`` is not a reference to a certificate in the key manager (Barbican), or None: a container's or
    secret's reference (its URL, or its id) ends in the object's UUID."""
    if not predicates.is_uuid(ref.rstrip("/").rsplit("/", 1)[-1]):
        return (f"'{ref}' is not a Barbican reference: it must end with the container's (or secret's) id, e.g. "
                "https://barbican.example:9311/v1/containers/<uuid> (openstack secret container list)")
    return None


class LoadBalancerProvider(StrEnum):
    """Octavia's provider driver for the endpoint's load balancers."""

    AMPHORA = "amphora"
    """Amphora VMs (every protocol and monitor type)."""
    OVN = "ovn"
    """OVN's built-in load balancer: TCP/UDP/SCTP only, SOURCE_IP_PORT only."""


class MonitorType(StrEnum):
    """How a health monitor probes each member."""

    HTTP = "HTTP"
    HTTPS = "HTTPS"
    TCP = "TCP"
    PING = "PING"
    TLS_HELLO = "TLS-HELLO"
    UDP_CONNECT = "UDP-CONNECT"
    SCTP = "SCTP"


class ListenerProtocol(StrEnum):
    """The protocol of a listener and its pool."""

    TCP = "TCP"
    UDP = "UDP"
    HTTP = "HTTP"
    HTTPS = "HTTPS"
    TERMINATED_HTTPS = "TERMINATED_HTTPS"
    SCTP = "SCTP"


class LbMethod(StrEnum):
    """How a pool spreads new connections over its members."""

    ROUND_ROBIN = "ROUND_ROBIN"
    LEAST_CONNECTIONS = "LEAST_CONNECTIONS"
    SOURCE_IP = "SOURCE_IP"
    SOURCE_IP_PORT = "SOURCE_IP_PORT"


class MemberPlacement(StrEnum):
    """Which zones' load balancers a member joins."""

    OWN_ZONE = "own-zone"
    """Its own zone's only (every zone then needs a member)."""
    ALL_ZONES = "all-zones"
    """Every zone's."""


class PublishMode(StrEnum):
    """When a zone's address enters the DNS record."""

    WHEN_READY = "when-ready"
    """Once the zone's members are ready."""
    BOOTSTRAP = "bootstrap"
    """Once the zone's load balancer is ACTIVE (for the first control-plane node, which needs the name first)."""


class OnZoneNotReady(StrEnum):
    """What an update does with a zone whose members do not become ready."""

    FAIL = "fail"
    """The update fails, naming every member not ready."""
    UNPUBLISH = "unpublish"
    """The zone is left out of DNS (its resources kept, the reason in the outputs) and the update completes for the
    others, as long as ``minReadyZones`` zones are ready; the next update checks the zone again."""


class ReadinessRequirement(StrEnum):
    """What a member must report before its zone counts as ready."""

    ONLINE = "online"
    """Provisioning ACTIVE and operating ONLINE (NO_MONITOR in a pool without a monitor)."""
    PROVISIONED = "provisioned"
    """Provisioning ACTIVE only."""


RENAMED_KEYS: ContextVar[Optional[list[str]]] = ContextVar("RENAMED_KEYS", default=None)
"""Set by :func:`ha_endpoint.core.validation.load_endpoint_args`: collects a notice per old key name used."""


def placed_zones(zones: Iterable[str], placement: str, zone: str) -> list[str]:
    """The zones (of ``zones``, the endpoint's) whose load balancers a member of ``zone`` joins under ``placement``
    (``memberPlacement``)."""
    return sorted(zones) if placement == "all-zones" else [zone]


# How a direct construction's ValidationError is told: ha_endpoint.core.messages, which knows every argument class (so
# it sits above this module), registers its explainer when it loads.
_EXPLAINERS: list[Callable[[ValidationError, type], Exception]] = []


def explain_construction_errors(explainer: Callable[[ValidationError, type], Exception]) -> None:
    """Use ``explainer`` for the errors of every argument class constructed directly."""
    _EXPLAINERS.append(explainer)


class _Arguments(type(BaseModel)):  # pydantic's model metaclass
    """Typed arguments called directly (``EndpointArgs(member_placment=...)``) report a problem as configuration does
    (a :class:`ha_endpoint.ConfigError`: the key, what is wrong, the fix), never in pydantic's words. A metaclass, not
    ``__init__``: pydantic validates nested mappings without calling it, so configuration keeps its own paths."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        except ValidationError as error:
            if not _EXPLAINERS:
                raise
            raise _EXPLAINERS[-1](error, cls) from None


class _Model(BaseModel, metaclass=_Arguments):
    """Shared settings: camelCase aliases, snake_case names accepted too, unknown keys forbidden, immutable, Outputs
    allowed where a field says ``Input``. The docstring under each field is its description: Pulumi's schema inference
    reads it from the source, and so do the messages that quote it (:mod:`ha_endpoint.core.messages`), when one does.

    A null value takes the field's default (``_keeps_null`` lists the fields where null means something: it is then
    kept for validation to judge). Numbers are strict: a boolean or a string is never a number (``port: true`` is
    refused, not port 1).

    ``_renamed`` maps a key's former name to its name now (one meaning per word: ``az`` is an availability zone,
    ``dnsZone`` a DNS zone, ``loadBalancerProvider`` Octavia's driver). A former name still works and says what to
    use instead; giving both is an error."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True, str_strip_whitespace=True,
        arbitrary_types_allowed=True,
    )
    _renamed: ClassVar[dict[str, str]] = {}
    _where: ClassVar[str] = ""
    _keeps_null: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="before")
    @classmethod
    def _normalize(cls, data: Any) -> Any:
        if not isinstance(data, dict):
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
        for key in [key for key, value in data.items() if value is None]:
            field = cls._field(key)
            if field is not None and field not in cls._keeps_null:
                del data[key]
        return data

    @classmethod
    def _field(cls, key: str) -> Optional[str]:
        if key in cls.model_fields:
            return key
        return next((name for name, info in cls.model_fields.items() if info.alias == key), None)


class MonitorArgs(_Model):
    """The health monitor of every pool of a listener. Octavia marks a member ONLINE only through it."""

    type: Optional[MonitorType] = MonitorType.TCP
    """How members are probed (default TCP)."""
    path: Optional[str] = "/"
    """HTTP(S) URL path probed (HTTP and HTTPS monitors only)."""
    expected_codes: Optional[str] = "200"
    """HTTP status codes counted as healthy, e.g. '200' or '200-204' (HTTP and HTTPS monitors only)."""
    delay: Optional[int] = Field(5, ge=1, le=3600, strict=True)
    """Seconds between probes."""
    timeout: Optional[int] = Field(3, ge=1, le=3600, strict=True)
    """Seconds a probe may take; must be below delay."""
    max_retries: Optional[int] = Field(2, ge=1, le=10, strict=True)
    """Successful probes before a member goes ONLINE."""
    max_retries_down: Optional[int] = Field(3, ge=1, le=10, strict=True)
    """Failed probes before a member goes ERROR."""
    port: Optional[int] = Field(None, ge=1, le=65535, strict=True)
    """Port probed on each member; defaults to the member port."""

    @field_validator("path")
    @classmethod
    def _path_is_a_url_path(cls, value: str) -> str:
        problem = predicates.url_path_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("expected_codes")
    @classmethod
    def _codes_are_status_codes(cls, value: str) -> str:
        problem = expected_codes_problem(value)
        if problem:
            raise ValueError(problem)
        return value


class ListenerArgs(_Model):
    """One port the endpoint serves; each zone's load balancer gets a listener, a pool and a monitor for it."""

    _keeps_null: ClassVar[frozenset[str]] = frozenset({"monitor"})

    port: int = Field(ge=1, le=65535, strict=True)
    """Port clients connect to on the endpoint."""
    member_port: Optional[int] = Field(None, ge=1, le=65535, strict=True)
    """Port the members listen on; defaults to `port`."""
    protocol: Optional[ListenerProtocol] = ListenerProtocol.TCP
    """Listener and pool protocol; TCP (the default) passes TLS through."""
    lb_method: Optional[LbMethod] = None
    """Pool algorithm; defaults to ROUND_ROBIN (amphora) or SOURCE_IP_PORT (ovn)."""
    monitor: Optional[MonitorArgs] = Field(default_factory=MonitorArgs)
    """Health monitor of the listener's pools (default: a TCP monitor); every pool needs one, so null is refused."""
    certificate_ref: Optional[Input[str]] = None
    """The certificate a TERMINATED_HTTPS listener serves: the reference of a Barbican certificate container (or
    PKCS12 secret), e.g. https://barbican.example:9311/v1/containers/<uuid>; required for TERMINATED_HTTPS, refused on
    every other protocol. Octavia's service user must be allowed to read it (openstack acl user add)."""
    timeout_client_data: Optional[int] = Field(None, ge=1, le=predicates.LISTENER_TIMEOUT_MAX, strict=True)
    """Milliseconds a client connection may stay idle (no data either way) before the load balancer closes it.
    Default 3600000 (1 h) on amphora TCP/HTTP(S) listeners, where Octavia's own default (50000) cuts idle kubectl
    watch, logs -f and exec sessions after 50 s: kube-apiserver ends a watch after 30-60 min (2 x its default
    --min-request-timeout 1800 s), so an hour outlives every watch, and idle sessions still end. Not sent under ovn,
    which ignores it (an OVN load balancer is no proxy: connections live as long as their conntrack entries), nor on
    UDP/SCTP listeners (served by LVS); giving it there is refused. At most 2073600000 (24 days)."""
    timeout_member_data: Optional[int] = Field(None, ge=1, le=predicates.LISTENER_TIMEOUT_MAX, strict=True)
    """Milliseconds a member connection may stay idle before the load balancer closes it. Default 3600000 (1 h) on
    amphora TCP/HTTP(S) listeners, as timeoutClientData (either one cuts an idle stream); same limits."""
    timeout_member_connect: Optional[int] = Field(None, ge=1, le=predicates.LISTENER_TIMEOUT_MAX, strict=True)
    """Milliseconds the load balancer waits for a member to accept a connection. Default: not sent, so the cloud's
    ([haproxy_amphora] timeout_member_connect, 5000 as Octavia ships it) applies; amphora TCP/HTTP(S) listeners
    only."""
    timeout_tcp_inspect: Optional[int] = Field(None, ge=0, le=predicates.LISTENER_TIMEOUT_MAX, strict=True)
    """Milliseconds the load balancer waits for content to inspect (L7 rules) before forwarding. Default: not sent,
    so the cloud's (0, no wait, as Octavia ships it) applies; amphora TCP/HTTP(S) listeners only."""

    @field_validator("timeout_client_data", "timeout_member_data", "timeout_member_connect", mode="before")
    @classmethod
    def _timeout_not_zero(cls, value: Any) -> Any:
        if type(value) is int and value == 0:
            raise ValueError(f"0 does not mean 'no timeout': the load balancer then applies the cloud's configured "
                             f"default; give the milliseconds, 1 to {predicates.LISTENER_TIMEOUT_MAX}, or remove the key "
                             "for the endpoint's default")
        return value

    @field_validator("certificate_ref")
    @classmethod
    def _certificate_is_a_reference(cls, value: Any) -> Any:
        problem = certificate_ref_problem(value) if isinstance(value, str) else None
        if problem:
            raise ValueError(problem)
        return value


class AdoptArgs(_Model):
    """An existing load balancer this zone takes over (docs/adoption.md): its listeners at the endpoint's ports, their
    pools, monitors and members, and the floating IP on its VIP become the zone's own through Pulumi's ``import``
    resource option. They get the stack's identity (tags, names, descriptions: the preview shows these as updates)
    and are never deleted by the stack: removing the zone, the key or the stack leaves them serving as they are."""

    load_balancer: str = Field(min_length=1)
    """Name or id of the Octavia load balancer to take over (e.g. CAPO's ``k8s-clusterapi-cluster-<ns>-<cluster>-kubeapi``)."""
    allow_replacement: Optional[bool] = Field(False, strict=True)
    """Where the configuration differs from the adopted load balancer in what Octavia cannot change in place (its VIP
    subnet, provider or availability zone), build the zone's load balancer new instead, and move the adopted floating
    IP to it once it serves; the adopted load balancer is then left as it is (never deleted). Off: such a difference
    is refused at preview, naming it."""


class ZoneArgs(_Model):
    """One availability zone of the endpoint: where its load balancer's VIP lives."""

    subnet: Input[str]
    """Subnet (name or id) of the zone's load balancer VIP, in this AZ; may be the id of a Subnet declared beside."""
    floating_ip: Optional[Input[str]] = None
    """An existing floating IP address (IPv4) to associate instead of allocating one; never created or deleted."""
    take_over_floating_ip: Optional[bool] = False
    """Let the endpoint move floatingIp from the port it is associated with now (another server or load balancer,
    which then loses it). Off: such an address is refused at preview."""
    adopt: Optional[AdoptArgs] = None
    """Take over an existing load balancer as this zone's (``{loadBalancer: <name or id>}``) instead of creating one:
    see :class:`AdoptArgs` and docs/adoption.md. Octavia backend only."""
    vip_address: Optional[Input[str]] = None
    """The zone's VIP address (the zone's vipAddress output), on its subnet; default: Neutron picks a free one when
    the VIP port is created. Given, the members' keepalived configuration (and its KubeadmControlPlane files) is known
    at preview, not only once `up` made the VIP port. It must be inside the subnet's CIDR (outside its allocation pools
    is fine, and then Neutron never hands it to another port), not its network, broadcast or gateway address, and held
    by no port but this zone's own VIP port: refused at preview otherwise (an Output once known). Changing it replaces
    the zone's VIP port, the old one deleted first: the zone is down until its members run the new configuration
    (docs/keepalived.md). keepalived backend only."""

    @field_validator("subnet")
    @classmethod
    def _subnet_is_named(cls, value: Any) -> Any:
        if isinstance(value, str) and not value:
            raise ValueError("give the name or id of the zone's subnet")
        return value

    @field_validator("floating_ip")
    @classmethod
    def _floating_ip_is_ipv4(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            ipaddress.IPv4Address(value)
        except ValueError:
            raise ValueError(f"'{value}' is not an IPv4 address; give the address of an existing floating IP") from None
        return value

    @field_validator("vip_address")
    @classmethod
    def _vip_address_is_an_address(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            ipaddress.ip_address(value)
        except ValueError:
            raise ValueError(f"'{value}' is not an IP address; give a free address on the zone's subnet (e.g. "
                             "10.10.1.5), or remove vipAddress to let Neutron pick one") from None
        return value


class MemberArgs(_Model):
    """A server behind the endpoint, e.g. one Kubernetes control-plane node: by address, or by server."""

    _renamed: ClassVar[dict[str, str]] = {"zone": "az"}
    _where: ClassVar[str] = "members[]."

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    """Unique member name (letters, digits, '.', '_', '-'): the Octavia member's name."""
    az: str = Field(min_length=1)
    """Availability zone the member runs in (a key of `zones`)."""
    address: Optional[Input[str]] = None
    """The member's IP address on its subnet; taken from `server` when that is given instead."""
    server: Optional[Input[str]] = None
    """Id of the member's server (an openstack.compute.Instance; Python also takes the Instance itself): its address
    and port on the member's subnet (or `port`) and its availability zone, which must be `az`, are looked up."""
    subnet: Optional[Input[str]] = None
    """Subnet (name or id) of the member's address; defaults to its zone's subnet."""
    port: Optional[Input[str]] = None
    """Neutron port id of the member (with `server`: which of its ports); the members' security group is attached
    to it."""
    weight: Optional[int] = Field(1, ge=0, le=256, strict=True)
    """Share of new connections among the zone's members in service; 0 takes the member out, as enabled: false
    does. The ovn provider ignores it (equal shares): under ovn it is written when the member is created, never
    updated."""
    enabled: Optional[bool] = Field(True, strict=True)
    """false takes the member out (e.g. its node's maintenance) on every provider: it stays in its pools,
    administratively down (admin_state_up false, which the ovn provider needs: it ignores the weight), gets no new
    connection, is not waited for by the readiness gate and does not count as its zone's capacity (a zone whose only
    members are taken out is refused). true (default) puts it back (under ovn by re-creating the member, which that
    provider needs; the preview shows the replacement). The configuration is the source of truth: an admin state
    changed by hand is written back to this at the next update."""
    _source: str = PrivateAttr("static")
    """Which member source gave it (:mod:`ha_endpoint.members`): ``static`` (this list) or ``clusterApi``."""
    _origin: Optional[str] = PrivateAttr(None)
    """Where messages name the member: ``members[<index>]`` for a member of the list (set when the endpoint's
    arguments are validated), or where a source read it (e.g. ``memberSources.clusterApi[Machine default/cp-0]``)."""
    _agent_tag: Optional[str] = PrivateAttr(None)
    """The tag of the member agent that may hold this member between runs (``ha-endpoint:agent=<namespace>/<cluster>``,
    for a member read from a Machine): ``up`` leaves a member carrying it alone."""

    @model_validator(mode="before")
    @classmethod
    def _server_id(cls, data: Any) -> Any:
        """Python callers may pass the server resource itself; its ``id`` is what the member needs."""
        if isinstance(data, dict) and isinstance(data.get("server"), Resource):
            data = {**data, "server": data["server"].id}
        return data

    @field_validator("port")
    @classmethod
    def _port_is_an_id(cls, value: Any) -> Any:
        if isinstance(value, str) and not predicates.is_uuid(value):
            raise ValueError(f"'{value}' is not a Neutron port id (a UUID such as "
                             "3f1b2c4d-5e6f-4a1b-9c2d-7e8f9a0b1c2d); give the id of the member's port "
                             "(openstack port list --server <server>)")
        return value

    @field_validator("address")
    @classmethod
    def _address_is_ip(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            ipaddress.ip_address(value)
        except ValueError:
            raise ValueError(f"'{value}' is not an IP address; give the member's IPv4 or IPv6 address on its subnet "
                             "(e.g. 10.10.1.10), or its server instead") from None
        return value


class MachineAddressType(StrEnum):
    """Which of a Cluster API Machine's ``status.addresses`` is its member's address (an IP: Octavia needs one)."""

    INTERNAL_IP = "InternalIP"
    """The Machine's address on its own network (the members' subnet)."""
    EXTERNAL_IP = "ExternalIP"
    """The Machine's externally reachable address."""


class ClusterApiSourceArgs(_Model):
    """Members from the control-plane Machines of one Cluster API cluster, read from its management cluster at
    preview and up: name the Machine's, address from ``status.addresses``, zone from ``spec.failureDomain`` (CAPO's
    failure domains are the availability zones), subnet ``subnets[<zone>]``, else its zone's."""

    _where: ClassVar[str] = "memberSources.clusterApi."

    cluster: str = Field(min_length=1, max_length=63, pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
    """The Cluster API Cluster's name (its Machines carry the label cluster.x-k8s.io/cluster-name with it)."""
    namespace: Optional[str] = Field("default", min_length=1, max_length=63,
                                     pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    """The namespace of the Cluster and its Machines (default: default)."""
    kubeconfig: Optional[str] = Field(None, min_length=1)
    """Path of the kubeconfig file of the management cluster; default: KUBECONFIG, else ~/.kube/config, else the
    in-cluster service account."""
    address_type: Optional[MachineAddressType] = MachineAddressType.INTERNAL_IP
    """Which Machine address is the member's: InternalIP (default) or ExternalIP."""
    selector: Optional[dict[str, str]] = None
    """Labels a served Machine carries (an empty value: the label, any value); default: the cluster's control-plane
    Machines (the labels cluster.x-k8s.io/cluster-name, with the cluster's name, and cluster.x-k8s.io/control-plane)."""
    subnets: Optional[dict[str, Input[str]]] = None
    """Subnet (name or id) of the Machines' addresses, per zone (a key of zones), as a static member's `subnet`
    (and the member agent's --member-subnet <zone>=<subnet id>); a zone left out: its VIP subnet. For Machines on a
    network other than the zones' VIP subnets (e.g. one network shared by the AZs: the same subnet for every zone)."""


class MemberSourcesArgs(_Model):
    """Where members come from besides the static `members` list."""

    _where: ClassVar[str] = "memberSources."

    cluster_api: Optional[ClusterApiSourceArgs] = None
    """The control-plane Machines of a Cluster API cluster."""


class DnsArgs(_Model):
    """The endpoint's DNS name in Designate: one A record per published zone, for client-side failover."""

    _renamed: ClassVar[dict[str, str]] = {"zone": "dnsZone"}
    _where: ClassVar[str] = "dns."

    dns_zone: Input[str]
    """An existing Designate zone, fully qualified with the trailing dot (e.g. 'example.test.'); may be the name of
    a Zone declared beside."""
    record: str = Field(min_length=1)
    """Record name inside the zone, e.g. 'api' -> api.<zone>."""
    ttl: Optional[int] = Field(30, ge=1, le=86400, strict=True)
    """Seconds resolvers may cache the record; keep it <= 60 for fast failover."""
    publish: Optional[PublishMode] = PublishMode.WHEN_READY
    """when-ready (default): a zone's address is published once its members are ready; bootstrap: once its load
    balancer is ACTIVE (first control-plane node)."""
    per_zone_records: Optional[bool] = False
    """Also publish <record>-<az>.<zone> for each zone."""

    @field_validator("dns_zone")
    @classmethod
    def _zone_is_fqdn(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.endswith("."):
            raise ValueError(f"'{value}' is not fully qualified; write it with its trailing dot: '{value}.'")
        return value

    @field_validator("record")
    @classmethod
    def _record_is_label(cls, value: str) -> str:
        if value.endswith("."):
            raise ValueError("give the name inside the zone without a trailing dot, e.g. 'api'")
        return value


class ReadinessArgs(_Model):
    """How long and for what the endpoint waits before a zone counts as ready."""

    timeout_seconds: Optional[int] = Field(600, ge=1, le=86400, strict=True)
    """Give up waiting for a zone's members after this long (the update fails, naming every member not ready)."""
    require: Optional[ReadinessRequirement] = ReadinessRequirement.ONLINE
    """online (default): provisioning ACTIVE and operating ONLINE; provisioned: ACTIVE only."""
    poll_interval_seconds: Optional[float] = Field(1.0, gt=0, le=60, strict=True)
    """Longest pause between two status polls."""
    stable_polls: Optional[int] = Field(2, ge=1, le=100, strict=True)
    """A member counts as ready only once it was ready in this many consecutive polls (a flapping member does not)."""
    drain_seconds: Optional[int] = Field(0, ge=0, le=3600, strict=True)
    """Grace a removed member keeps with weight 0 before it is deleted."""
    on_zone_not_ready: Optional[OnZoneNotReady] = OnZoneNotReady.FAIL
    """fail (default): a zone whose members do not become ready fails the update; unpublish: the zone is left out of
    DNS with the reason in the outputs (zones.<az>.notReadyReason), its resources kept, and the update completes for
    the other zones; the next update checks it again (for `pulumi up` during an AZ outage)."""
    min_ready_zones: Optional[int] = Field(None, ge=1, le=64, strict=True)
    """With onZoneNotReady: unpublish, the update fails, naming the zones not ready, when fewer zones than this are
    ready; default: every zone but one."""
    dead_after_seconds: Optional[int] = Field(60, ge=5, le=3600, strict=True)
    """With onZoneNotReady: unpublish, a zone whose every member has been reported down (OFFLINE or ERROR) this long,
    or whose load balancer is in provisioning ERROR, is not ready at once rather than after timeoutSeconds."""
    cloud: Optional[str] = Field(None, min_length=1)
    """clouds.yaml entry the gates and drains poll; default: the one of the OpenStack provider the endpoint's
    resources use (the explicit provider's, else openstack:cloud)."""
    region: Optional[str] = Field(None, min_length=1)
    """Region the gates and drains poll; default: the provider's region."""


class EndpointArgs(_Model):
    """A highly available endpoint: one Octavia load balancer per availability zone behind one DNS name."""

    _renamed: ClassVar[dict[str, str]] = {"provider": "loadBalancerProvider"}
    _checked: Any = PrivateAttr(None)
    """The rules (:class:`ha_endpoint.core.checks.Rules`) by which :func:`ha_endpoint.core.validation.load_endpoint_args`
    found no problem (None: not checked yet): the arguments are immutable, so they are checked once by a backend's
    rules however many hands they pass through (the stack program, HaEndpoint, the pipeline)."""

    _former_keys: tuple[str, ...] = PrivateAttr(())
    """What :func:`ha_endpoint.core.validation.load_endpoint_args` found given by a former name: a notice each
    (:func:`ha_endpoint.core.checks.notices`), which HaEndpoint says once, as a warning on itself."""

    def __eq__(self, other: object) -> bool:
        """Equal when they say the same: what loading them remembers (``_checked``, ``_former_keys``) is not part of
        the arguments."""
        if not isinstance(other, EndpointArgs):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = _Model.__hash__

    def model_copy(self, *, update: Optional[Mapping[str, Any]] = None, deep: bool = False) -> "EndpointArgs":
        """A copy; one with ``update`` is checked again (it is other arguments)."""
        copied = super().model_copy(update=update, deep=deep)
        if update:
            copied._checked = None
        return copied._named() if update and "members" in update else copied

    name: str = Field(min_length=1, max_length=40, pattern=r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
    """Prefix of every resource name: lowercase letters, digits and '-', at most 40 characters."""
    backend: Optional[str] = Field(DEFAULT_BACKEND, min_length=1)
    """What serves each availability zone: a backend registered by this name (ha_endpoint.backends): octavia
    (default; one Octavia load balancer per zone) or keepalived (a VIP per zone that its members hold with VRRP, for
    clouds without Octavia)."""
    load_balancer_provider: Optional[LoadBalancerProvider] = LoadBalancerProvider.AMPHORA
    """Octavia provider driver: amphora (default) or ovn."""
    floating_network: Optional[Input[str]] = None
    """External network (name or id) for the floating IPs; omit for an internal endpoint (DNS then gets the VIPs)."""
    allowed_cidrs: Optional[list[str]] = Field(default_factory=lambda: ["0.0.0.0/0"], min_length=1)
    """Client CIDRs admitted to the listeners (default: everyone)."""
    zones: dict[str, ZoneArgs]
    """Availability zone name -> where its load balancer lives; at least two."""
    listeners: list[ListenerArgs] = Field(min_length=1)
    """Ports the endpoint serves."""
    members: Optional[list[MemberArgs]] = Field(default_factory=list)
    """Servers behind the endpoint (static members: by address or by server)."""
    member_sources: Optional[MemberSourcesArgs] = None
    """Members read at preview and up, beside the static ones: clusterApi (the control-plane Machines of a Cluster
    API cluster)."""
    member_placement: Optional[MemberPlacement] = MemberPlacement.OWN_ZONE
    """own-zone (default): members join their own zone's load balancer; all-zones: every zone's."""
    dns: Optional[DnsArgs] = None
    """DNS name of the endpoint; omit to publish no record."""
    readiness: Optional[ReadinessArgs] = Field(default_factory=ReadinessArgs)
    """Readiness gate of each zone."""
    tags: Optional[list[str]] = Field(default_factory=list)
    """Tags put on every load balancer, e.g. 'production' (which turns on the policy pack's production rules)."""

    @model_validator(mode="after")
    def _name_members(self) -> "EndpointArgs":
        """Each member of the list knows where messages name it (``members[<index>]``), once, so that every check,
        lookup and plan reads it from the member (see :meth:`_named`)."""
        return self._named()

    def _named(self) -> "EndpointArgs":
        """These arguments with each static member named by its place in the list; a member object given to another
        endpoint's list too gets a copy of its own here. Members a source read keep where it read them."""
        members = self.members or []
        for index, member in enumerate(members):
            path = f"members[{index}]"
            if member._source != "static" or member._origin == path:
                continue
            if member._origin is not None:
                member = members[index] = member.model_copy()
            member._origin = path
        return self

    @field_validator("allowed_cidrs")
    @classmethod
    def _cidrs_are_networks(cls, values: list[str]) -> list[str]:
        for value in values:
            try:
                ipaddress.ip_network(value, strict=True)
            except ValueError:
                try:
                    network = ipaddress.ip_network(value, strict=False)
                except ValueError:
                    raise ValueError(f"'{value}' is not a network in CIDR notation; write e.g. '10.0.0.0/8' (or "
                                     "'::/0' for every IPv6 client)") from None
                raise ValueError(f"'{value}' has host bits set; write the network it is in, '{network}'") from None
        return values

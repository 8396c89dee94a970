"""The LoadBalancerTree resource's input property bag: validation, the single-call create body, and what an update
changes in place or by replacement (pure).

LoadBalancerTree inputs (property names as stored in state):

- ``name``, ``description`` (str): the load balancer's (the zone's load balancer name, ``<name>-<az>-lb``).
- ``vip_subnet_id`` (str), ``availability_zone`` (str or none: none under the ovn provider), ``loadbalancer_provider``
  (str or none: the cloud's default).
- ``tags`` (list of str): on the load balancer, its listeners, pools and health monitors (the stack's identity tag
  among them); ``identity_tag`` (str): the stack's identity tag, what a delete proves each object carries.
- ``listeners`` (list): each ``{name, description, protocol, protocol_port, allowed_cidrs,
  default_tls_container_ref, pool: {name, description, protocol, lb_method}, monitor: none | {name, type, delay,
  timeout, max_retries, max_retries_down, url_path, expected_codes}, members, member_tag}``. ``members`` (entries as
  a member set's, :mod:`.set_inputs`) are the pool's first members: written by the create, tagged ``member_tag`` (the
  pool's member set's tag, :func:`ha_endpoint.core.contract.member_set_tag`) so that the pool's member set owns them
  from then on; an update never writes members (that set does), so a change of them is no change of the tree.
- ``write_timeout_seconds`` (number > 0, default 300): how long one write, or the wait for Octavia to apply it, is
  retried while Octavia answers 409, 5xx or not at all.
- ``cloud``, ``region``, ``cloud_source``: where to write (:mod:`.target`).

In place (one ``PUT`` per object that differs, one at a time: Octavia applies one write per load balancer): the load
balancer's name, description and tags; a listener's name, description, allowed CIDRs, certificate and tags; a pool's
name, description, algorithm and tags; a monitor's name, timings, retries, URL path and expected codes. Everything
else (the VIP subnet, the zone, the provider, the listeners' ports and protocols, a pool's protocol, a monitor added,
removed or of another type) is a new tree, created before the old one is deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from .inputs import InputError, optional_text, positive_number
from .set_inputs import DEFAULT_WRITE_TIMEOUT_SECONDS, DesiredMember, parse_members

INPUT_KEYS = ("name", "description", "vip_subnet_id", "availability_zone", "loadbalancer_provider", "tags",
              "identity_tag", "listeners", "write_timeout_seconds", "cloud", "region", "cloud_source")
CREATE_TOKEN_PREFIX = "ha-endpoint:create="
"""The tag a create puts on the load balancer it posts: it finds that load balancer again when the answer to its
POST was lost (a timeout, a 5xx after the write), instead of posting a second one."""


@dataclass(frozen=True)
class MonitorSpec:
    name: str
    type: str
    delay: int
    timeout: int
    max_retries: int
    max_retries_down: int
    url_path: Optional[str] = None
    expected_codes: Optional[str] = None

    def attributes(self) -> dict[str, Any]:
        """What can change in place (``PUT /healthmonitors/{id}``)."""
        http = {"url_path": self.url_path, "expected_codes": self.expected_codes} if self.url_path else {}
        return {"name": self.name, "delay": self.delay, "timeout": self.timeout, "max_retries": self.max_retries,
                "max_retries_down": self.max_retries_down, **http}


@dataclass(frozen=True)
class ListenerSpec:
    """One listener with its default pool, the pool's health monitor and first members."""

    name: str
    description: str
    protocol: str
    protocol_port: int
    allowed_cidrs: tuple[str, ...]
    tls_ref: Optional[str]
    pool_name: str
    pool_description: str
    pool_protocol: str
    lb_method: str
    monitor: Optional[MonitorSpec]
    members: tuple[DesiredMember, ...]
    member_tag: str

    @property
    def key(self) -> str:
        """The listener's key in the outputs: its port."""
        return str(self.protocol_port)

    def structure(self) -> tuple[Any, ...]:
        """What cannot change in place."""
        return (self.protocol_port, self.protocol, self.pool_protocol,
                self.monitor.type if self.monitor is not None else None)

    def listener_attributes(self, tags: tuple[str, ...]) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "allowed_cidrs": list(self.allowed_cidrs),
                "default_tls_container_ref": self.tls_ref, "tags": list(tags)}

    def pool_attributes(self, tags: tuple[str, ...]) -> dict[str, Any]:
        return {"name": self.pool_name, "description": self.pool_description, "lb_algorithm": self.lb_method,
                "tags": list(tags)}


@dataclass(frozen=True)
class TreeInputs:
    """The validated inputs of one LoadBalancerTree (see the module docstring)."""

    name: str
    description: str
    vip_subnet_id: str
    availability_zone: Optional[str]
    provider: Optional[str]
    tags: tuple[str, ...]
    identity_tag: str
    listeners: tuple[ListenerSpec, ...]
    write_timeout_seconds: float = DEFAULT_WRITE_TIMEOUT_SECONDS
    cloud: Optional[str] = None
    region: Optional[str] = None
    cloud_source: str = "stack"

    def lb_attributes(self, token: Optional[str]) -> dict[str, Any]:
        """What can change in place on the load balancer (``PUT /loadbalancers/{id}``); its tags keep the create's
        token."""
        return {"name": self.name, "description": self.description,
                "tags": list(self.tags) + ([token] if token else [])}

    def structure(self) -> tuple[Any, ...]:
        """What cannot change in place: a difference is a new tree."""
        return (self.vip_subnet_id, self.availability_zone, self.provider,
                tuple(sorted((listener.structure() for listener in self.listeners), key=lambda s: s[0])))

    def create_body(self, token: str) -> dict[str, Any]:
        """``POST /v2/lbaas/loadbalancers``: the load balancer with every listener, pool, health monitor and first
        member, in one call (Octavia's fully populated create)."""
        body: dict[str, Any] = {**self.lb_attributes(token), "vip_subnet_id": self.vip_subnet_id,
                                "listeners": [self.listener_body(listener) for listener in self.listeners]}
        if self.availability_zone:
            body["availability_zone"] = self.availability_zone
        if self.provider:
            body["provider"] = self.provider
        return body

    def listener_body(self, listener: ListenerSpec) -> dict[str, Any]:
        attributes = {key: value for key, value in listener.listener_attributes(self.tags).items()
                      if value not in (None, [])}
        pool: dict[str, Any] = {**listener.pool_attributes(self.tags), "protocol": listener.pool_protocol,
                                "members": [member.entry((*self.tags, listener.member_tag))
                                            for member in listener.members]}
        if listener.monitor is not None:
            pool["healthmonitor"] = {**listener.monitor.attributes(), "type": listener.monitor.type}
        return {**attributes, "protocol": listener.protocol, "protocol_port": listener.protocol_port,
                "default_pool": pool}


def _text(raw: Mapping[str, Any], key: str, path: str, default: Optional[str] = None) -> str:
    value = raw.get(key, default)
    if not isinstance(value, str) or not value:
        raise InputError(path, f"must be a non-empty string, got {value!r}")
    return value


def _whole(raw: Mapping[str, Any], key: str, path: str, low: int, high: int) -> int:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) \
            or not low <= value <= high:
        raise InputError(path, f"must be a whole number from {low} to {high}, got {value!r}")
    return int(value)


def _strings(value: Any, path: str) -> tuple[str, ...]:
    value = value or []
    if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) and item for item in value):
        raise InputError(path, f"must be a list of strings, got {value!r}")
    return tuple(value)


def _monitor(raw: Any, path: str) -> Optional[MonitorSpec]:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise InputError(path, "must be an object with name, type, delay, timeout, max_retries, max_retries_down")
    return MonitorSpec(
        name=_text(raw, "name", f"{path}.name"), type=_text(raw, "type", f"{path}.type"),
        delay=_whole(raw, "delay", f"{path}.delay", 1, 86400),
        timeout=_whole(raw, "timeout", f"{path}.timeout", 1, 86400),
        max_retries=_whole(raw, "max_retries", f"{path}.max_retries", 1, 10),
        max_retries_down=_whole(raw, "max_retries_down", f"{path}.max_retries_down", 1, 10),
        url_path=optional_text(raw, "url_path"), expected_codes=optional_text(raw, "expected_codes"))


def _listener(index: int, raw: Any) -> ListenerSpec:
    path = f"listeners[{index}]"
    if not isinstance(raw, Mapping):
        raise InputError(path, "must be an object with name, protocol, protocol_port and pool")
    pool = raw.get("pool")
    if not isinstance(pool, Mapping):
        raise InputError(f"{path}.pool", "must be an object with name, protocol and lb_method")
    try:
        members = parse_members(raw.get("members"))
    except InputError as exc:
        raise InputError(f"{path}.{exc.property}", exc.reason) from None
    return ListenerSpec(
        name=_text(raw, "name", f"{path}.name"), description=str(raw.get("description") or ""),
        protocol=_text(raw, "protocol", f"{path}.protocol"),
        protocol_port=_whole(raw, "protocol_port", f"{path}.protocol_port", 1, 65535),
        allowed_cidrs=_strings(raw.get("allowed_cidrs"), f"{path}.allowed_cidrs"),
        tls_ref=optional_text(raw, "default_tls_container_ref"),
        pool_name=_text(pool, "name", f"{path}.pool.name"), pool_description=str(pool.get("description") or ""),
        pool_protocol=_text(pool, "protocol", f"{path}.pool.protocol"),
        lb_method=_text(pool, "lb_method", f"{path}.pool.lb_method"),
        monitor=_monitor(raw.get("monitor"), f"{path}.monitor"), members=members,
        member_tag=_text(raw, "member_tag", f"{path}.member_tag"))


def parse_tree(props: Mapping[str, Any]) -> TreeInputs:
    """Validate and normalise a LoadBalancerTree property bag; raises :class:`~.inputs.InputError`."""
    raw = props.get("listeners")
    if not isinstance(raw, (list, tuple)) or not raw:
        raise InputError("listeners", "must be a non-empty list of listeners")
    listeners = tuple(_listener(index, entry) for index, entry in enumerate(raw))
    seen: dict[int, int] = {}
    for index, listener in enumerate(listeners):
        if listener.protocol_port in seen:
            raise InputError(f"listeners[{index}].protocol_port",
                             f"{listener.protocol_port} is also listeners[{seen[listener.protocol_port]}]'s port: "
                             f"a load balancer takes one listener per port")
        seen[listener.protocol_port] = index
    return TreeInputs(
        name=_text(props, "name", "name"), description=str(props.get("description") or ""),
        vip_subnet_id=_text(props, "vip_subnet_id", "vip_subnet_id"),
        availability_zone=optional_text(props, "availability_zone"),
        provider=optional_text(props, "loadbalancer_provider"), tags=_strings(props.get("tags"), "tags"),
        identity_tag=_text(props, "identity_tag", "identity_tag"), listeners=listeners,
        write_timeout_seconds=positive_number(props, "write_timeout_seconds", DEFAULT_WRITE_TIMEOUT_SECONDS),
        cloud=optional_text(props, "cloud"), region=optional_text(props, "region"),
        cloud_source=optional_text(props, "cloud_source") or "stack")


def inputs_of(props: Mapping[str, Any]) -> dict[str, Any]:
    """The input part of a bag (state holds inputs and outputs together)."""
    return {key: props.get(key) for key in INPUT_KEYS}


def without_members(props: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs as far as the tree owns them: the listeners' first members are the member sets' after the create."""
    inputs = inputs_of(props)
    listeners = inputs.get("listeners")
    if isinstance(listeners, list):
        inputs["listeners"] = [{key: value for key, value in listener.items() if key != "members"}
                               if isinstance(listener, Mapping) else listener for listener in listeners]
    return inputs

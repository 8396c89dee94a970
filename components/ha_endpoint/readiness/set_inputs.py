"""The MemberSet resource's input property bag: validation, normalisation, change detection (pure).

MemberSet inputs (property names as stored in state; the waiting ones mean what they mean for MemberReadiness,
:mod:`.inputs`):

- ``loadbalancer_id``, ``pool_id`` (str): the pool the set owns the members of, and its load balancer.
- ``pool_name`` (str): the pool's logical name (``<name>-<az>-<port>-pool``): named in messages, and the set's tag on
  the members it creates (:func:`ha_endpoint.core.contract.member_set_tag`).
- ``members`` (list): the members the pool must have, each ``{name, address, protocol_port, weight, subnet_id,
  monitor_port, admin_state_up}`` (``subnet_id``, ``monitor_port`` optional; ``weight`` default 1;
  ``admin_state_up`` default true, false for a member the configuration takes out: written so whatever the live
  member's admin state, not waited for). Octavia keys a pool's members on address and port: two entries with the
  same pair are refused.
- ``tags`` (list of str): put on every member the set creates (the zone's tags, the stack's identity tag among them).
- ``identity_tag`` (str): the stack's identity tag; a live member carrying it at the address and port of a wanted
  member was created by the stack's per-member resources: adopted by a set that went through ``handover`` (its
  state says ``handed_over``), refused by any other (those resources would delete it after the set took it).
- ``handover`` (bool, default false): the set of a pool whose members are still per-member resources, retained on
  delete (``memberUpdates: handover``): it writes nothing and owns nothing, and its state records that the stack went
  through the handover, which lets the next update (``batch``) adopt those resources' members.
- ``monitored`` (bool), ``hold_seconds`` (number >= 0), ``require``, ``timeout_seconds``, ``poll_interval_seconds``,
  ``stable_polls``, ``on_not_ready``, ``dead_after_seconds``: how the set waits for the members it wrote.
- ``drain_seconds`` (number >= 0): how long a leaving member keeps weight 0 before it is removed (0: no drain stage).
- ``admin_down`` (bool, default false; recorded only when true): the drain also sets each leaving member
  administratively down, one member per write (for the providers that ignore the weight:
  :func:`ha_endpoint.core.predicates.drains_admin_down`).
- ``write_timeout_seconds`` (number > 0, default 300): how long one batch write (or the wait for its outcome) is
  retried while Octavia answers 409 (PENDING_UPDATE), 5xx or not at all.
- ``cloud``, ``region``, ``cloud_source``: where to poll (:mod:`.target`).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ..cloud.retry import Backoff
from ..core import contract
from .inputs import (BACKOFF_FACTOR, BACKOFF_START_SECONDS, DEFAULT_DEAD_AFTER_SECONDS, DEFAULT_POLL_INTERVAL_SECONDS,
                     DEFAULT_TIMEOUT_SECONDS, PROVIDER_KEY, InputError, on_not_ready, optional_text, polls_count,
                     positive_number)
from .model import LiveMember, PoolExpectation, Requirement
from .waiter import DEFAULT_STABLE_POLLS, WaitSpec

DEFAULT_WRITE_TIMEOUT_SECONDS = 300.0
INPUT_KEYS = ("loadbalancer_id", "pool_id", "pool_name", "members", "tags", "identity_tag", "monitored",
              "hold_seconds", "require", "timeout_seconds", "poll_interval_seconds", "stable_polls", "on_not_ready",
              "dead_after_seconds", "drain_seconds", "write_timeout_seconds", "cloud", "region", "cloud_source",
              "handover", "admin_down")


def endpoint_key(address: str, port: int) -> str:
    """``address:port`` with the address canonical (what Octavia matches a batch's entries on)."""
    try:
        address = ipaddress.ip_address(address.strip()).compressed
    except ValueError:
        pass
    return f"{address}:{port}"


@dataclass(frozen=True)
class DesiredMember:
    """One member the pool must have."""

    name: str
    address: str
    protocol_port: int
    weight: int = 1
    subnet_id: Optional[str] = None
    monitor_port: Optional[int] = None
    admin_state_up: bool = True
    """False: the configuration takes the member out (:func:`ha_endpoint.core.predicates.member_in_service`)."""

    @property
    def endpoint(self) -> str:
        return endpoint_key(self.address, self.protocol_port)

    def entry(self, tags: tuple[str, ...]) -> dict[str, Any]:
        """The batch-update entry that creates it, tagged ``tags``."""
        entry: dict[str, Any] = {"address": self.address, "protocol_port": self.protocol_port, "name": self.name,
                                 "weight": self.weight, "tags": list(tags)}
        if self.subnet_id is not None:
            entry["subnet_id"] = self.subnet_id
        if self.monitor_port is not None:
            entry["monitor_port"] = self.monitor_port
        if not self.admin_state_up:
            entry["admin_state_up"] = False
        return entry

    def differs(self, live: LiveMember) -> bool:
        """Whether the live member needs an update to be this one (what can change in place: name, weight, a given
        monitor port, the admin state, which the configuration decides: one left down by a drain that was
        interrupted or set by hand goes up again, one the configuration takes out goes down; address, port and subnet
        cannot; a batch entry cannot unset a monitor port, so none given is no difference)."""
        port_differs = self.monitor_port is not None and self.monitor_port != live.monitor_port
        return (self.name, self.weight, self.admin_state_up) != (live.name, live.weight, live.admin_state_up) \
            or port_differs

    def update_of(self, live: LiveMember) -> dict[str, Any]:
        """The batch-update entry that makes ``live`` this member, with the admin state the configuration says (its
        other attributes written back as they are)."""
        return live.entry(name=self.name, weight=self.weight, monitor_port=self.monitor_port,
                          admin_state_up=self.admin_state_up)


@dataclass(frozen=True)
class SetInputs:
    """The validated inputs of one MemberSet (see the module docstring)."""

    loadbalancer_id: str
    pool_id: str
    pool_name: str
    members: tuple[DesiredMember, ...]
    tags: tuple[str, ...] = ()
    identity_tag: str = ""
    monitored: bool = True
    hold_seconds: float = 0.0
    require: Requirement = Requirement.ONLINE
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    poll_interval_seconds: float = DEFAULT_POLL_INTERVAL_SECONDS
    stable_polls: int = DEFAULT_STABLE_POLLS
    on_not_ready: str = "fail"
    dead_after_seconds: float = DEFAULT_DEAD_AFTER_SECONDS
    drain_seconds: float = 0.0
    write_timeout_seconds: float = DEFAULT_WRITE_TIMEOUT_SECONDS
    cloud: Optional[str] = None
    region: Optional[str] = None
    cloud_source: str = "stack"
    handover: bool = False
    admin_down: bool = False

    @property
    def set_tag(self) -> str:
        """The tag on every member this set creates."""
        return contract.member_set_tag(self.pool_name)

    @property
    def create_tags(self) -> tuple[str, ...]:
        """What a member the set creates is tagged with: its ``tags`` and the set's own tag."""
        return tuple(dict.fromkeys((*self.tags, self.set_tag)))

    @property
    def unpublishes(self) -> bool:
        return self.on_not_ready == "unpublish"

    def wait_spec(self, member_ids: tuple[str, ...], held: frozenset[str]) -> WaitSpec:
        """How to wait for ``member_ids`` (the pool's wanted members), holding only ``held`` (the ones just
        created) for ``hold_seconds``."""
        pool = PoolExpectation(self.pool_id, tuple(sorted(member_ids)), self.monitored, self.pool_name,
                               self.hold_seconds, frozenset(held))
        backoff = Backoff(min(BACKOFF_START_SECONDS, self.poll_interval_seconds), BACKOFF_FACTOR,
                          self.poll_interval_seconds)
        return WaitSpec(self.loadbalancer_id, (pool,), self.require, self.timeout_seconds, backoff,
                        stable_polls=self.stable_polls,
                        dead_after_seconds=self.dead_after_seconds if self.unpublishes else None)


def _text(props: Mapping[str, Any], key: str, path: Optional[str] = None) -> str:
    value = props.get(key)
    if not isinstance(value, str) or not value:
        raise InputError(path or key, f"must be a non-empty string, got {value!r}")
    return value


def _whole(value: Any, path: str, low: int, high: int, default: Optional[int] = None) -> Optional[int]:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) \
            or not low <= value <= high:
        raise InputError(path, f"must be a whole number from {low} to {high}, got {value!r}")
    return int(value)


def _member(index: int, raw: Any) -> DesiredMember:
    path = f"members[{index}]"
    if not isinstance(raw, Mapping):
        raise InputError(path, "must be an object with name, address and protocol_port")
    address = _text(raw, "address", f"{path}.address")
    try:
        ipaddress.ip_address(address)
    except ValueError:
        raise InputError(f"{path}.address", f"must be an IP address, got {address!r}") from None
    return DesiredMember(
        name=_text(raw, "name", f"{path}.name"), address=address,
        protocol_port=_whole(raw.get("protocol_port"), f"{path}.protocol_port", 1, 65535),
        weight=_whole(raw.get("weight"), f"{path}.weight", 0, 256, 1),
        subnet_id=optional_text(raw, "subnet_id"),
        monitor_port=_whole(raw.get("monitor_port"), f"{path}.monitor_port", 1, 65535),
        admin_state_up=_flag(raw.get("admin_state_up"), f"{path}.admin_state_up"))


def _flag(value: Any, path: str) -> bool:
    """An optional true/false (absent: true)."""
    if value is None:
        return True
    if not isinstance(value, bool):
        raise InputError(path, f"must be true or false (false takes the member out), got {value!r}")
    return value


def parse_members(raw: Any) -> tuple[DesiredMember, ...]:
    """The ``members`` input, validated: every entry well-formed, no address and port (nor name) twice."""
    if raw is None:
        return ()
    if not isinstance(raw, (list, tuple)):
        raise InputError("members", "must be a list of {name, address, protocol_port, weight}")
    members = tuple(_member(index, entry) for index, entry in enumerate(raw))
    seen: dict[str, int] = {}
    names: dict[str, int] = {}
    for index, member in enumerate(members):
        if member.endpoint in seen:
            raise InputError(f"members[{index}]", f"{member.endpoint} is also members[{seen[member.endpoint]}]: "
                             f"Octavia keys a pool's members on address and port; give each once")
        if member.name in names:
            raise InputError(f"members[{index}].name", f"{member.name!r} is also members[{names[member.name]}]'s "
                             f"name; give each member its own")
        seen[member.endpoint], names[member.name] = index, index
    return members


def parse_set(props: Mapping[str, Any]) -> SetInputs:
    """Validate and normalise a MemberSet property bag; raises :class:`~.inputs.InputError`."""
    tags = props.get("tags") or []
    if not isinstance(tags, (list, tuple)) or not all(isinstance(tag, str) and tag for tag in tags):
        raise InputError("tags", f"must be a list of strings, got {tags!r}")
    monitored = props.get("monitored", True)
    if not isinstance(monitored, bool):
        raise InputError("monitored", f"must be true or false, got {monitored!r}")
    handover = props.get("handover") or False
    if not isinstance(handover, bool):
        raise InputError("handover", f"must be true or false, got {handover!r}")
    admin_down = props.get("admin_down") or False
    if not isinstance(admin_down, bool):
        raise InputError("admin_down", f"must be true or false, got {admin_down!r}")
    require = props.get("require") or Requirement.ONLINE.value
    if require not in {r.value for r in Requirement}:
        raise InputError("require", f"must be 'online' or 'provisioned', got {require!r}")
    return SetInputs(
        loadbalancer_id=_text(props, "loadbalancer_id"), pool_id=_text(props, "pool_id"),
        pool_name=_text(props, "pool_name"), members=parse_members(props.get("members")), tags=tuple(tags),
        identity_tag=optional_text(props, "identity_tag") or "", monitored=monitored,
        hold_seconds=_seconds(props, "hold_seconds"), require=Requirement(require),
        timeout_seconds=positive_number(props, "timeout_seconds", DEFAULT_TIMEOUT_SECONDS),
        poll_interval_seconds=positive_number(props, "poll_interval_seconds", DEFAULT_POLL_INTERVAL_SECONDS),
        stable_polls=polls_count(props, "stable_polls", DEFAULT_STABLE_POLLS), on_not_ready=on_not_ready(props),
        dead_after_seconds=positive_number(props, "dead_after_seconds", DEFAULT_DEAD_AFTER_SECONDS),
        drain_seconds=_seconds(props, "drain_seconds"),
        write_timeout_seconds=positive_number(props, "write_timeout_seconds", DEFAULT_WRITE_TIMEOUT_SECONDS),
        cloud=optional_text(props, "cloud"), region=optional_text(props, "region"),
        cloud_source=optional_text(props, "cloud_source") or "stack", handover=handover,
        admin_down=admin_down)


def _seconds(props: Mapping[str, Any], key: str) -> float:
    """``props[key]`` as a number of seconds >= 0 (absent: 0)."""
    value = props.get(key)
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise InputError(key, f"must be a number of seconds >= 0, got {value!r}")
    return float(value)


def inputs_of(props: Mapping[str, Any]) -> dict[str, Any]:
    """The input part of a bag (state holds inputs and outputs together), without the serialized provider."""
    return {key: props.get(key) for key in INPUT_KEYS if key != PROVIDER_KEY}

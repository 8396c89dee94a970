"""The dynamic resources' input property bags: validation, normalisation and change detection (pure).

MemberReadiness inputs (property names as stored in state):

- ``loadbalancer_id`` (str): the zone's Octavia load balancer.
- ``pools`` (map): logical pool name (e.g. the plan's pool name ``"<name>-<az>-<port>-pool"``) -> object with
  ``pool_id`` (str), ``member_ids`` (list of str), ``monitored`` (bool: the pool has a health monitor) and
  ``hold_seconds`` (number >= 0, optional: how long a member must have been ready before it counts) and
  ``check_seconds`` (number >= 0, optional: how often the pool's health monitor checks a member; during a hold the
  gate polls once per check, :mod:`.waiter`). Keys are
  logical names rather than pool ids because ids are unknown until the pools exist and map keys cannot be unknown.
- ``require`` (``"online"`` | ``"provisioned"``), default ``"online"``.
- ``timeout_seconds`` (number > 0), default 600.
- ``poll_interval_seconds`` (number > 0): the longest pause between two polls, default 1. Polling starts at
  ``min(1, poll_interval_seconds)`` and grows x1.25 up to it.
- ``stable_polls`` (whole number >= 1, optional): in how many consecutive polls a member must be ready before it
  counts, default 2 (also when absent: gates recorded before this input existed keep working).
- ``cloud``, ``region`` (str, optional), ``cloud_source``: where to poll (see :mod:`.target`).
- ``on_not_ready`` (``"fail"`` | ``"unpublish"``, optional): what a zone that does not become ready does: fail the
  update (default, also when absent), or end the wait with ``ready`` false and the reason recorded, so that the zone
  is left out of DNS and the update goes on.
- ``dead_after_seconds`` (number > 0, optional): with ``unpublish``, how long every member must have been down before
  the zone counts as dead without waiting out ``timeout_seconds`` (default 60).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ..core.errors import HaEndpointError
from .model import PoolExpectation, Requirement
from .waiter import DEFAULT_STABLE_POLLS, Backoff, WaitSpec

DEFAULT_TIMEOUT_SECONDS = 600.0
DEFAULT_DEAD_AFTER_SECONDS = 60.0
ON_NOT_READY = ("fail", "unpublish")
DEFAULT_POLL_INTERVAL_SECONDS = 1.0
BACKOFF_START_SECONDS = 1.0
BACKOFF_FACTOR = 1.25
PROVIDER_KEY = "__provider"


class InputError(HaEndpointError, ValueError):
    """An input property is invalid, or does not say which cloud to poll (:mod:`.target`).

    Attributes:
        property: the property path, e.g. ``"pools.api.member_ids"``.
        reason: what is wrong and how to fix it.
    """

    def __init__(self, property_: str, reason: str) -> None:
        super().__init__(f"{property_}: {reason}")
        self.property = property_
        self.reason = reason


@dataclass(frozen=True)
class ReadinessInputs:
    """The validated inputs of one MemberReadiness resource (see the module docstring)."""

    loadbalancer_id: str
    pools: tuple[PoolExpectation, ...]
    require: Requirement
    timeout_seconds: float
    poll_interval_seconds: float
    cloud: Optional[str]
    region: Optional[str] = None
    cloud_source: str = "stack"
    stable_polls: int = DEFAULT_STABLE_POLLS
    on_not_ready: str = "fail"
    dead_after_seconds: float = DEFAULT_DEAD_AFTER_SECONDS

    @property
    def unpublishes(self) -> bool:
        """Whether a zone that does not become ready is left out of DNS rather than failing the update."""
        return self.on_not_ready == "unpublish"

    def wait_spec(self) -> WaitSpec:
        """The waiter's spec: backoff from min(1 s, interval) x1.25 up to the interval."""
        backoff = Backoff(
            initial_seconds=min(BACKOFF_START_SECONDS, self.poll_interval_seconds),
            factor=BACKOFF_FACTOR,
            max_seconds=self.poll_interval_seconds,
        )
        return WaitSpec(self.loadbalancer_id, self.pools, self.require, self.timeout_seconds, backoff,
                        stable_polls=self.stable_polls,
                        dead_after_seconds=self.dead_after_seconds if self.unpublishes else None)


def _text(props: Mapping[str, Any], key: str, path: Optional[str] = None) -> str:
    value = props.get(key)
    if not isinstance(value, str) or not value:
        raise InputError(path or key, f"must be a non-empty string id, got {value!r}")
    return value


def positive_number(props: Mapping[str, Any], key: str, default: float) -> float:
    """``props[key]`` as a float > 0, or ``default`` when absent."""
    value = props.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise InputError(key, f"must be a number of seconds > 0, got {value!r}")
    return float(value)


def polls_count(props: Mapping[str, Any], key: str, default: int) -> int:
    """``props[key]`` as a whole number >= 1 (the engine sends numbers as floats: 2.0 is 2), or ``default`` when
    absent."""
    value = props.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value < 1:
        raise InputError(key, f"must be a whole number of polls >= 1, got {value!r}")
    return int(value)


def optional_text(props: Mapping[str, Any], key: str) -> Optional[str]:
    """``props[key]`` as a non-empty string, or ``None`` when absent or empty."""
    value = props.get(key)
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise InputError(key, f"must be a string, got {value!r}")
    return value


def _pool(name: str, spec: Any) -> PoolExpectation:
    path = f"pools.{name}"
    if not isinstance(spec, Mapping):
        raise InputError(path, "must be an object with pool_id, member_ids and monitored")
    pool_id = _text(spec, "pool_id", f"{path}.pool_id")
    member_ids = spec.get("member_ids", [])
    if not isinstance(member_ids, (list, tuple)) or not all(isinstance(m, str) and m for m in member_ids):
        raise InputError(f"{path}.member_ids", f"must be a list of member ids, got {member_ids!r}")
    if len(set(member_ids)) != len(member_ids):
        raise InputError(f"{path}.member_ids", "lists a member id twice; give each member once")
    monitored = spec.get("monitored", True)
    if not isinstance(monitored, bool):
        raise InputError(f"{path}.monitored", f"must be true or false, got {monitored!r}")
    hold, check = (_seconds(spec, key, f"{path}.{key}") for key in ("hold_seconds", "check_seconds"))
    return PoolExpectation(pool_id, tuple(sorted(member_ids)), monitored, name, hold, check)


def _seconds(spec: Mapping[str, Any], key: str, path: str) -> float:
    """``spec[key]``: a number of seconds >= 0 (0 when absent: gates recorded before the key existed keep working)."""
    value = spec.get(key) or 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise InputError(path, f"must be a number of seconds >= 0, got {value!r}")
    return float(value)


def parse_readiness(props: Mapping[str, Any]) -> ReadinessInputs:
    """Validate and normalise a MemberReadiness property bag; raises :class:`InputError`."""
    pools = props.get("pools") or {}
    if not isinstance(pools, Mapping):
        raise InputError("pools", "must be a map of logical pool name -> {pool_id, member_ids, monitored}")
    parsed = tuple(_pool(str(name), pools[name]) for name in sorted(pools))
    seen: dict[str, str] = {}
    for pool in parsed:
        if pool.pool_id in seen:
            raise InputError(f"pools.{pool.name}.pool_id", f"is also the pool of pools.{seen[pool.pool_id]}")
        seen[pool.pool_id] = pool.name
    require = props.get("require") or Requirement.ONLINE.value
    if require not in {r.value for r in Requirement}:
        raise InputError("require", f"must be 'online' or 'provisioned', got {require!r}")
    return ReadinessInputs(
        loadbalancer_id=_text(props, "loadbalancer_id"),
        pools=parsed,
        require=Requirement(require),
        timeout_seconds=positive_number(props, "timeout_seconds", DEFAULT_TIMEOUT_SECONDS),
        poll_interval_seconds=positive_number(props, "poll_interval_seconds", DEFAULT_POLL_INTERVAL_SECONDS),
        cloud=optional_text(props, "cloud"),
        region=optional_text(props, "region"),
        cloud_source=optional_text(props, "cloud_source") or "stack",
        stable_polls=polls_count(props, "stable_polls", DEFAULT_STABLE_POLLS),
        on_not_ready=on_not_ready(props),
        dead_after_seconds=positive_number(props, "dead_after_seconds", DEFAULT_DEAD_AFTER_SECONDS),
    )


def on_not_ready(props: Mapping[str, Any]) -> str:
    """``props["on_not_ready"]``: ``"fail"`` (also when absent) or ``"unpublish"``."""
    value = props.get("on_not_ready") or "fail"
    if value not in ON_NOT_READY:
        raise InputError("on_not_ready", f"must be 'fail' or 'unpublish', got {value!r}")
    return value


def wait_identity(props: Mapping[str, Any]) -> Any:
    """What a wait depends on: load balancer, pools, member ids (order-free), requirement, cloud.

    Two bags with equal identities need no new wait; timing inputs (timeout, interval, stable polls, a pool's hold
    and check seconds) are not part of it, so adding ``stable_polls`` or ``check_seconds`` to a gate recorded without
    it changes nothing. An unparsable bag (e.g. with values unknown during preview) gets a fresh identity, so it
    always counts as changed.
    """
    try:
        parsed = parse_readiness(props)
    except (InputError, TypeError, KeyError):
        return object()
    pools = tuple((p.name, p.pool_id, p.member_ids, p.monitored) for p in parsed.pools)
    return (parsed.loadbalancer_id, pools, parsed.require.value, parsed.cloud, parsed.region)


def without_provider(props: Mapping[str, Any]) -> dict[str, Any]:
    """The bag without Pulumi's serialized-provider property."""
    return {k: v for k, v in props.items() if k != PROVIDER_KEY}

"""The dynamic resources' input property bags, one pydantic model each (pure): :class:`ReadinessInputs` (its pools
:class:`PoolInputs`) and :class:`DrainInputs`. A resource declares its bag with the model (:meth:`GateInputs.declare`,
:meth:`GateInputs.bag`) and its provider validates the bag with the same model (:meth:`GateInputs.of_bag`), so each
key is written once, here. An invalid bag is an :class:`InputError` naming the property path.

MemberReadiness inputs (property names as stored in state):

- ``loadbalancer_id`` (str): the zone's load balancer (what the backend's client reads to word a failure).
- ``pools`` (map): logical pool name (e.g. the plan's pool name ``"<name>-<az>-<port>-pool"``) -> object with
  ``pool_id`` (str), ``member_ids`` (list of str), ``monitored`` (bool: the pool has a health monitor) and
  ``hold_seconds`` (number >= 0, optional: how long a member must have been ready before it counts) and
  ``check_seconds`` (number >= 0, optional: how often the pool's health monitor checks a member; during a hold the
  gate polls once per check, :mod:`.waiter`). Keys are logical names rather than pool ids because ids are unknown
  until the pools exist and map keys cannot be unknown.
- ``require`` (``"online"`` | ``"provisioned"``), default ``"online"``.
- ``timeout_seconds`` (number > 0), default 600.
- ``poll_interval_seconds`` (number > 0): the longest pause between two polls, default 1. Polling starts at
  ``min(1, poll_interval_seconds)`` and grows x1.25 up to it.
- ``stable_polls`` (whole number >= 1, optional): in how many consecutive polls a member must be ready before it
  counts, default 2 (also when absent: gates recorded before this input existed keep working).
- ``cloud``, ``region`` (str, optional), ``cloud_source``: where to poll (see :mod:`.target`).
- ``backend`` (str, optional): the zone's backend, whose member client the gate polls through (:mod:`.source`);
  absent in a bag recorded before it existed, when the default backend served every zone, so it defaults to the
  ``backend`` key's default. A gate and a drain have it alike. Not part of the wait's identity (:func:`wait_identity`):
  recorded anew, it changes nothing.
- ``on_not_ready`` (``"fail"`` | ``"unpublish"``, optional): what a zone that does not become ready does: fail the
  update (default, also when absent), or end the wait with ``ready`` false and the reason recorded, so that the zone
  is left out of DNS and the update goes on.
- ``dead_after_seconds`` (number > 0, optional): with ``unpublish``, how long every member must have been down before
  the zone counts as dead without waiting out ``timeout_seconds`` (default 60).

MemberDrain inputs: see :mod:`.drain`.

Bags recorded by earlier versions parse as they did: a key absent or null takes its default, the engine's numbers
arrive as floats (``2.0`` is a whole number of polls), and keys no model names (``__provider``, the recorded outputs)
are ignored.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Callable, ClassVar, Literal, Mapping, Optional

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError, PydanticUseDefault

from ..core.args import DEFAULT_BACKEND
from ..core.errors import HaEndpointError
from .model import PoolExpectation, Requirement
from .waiter import DEFAULT_STABLE_POLLS, Backoff, WaitSpec

DEFAULT_TIMEOUT_SECONDS = 600.0
DEFAULT_DEAD_AFTER_SECONDS = 60.0
DEFAULT_DRAIN_TIMEOUT_SECONDS = 300.0
DEFAULT_POLL_INTERVAL_SECONDS = 1.0
BACKOFF_START_SECONDS = 1.0
BACKOFF_FACTOR = 1.25
PROVIDER_KEY = "__provider"


class InputError(HaEndpointError, ValueError):
    """An input property is invalid, or does not say which cloud to poll (:mod:`.target`).

    Attributes:
        property: the property path, e.g. ``"pools.api.member_ids"``.
        reason: what is wrong and how to fix it.
        value: the value found there (``None`` when absent).
    """

    def __init__(self, property_: str, reason: str, value: Any = None) -> None:
        super().__init__(f"{property_}: {reason}")
        self.property = property_
        self.reason = reason
        self.value = value


def _refuse(reason: str, at: Optional[tuple[str, ...]] = None) -> PydanticCustomError:
    """A validation error whose message is ``reason`` (``at``: the property path, when not the validated value's)."""
    return PydanticCustomError("gate_input", "{reason}", {"reason": reason, **({"at": at} if at else {})})


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and not math.isnan(value)


def _seconds(value: Any) -> float:
    if value is None:
        raise PydanticUseDefault()
    if not _number(value) or not value > 0:
        raise _refuse(f"must be a number of seconds > 0, got {value!r}")
    return float(value)


def _grace(value: Any) -> float:
    if value is None:
        raise PydanticUseDefault()
    if not _number(value) or value < 0:
        raise _refuse(f"must be a number of seconds >= 0, got {value!r}")
    return float(value)


def _polls(value: Any) -> int:
    if value is None:
        raise PydanticUseDefault()
    if not _number(value) or not math.isfinite(value) or value != int(value) or value < 1:
        raise _refuse(f"must be a whole number of polls >= 1, got {value!r}")
    return int(value)


def _id(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise _refuse(f"must be a non-empty string id, got {value!r}")
    return value


def _text(value: Any) -> Optional[str]:
    if value in (None, ""):
        raise PydanticUseDefault()
    if not isinstance(value, str):
        raise _refuse(f"must be a string, got {value!r}")
    return value


def _backend(value: Any) -> str:
    if value is None:
        raise PydanticUseDefault()
    if not isinstance(value, str) or not value:
        raise _refuse(f"must be the name of the zone's backend, got {value!r}")
    return value


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _refuse(f"must be true or false, got {value!r}")
    return value


def _one_of(*allowed: str) -> BeforeValidator:
    """A choice among ``allowed``; empty or absent: the default."""
    def choice(value: Any) -> str:
        if not value:
            raise PydanticUseDefault()
        if not isinstance(value, str) or value not in allowed:
            raise _refuse(f"must be {' or '.join(map(repr, allowed))}, got {value!r}")
        return value
    return BeforeValidator(choice)


def _member_ids(value: Any) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(m, str) and m for m in value):
        raise _refuse(f"must be a list of member ids, got {value!r}")
    if len(set(value)) != len(value):
        raise _refuse("lists a member id twice; give each member once")
    return tuple(sorted(value))


Seconds = Annotated[float, BeforeValidator(_seconds)]
Grace = Annotated[float, BeforeValidator(_grace)]
Polls = Annotated[int, BeforeValidator(_polls)]
Id = Annotated[str, BeforeValidator(_id)]
Text = Annotated[Optional[str], BeforeValidator(_text)]
Flag = Annotated[bool, BeforeValidator(_flag)]
Require = Annotated[Literal["online", "provisioned"], _one_of(*(r.value for r in Requirement))]
ON_NOT_READY = ("fail", "unpublish")
OnNotReady = Annotated[Literal["fail", "unpublish"], _one_of(*ON_NOT_READY)]


class GateInputs(BaseModel):
    """A dynamic resource's property bag: validated by its provider (:meth:`of_bag`), declared by its resource
    (:meth:`declare`, whose fields may still be Pulumi inputs, and :meth:`bag`)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    SHAPE: ClassVar[str] = "an object"
    """What the bag must be, in a message."""
    RECORDED_WHEN_TRUE: ClassVar[frozenset[str]] = frozenset()
    """Flags :meth:`bag` records only when true: a bag recorded before the flag existed has no change."""

    @classmethod
    def problems(cls, props: Mapping[str, Any], unknown: Callable[[Any], bool] = lambda _value: False
                 ) -> list[InputError]:
        """Every invalid property of ``props``, one error per path, except where ``unknown`` says the value found
        there is not known yet (a preview's)."""
        try:
            cls.model_validate(props)
        except ValidationError as exc:
            found: dict[str, InputError] = {}
            for detail in exc.errors(include_url=False):
                error = _input_error(props, detail)
                if error.property not in found and not unknown(error.value):
                    found[error.property] = error
            return list(found.values())
        return []

    @classmethod
    def of_bag(cls, props: Mapping[str, Any]) -> Any:
        """The validated inputs of a property bag; raises :class:`InputError` (the first problem)."""
        try:
            return cls.model_validate(props)
        except ValidationError as exc:
            raise _input_error(props, exc.errors(include_url=False)[0]) from None

    @classmethod
    def declare(cls, **values: Any) -> Any:
        """The inputs a resource declares, unvalidated (values may be Pulumi inputs, known later): the provider
        validates them; an unknown name is a ``TypeError``."""
        unknown = sorted(set(values) - set(cls.model_fields))
        if unknown:
            raise TypeError(f"{cls.__name__} has no input {', '.join(unknown)}; its inputs: "
                            f"{', '.join(cls.model_fields)}")
        return cls.model_construct(**values)

    def bag(self) -> dict[str, Any]:
        """The property bag: every input, defaults included (but :data:`RECORDED_WHEN_TRUE` only when true)."""
        return {name: _bagged(getattr(self, name)) for name in type(self).model_fields
                if name not in self.RECORDED_WHEN_TRUE or getattr(self, name) is True}

    @model_validator(mode="before")
    @classmethod
    def _absent_required(cls, data: Any) -> Any:
        """A bag that is not a mapping is refused with :data:`SHAPE`; a required key absent is judged as null (its
        message says what it must be)."""
        if isinstance(data, Mapping):
            return {**{name: None for name, field in cls.model_fields.items() if field.is_required()}, **data}
        raise _refuse(f"must be {cls.SHAPE}")


def _bagged(value: Any) -> Any:
    if isinstance(value, GateInputs):
        return value.bag()
    if isinstance(value, Mapping):
        return {key: _bagged(item) for key, item in value.items()}
    return value


def _input_error(props: Mapping[str, Any], detail: Mapping[str, Any]) -> InputError:
    """A pydantic error detail as an :class:`InputError`, with the value found at its path."""
    at = tuple((detail.get("ctx") or {}).get("at") or detail["loc"])
    value: Any = props
    for part in at:
        value = value.get(part) if isinstance(value, Mapping) else None
    reason = detail["msg"] if detail["type"] == "gate_input" else f"{detail['msg'][:1].lower()}{detail['msg'][1:]}, " \
        f"got {detail.get('input')!r}"
    return InputError(".".join(map(str, at)), reason, value)


class TargetInputs(GateInputs):
    """Where a gate or drain polls (:mod:`.target`), and through whose client: its zone's backend's (:mod:`.source`)."""

    cloud: Text = None
    region: Text = None
    cloud_source: Text = "stack"
    backend: Annotated[str, BeforeValidator(_backend)] = DEFAULT_BACKEND


class PoolInputs(GateInputs):
    """One pool a gate waits for (see the module docstring)."""

    SHAPE = "an object with pool_id, member_ids and monitored"

    pool_id: Id
    member_ids: Annotated[tuple[str, ...], BeforeValidator(_member_ids)] = ()
    monitored: Flag = True
    hold_seconds: Grace = 0.0
    check_seconds: Grace = 0.0

    def expectation(self, name: str) -> PoolExpectation:
        return PoolExpectation(self.pool_id, self.member_ids, self.monitored, name, self.hold_seconds,
                               self.check_seconds)


def _pool_map(value: Any) -> Any:
    if not value:
        raise PydanticUseDefault()
    if not isinstance(value, Mapping):
        raise _refuse("must be a map of logical pool name -> {pool_id, member_ids, monitored}")
    return {str(name): value[name] for name in sorted(value)}


class ReadinessInputs(TargetInputs):
    """The inputs of one MemberReadiness resource (see the module docstring)."""

    loadbalancer_id: Id
    pools: Annotated[dict[str, PoolInputs], BeforeValidator(_pool_map)] = {}
    require: Require = "online"
    timeout_seconds: Seconds = DEFAULT_TIMEOUT_SECONDS
    poll_interval_seconds: Seconds = DEFAULT_POLL_INTERVAL_SECONDS
    stable_polls: Polls = DEFAULT_STABLE_POLLS
    on_not_ready: OnNotReady = "fail"
    dead_after_seconds: Seconds = DEFAULT_DEAD_AFTER_SECONDS

    @field_validator("pools")
    @classmethod
    def _one_pool_each(cls, pools: dict[str, PoolInputs]) -> dict[str, PoolInputs]:
        seen: dict[str, str] = {}
        for name, pool in pools.items():
            if pool.pool_id in seen:
                raise _refuse(f"is also the pool of pools.{seen[pool.pool_id]}", ("pools", name, "pool_id"))
            seen[pool.pool_id] = name
        return pools

    @classmethod
    def declare(cls, **values: Any) -> Any:
        """As :meth:`GateInputs.declare`; a pool may be given as the mapping of its inputs."""
        pools = values.get("pools") or {}
        values["pools"] = {name: pool if isinstance(pool, PoolInputs) else PoolInputs.declare(**pool)
                           for name, pool in pools.items()}
        return super().declare(**values)

    @property
    def unpublishes(self) -> bool:
        """Whether a zone that does not become ready is left out of DNS rather than failing the update."""
        return self.on_not_ready == "unpublish"

    @property
    def expectations(self) -> tuple[PoolExpectation, ...]:
        """The pools as the waiter expects them, by logical name."""
        return tuple(pool.expectation(name) for name, pool in self.pools.items())

    def identity(self) -> tuple[Any, ...]:
        """What the wait depends on (:func:`wait_identity`)."""
        pools = tuple((name, p.pool_id, p.member_ids, p.monitored) for name, p in self.pools.items())
        return (self.loadbalancer_id, pools, self.require, self.cloud, self.region)

    def wait_spec(self) -> WaitSpec:
        """The waiter's spec: backoff from min(1 s, interval) x1.25 up to the interval."""
        backoff = Backoff(
            initial_seconds=min(BACKOFF_START_SECONDS, self.poll_interval_seconds),
            factor=BACKOFF_FACTOR,
            max_seconds=self.poll_interval_seconds,
        )
        return WaitSpec(self.loadbalancer_id, self.expectations, Requirement(self.require), self.timeout_seconds,
                        backoff, stable_polls=self.stable_polls,
                        dead_after_seconds=self.dead_after_seconds if self.unpublishes else None)


class DrainInputs(TargetInputs):
    """The inputs of one MemberDrain resource (:mod:`.drain`)."""

    RECORDED_WHEN_TRUE = frozenset({"admin_down", "taken_out"})

    pool_id: Id
    member_id: Id
    drain_seconds: Grace = 0.0
    timeout_seconds: Seconds = DEFAULT_DRAIN_TIMEOUT_SECONDS
    admin_down: Flag = False
    taken_out: Flag = False


def wait_identity(props: Mapping[str, Any]) -> Any:
    """What a wait depends on: load balancer, pools, member ids (order-free), requirement, cloud.

    Two bags with equal identities need no new wait; timing inputs (timeout, interval, stable polls, a pool's hold
    and check seconds) and the backend whose client polls are not part of it, so adding ``stable_polls``,
    ``check_seconds`` or ``backend`` to a gate recorded without it changes nothing. An invalid bag (e.g. with values unknown during preview) gets a fresh identity, so it
    always counts as changed.
    """
    try:
        return ReadinessInputs.of_bag(props).identity()
    except (InputError, TypeError):
        return object()


def without_provider(props: Mapping[str, Any]) -> dict[str, Any]:
    """The bag without Pulumi's serialized-provider property."""
    return {k: v for k, v in props.items() if k != PROVIDER_KEY}

"""Plain values out of the engine's property proxies, and small helpers every rule uses.

The engine hands a policy each resource's properties wrapped in ``pulumi_policy``'s unknown-checking proxy: reading
a value that is not known yet (at preview, e.g. an address a floating IP will get) raises ``UnknownValueError``,
which the SDK turns into "can't run policy during preview". The rules never let that happen: :func:`plain` copies
the properties into plain dicts and lists and puts :data:`UNKNOWN` where a value is not known, so each rule decides
what an unknown value means for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Iterable, Optional

from pulumi_policy.proxy import (
    UNKNOWN_ARCHIVE_VALUE, UNKNOWN_ARRAY_VALUE, UNKNOWN_ASSET_VALUE, UNKNOWN_BOOLEAN_VALUE, UNKNOWN_NUMBER_VALUE,
    UNKNOWN_OBJECT_VALUE, UNKNOWN_STRING_VALUE, UnknownValueError,
)

_SENTINELS = frozenset({
    UNKNOWN_BOOLEAN_VALUE, UNKNOWN_NUMBER_VALUE, UNKNOWN_STRING_VALUE, UNKNOWN_ARRAY_VALUE, UNKNOWN_ASSET_VALUE,
    UNKNOWN_ARCHIVE_VALUE, UNKNOWN_OBJECT_VALUE,
})


class _Unknown:
    """A value the engine does not know yet (preview)."""

    _instance: Optional["_Unknown"] = None

    def __new__(cls) -> "_Unknown":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        return False


UNKNOWN: Any = _Unknown()


def is_unknown(value: Any) -> bool:
    return value is UNKNOWN


def plain(value: Any) -> Any:
    """A plain copy of ``value`` (dicts, lists, scalars) with :data:`UNKNOWN` for every value not known yet.

    Works on the SDK's proxies (reading through their public mapping/sequence interface) and on plain data alike.
    """
    if isinstance(value, str):
        return UNKNOWN if value in _SENTINELS else value
    if isinstance(value, Mapping):
        copy: dict[str, Any] = {}
        for key in list(value):
            try:
                copy[key] = plain(value[key])
            except UnknownValueError:
                copy[key] = UNKNOWN
        return copy
    if isinstance(value, Sequence):
        items = []
        for index in range(len(value)):
            try:
                items.append(plain(value[index]))
            except UnknownValueError:
                items.append(UNKNOWN)
        return items
    return value


def fully_known(value: Any) -> bool:
    """True when neither ``value`` nor anything inside it is unknown."""
    if value is UNKNOWN:
        return False
    if isinstance(value, dict):
        return all(fully_known(item) for item in value.values())
    if isinstance(value, list):
        return all(fully_known(item) for item in value)
    return True


@dataclass(frozen=True)
class Violation:
    """One thing a policy found wrong: the message (what, where, how to fix) and the resource it is about."""

    message: str
    urn: Optional[str] = None


def number(value: Any) -> Any:
    """A whole float as an int (the engine sends numbers as floats); anything else unchanged."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def as_int(value: Any) -> Optional[int]:
    """An integer property (the engine sends numbers as floats), or None when absent or not a number."""
    value = number(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def missing(value: Any) -> bool:
    """A fact that the component did not give, or gave as a value not known at preview."""
    return value is None or value is UNKNOWN or value == "" or (isinstance(value, list) and not fully_known(value))


def join(items: Iterable[Any]) -> str:
    items = [str(item) for item in items]
    return ", ".join(items) if items else "none"


def with_defaults(config: Any, schema: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The policy's configuration: the values given, the schema's defaults for the rest."""
    given = dict(config or {})
    return {key: given.get(key, spec.get("default")) for key, spec in schema.items()} | {
        key: value for key, value in given.items() if key not in schema
    }

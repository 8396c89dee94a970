"""Readiness gates and member drains for the endpoint's zones (Pulumi dynamic resources over openstacksdk).

- :mod:`.model`, :mod:`.errors`, :mod:`.waiter`: the pure waiting logic (injected fetchers, clock and sleep).
- :mod:`.cloud`: openstacksdk connections, one member listing per pool per poll, error categories.
- :mod:`.inputs`: the resources' property bags (validation, change detection).
- :mod:`.provider`: :class:`MemberReadiness`; :mod:`.drain`: :class:`MemberDrain`.

The resource classes import Pulumi; import them from their modules (``ha_endpoint.readiness.provider``) so that the
pure parts load without it. The names below load on first use (PEP 562), so that ``ha_endpoint.retry`` -- which the
waiter uses and which raises this package's errors -- can be imported first without a circular import.
"""

from importlib import import_module
from typing import Any

_EXPORTS = {
    "AuthExpired": "errors", "AuthFailed": "errors", "FetchFailed": "errors", "MemberFailed": "errors",
    "MemberGone": "errors", "ReadinessError": "errors", "ReadinessTimeout": "errors", "TransientFetchError": "errors",
    "LoadBalancerStatus": "model", "MemberStatus": "model", "PoolExpectation": "model", "Requirement": "model",
    "Backoff": "waiter", "WaitResult": "waiter", "WaitSpec": "waiter", "wait_for_members": "waiter",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{module}", __name__), name)

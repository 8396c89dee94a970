"""Readiness gates and member drains for the endpoint's zones (Pulumi dynamic resources over openstacksdk).

- :mod:`.model`, :mod:`.errors`, :mod:`.waiter`: the pure waiting logic (injected fetchers, clock and sleep).
- :mod:`.cloud`: openstacksdk connections, one member listing per pool per poll, error categories.
- :mod:`.inputs`: the resources' property bags (validation, change detection).
- :mod:`.provider`: :class:`MemberReadiness`; :mod:`.drain`: :class:`MemberDrain`.

The resource classes import Pulumi; import them from their modules (``ha_endpoint.readiness.provider``) so that the
pure parts load without it.
"""

from .errors import (
    AuthExpired,
    AuthFailed,
    FetchFailed,
    MemberFailed,
    ReadinessError,
    ReadinessTimeout,
    TransientFetchError,
)
from .model import LoadBalancerStatus, MemberStatus, PoolExpectation, Requirement
from .waiter import Backoff, WaitResult, WaitSpec, wait_for_members

__all__ = [
    "AuthExpired", "AuthFailed", "FetchFailed", "MemberFailed", "ReadinessError", "ReadinessTimeout",
    "TransientFetchError", "LoadBalancerStatus", "MemberStatus", "PoolExpectation", "Requirement", "Backoff",
    "WaitResult", "WaitSpec", "wait_for_members",
]

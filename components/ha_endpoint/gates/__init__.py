"""Readiness gates and member drains for the endpoint's zones (Pulumi dynamic resources over openstacksdk).

- :mod:`.model`, :mod:`.errors`, :mod:`.waiter`: the pure waiting logic (injected fetchers, clock and sleep).
- :mod:`.source`: the member client a gate or drain polls and writes through, its zone's backend's (found in the
  registry when it runs); :mod:`.cloud`: what a failed cloud call is to a gate.
- :mod:`.inputs`: the resources' property bags, one pydantic model each (declared by the resources, validated by the
  providers; change detection).
- :mod:`.provider`: :class:`MemberReadiness`; :mod:`.drain`: :class:`MemberDrain`.

The resource classes import Pulumi's dynamic providers; import them from their modules
(``ha_endpoint.gates.provider``), which are the paths recorded in the stacks' state.
"""

from ..cloud.errors import AuthExpired, TransientFetchError
from ..cloud.retry import Backoff
from .errors import AuthFailed, FetchFailed, MemberFailed, MemberGone, ReadinessError, ReadinessTimeout, ZoneDead
from .model import LoadBalancerStatus, MemberStatus, PoolExpectation, Requirement
from .waiter import WaitResult, WaitSpec, wait_for_members

__all__ = [
    "AuthExpired", "AuthFailed", "Backoff", "FetchFailed", "LoadBalancerStatus", "MemberFailed", "MemberGone",
    "MemberStatus", "PoolExpectation", "ReadinessError", "ReadinessTimeout", "Requirement", "TransientFetchError",
    "WaitResult", "WaitSpec", "ZoneDead", "wait_for_members",
]

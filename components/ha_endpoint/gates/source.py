"""The client a gate or drain polls and writes through: what it must do (:class:`StatusSource`) and whose it is, its
zone's backend's (:attr:`ha_endpoint.backends.plugin.Backend.status_source`), named by the gate's ``backend`` input
(:mod:`.inputs`).

The backends' registry (:mod:`ha_endpoint.backends`) is a layer above the gates: it holds the backends, which declare
the gates. The engine's dynamic-provider process loads only the provider's module (the reference dill recorded in
the stack's state, e.g. ``ha_endpoint.gates.provider.MemberReadinessProvider``), so :func:`status_source` imports the
registry inside the function, when a gate or drain first needs its client: the one import of the package that runs
back up a layer, and only at run time (``tests/unit/test_layers.py``, ``LAZY``). The registry loads without the
backends' resource code (a backend's ``serve`` loads it when a zone is served), so a gate's process still imports
neither the component's resources nor a Pulumi provider's SDK.
"""

from __future__ import annotations

from typing import Optional, Protocol

from .inputs import InputError
from .model import LiveMember, LoadBalancerStatus, MemberStatus
from .target import CloudTarget


class StatusSource(Protocol):
    """What a zone's gate (:mod:`.provider`) and a member's drain (:mod:`.drain`) need of their backend's client: one
    connection, rebuilt on re-authentication; failures raised as :func:`.cloud.translated` classifies them.

    Attributes:
        calls: API calls made through it.
    """

    calls: int

    def fetch_pool(self, pool_id: str) -> list[MemberStatus]:
        """Every member of the pool with its statuses (one listing)."""

    def fetch_load_balancer(self, load_balancer_id: str) -> LoadBalancerStatus:
        """The zone's load balancer's statuses, to word a failure."""

    def drain_member(self, pool_id: str, member_id: str, admin_down: bool = False,
                     weight: Optional[int] = 0) -> bool:
        """Take a member out of new connections (weight ``weight``, with ``admin_down`` admin state down too);
        ``False`` when it is gone."""

    def list_members(self, pool_id: str, missing_ok: bool = False) -> list[LiveMember]:
        """Every member of the pool as written (a drain's watch); with ``missing_ok`` none when the pool is gone."""

    def reauth(self) -> None:
        """Drop the connection and authenticate a new one."""

    def close(self) -> None:
        """Release the connection."""


def status_source(backend: str, where: CloudTarget) -> StatusSource:
    """The client of the zone's backend ``backend`` (a gate's or drain's ``backend`` input), over the cloud and region
    ``where`` names; :class:`InputError` on ``backend`` when no registered backend of that name has member gates."""
    from ..backends import REGISTRY  # up a layer, at run time: see the module docstring

    found = REGISTRY.get(backend)
    if found is not None and found.status_source is not None:
        return found.status_source(where.cloud, where.region)
    gated = ", ".join(sorted(name for name, each in REGISTRY.items() if each.status_source is not None))
    what = f"the {backend} backend has no member client (its zones' members are in no pool to poll or drain; it "\
        "gates its zones with resources of its own)" if found is not None else \
        f"{backend!r} names no registered backend"
    raise InputError("backend", f"{what}; a MemberReadiness or MemberDrain polls and writes through the member client "
                                f"of its zone's backend: declare it with the backend that serves its pools ({gated}), "
                                "or remove it", backend)

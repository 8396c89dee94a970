"""The publication gate: when may a zone's address be published in DNS?

Each zone gets a :class:`ZoneGate` whose ``ready`` output DNS reads (see :mod:`ha_endpoint.resources.dns`): records are
computed from per-zone ``(published_address, ready)`` pairs, so a zone's address is in DNS only when its gate says so,
and the records depend on the gate's resource. Backend-independent: it reads only the zone's :class:`ZoneServing`.

* ``when-ready`` (default): DNS depends on the zone's readiness resource (the backend's
  :attr:`ZoneServing.readiness`: one that waits until every member of every pool is ready as ``readiness.require``
  says).
* ``bootstrap``: the zone is published as soon as what serves it exists (:attr:`ZoneServing.exists`); the readiness
  resource still runs (requiring ``provisioned`` only), but DNS does not wait for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi

from ..backends.plugin import ZoneServing


@dataclass
class ZoneGate:
    """A zone's publication: ``ready`` (Output[bool]), the resource DNS depends on, and which gate it is."""

    ready: pulumi.Output[bool]
    publish_after: Optional[pulumi.Resource]
    kind: str
    not_ready_reason: pulumi.Output[Optional[str]]
    """Why the gate keeps the zone out of DNS (``readiness.onZoneNotReady: unpublish``); none when it lets it in."""


def publication_gate(publish: str, serving: ZoneServing) -> ZoneGate:
    """The gate of one zone under publication mode ``publish`` (a bootstrap gate never reads the readiness resource,
    so that DNS does not wait for it)."""
    if publish == "bootstrap":
        return ZoneGate(serving.exists.id.apply(lambda _: True), serving.exists, f"bootstrap: {serving.exists_label}",
                        pulumi.Output.from_input(None))
    reason = serving.not_ready_reason if serving.not_ready_reason is not None else pulumi.Output.from_input(None)
    return ZoneGate(serving.ready, serving.readiness, serving.requirement, reason)

"""The publication gate: when may a zone's address be published in DNS?

Each zone gets a :class:`PublishedZone` whose ``ready`` output DNS reads (see :mod:`ha_endpoint.resources.dns`): records are
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
class PublishedZone:
    """A zone as DNS reads it: its name, the address to publish, whether its gate lets it in (``ready``), the resource
    the records wait for (``gate``), which gate it is (``kind``, the zone's ``gate`` output) and why it is kept out
    (``readiness.onZoneNotReady: unpublish``; none when it is let in)."""

    az: str
    address: pulumi.Output[Optional[str]]
    ready: pulumi.Output[bool]
    gate: Optional[pulumi.Resource]
    kind: str = ""
    not_ready_reason: Optional[pulumi.Output[Optional[str]]] = None


def publication_gate(az: str, publish: str, serving: ZoneServing) -> PublishedZone:
    """Zone ``az`` as DNS reads it under publication mode ``publish`` (a bootstrap gate never reads the readiness
    resource, so that DNS does not wait for it)."""
    if publish == "bootstrap":
        return PublishedZone(az, serving.published_address, serving.exists.id.apply(lambda _: True), serving.exists,
                             f"bootstrap: {serving.exists_label}", pulumi.Output.from_input(None))
    reason = serving.not_ready_reason if serving.not_ready_reason is not None else pulumi.Output.from_input(None)
    return PublishedZone(az, serving.published_address, serving.ready, serving.readiness, serving.requirement, reason)

"""The backend seam: what one availability zone's serving backend yields to the rest of the endpoint.

A backend turns a zone's plan (:class:`ha_endpoint.core.plan.ZonePlan`) into resources parented to that zone and hands
back a :class:`ZoneServing`: the address DNS publishes for the zone, the resource that exists once the zone can take
traffic at all (what ``bootstrap`` publication waits for), the zone's readiness resource (named
``contract.readiness_name``; what ``when-ready`` publication waits for) and its verdict, and the zone's outputs. DNS
(:mod:`ha_endpoint.resources.dns`), the publication gate (:mod:`ha_endpoint.resources.gate`) and the pack's generic
rules use only this. Octavia (:mod:`ha_endpoint.resources.octavia`) is the backend here; another (a VIP port with
keepalived per AZ, for clouds without Octavia) is a class with the same ``serve``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Protocol

import pulumi

from ..core.plan import ZonePlan


@dataclass
class ZoneServing:
    """One zone as its backend built it."""

    published_address: pulumi.Output[Optional[str]]
    """The address DNS gets for this zone once it may be published (a floating IP, else the VIP)."""
    exists: pulumi.CustomResource
    """Exists once the zone can take traffic at all: bootstrap publication waits for it alone."""
    exists_label: str
    """What ``exists`` is, for the zone's ``gate`` output (e.g. "load balancer ACTIVE")."""
    readiness: pulumi.Resource
    """The zone's readiness resource (``contract.readiness_name``): exists once the zone serves."""
    ready: pulumi.Output[bool]
    """The readiness resource's verdict."""
    requirement: str
    """What the readiness resource waits for, for the zone's ``gate`` output (e.g. "members online")."""
    outputs: dict[str, Any] = field(default_factory=dict)
    """The zone's entries in the endpoint's ``zones`` output (e.g. loadbalancer_id, vip_address, floating_ip)."""
    not_ready_reason: Optional[pulumi.Output[Optional[str]]] = None
    """Why the zone is not ready (``readiness.onZoneNotReady: unpublish``); none when it is, or when the backend's
    readiness never leaves a zone out."""


class ZoneBackend(Protocol):
    """Builds one zone's serving resources."""

    name: str
    """Declared in the facts (``zones.<az>.backend``): the pack holds only that backend's zones to its own rules."""

    def serve(self, zone: ZonePlan, vip_group_id: pulumi.Input[str], parent: pulumi.Resource,
              member_ports: Mapping[str, pulumi.Resource]) -> ZoneServing:
        """Create the zone's resources under ``parent``; ``vip_group_id`` is the endpoint's VIP security group;
        ``member_ports``: the members' ports given the members' group, by member name (a member is registered after
        its port admits the load balancer and deregistered before its port stops admitting it)."""
        ...

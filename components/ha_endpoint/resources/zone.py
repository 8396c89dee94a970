"""One availability zone of the endpoint: :class:`EndpointZone`, built from a :class:`ha_endpoint.core.plan.ZonePlan`.

The zone hands its plan to its backend's ``serve`` (:mod:`ha_endpoint.backends`, chosen by the ``backend`` key), which
creates what serves the zone under it, and decides from what the backend yields when the zone may be published in
DNS: its publication gate. DNS (:mod:`ha_endpoint.resources.dns`) reads the zone itself: its address, its verdict
(``ready``), the resource the records wait for (``gate``) and why it is kept out (``not_ready_reason``). Records are
computed from every zone's ``(published_address, ready)``, so a zone's address is in DNS only when its gate says so.

* ``when-ready`` (default): DNS depends on the zone's readiness resource (the backend's
  :attr:`ZoneServing.readiness`: one that waits until every member of every pool is ready as ``readiness.require``
  says).
* ``bootstrap``: the zone is published as soon as what serves it exists (:attr:`ZoneServing.exists`); the readiness
  resource still runs (requiring ``provisioned`` only), but DNS does not wait for it (a bootstrap gate never reads
  it).
"""


from typing import Mapping, Optional

import pulumi
from pydantic.alias_generators import to_camel

from ..backends.plugin import Serve
from ..core import contract
from ..core.plan import ZonePlan


class EndpointZone(pulumi.ComponentResource):
    """One AZ of the endpoint: what its backend serves it with, and its publication gate."""

    az: str
    ready: pulumi.Output[bool]
    """Whether the zone's gate allows publishing it."""
    published_address: pulumi.Output[Optional[str]]
    """The address DNS gets for this zone when it is ready: the floating IP, else the VIP."""
    not_ready_reason: pulumi.Output[Optional[str]]
    """Why the zone was left out of DNS at the last update (``readiness.onZoneNotReady: unpublish``); none when ready."""
    gate: pulumi.Resource
    """What DNS waits for: the readiness resource, or under ``bootstrap`` what serves the zone."""
    gate_kind: str
    """What the gate waits for, for the zone's ``gate`` output (e.g. "members online", "bootstrap: load balancer
    ACTIVE")."""
    backend_outputs: dict[str, pulumi.Input]
    """What its backend gives the zone's entry of the endpoint's ``zones`` output, by output key (camelCase: the
    schema's :class:`ha_endpoint.core.outputs.ZoneOutputs`); the endpoint adds the publication's."""

    def __init__(self, name: str, zone: ZonePlan, vip_group_id: pulumi.Input[str], serve: Serve,
                 member_ports: Mapping[str, pulumi.Resource], opts: Optional[pulumi.ResourceOptions] = None):
        """Build zone ``zone.az`` from its own plan with its backend's ``serve``; ``vip_group_id`` is the endpoint's
        VIP security group, ``member_ports`` the members' ports given the members' group (by member name)."""
        super().__init__(contract.ZONE_TYPE, name, {"az": zone.az, "vipSubnetId": zone.vip_subnet.id}, opts)
        self.az = zone.az
        self.serving = serving = serve(zone, vip_group_id, self, member_ports)
        self.published_address = serving.published_address
        if zone.publish == "bootstrap":
            self.ready = serving.exists.id.apply(lambda _: True)
            self.gate, self.gate_kind = serving.exists, f"bootstrap: {serving.exists_label}"
            self.not_ready_reason = pulumi.Output.from_input(None)
        else:
            self.ready, self.gate, self.gate_kind = serving.ready, serving.readiness, serving.requirement
            self.not_ready_reason = serving.not_ready_reason if serving.not_ready_reason is not None else \
                pulumi.Output.from_input(None)
        self.backend_outputs = {to_camel(key): value for key, value in serving.outputs.items()}
        self.register_outputs({**self.backend_outputs,
                               "ready": self.ready, "publishedAddress": self.published_address,
                               "notReadyReason": self.not_ready_reason})

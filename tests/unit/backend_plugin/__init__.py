"""A backend that lives outside the package: one folder and one registry line (see ``test_backend_plugin.py``).

``static-address`` serves each zone from one fixed address of the zone's VIP subnet (the 250th host), held by one
trivial resource per zone (:class:`ZoneAddress`) that is its own readiness. It serves TCP listeners only, and says so
at preview, so the tests can tell the chosen backend's preview ran in the real pipeline.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Mapping, Optional

import pulumi

from ha_endpoint.backends.plugin import Backend, Previewed, ZoneServing
from ha_endpoint.core.args import EndpointArgs
from ha_endpoint.core.errors import Problem
from ha_endpoint.core.plan import PollTarget, ZonePlan

NAME = "static-address"
ADDRESS_TYPE = "pulumi-python:dynamic/test:ZoneAddress"
HOST = 250


class _Unused(pulumi.dynamic.ResourceProvider):
    """Never called: the tests run under Pulumi mocks, whose fake cloud answers for the resource."""


class ZoneAddress(pulumi.dynamic.Resource, module="test", name="ZoneAddress"):
    """One zone's fixed address: ``ready`` once it is held."""

    address: pulumi.Output[str]
    ready: pulumi.Output[bool]

    def __init__(self, name: str, address: pulumi.Input[str], opts: pulumi.ResourceOptions):
        super().__init__(_Unused(), name, {"address": address, "ready": None}, opts)


def serve(zone: ZonePlan, vip_group_id: pulumi.Input[str], parent: pulumi.Resource,
          member_ports: Mapping[str, pulumi.Resource]) -> ZoneServing:
    """The zone's address resource, named as the contract names a zone's readiness."""
    address = pulumi.Output.from_input(zone.vip_subnet.cidr).apply(
        lambda cidr: str(ipaddress.ip_network(cidr, strict=False)[HOST]))
    held = ZoneAddress(zone.readiness_name, address, pulumi.ResourceOptions(parent=parent))
    return ZoneServing(published_address=held.address, exists=held, exists_label="address held", readiness=held,
                       ready=held.ready, requirement="address held", outputs={"address": held.address})


def preview(args: EndpointArgs, target: PollTarget, root: str, identity_tag: str,
            dns_zone_id: Optional[str]) -> Previewed:
    """A fixed address forwards TCP only: every other listener is refused before anything is planned."""
    return Previewed([Problem(f"{root}.listeners[{index}].protocol",
                    f"the {NAME} backend serves TCP listeners only, not {listener.protocol}; use protocol TCP or "
                    "another backend")
            for index, listener in enumerate(args.listeners) if str(listener.protocol) != "TCP"])


BACKEND = Backend(NAME, serve, preview)


def fake_address(cloud: Any, name: str, inputs: dict) -> dict:
    """The fake cloud's answer for a :class:`ZoneAddress`: held at once."""
    return {"address": inputs.get("address"), "ready": True}

"""Endpoint configurations the tests (and the policy tests) start from; each call returns a fresh copy."""

from __future__ import annotations

import copy
from typing import Any

from .harness import amphora_config


def amphora_endpoint() -> dict[str, Any]:
    """The amphora shape's ``ha-endpoint:endpoint`` (Pulumi.amphora.yaml): 3 zones, 3 members, 2 listeners, DNS."""
    return copy.deepcopy(amphora_config()["endpoint"])


def unpublishing_endpoint(base: dict[str, Any] | None = None, **readiness: Any) -> dict[str, Any]:
    """``base`` (default: the amphora shape) with ``readiness.onZoneNotReady: unpublish`` and the given readiness
    settings, without per-zone records (which unpublish cannot go with)."""
    raw = copy.deepcopy(base) if base is not None else amphora_endpoint()
    raw["dns"]["perZoneRecords"] = False
    raw["readiness"] = {"onZoneNotReady": "unpublish", **readiness}
    return raw


def byo_endpoint() -> dict[str, Any]:
    """The dev endpoint with az3 bringing its own floating IP 172.24.4.50 (allocated in ``FakeCloud.dev()``)."""
    raw = amphora_endpoint()
    raw["zones"]["az3"]["floatingIp"] = "172.24.4.50"
    return raw


def internal_endpoint() -> dict[str, Any]:
    """The dev endpoint without floating IPs: DNS publishes the VIPs."""
    raw = amphora_endpoint()
    del raw["floatingNetwork"]
    return raw


def sized_endpoint(zones: int, members_per_zone: int, listeners: int, placement: str = "own-zone",
                   wide: bool = False) -> dict[str, Any]:
    """A generated endpoint for ``FakeCloud.topology(zones=..., wide=...)``: members 10.10.Z.10.. in each zone (in
    a wide topology 10.Z.H.L, for hundreds of members per zone)."""
    return {
        "name": "bench",
        "floatingNetwork": "public",
        "zones": {f"az{z}": {"subnet": f"cp-az{z}"} for z in range(1, zones + 1)},
        "listeners": [{"port": 6443 + index, "monitor": {"type": "TCP"}} for index in range(listeners)],
        "members": [{"name": f"cp-{z}-{index}", "az": f"az{z}",
                     "address": f"10.{z}.{index // 200}.{10 + index % 200}" if wide else f"10.10.{z}.{10 + index}"}
                    for z in range(1, zones + 1) for index in range(members_per_zone)],
        "memberPlacement": placement,
        "dns": {"dnsZone": "example.test.", "record": "api", "ttl": 30},
    }

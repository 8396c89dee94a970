"""The endpoint's DNS records have a TTL of at most ``maxTtl`` seconds.

Clients fail over by trying the other A records; a resolver caches a record set for its TTL, so a long TTL keeps a
removed (dead) zone's address in clients' answers that long.
"""

from __future__ import annotations

from typing import Any, Optional

from ha_endpoint.core import contract

from ..model import UNKNOWN, Violation, as_int
from ..registry import rule, whole_number
from ..stack import under_endpoint

RESOURCE_TYPES = (contract.RECORDSET_TYPE,)
CONFIG = {"maxTtl": whole_number(60, "Largest TTL, in seconds, of the endpoint's DNS records.")}


@rule("ha-endpoint-dns-ttl",
      "The endpoint's DNS record sets have a TTL of at most maxTtl seconds.",
      severity="medium", config=CONFIG, resource_types=RESOURCE_TYPES)
def check_resource(resource_type: str, props: dict[str, Any], name: str, urn: str,
                   config: dict[str, Any]) -> list[Violation]:
    if resource_type not in RESOURCE_TYPES or not under_endpoint(urn):
        return []
    maximum = as_int(config.get("maxTtl")) or 60
    ttl: Optional[Any] = props.get("ttl")
    if ttl is UNKNOWN:
        return [Violation(f"record set {name}: its TTL is unknown at preview; pass dns.ttl as a plain value", urn)]
    seconds = as_int(ttl)
    if seconds is None:
        return [Violation(
            f"record set {name} sets no TTL, so the DNS zone's default (often 3600 s) applies; set dns.ttl to "
            f"{maximum} or less", urn)]
    if seconds > maximum:
        return [Violation(
            f"record set {name} has a TTL of {seconds} s, above the {maximum} s maximum: resolvers would keep a "
            f"failed zone's address that long; set dns.ttl to {maximum} or less", urn)]
    return []

"""Provider constraints of Octavia's OVN driver: SOURCE_IP_PORT pools, TCP/UDP/SCTP pools and monitors only.

The OVN provider rejects other algorithms, protocols and monitor types at apply time, after part of the endpoint is
created; the amphora provider has no such limits. A zone runs OVN when its load balancer says so
(``loadbalancerProvider``), else when the endpoint's declared provider is ``ovn``.
"""

from __future__ import annotations

from typing import Any

from ha_endpoint import contract
from ha_endpoint.validation import OVN_METHOD, OVN_MONITOR_TYPES

from ..facts import gap
from ..model import Violation, join, missing
from ..stack import endpoints, props

NAME = "ha-endpoint-ovn-provider-constraints"
DESCRIPTION = "Under the OVN provider, pools balance with SOURCE_IP_PORT and use TCP/UDP/SCTP; monitors too."
ENFORCEMENT = "mandatory"
SEVERITY = "high"
KIND = "stack"
CONFIG: dict[str, dict[str, Any]] = {}

OVN_PROTOCOLS = ("TCP", "UDP", "SCTP")


def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    violations: list[Violation] = []
    for endpoint in endpoints(resources):
        ovn_zones = []
        for key in endpoint.facts.zones:
            providers = [props(lb).get("loadbalancerProvider") for lb in endpoint.in_zone(contract.LOADBALANCER_TYPE, key)]
            provider = next((p for p in providers if isinstance(p, str) and p), endpoint.facts.provider)
            if missing(provider):
                violations.append(Violation(gap(endpoint.name, "provider", "the Octavia provider"),
                                            endpoint.resource.urn))
                break
            if str(provider).lower() == "ovn":
                ovn_zones.append(key)
        for key in ovn_zones:
            for pool in endpoint.in_zone(contract.POOL_TYPE, key):
                pool_props = props(pool)
                method = pool_props.get("lbMethod")
                if isinstance(method, str) and method.upper() != OVN_METHOD:
                    violations.append(Violation(
                        f"pool {pool.name} balances with {method}, but the ovn provider supports {OVN_METHOD} only; "
                        f"set lbMethod: {OVN_METHOD} (or remove it)", pool.urn))
                protocol = pool_props.get("protocol")
                if isinstance(protocol, str) and protocol.upper() not in OVN_PROTOCOLS:
                    violations.append(Violation(
                        f"pool {pool.name} uses protocol {protocol}, but the ovn provider serves "
                        f"{join(OVN_PROTOCOLS)} only; use protocol TCP (TLS passes through)", pool.urn))
            for monitor in endpoint.in_zone(contract.MONITOR_TYPE, key):
                kind = props(monitor).get("type")
                if isinstance(kind, str) and kind.upper() not in OVN_MONITOR_TYPES:
                    violations.append(Violation(
                        f"health monitor {monitor.name} is of type {kind}, which the ovn provider does not have; "
                        f"use one of {join(OVN_MONITOR_TYPES)}", monitor.urn))
    return violations

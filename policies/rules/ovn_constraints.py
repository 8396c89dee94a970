"""Provider constraints of Octavia's OVN driver: SOURCE_IP_PORT pools, TCP/UDP/SCTP pools and monitors only.

The OVN provider rejects other algorithms, protocols and monitor types at apply time, after part of the endpoint is
created; the amphora provider has no such limits. A zone runs OVN when its load balancer says so
(``loadbalancerProvider``), else when the endpoint's declared provider is ``ovn``.
"""

from __future__ import annotations

from typing import Any

from ha_endpoint.backends.octavia import rules as octavia
from ha_endpoint.core import contract, predicates

from ..model import Violation, join
from ..registry import rule
from ..stack import endpoints, props


@rule("ha-endpoint-ovn-provider-constraints",
      "Under the OVN provider, pools balance with SOURCE_IP_PORT and use TCP/UDP/SCTP; monitors too.")
def check(resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    violations: list[Violation] = []
    for endpoint in endpoints(resources):
        for key in [key for key in endpoint.azs if predicates.is_ovn(endpoint.provider(key))]:
            for pool in endpoint.in_zone(contract.POOL_TYPE, key):
                pool_props = props(pool)
                method = pool_props.get("lbMethod")
                if isinstance(method, str) and not octavia.ovn_method_allowed(method):
                    violations.append(Violation(
                        f"pool {pool.name} balances with {method}, but the ovn provider supports "
                        f"{predicates.OVN_METHOD} only; set lbMethod: {predicates.OVN_METHOD} (or remove it)",
                        pool.urn))
                protocol = pool_props.get("protocol")
                if isinstance(protocol, str) and not octavia.ovn_protocol_allowed(protocol):
                    violations.append(Violation(
                        f"pool {pool.name} uses protocol {protocol}, but the ovn provider serves "
                        f"{join(octavia.OVN_PROTOCOLS)} only; use protocol TCP (TLS passes through)", pool.urn))
            for monitor in endpoint.in_zone(contract.MONITOR_TYPE, key):
                kind = props(monitor).get("type")
                if isinstance(kind, str) and not octavia.ovn_monitor_allowed(kind):
                    violations.append(Violation(
                        f"health monitor {monitor.name} is of type {kind}, which the ovn provider does not have; "
                        f"use one of {join(octavia.OVN_MONITOR_TYPES)}", monitor.urn))
    return violations

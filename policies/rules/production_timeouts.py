"""No listener of a production endpoint cuts idle Kubernetes API connections sooner than ``minDataTimeoutMs``.

An amphora proxies a TCP (or HTTP/HTTPS) listener with HAProxy, which closes a connection idle (no data either way)
for the listener's client or member data timeout; Octavia's default is 50 s. ``kubectl get --watch``, ``logs -f`` and
``exec`` and an informer's watch of a quiet resource send nothing for minutes: behind such a listener they are cut
(``unexpected EOF``), and informers relist. kube-apiserver itself ends a watch after 30-60 min at its default
``--min-request-timeout`` (1800 s), so the default threshold is one hour (``minDataTimeoutMs``: raise it with that
flag). Listeners under the ovn provider (no proxy: ovn-octavia-provider ignores the timeouts) and UDP/SCTP listeners
(LVS) are not judged: the timeouts mean nothing there (``ha_endpoint.backends.octavia.rules.listener_timeouts_problem``).
Production: ``productionStackPattern`` or ``productionTag``, as for every production rule.
"""

from __future__ import annotations

from typing import Any

from ha_endpoint.backends.octavia import rules as octavia
from ha_endpoint.core import contract, predicates

from ..model import UNKNOWN, Violation, as_int
from ..production import CONFIG as PRODUCTION_CONFIG, production_check
from ..registry import rule, whole_number
from ..stack import Endpoint, props

NAME = "ha-endpoint-production-listener-timeouts"
CONFIG: dict[str, dict[str, Any]] = {
    **PRODUCTION_CONFIG,
    "minDataTimeoutMs": whole_number(
        predicates.WATCH_IDLE_MS, "Least client and member data timeout, in milliseconds, of an amphora TCP/HTTP(S) "
        "listener in production (default one hour: kube-apiserver's longest watch at its default "
        "--min-request-timeout)."),
}


@rule(NAME,
      "In a production stack no amphora listener's client or member data timeout is below minDataTimeoutMs (idle "
      "kubectl watch, logs -f and exec sessions would be cut).",
      config=CONFIG)
@production_check(NAME)
def check(endpoint: Endpoint, reason: str, resources: list[Any], config: dict[str, Any]) -> list[Violation]:
    minimum = as_int(config.get("minDataTimeoutMs")) or predicates.WATCH_IDLE_MS
    violations: list[Violation] = []
    for listener in endpoint.of_type(contract.LISTENER_TYPE):
        values = props(listener)
        protocol = values.get("protocol")
        if not isinstance(protocol, str) or \
                not predicates.listener_timeouts_apply(endpoint.provider(endpoint.zone_of(listener)), protocol):
            continue
        for key in predicates.DATA_TIMEOUT_KEYS:
            value = values.get(key)
            if value is UNKNOWN:
                violations.append(Violation(
                    f"listener {listener.name}: its {key} is unknown at preview, so cutting idle API connections "
                    f"cannot be ruled out in a production stack ({reason}); pass {key} as a plain value",
                    listener.urn))
                continue
            cut = octavia.data_timeout_problem(key, as_int(value), minimum)
            if cut is not None:
                default = f" (or leave it out for the endpoint's default, {predicates.WATCH_IDLE_MS})" \
                    if predicates.WATCH_IDLE_MS >= minimum else ""
                violations.append(Violation(
                    f"listener {listener.name}: {cut}, in a production stack ({reason}); set {key} to at least "
                    f"{minimum}{default}", listener.urn))
    return violations

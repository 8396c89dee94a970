"""The keepalived backend's rules of a configuration (:class:`ha_endpoint.core.checks.Rules`): the options it cannot
honour, refused when the configuration is checked, before the cloud is asked anything, each with its key and the fix.

The clients reach the member holding the VIP directly, with no proxy in between, so there is no TLS to terminate
(``TERMINATED_HTTPS``), no per-listener health monitor (the member's own track script decides who holds the VIP), no
weights and no balancing method (one member serves a zone at a time), and none of the Octavia settings
(``loadBalancerProvider``, listener timeouts); and a zone is proven ready through its floating IP, so an internal
endpoint (no ``floatingNetwork``) is refused. What only the cloud tells (Neutron's ports, a given VIP address) is
refused at its preview (:mod:`.checks`). Pure: no cloud, no Pulumi.
"""

from __future__ import annotations

from pydantic.alias_generators import to_camel

from ...core import predicates
from ...core.args import EndpointArgs, MonitorArgs
from ...core.checks import Rules
from ...core.errors import Problem

NAME = "keepalived"
"""The backend's name in the registry and in each zone's facts (``backend``)."""
OCTAVIA_KEYS = {"load_balancer_provider": "loadBalancerProvider"}
"""The Octavia settings among the configuration's keys (snake_case: camelCase)."""


def refused_options(args: EndpointArgs, root: str) -> list[Problem]:
    """The configuration's options keepalived cannot honour."""
    problems: list[Problem] = []
    for key, name in OCTAVIA_KEYS.items():
        if key in args.model_fields_set and getattr(args, key) is not None:
            problems.append(Problem(f"{root}.{name}", f"is an Octavia setting, and the {NAME} backend has no load "
                                    f"balancer; remove {name}"))
    for index, listener in enumerate(args.listeners):
        path = f"{root}.listeners[{index}]"
        if str(listener.protocol) == "TERMINATED_HTTPS":
            problems.append(Problem(f"{path}.protocol", f"the {NAME} backend cannot terminate TLS: the clients reach "
                                    "the member holding the VIP directly; use protocol HTTPS (TLS passed through to "
                                    "the members) or TCP"))
        if listener.monitor is not None and listener.monitor != MonitorArgs():
            problems.append(Problem(f"{path}.monitor", f"the {NAME} backend has no per-listener health monitor: each "
                                    "member's track script checks its own listener and gives the VIP up when it "
                                    "fails; remove the monitor"))
        if listener.lb_method is not None:
            problems.append(Problem(f"{path}.lbMethod", f"the {NAME} backend balances nothing: one member of a zone "
                                    "holds its VIP at a time; remove lbMethod"))
        for field, _ in predicates.TIMEOUT_KEYS:
            if getattr(listener, field) is not None:
                problems.append(Problem(f"{path}.{to_camel(field)}", f"the {NAME} backend has no proxy whose timeouts "
                                        f"it could set; remove {to_camel(field)}"))
    if args.floating_network is None:
        problems.append(Problem(f"{root}.floatingNetwork", f"is not set, and the {NAME} backend proves a zone ready by "
                                "connecting to its VIP through the zone's floating IP; an internal VIP cannot be "
                                "proven (which member holds it is an admin's attribute of the VIP port, "
                                "binding:host_id), so no zone would ever count as ready; set floatingNetwork, or use "
                                "backend octavia for an internal endpoint"))
    for index, member in enumerate(args.members):
        if member.weight not in (0, 1, None):
            problems.append(Problem(f"{root}.members[{index}].weight", f"the {NAME} backend cannot weigh members: "
                                    "one member of a zone holds its VIP at a time (its priority is its place in the "
                                    "zone's members by name); use weight 1, or 0 to take the member out"))
    return problems


RULES = Rules(configuration=refused_options)
"""The keepalived backend's rules: the shared words, its refusals of a configuration."""

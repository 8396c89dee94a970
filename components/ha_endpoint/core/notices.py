"""What the component says at preview and ``up`` that is allowed but worth knowing: warnings, not problems.

Each notice is a :class:`ha_endpoint.core.errors.Problem` (the key it is about, what it means and how to change it);
:class:`ha_endpoint.HaEndpoint` says each once, as a warning on itself
(:attr:`ha_endpoint.core.plan.EndpointPlan.notices`).
"""

from __future__ import annotations

from . import predicates
from .args import EndpointArgs
from .errors import Problem


def notices(args: EndpointArgs, root: str) -> tuple[Problem, ...]:
    """Every notice of ``args`` (key paths under ``root``), in a stable order: former key names first."""
    return tuple([Problem(root, notice) for notice in args._former_keys] + open_to_everyone(args, root)
                 + ovn_weights(args, root))


def open_to_everyone(args: EndpointArgs, root: str) -> list[Problem]:
    """The API open to every address: ``allowedCidrs`` (by default ``0.0.0.0/0``) holds the whole internet. Allowed
    (a dev endpoint reached from anywhere), refused by the policy pack in a production stack only; said once."""
    everyone = [(index, cidr) for index, cidr in enumerate(args.allowed_cidrs) if predicates.admits_everyone(cidr)]
    if not everyone:
        return []
    given = "allowed_cidrs" in args.model_fields_set
    path = f"{root}.allowedCidrs" + (f"[{everyone[0][0]}]" if given else "")
    cidrs = " and ".join(cidr for _, cidr in everyone) + ("" if given else " (the default)")
    ports = sorted({listener.port for listener in args.listeners})
    reach = "every address on the internet, through the floating IPs" if args.floating_network is not None else \
        "every address that can reach the VIP subnets"
    several = len(ports) > 1
    return [Problem(path, f"the endpoint's listener {'ports' if several else 'port'} "
                          f"({', '.join(str(port) for port in ports)}) "
                          f"{'admit' if several else 'admits'} {cidrs}: {reach}; set allowedCidrs to the client "
                          "networks that need the endpoint (e.g. allowedCidrs: ['10.0.0.0/8']). The policy pack refuses "
                          "it in a production stack")]


def ovn_weights(args: EndpointArgs, root: str) -> list[Problem]:
    """A weight other than 0 or 1 under ``ovn``: that provider ignores it (every member of a pool in service gets an
    equal share), and it is written when the member is created, never updated (an update that leaves the admin state
    out makes the provider report the member NO_MONITOR: :mod:`ha_endpoint.backends.octavia.serving`). Said once, for
    the first such member."""
    if not predicates.is_ovn(args.load_balancer_provider):
        return []
    weighted = [(index, member) for index, member in enumerate(args.members or ())
                if member.weight not in (None, 0, 1)]
    if not weighted:
        return []
    index, member = weighted[0]
    more = f" (and {len(weighted) - 1} more)" if len(weighted) > 1 else ""
    return [Problem(f"{root}.members[{index}].weight",
                    f"weight {member.weight}{more} does nothing under loadBalancerProvider ovn: the provider gives every "
                    "member in service an equal share, and the component writes a member's weight only when it creates "
                    "the member, never in place (an update that leaves the admin state alone makes the ovn provider "
                    "report the member NO_MONITOR, which the gates and the watcher read as not serving); remove the "
                    "weight, or take the member out with enabled: false (or weight: 0)")]

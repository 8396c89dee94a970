"""Turn raw configuration into :class:`EndpointArgs`, or into every problem it has, each with its fix.

Pure functions: nothing here talks to a cloud or registers a resource. Field-level rules come from pydantic
(:mod:`ha_endpoint.args`); the rules that relate fields to each other are the ``_check_*`` functions below.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from typing import Any, Iterable, Mapping

import pulumi
from pydantic import ValidationError

from . import predicates
from .args import RENAMED_KEYS, EndpointArgs
from .errors import ConfigError, Problem

DEFAULT_ROOT = "ha-endpoint:endpoint"
ZONE_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$")


def load_endpoint_args(raw: Any, root: str = DEFAULT_ROOT) -> EndpointArgs:
    """Parse and check a configuration value; raise :class:`ConfigError` listing every problem found."""
    if isinstance(raw, EndpointArgs):
        args = raw
    else:
        if not isinstance(raw, Mapping):
            raise ConfigError([Problem(root, f"must be a mapping of settings, got {type(raw).__name__}; "
                                             "see README.md 'Configuration' for an example")])
        renamed: list[str] = []
        token = RENAMED_KEYS.set(renamed)
        try:
            args = EndpointArgs.model_validate(dict(raw))
        except ValidationError as error:
            raise ConfigError(_problems_from_pydantic(error, root)) from None
        finally:
            RENAMED_KEYS.reset(token)
        for notice in renamed:
            pulumi.log.warn(f"{root}: {notice}")
    problems = check_endpoint_args(args, root)
    if problems:
        raise ConfigError(problems)
    return args


def check_endpoint_args(args: EndpointArgs, root: str = DEFAULT_ROOT) -> list[Problem]:
    """Every cross-field problem of ``args``, in a stable order (zones, listeners, members, dns)."""
    return [
        *_check_zones(args, root),
        *_check_listeners(args, root),
        *_check_members(args, root),
    ]


def _check_zones(args: EndpointArgs, root: str) -> Iterable[Problem]:
    zone_names = list(args.zones)
    if len(zone_names) < 2:
        yield Problem(f"{root}.zones", f"{len(zone_names)} zone(s) given ({', '.join(zone_names) or 'none'}); "
                                       "an HA endpoint needs at least 2: add another availability zone and its subnet")
    for zone in zone_names:
        if not ZONE_NAME.match(zone):
            yield Problem(f"{root}.zones.{zone}", "an availability zone name must be 1-32 lowercase letters, digits "
                                                  "or '-' (it becomes part of resource names); rename it")
    for subnet, zones in _duplicates((zone_args.subnet, zone) for zone, zone_args in args.zones.items()):
        yield Problem(f"{root}.zones.{zones[1]}.subnet",
                      f"subnet '{subnet}' is already the subnet of zone {zones[0]}; each zone needs a subnet of "
                      "its own in its own AZ, or one LB's failure domain covers two zones")
    byo = [(zone_args.floating_ip, zone) for zone, zone_args in args.zones.items() if zone_args.floating_ip]
    for address, zones in _duplicates(byo):
        yield Problem(f"{root}.zones.{zones[1]}.floatingIp",
                      f"floating IP {address} is already used by zone {zones[0]}; give each zone its own")
    if byo and args.floating_network is None:
        yield Problem(f"{root}.zones.{byo[0][1]}.floatingIp",
                      "a floating IP is given but floatingNetwork is not set; set floatingNetwork to the external "
                      "network of that address, or remove floatingIp for an internal endpoint")


def _check_listeners(args: EndpointArgs, root: str) -> Iterable[Problem]:
    for port, indexes in _duplicates((listener.port, index) for index, listener in enumerate(args.listeners)):
        yield Problem(f"{root}.listeners[{indexes[1]}].port",
                      f"port {port} is already served by listeners[{indexes[0]}]; each listener needs its own port")
    for index, listener in enumerate(args.listeners):
        path = f"{root}.listeners[{index}]"
        monitor = listener.monitor
        if not predicates.pool_monitored(monitor):
            yield Problem(f"{path}.monitor", f"a listener needs a health monitor: {predicates.MISSING_MONITOR}; "
                                             "give it one (e.g. monitor: {type: TCP}) or leave monitor out for "
                                             "the default TCP monitor")
        if monitor is not None and monitor.timeout >= monitor.delay:
            yield Problem(f"{path}.monitor.timeout", f"timeout {monitor.timeout}s must be shorter than delay "
                                                     f"{monitor.delay}s; lower timeout or raise delay")
        if monitor is not None:
            mismatch = predicates.monitor_pool_problem(monitor.type, predicates.POOL_PROTOCOL[listener.protocol])
            if mismatch:
                yield Problem(f"{path}.monitor.type", f"{mismatch}; pick a monitor type that fits protocol "
                                                      f"{listener.protocol}")
        if not predicates.is_ovn(args.load_balancer_provider):
            continue
        if not predicates.ovn_protocol_allowed(listener.protocol):
            yield Problem(f"{path}.protocol", f"the ovn provider serves {', '.join(predicates.OVN_PROTOCOLS)} only, "
                                              f"not {listener.protocol}; use protocol TCP (TLS passes through)")
        if monitor is not None and not predicates.ovn_monitor_allowed(monitor.type):
            yield Problem(f"{path}.monitor.type", f"the ovn provider has no {monitor.type} health monitors; use "
                                                  f"one of {', '.join(predicates.OVN_MONITOR_TYPES)}")
        if not predicates.ovn_method_allowed(listener.lb_method):
            yield Problem(f"{path}.lbMethod", f"the ovn provider balances with {predicates.OVN_METHOD} only, not "
                                              f"{listener.lb_method}; set lbMethod: {predicates.OVN_METHOD} or "
                                              "remove it")


def _check_members(args: EndpointArgs, root: str) -> Iterable[Problem]:
    known_zones = ", ".join(args.zones) or "none"
    for index, member in enumerate(args.members):
        if member.az not in args.zones:
            yield Problem(f"{root}.members[{index}].az",
                          f"member {member.name} is in zone '{member.az}', which is not configured; use one of "
                          f"{known_zones}, or add '{member.az}' under zones with its subnet")
    for name, indexes in _duplicates((member.name, index) for index, member in enumerate(args.members)):
        yield Problem(f"{root}.members[{indexes[1]}].name",
                      f"member name '{name}' is already used by members[{indexes[0]}]; member names must be unique")
    addresses = ((ipaddress.ip_address(member.address), index) for index, member in enumerate(args.members))
    for address, indexes in _duplicates(addresses):
        yield Problem(f"{root}.members[{indexes[1]}].address",
                      f"address {address} is already the address of members[{indexes[0]}] "
                      f"({args.members[indexes[0]].name}); each member needs its own address")
    if args.member_placement == "own-zone":
        populated = Counter(member.az for member in args.members)
        for zone in args.zones:
            if populated[zone] == 0:
                yield Problem(f"{root}.zones.{zone}",
                              f"zone {zone} has no members, so its load balancer would serve nothing under "
                              "memberPlacement own-zone; add a member with az: "
                              f"{zone}, remove the zone, or set memberPlacement: all-zones")
    if not args.members:
        yield Problem(f"{root}.members", "no members are configured; add the servers behind the endpoint")


def _duplicates(pairs: Iterable[tuple[Any, Any]]) -> list[tuple[Any, list[Any]]]:
    """Each value seen more than once, with the places it was seen (first place first), in first-seen order."""
    seen: dict[Any, list[Any]] = {}
    for value, place in pairs:
        seen.setdefault(value, []).append(place)
    return [(value, places) for value, places in seen.items() if len(places) > 1]


_HINTS = {
    "extra_forbidden": "unknown key; remove it or fix its spelling (see README.md 'Configuration')",
    "missing": "required key is missing; add it",
}


_UNION_BRANCH = re.compile(r"^(str|int|float|bool|is-instance\[.*\]|function-.*\[.*\])$")
"""A pydantic location part that names a branch of a union (``pulumi.Input[str]`` is str | Awaitable | Output), not
a key: one problem per key, whatever branches were tried."""


def _problems_from_pydantic(error: ValidationError, root: str) -> list[Problem]:
    problems: dict[str, Problem] = {}
    for detail in error.errors(include_url=False):
        loc = list(detail["loc"])
        while loc and isinstance(loc[-1], str) and _UNION_BRANCH.match(loc[-1]):
            loc.pop()
        path = root + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
        message = _HINTS.get(detail["type"]) or _message_with_fix(detail)
        problems.setdefault(path, Problem(path, message))
    return list(problems.values())


def _message_with_fix(detail: Mapping[str, Any]) -> str:
    message = str(detail["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        if message.startswith(prefix):
            message = message[len(prefix):]
    if detail["type"] in ("less_than_equal", "greater_than_equal", "greater_than", "less_than"):
        return f"{message} (got {detail.get('input')!r}); change the value"
    if detail["type"] in ("literal_error", "enum"):
        return f"{message} (got {detail.get('input')!r})"
    return message


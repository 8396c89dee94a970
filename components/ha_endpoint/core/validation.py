"""Turn raw configuration into :class:`EndpointArgs`, or into every problem it has, each with its fix.

Pure functions: nothing here talks to a cloud or registers a resource. Field-level rules come from pydantic
(:mod:`ha_endpoint.core.args`, its errors reworded by :mod:`ha_endpoint.core.messages`); the rules that relate fields to
each other are the ``_check_*`` functions below; those that need the looked-up cloud facts are
:mod:`ha_endpoint.core.checks`'s (run before the planner, for plain inputs at once and for Outputs once they are
known). Every rule is a shared predicate (:mod:`ha_endpoint.core.predicates`) where the policy pack decides the same
thing; a backend's own rules (its rules of the listeners, its words for the shared ones) are asked of the rules it
gives (:class:`ha_endpoint.core.checks.Rules`). A value that is not plain yet (an Output of a resource declared beside
the component) is skipped here and checked once known.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from typing import Any, Collection, Iterable, Mapping, Optional, Protocol

from pydantic import ValidationError

from . import predicates
from .args import RENAMED_KEYS, EndpointArgs
from .checks import NO_RULES, Rules
from .errors import ConfigError, Problem
from .messages import problems_from_pydantic

DEFAULT_ROOT = "ha-endpoint:endpoint"
ZONE_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$")


class BackendKeys(Protocol):
    """What validation reads of a registered backend (:class:`ha_endpoint.backends.plugin.Backend`): the zone keys it
    takes."""

    vip_address: bool
    """Whether it takes ``zones.<az>.vipAddress``."""
    adopts: bool
    """Whether it takes ``zones.<az>.adopt`` (an existing load balancer taken over)."""
    rules: Rules
    """Its own rules (:class:`ha_endpoint.core.checks.Rules`): here, its rules of the listeners and its words for the
    rules every backend shares (a listener's monitor and certificate, the allowed CIDRs' IP version)."""


def load_endpoint_args(raw: Any, root: str = DEFAULT_ROOT,
                       backends: Optional[Mapping[str, BackendKeys]] = None) -> EndpointArgs:
    """Parse and check a configuration value; raise :class:`ConfigError` listing every problem found. ``backends``:
    the registered backends by name (:data:`ha_endpoint.backends.REGISTRY`), which the ``backend`` key must name one
    of, whose zone keys the zones may give (:func:`backend_key_problems`) and whose rules the checks ask
    (:func:`check_endpoint_args`: its own rules of the listeners, and the words of the rules every backend shares); not
    given, the key is checked where the backend is chosen (:func:`ha_endpoint.backends.lookup`), and the arguments
    are held to the rules every backend shares, in their words. Arguments remember the rules they were checked by
    (``_checked``): loaded again with the same ones they are not checked again, with the backend's (the stack program,
    :class:`ha_endpoint.HaEndpoint` and the pipeline load them with the registry) they are."""
    if isinstance(raw, EndpointArgs):
        args = raw
    else:
        if not isinstance(raw, Mapping):
            got = {str: "text", list: "a list", int: "a number", float: "a number", bool: "a yes/no value"}.get(
                type(raw), type(raw).__name__)
            raise ConfigError([Problem(root, f"must be a mapping of settings (name, zones, listeners, members, ...), "
                                             f"got {got}; write it as one, as in README.md 'Configuration'")])
        renamed: list[str] = []
        token = RENAMED_KEYS.set(renamed)
        try:
            args = EndpointArgs.model_validate(dict(raw))
        except ValidationError as error:
            raise ConfigError(problems_from_pydantic(error, root)) from None
        finally:
            RENAMED_KEYS.reset(token)
        args._former_keys = tuple(renamed)
    chosen = backends.get(args.backend) if backends is not None else None
    rules = chosen.rules if chosen else NO_RULES
    problems = [] if args._checked == rules else check_endpoint_args(args, root, rules)
    if backends is not None:
        problems[:0] = backend_key_problems(args, backends, root)
    if problems:
        raise ConfigError(problems)
    args._checked = rules
    return args


def backend_key_problems(args: EndpointArgs, backends: Mapping[str, BackendKeys], root: str) -> list[Problem]:
    """The ``backend`` key naming no registered backend, or the zone keys the chosen one does not take:
    ``vipAddress`` (:attr:`BackendKeys.vip_address`) and ``adopt`` (:attr:`BackendKeys.adopts`)."""
    if args.backend not in backends:
        return [unknown_backend(args.backend, backends, root)]
    chosen = backends[args.backend]

    def takers(trait: str) -> str:
        return ", ".join(sorted(name for name, registered in backends.items() if getattr(registered, trait)))

    problems = [] if chosen.vip_address else [
        Problem(f"{root}.zones.{az}.vipAddress",
                f"sets the address of the zone's VIP port, and the {args.backend} backend makes no such port (it gets "
                f"its VIP addresses from the cloud); remove vipAddress, or set backend to one that takes it: "
                f"{takers('vip_address')}")
        for az, zone in args.zones.items() if zone.vip_address is not None]
    adopting = [az for az, zone in args.zones.items() if zone.adopt is not None]
    if adopting and not chosen.adopts:
        problems.append(Problem(f"{root}.zones.{adopting[0]}.adopt",
                                f"adopt takes over an existing load balancer, and the {args.backend} backend adopts "
                                f"none; remove adopt, or set backend to one that adopts: {takers('adopts')}"))
    return problems


def unknown_backend(name: str, backends: Collection[str], root: str) -> Problem:
    """The problem of a ``backend`` key that names no registered backend."""
    known = ", ".join(sorted(backends)) or "none"
    return Problem(f"{root}.backend", f"no backend is registered as '{name}' (registered: {known}); set backend to one "
                                      "of them, or leave it out for the default")


def check_endpoint_args(args: EndpointArgs, root: str = DEFAULT_ROOT, rules: Rules = NO_RULES) -> list[Problem]:
    """Every cross-field problem of ``args``, in a stable order (zones, listeners, the backend's own rules of the
    configuration, members, dns); ``rules``: the chosen backend's, whose words say why."""
    # ``memberSources`` not read yet (ha_endpoint.members.read_members reads them and gives the arguments back with
    # it spent, None): the member list is checked once every source is read
    pending = args.member_sources is not None
    return [
        *_check_zones(args, root, rules),
        *_check_listeners(args, root, rules),
        *rules.configuration(args, root),
        *([] if pending else _check_members(args, root)),
        *_check_dns(args, root),
        *_check_not_ready_zones(args, root),
    ]


def _check_zones(args: EndpointArgs, root: str, rules: Rules) -> Iterable[Problem]:
    zone_names = list(args.zones)
    # one zone is the way back of an adoption (docs/adoption.md "Undo"): the adopted load balancer alone, every
    # other zone's address out of DNS before its load balancer goes; any other single zone is no HA endpoint
    back_to_one = len(zone_names) == 1 and args.zones[zone_names[0]].adopt is not None
    if len(zone_names) < 2 and not back_to_one:
        yield Problem(f"{root}.zones", f"{len(zone_names)} zone(s) given ({', '.join(zone_names) or 'none'}); "
                                       "an HA endpoint needs at least 2: add another availability zone and its subnet")
    for zone in zone_names:
        if not ZONE_NAME.match(zone):
            yield Problem(f"{root}.zones.{zone}", "an availability zone name must be 1-32 lowercase letters, digits "
                                                  "or '-' (it becomes part of resource names); rename it")
    for subnet, zones in _duplicates((zone_args.subnet, zone) for zone, zone_args in args.zones.items()):
        yield Problem(f"{root}.zones.{zones[1]}.subnet",
                      f"subnet '{subnet}' is already the subnet of zone {zones[0]}, so one subnet's failure would take "
                      f"both zones down; give zone {zones[1]} a subnet of its own in its own AZ")
    byo = [(zone_args.floating_ip, zone) for zone, zone_args in args.zones.items() if zone_args.floating_ip]
    for address, zones in _duplicates(byo):
        yield Problem(f"{root}.zones.{zones[1]}.floatingIp",
                      f"floating IP {address} is already used by zone {zones[0]}; give each zone its own")
    if byo and args.floating_network is None:
        yield Problem(f"{root}.zones.{byo[0][1]}.floatingIp",
                      "a floating IP is given but floatingNetwork is not set; set floatingNetwork to the external "
                      "network of that address, or remove floatingIp for an internal endpoint")
    yield from _check_cidrs(args, root, rules)
    yield from _check_adoption(args, root)


def _check_adoption(args: EndpointArgs, root: str) -> Iterable[Problem]:
    """``zones.<az>.adopt``: each load balancer adopted by one zone (docs/adoption.md); whether the backend adopts at
    all is :func:`backend_key_problems`'."""
    adopted = [(zone_args.adopt.load_balancer, zone) for zone, zone_args in args.zones.items() if zone_args.adopt]
    for ref, zones in _duplicates(adopted):
        yield Problem(f"{root}.zones.{zones[1]}.adopt.loadBalancer",
                      f"load balancer '{ref}' is already adopted by zone {zones[0]}; one load balancer serves one "
                      f"zone: remove adopt from zone {zones[1]}")


def _check_listeners(args: EndpointArgs, root: str, rules: Rules) -> Iterable[Problem]:
    """The listeners' ports, monitors and certificates as every backend takes them (why, in the backend's words:
    :class:`ha_endpoint.core.checks.Rules`)."""
    for port, indexes in _duplicates((listener.port, index) for index, listener in enumerate(args.listeners)):
        yield Problem(f"{root}.listeners[{indexes[1]}].port",
                      f"port {port} is already served by listeners[{indexes[0]}]; give each listener its own port "
                      "(or merge the two)")
    for index, listener in enumerate(args.listeners):
        path = f"{root}.listeners[{index}]"
        monitor = listener.monitor
        if monitor is None:
            yield Problem(f"{path}.monitor", f"a listener needs a health monitor: {rules.needs_monitor}; give it one "
                                             "(e.g. monitor: {type: TCP}) or leave monitor out for the default TCP "
                                             "monitor")
        if monitor is not None and monitor.timeout >= monitor.delay:
            yield Problem(f"{path}.monitor.timeout", f"timeout {monitor.timeout}s must be shorter than delay "
                                                     f"{monitor.delay}s; lower timeout or raise delay")
        yield from _certificate(listener, path, rules)


def _certificate(listener: Any, path: str, rules: Rules) -> Iterable[Problem]:
    """A certificate a listener that terminates no TLS is given, or one that does is not (why: the backend's
    :attr:`ha_endpoint.core.checks.Rules.needs_certificate`)."""
    given = listener.certificate_ref is not None
    problem = predicates.certificate_problem(listener.protocol, given, rules.needs_certificate)
    if problem and not given:
        yield Problem(f"{path}.certificateRef", f"{problem}; add certificateRef: the reference of a Barbican "
                                                "certificate container (openstack secret container list), or use "
                                                "protocol HTTPS to pass TLS through to the members")
    elif problem:
        yield Problem(f"{path}.certificateRef", f"{problem}; remove certificateRef, or set protocol: TERMINATED_HTTPS "
                                                "to terminate TLS at the load balancer")


def _check_cidrs(args: EndpointArgs, root: str, rules: Rules) -> Iterable[Problem]:
    """Every listener is in every zone and each zone's VIP has one IP version: CIDRs of both versions never work
    (why, in the backend's words: :attr:`ha_endpoint.core.checks.Rules.one_ip_version`, as the cloud-facts check of
    the VIPs' versions says it)."""
    versions = [ipaddress.ip_network(cidr, strict=False).version for cidr in args.allowed_cidrs]
    for index, version in enumerate(versions):
        if version != versions[0]:
            yield Problem(f"{root}.allowedCidrs[{index}]",
                          f"{args.allowed_cidrs[index]} is IPv{version} but allowedCidrs[0] "
                          f"({args.allowed_cidrs[0]}) is IPv{versions[0]}: {rules.one_ip_version}; list the "
                          f"IPv{versions[0]} client networks only, or make another endpoint for the other version")
            return


def check_members(args: EndpointArgs, root: str = DEFAULT_ROOT) -> list[Problem]:
    """The problems of the whole member list once every source is read (:func:`ha_endpoint.members.read_members`):
    the rest of ``args`` was checked before the sources were read."""
    return list(_check_members(args, root))


def _check_members(args: EndpointArgs, root: str) -> Iterable[Problem]:
    """The rules over the whole member list (static and read from sources: :mod:`ha_endpoint.members`), each
    member named where it comes from (its ``_origin``)."""
    known_zones = ", ".join(args.zones) or "none"
    members = args.members
    where = [member._origin for member in members]
    for index, member in enumerate(members):
        if member.address is None and member.server is None:
            yield Problem(f"{root}.{where[index]}", f"member {member.name} has neither address nor server; add "
                                                    "address (its IP on its subnet) or server (the id of its server, "
                                                    "whose address is looked up)")
    for index, member in enumerate(members):
        if member.az not in args.zones:
            fix = (f"add '{member.az}' under zones with its subnet, or give the Machine a failure domain that is a "
                   "zone" if member._source != "static" else f"add '{member.az}' under zones with its subnet")
            yield Problem(f"{root}.{where[index]}.az",
                          f"member {member.name} is in zone '{member.az}', which is not configured; use one of "
                          f"{known_zones}, or {fix}")
    for name, indexes in _duplicates((member.name, index) for index, member in enumerate(members)):
        yield Problem(f"{root}.{where[indexes[1]]}.name",
                      f"member name '{name}' is already used by {where[indexes[0]]}; give each member a name of its "
                      "own")
    addresses = ((ipaddress.ip_address(member.address), index) for index, member in enumerate(members)
                 if isinstance(member.address, str))  # an Output's (or a server's) address: checked once known
    for address, indexes in _duplicates(addresses):
        yield Problem(f"{root}.{where[indexes[1]]}.address",
                      f"address {address} is already the address of {where[indexes[0]]} "
                      f"({members[indexes[0]].name}); give each member its own address (one entry per server)")
    if args.member_placement == "own-zone":
        populated = Counter(member.az for member in members)
        for zone in args.zones:
            if populated[zone] == 0:
                yield Problem(f"{root}.zones.{zone}",
                              f"zone {zone} has no members, so its load balancer would serve nothing under "
                              "memberPlacement own-zone; add a member with az: "
                              f"{zone}, remove the zone, or set memberPlacement: all-zones")
                continue
            placed = [index for index, member in enumerate(members) if member.az == zone]
            if not any(_in_service(members[index]) for index in placed):
                yield _taken_out(args, root, where, placed, f"zone {zone}'s only member(s)",
                                 f"add a member with az: {zone}, remove the zone, or set memberPlacement: all-zones")
    elif members and not any(_in_service(member) for member in members):
        yield _taken_out(args, root, where, list(range(len(members))), "all members", "or add a member")
    if not members:
        yield Problem(f"{root}.members", "no members are configured; add the servers behind the endpoint")
    ports = ((member.port, index) for index, member in enumerate(members) if isinstance(member.port, str))
    for port, indexes in _duplicates(ports):
        yield Problem(f"{root}.{where[indexes[1]]}.port",
                      f"port {port} is already the port of {where[indexes[0]]} "
                      f"({members[indexes[0]].name}); each member has its own Neutron port: give this member's "
                      "own port, or remove port here")


def _in_service(member: Any) -> bool:
    return predicates.member_in_service(member.enabled, member.weight)


def _taken_out(args: EndpointArgs, root: str, where: list[str], indexes: list[int], whose: str,
               other_fixes: str) -> Problem:
    """The problem of members that are all taken out (:func:`ha_endpoint.core.predicates.member_in_service`): no
    capacity is left where they serve. Named at the first one's key that takes it out."""
    first = args.members[indexes[0]]
    key = "enabled" if first.enabled is False else "weight"
    names = ", ".join(args.members[index].name for index in indexes)
    return Problem(f"{root}.{where[indexes[0]]}.{key}",
                   f"{whose} ({names}) are taken out ({predicates.TAKEN_OUT}), so the load balancer would have no "
                   f"capacity; put one back (enabled: true and a weight above 0), {other_fixes}")


def _check_dns(args: EndpointArgs, root: str) -> Iterable[Problem]:
    """The record names Designate will be asked for, built from ``record``, the DNS zone and (with per-zone records)
    each AZ, checked with Designate's own rule (:func:`ha_endpoint.core.predicates.dns_name_problem`)."""
    dns = args.dns
    if dns is None:
        return
    known = isinstance(dns.dns_zone, str)
    zone = dns.dns_zone if known else "<dnsZone>."  # an Output: the record's own labels now, the length once known
    names = predicates.zone_record_names(dns.record, zone, sorted(args.zones), bool(dns.per_zone_records))
    failing = [(what, fqdn, problem) for what, fqdn in names
               for problem in [predicates.dns_name_problem(fqdn if known else fqdn[:-len(zone)])] if problem]
    if not failing:
        return
    what, fqdn, problem = failing[0]
    fqdn = fqdn if known else fqdn[:-1]  # "api.<dnsZone>"
    if what == names[0][0]:
        fix = "shorten dns.record (or use a DNS zone with a shorter name)" if "characters long" in problem else \
            "fix dns.record"
    else:
        others = len(failing) - 1
        fix = ("shorten dns.record or the AZ names, or set dns.perZoneRecords: false" +
               (f" (the records of {others} other zone(s) fail the same way)" if others else ""))
    yield Problem(f"{root}.dns.record", f"{what} would be {fqdn}, which Designate refuses: {problem}; {fix}")


def _check_not_ready_zones(args: EndpointArgs, root: str) -> Iterable[Problem]:
    """The floor of ready zones fits the zones; it and per-zone records go with onZoneNotReady as they can."""
    readiness = args.readiness
    unpublish = readiness.on_zone_not_ready == "unpublish"
    if readiness.min_ready_zones is not None and not unpublish:
        yield Problem(f"{root}.readiness.minReadyZones",
                      "applies only with readiness.onZoneNotReady: unpublish (with fail, every zone must be ready); "
                      "set onZoneNotReady: unpublish, or remove minReadyZones")
    elif readiness.min_ready_zones is not None and readiness.min_ready_zones > len(args.zones):
        yield Problem(f"{root}.readiness.minReadyZones",
                      f"is {readiness.min_ready_zones} but the endpoint has {len(args.zones)} zones, so no update "
                      f"could ever complete; set it to at most {len(args.zones)}")
    if unpublish and args.dns is not None and args.dns.per_zone_records:
        yield Problem(f"{root}.readiness.onZoneNotReady",
                      "unpublish cannot leave a zone out of its own record (dns.perZoneRecords: Designate refuses an "
                      "empty record); set dns.perZoneRecords: false, or onZoneNotReady: fail")


def _duplicates(pairs: Iterable[tuple[Any, Any]]) -> list[tuple[Any, list[Any]]]:
    """Each value seen more than once, with the places it was seen (first place first), in first-seen order."""
    seen: dict[Any, list[Any]] = {}
    for value, place in pairs:
        seen.setdefault(value, []).append(place)
    return [(value, places) for value, places in seen.items() if len(places) > 1]

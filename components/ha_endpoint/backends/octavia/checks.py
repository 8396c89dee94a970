"""What Octavia refuses that only the cloud can tell, asked at preview: its availability zones and the certificates.

A load balancer pinned to an availability zone Octavia does not know (or has disabled) is refused when it is created,
and so is a TERMINATED_HTTPS listener whose certificate Octavia cannot load from the key manager (Barbican). The
OpenStack provider this project runs (pulumi-openstack 5.5.3, terraform-provider-openstack v3.4.0) has no data source
for either: nothing answers "which AZs does Octavia have" through a provider invoke, and its Barbican data sources find
containers by name, not by the reference a listener takes. So these two questions are asked with openstacksdk, at
preview, through the preview's catalog (:mod:`ha_endpoint.cloud.catalog`: the same cloud and region the readiness
gates poll, the same seam tests replace).

A cloud that cannot be asked gets a warning that says what could not be checked, and Octavia judges at ``up``; a name
the cloud answers it does not have is refused at once. :func:`preview` is the Octavia backend's preview
(:attr:`ha_endpoint.backends.plugin.Backend.preview`): these checks, then the members it holds and what the zones
adopt.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Callable, Iterator, Optional, Protocol

import openstack.exceptions as os_exc
import pulumi

from ...cloud.retry import READ_RETRY_SECONDS
from ...cloud.catalog import CatalogUnavailable, NoCloudToAsk, OpenStackCatalog, \
    current_catalog, unavailable_on_cloud_failure
from ...cloud.connection import cloud_failure, describe, translate
from ...cloud.errors import CallFailed, CloudError
from ...cloud.retry import CredentialsRefused, RetriesExhausted, call_with_retries
from ...core import contract, predicates
from ...core.errors import HaEndpointError
from ...core.args import EndpointArgs, ListenerArgs, MonitorArgs, placed_zones
from ...core.cloud_facts import CloudFacts, MemberSpec
from ...core.errors import Problem
from ...core.inputs import plain
from ...core.plan import PollTarget
from ..plugin import Previewed
from .adopted_tree import read_record, read_tree
from .adoption import adopted_from
from .rules import (
    NAME, HTTP_MONITOR_TYPES, OVN_MONITOR_TYPES, OVN_PROTOCOLS, UDP_CONNECT_MIN_DELAY, certificate_ref_length_problem,
    listener_timeouts_problem, monitor_delay_problem, monitor_pool_problem, ovn_method_allowed, ovn_monitor_allowed,
    ovn_protocol_allowed,
)


class NoLoadBalancerService(CloudError):
    """The cloud's catalog has no load-balancer service (Octavia): the endpoint's load balancers cannot be created
    there, which the preview refuses."""


@dataclass(frozen=True)
class OctaviaAz:
    """An availability zone as Octavia knows it."""

    name: str
    enabled: bool = True


class OctaviaCatalog(Protocol):
    """What the checks ask the cloud (the fake cloud's catalog answers them too, in tests)."""

    def octavia_azs(self, target: PollTarget) -> list[OctaviaAz]:
        """Octavia's availability zones; :class:`CatalogUnavailable` when the cloud cannot be asked."""
        ...

    def certificate(self, target: PollTarget, ref: str) -> Optional[bool]:
        """Whether the key manager holds ``ref`` (None: the cloud has no key manager); :class:`CatalogUnavailable`
        when it cannot be asked."""
        ...

    def members_down(self, target: PollTarget, identity_tag: str, pool_names: set[str]) -> set[tuple[str, str]]:
        """(pool name, member name) of every member listed administratively down in the pools named ``pool_names``
        that carry ``identity_tag``; :class:`NoCloudToAsk` when there is no cloud to ask, and a failed call as the
        cloud layer's categories (:func:`ha_endpoint.cloud.connection.translate`)."""
        ...

    def tagged_members(self, target: PollTarget, pool_names: list[str], tag: str) -> set[tuple[str, str, int]]:
        """``(pool name, address, protocol port)`` of every member carrying ``tag`` in the pools named
        ``pool_names`` (a pool that does not exist yet has none); failures as :meth:`members_down`'s."""
        ...


class OpenStackOctaviaCatalog(OpenStackCatalog):
    """The real cloud's answers, through the preview catalog's connection."""

    def octavia_azs(self, target: PollTarget) -> list[OctaviaAz]:
        with unavailable_on_cloud_failure():
            conn = self.connection(target)
            try:
                azs = list(conn.load_balancer.availability_zones())
            except (os_exc.EndpointNotFound, os_exc.ServiceDisabledException) as error:
                raise NoLoadBalancerService(describe(error)) from None
            return [OctaviaAz(az.name, bool(az.is_enabled if az.is_enabled is not None else True))
                    for az in azs]

    def certificate(self, target: PollTarget, ref: str) -> Optional[bool]:
        object_id = ref.rstrip("/").rsplit("/", 1)[-1]
        kinds = ["secret"] if "/secrets/" in ref else ["container"] if "/containers/" in ref else \
            ["container", "secret"]
        with unavailable_on_cloud_failure():
            conn = self.connection(target)
            try:
                for kind in kinds:
                    try:
                        getattr(conn.key_manager, f"get_{kind}")(object_id)
                        return True
                    except os_exc.NotFoundException:
                        continue
                return False
            except (os_exc.EndpointNotFound, os_exc.ServiceDisabledException):  # no key manager in the catalog
                return None


    def tagged_members(self, target: PollTarget, pool_names: list[str], tag: str) -> set[tuple[str, str, int]]:
        with _retryable(f"listing the members tagged {tag}"):
            conn = self.connection(target)
            found: set[tuple[str, str, int]] = set()
            for name in pool_names:
                for pool in conn.load_balancer.pools(name=name):
                    found |= {(name, member.address, int(member.protocol_port))
                              for member in conn.load_balancer.members(pool, tags=tag)}
            return found

    def adoptable(self, target: PollTarget, ref: str):
        """The load balancer ``ref`` to adopt, with its tree (:func:`.adopted_tree.read_tree`)."""
        with _retryable(f"reading load balancer {ref} to adopt"):
            return read_tree(self.connection(target), ref)

    def a_recordset(self, target: PollTarget, dns_zone_id: str, fqdn: str):
        """The A record set ``fqdn`` (:func:`.adopted_tree.read_record`)."""
        with _retryable(f"reading record set {fqdn}"):
            return read_record(self.connection(target), dns_zone_id, fqdn)

    def members_down(self, target: PollTarget, identity_tag: str, pool_names: set[str]) -> set[tuple[str, str]]:
        with _retryable("listing the members of the endpoint's pools"):
            conn = self.connection(target)
            pools = [pool for pool in conn.load_balancer.pools(tags=identity_tag) if pool.name in pool_names]
            return {(str(pool.name), str(member.name or "")) for pool in pools
                    for member in conn.load_balancer.members(pool.id) if member.is_admin_state_up is False}


@contextlib.contextmanager
def _retryable(what: str) -> Iterator[None]:
    """A cloud failure inside the block as the cloud layer's categories (:func:`ha_endpoint.cloud.connection.
    translate`: retry, re-authenticate, or :class:`CallFailed`), no load-balancer service as
    :class:`NoLoadBalancerService`; anything else (a bug of ours, an SDK that changed) raised as itself."""
    try:
        yield
    except HaEndpointError:
        raise
    except (os_exc.EndpointNotFound, os_exc.ServiceDisabledException) as error:
        raise NoLoadBalancerService(describe(error)) from None
    except Exception as error:
        if not cloud_failure(error):
            raise
        raise translate(error, what) from error


_OPENSTACK = OpenStackOctaviaCatalog()


class MembersUnreadable(CloudError):
    """Listing which members the endpoint's pools hold administratively down failed: retrying did not help."""


def members_put_back_from(args: EndpointArgs, target: PollTarget, identity_tag: str, root: str,
                          clock: Optional[Callable[[], float]] = None, sleep: Optional[Callable[[float], None]] = None,
                          timeout_seconds: Optional[float] = None) -> Optional[frozenset[tuple[str, str]]]:
    """Under the ovn provider, with a health monitor:
    (pool name, member name) of the members the endpoint's pools list administratively down now, that the
    configuration may put back (``enabled: true`` again). The plan has those re-created rather than set admin up
    (:attr:`ha_endpoint.core.plan.MemberPlan.put_back`): ovn-octavia-provider 3.1.2's
    ``OvnProviderHelper.member_update`` keeps a monitored member it holds OFFLINE out of the OVN backends for good when
    it is only set admin up; ``member_create`` puts it back. Empty when nothing applies; None (with a warning) when there is no cloud to ask (:class:`NoCloudToAsk`): such a member is
    then only set admin up, and the gate times out naming it. A failed call is retried as the DNS records' are
    (:func:`ha_endpoint.cloud.catalog.published_records`); if it still fails, :class:`MembersUnreadable`: a transient
    error never changes the plan."""
    if not predicates.drains_admin_down(args.load_balancer_provider) or \
            not any(listener.monitor is not None for listener in args.listeners) or not isinstance(args.name, str):
        return frozenset()
    pools = {contract.pool_name(args.name, az, listener.port) for az in args.zones for listener in args.listeners}
    catalog: OctaviaCatalog = current_catalog(_OPENSTACK)
    try:
        return frozenset(call_with_retries(lambda: catalog.members_down(target, identity_tag, pools),
                                           timeout_seconds=READ_RETRY_SECONDS if timeout_seconds is None
                                           else timeout_seconds,
                                           clock=clock or time.monotonic, sleep=sleep or time.sleep))
    except NoCloudToAsk as reason:
        pulumi.log.warn(f"{root}.members: the members the load balancers list administratively down could not be read "
                        f"at preview ({reason}); a member put back (enabled: true again) is then only set admin up, "
                        "which the ovn provider does not put back in service (the zone's gate times out naming it): "
                        "set readiness.cloud so that the preview can ask, or remove the member and add it again")
        return None
    except (CallFailed, RetriesExhausted, CredentialsRefused) as error:
        raise MembersUnreadable(f"the members the endpoint's pools hold administratively down could not be read at "
                                f"preview ({error}); a member put back (enabled: true again) is re-created under the "
                                "ovn provider rather than set admin up, so nothing is planned without them: run the "
                                "preview again once the load-balancer service (Octavia) answers") from error


def agent_held(args: EndpointArgs, target: PollTarget, root: str,
               clock: Optional[Callable[[], float]] = None, sleep: Optional[Callable[[float], None]] = None,
               timeout_seconds: Optional[float] = None) -> frozenset[tuple[str, str, int]]:
    """The members the member agent holds already in the pools its members would join: ``(pool name, address,
    port)`` of each member carrying a member's agent tag (``up`` then leaves it to the agent: docs/members.md). No
    cloud to ask: none, with a warning (Octavia refuses a second member at an address and port). A failed call is
    retried, then :class:`MembersUnreadable`."""
    wanted: dict[str, set[str]] = {}
    for member in args.members:
        if member._agent_tag is not None:
            wanted.setdefault(member._agent_tag, set()).update(
                contract.pool_name(args.name, az, listener.port)
                for az in placed_zones(args.zones, args.member_placement, member.az)
                for listener in args.listeners)
    catalog: OctaviaCatalog = current_catalog(_OPENSTACK)
    held: set[tuple[str, str, int]] = set()
    for tag, pools in sorted(wanted.items()):
        try:
            held |= call_with_retries(lambda: catalog.tagged_members(target, sorted(pools), tag),
                                      timeout_seconds=READ_RETRY_SECONDS if timeout_seconds is None
                                      else timeout_seconds, clock=clock or time.monotonic, sleep=sleep or time.sleep)
        except NoCloudToAsk as reason:
            pulumi.log.warn(f"{root}.memberSources: the members the member agent holds ({tag}) could not be read at "
                            f"preview ({reason}); each Machine gets a member resource, which Octavia refuses where "
                            "the agent holds one already")
        except (CallFailed, RetriesExhausted, CredentialsRefused) as error:
            raise MembersUnreadable(f"the members the member agent holds ({tag}) could not be read at preview "
                                    f"({error}); a Machine the agent holds gets no member resource of the stack, so "
                                    "nothing is planned without them: run the preview again once the load-balancer "
                                    "service (Octavia) answers") from error
    return frozenset(held)


def preview(args: EndpointArgs, target: PollTarget, root: str, identity_tag: str,
            dns_zone_id: Optional[str]) -> Previewed:
    """The Octavia backend's preview (:attr:`ha_endpoint.backends.plugin.Backend.preview`): what Octavia refuses
    (:func:`check_octavia`); once it refuses nothing, the members it holds (:func:`members_put_back_from`,
    :func:`agent_held`: a listing that could not be read is a problem at ``<root>.members`` or
    ``<root>.memberSources``) and what the zones adopt (:func:`ha_endpoint.backends.octavia.adoption.adopted_from`)."""
    refused = check_octavia(args, target, root, identity_tag)
    if refused:
        return Previewed(refused)
    problems: list[Problem] = []
    down: Optional[frozenset[tuple[str, str]]] = frozenset()
    held_by_agent: frozenset[tuple[str, str, int]] = frozenset()
    try:
        down = members_put_back_from(args, target, identity_tag, root)
    except MembersUnreadable as error:
        problems.append(Problem(f"{root}.members", str(error)))
    try:
        held_by_agent = agent_held(args, target, root)
    except MembersUnreadable as error:
        problems.append(Problem(f"{root}.memberSources", str(error)))
    dns = args.dns
    fqdn = f"{dns.record}.{dns.dns_zone}" if dns is not None and dns_zone_id and isinstance(dns.record, str) and \
        isinstance(dns.dns_zone, str) else None
    wanted = {az: zone.adopt.load_balancer for az, zone in args.zones.items() if zone.adopt is not None}
    catalog = current_catalog(_OPENSTACK)
    adoption = adopted_from(wanted, fqdn, lambda ref: catalog.adoptable(target, ref),
                            lambda name: catalog.a_recordset(target, dns_zone_id, name), root)
    return Previewed(problems + adoption.problems, down, held_by_agent, adoption.adopted, adoption.record)


def ovn_weights(args: EndpointArgs, root: str) -> list[Problem]:
    """The Octavia backend's notices (:attr:`ha_endpoint.backends.plugin.Backend.notices`): a weight other than 0 or
    1 under ``ovn``, which that provider ignores (every member of a pool in service gets an equal share), and which
    is written when the member is created, never updated (an update that leaves the admin state out makes the
    provider report the member NO_MONITOR: :mod:`ha_endpoint.backends.octavia.serving`). Said once, for the first
    such member."""
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


def check_octavia(args: EndpointArgs, target: PollTarget, root: str, identity_tag: str) -> list[Problem]:
    """Every zone's availability zone and every TERMINATED_HTTPS listener's certificate, as the cloud answers; what
    could not be asked is warned about (Octavia then judges at ``up``)."""
    catalog: OctaviaCatalog = current_catalog(_OPENSTACK)
    problems: list[Problem] = []
    try:
        # under ovn no load balancer is pinned to an Octavia AZ (zone.OctaviaZone.availability_zone): nothing to ask
        known = None if not predicates.pins_availability_zone(args.load_balancer_provider) else \
            {az.name: az for az in catalog.octavia_azs(target)}
    except NoLoadBalancerService as reason:
        return [Problem(f"{root}.zones", f"the cloud has no load-balancer service (Octavia) in its catalog ({reason}), "
                                         "and each zone's load balancer is an Octavia load balancer; set backend: "
                                         "keepalived (a VIP per zone held by its members with VRRP: "
                                         "docs/keepalived.md), or use a cloud with Octavia (openstack catalog list: "
                                         "load-balancer)")]
    except CatalogUnavailable as reason:
        pulumi.log.warn(f"{root}.zones: Octavia's availability zones could not be checked at preview ({reason}); "
                        "Octavia refuses an unknown one when the load balancers are created")
        known = None
    if known is not None:
        names = ", ".join(sorted(known)) or "none"
        for az in sorted(args.zones):
            if az not in known:
                fix = (f"use one of Octavia's ({names}), or ask the cloud's operator to create it (openstack "
                       "loadbalancer availabilityzone create)") if known else \
                    ("ask the cloud's operator to define them (openstack loadbalancer availabilityzone create) or "
                     "use a cloud that has them")
                problems.append(Problem(f"{root}.zones.{az}", f"Octavia has no availability zone '{az}' (openstack "
                                        f"loadbalancer availabilityzone list: {names}), so it refuses a load balancer "
                                        f"there; {fix}"))
            elif not known[az].enabled:
                problems.append(Problem(f"{root}.zones.{az}", f"availability zone '{az}' is disabled in Octavia, so "
                                        "it refuses new load balancers there; ask the cloud's operator to enable it, "
                                        "or use another zone"))
    for index, listener in enumerate(args.listeners):
        ref = listener.certificate_ref
        if not isinstance(ref, str) or str(listener.protocol) != "TERMINATED_HTTPS":
            continue  # an Output: checked once known; on other protocols validation refuses it already
        path = f"{root}.listeners[{index}].certificateRef"
        try:
            found = catalog.certificate(target, ref)
        except CatalogUnavailable as reason:
            pulumi.log.warn(f"{path}: the certificate could not be checked at preview ({reason}); Octavia refuses "
                            "the listener if it cannot load it")
            continue
        if found is None:
            problems.append(Problem(path, "the cloud has no key manager (Barbican) in its catalog, and Octavia loads "
                                          "a TERMINATED_HTTPS listener's certificate from it; use protocol HTTPS to "
                                          "pass TLS through to the members, or a cloud with a key manager"))
        elif not found:
            problems.append(Problem(path, f"the key manager has no certificate container or secret {ref}, so Octavia "
                                          "cannot load it and refuses the listener; give the reference of an existing "
                                          "container (openstack secret container list)"))
    return problems


def adoption_problems(args: EndpointArgs, facts: CloudFacts, members: tuple[MemberSpec, ...],
                      root: str) -> list[Problem]:
    """The Octavia backend's checks of the cloud facts (:attr:`ha_endpoint.core.checks.Rules.cloud_facts`): what
    adopting each zone's load balancer (``zones.<az>.adopt``) would do that interrupts traffic: replace the
    load balancer (a VIP subnet, provider or availability zone Octavia cannot change in place) unless
    ``allowReplacement``; replace a listener, pool, monitor or member of its tree (another protocol, monitor type or
    member subnet), or move its floating IP, always (change the configuration to what serves, or build anew)."""
    problems: list[Problem] = []
    for az, found in sorted(facts.adopted.items()):
        zone = args.zones[az]
        path = f"{root}.zones.{az}"
        adopt = zone.adopt
        name = f"load balancer {found.name or found.id} ({found.id})"
        allow = f"set {path.removeprefix(root + '.')}.adopt.allowReplacement: true to build a new one and move the " \
                "floating IP to it once it serves (the adopted one is left as it is)"
        subnet = facts.subnets.get(zone.subnet) if plain(zone.subnet) else None
        wanted_az = az if predicates.pins_availability_zone(args.load_balancer_provider) else None
        fixed = found.fixed_differences(subnet.id if subnet is not None else None, str(args.load_balancer_provider),
                                        wanted_az)
        differences = []
        if "subnet" in fixed:
            differences.append((f"{path}.subnet", f"its VIP is on subnet {found.vip_subnet_id}, and zones.{az}.subnet "
                                                  f"is {subnet.name} ({subnet.id}); set subnet: {found.vip_subnet_id}"))
        if "provider" in fixed:
            differences.append((f"{root}.loadBalancerProvider",
                                f"its provider is {found.provider}, and loadBalancerProvider is "
                                f"{args.load_balancer_provider}; set loadBalancerProvider: {found.provider}"))
        if "availability_zone" in fixed:
            differences.append((f"{path}.adopt", f"it is in Octavia availability zone "
                                                 f"{found.availability_zone or '(none)'}, and the endpoint pins it to "
                                                 f"{wanted_az or '(none)'}; adopt it in zone "
                                                 f"{found.availability_zone or '<its AZ>'}"))
        if differences and not adopt.allow_replacement:
            for key, why in differences:
                problems.append(Problem(key, f"adopting {name} in zone {az} would replace it, which interrupts "
                                             f"its clients: {why}, or {allow}"))
            continue
        floating = found.floating_ip
        if floating is not None and isinstance(zone.floating_ip, str) and zone.floating_ip != floating.address:
            problems.append(Problem(f"{path}.floatingIp",
                                    f"{name} serves floating IP {floating.address}, and floatingIp {zone.floating_ip} "
                                    f"would take its place (its clients lose the address); remove floatingIp: the "
                                    f"adopted zone keeps {floating.address}"))
        if floating is not None and facts.floating_network_id and floating.network_id != facts.floating_network_id:
            problems.append(Problem(f"{root}.floatingNetwork",
                                    f"{name} serves floating IP {floating.address} of network {floating.network_id}, "
                                    f"not of floatingNetwork {args.floating_network}; set floatingNetwork to that "
                                    "network"))
        if differences:
            continue  # allowed: built anew beside it, nothing of its tree is taken over
        problems += _tree_problems(args, members, found, az, path, name)
    return problems


def _tree_problems(args: EndpointArgs, members: tuple[MemberSpec, ...], found, az: str, path: str,
                   name: str) -> list[Problem]:
    """What of the adopted tree the configuration would replace: a listener of another protocol on a port of the
    endpoint, a pool of another protocol, a monitor of another type, a member at a member's address and port on
    another subnet."""
    problems: list[Problem] = []
    placed = [member for member in members if az in member.zones]
    for index, listener in enumerate(args.listeners):
        existing = found.listener(listener.port)
        key = f"{path.rsplit('.zones.', 1)[0]}.listeners[{index}]"
        if existing is None:
            continue
        if existing.protocol != str(listener.protocol):
            problems.append(Problem(f"{key}.protocol",
                                    f"{name}'s listener on port {listener.port} is {existing.protocol}, and the "
                                    f"endpoint's is {listener.protocol}: Octavia cannot change a listener's protocol, "
                                    f"so adopting it would replace the listener that serves; set protocol: "
                                    f"{existing.protocol}"))
            continue
        wanted_pool = predicates.POOL_PROTOCOL[listener.protocol]
        if existing.pool_protocol is not None and existing.pool_protocol != str(wanted_pool):
            problems.append(Problem(f"{key}.protocol",
                                    f"{name}'s pool on port {listener.port} is {existing.pool_protocol}, and the "
                                    f"endpoint's would be {wanted_pool}: Octavia cannot change a pool's protocol, "
                                    "so adopting it would replace the pool that serves; this tree cannot be taken "
                                    f"over as it is: remove zones.{az}.adopt and bring its floating IP instead "
                                    f"(zones.{az}.floatingIp with takeOverFloatingIp: true) to build the zone anew"))
        monitor = listener.monitor
        if existing.monitor_type is not None and monitor is not None and existing.monitor_type != str(monitor.type):
            problems.append(Problem(f"{key}.monitor.type",
                                    f"{name}'s health monitor on port {listener.port} is {existing.monitor_type}, and "
                                    f"the endpoint's is {monitor.type}: Octavia cannot change a monitor's type, and "
                                    f"a pool holds one monitor; set monitor.type: {existing.monitor_type}"))
        for member in placed:
            match = _adopted_member(existing, member.address, listener.member_port or listener.port)
            if match is not None and match.subnet_id and member.subnet is not None and \
                    plain(member.subnet.id) and match.subnet_id != member.subnet.id:
                problems.append(Problem(f"{path.rsplit('.zones.', 1)[0]}.{member.path}.subnet",
                                        f"{name}'s member {member.address}:{match.protocol_port} is on subnet "
                                        f"{match.subnet_id}, and member {member.name}'s subnet is "
                                        f"{member.subnet.name} ({member.subnet.id}): adopting it would replace the "
                                        f"member; set the member's subnet: {match.subnet_id}"))
    return problems


def _adopted_member(listener, address: Optional[str], port: int):
    """The adopted pool's member at ``address``:``port``, if any."""
    return next((member for member in listener.members if member.address == address and
                 member.protocol_port == port), None)


# -- the listeners, as validation asks them (Rules.configuration) ------------------------------------------------------

def listener_problems(args: EndpointArgs, root: str) -> Iterator[Problem]:
    """What Octavia refuses of the listeners (``<root>.listeners[i]``), after the rules every backend shares
    (:func:`ha_endpoint.core.validation.check_endpoint_args`), listener by listener: each monitor's type on its pool
    and its delay, the fields only an HTTP(S) monitor takes, a certificate reference too long for it, timeouts nothing
    applies, and under ``ovn`` that provider's limits. The pure rules are :mod:`.rules`' (the policy pack's too)."""
    for index, listener in enumerate(args.listeners):
        yield from _listener_problems(args.load_balancer_provider, listener, f"{root}.listeners[{index}]")


def _listener_problems(provider: Optional[str], listener: ListenerArgs, path: str) -> Iterator[Problem]:
    monitor = listener.monitor
    if monitor is not None:
        mismatch = monitor_pool_problem(monitor.type, predicates.POOL_PROTOCOL[listener.protocol])
        if mismatch:
            yield Problem(f"{path}.monitor.type", f"{mismatch}; pick a monitor type that fits protocol "
                                                  f"{listener.protocol}")
        too_often = monitor_delay_problem(monitor.type, monitor.delay)
        if too_often:
            yield Problem(f"{path}.monitor.delay", f"{too_often}; set delay: {UDP_CONNECT_MIN_DELAY} or more")
        yield from _http_only_fields(monitor, f"{path}.monitor")
    too_long = certificate_ref_length_problem(listener.certificate_ref) \
        if isinstance(listener.certificate_ref, str) else None
    if too_long:
        yield Problem(f"{path}.certificateRef", too_long)
    yield from _timeouts(listener, provider, path)
    if not predicates.is_ovn(provider):
        return
    if not ovn_protocol_allowed(listener.protocol):
        yield Problem(f"{path}.protocol", f"the ovn provider serves {', '.join(OVN_PROTOCOLS)} only, not "
                                          f"{listener.protocol}; use protocol TCP (TLS passes through)")
    if monitor is not None and not ovn_monitor_allowed(monitor.type):
        yield Problem(f"{path}.monitor.type", f"the ovn provider has no {monitor.type} health monitors; use one of "
                                              f"{', '.join(OVN_MONITOR_TYPES)}")
    if monitor is not None and monitor.port is not None and monitor.port != (listener.member_port or listener.port):
        yield Problem(f"{path}.monitor.port", f"the ovn provider probes the member port "
                                              f"{listener.member_port or listener.port} only (it refuses a member's "
                                              "monitor port); remove monitor.port")
    if not ovn_method_allowed(listener.lb_method):
        yield Problem(f"{path}.lbMethod", f"the ovn provider balances with {predicates.OVN_METHOD} only, not "
                                          f"{listener.lb_method}; set lbMethod: {predicates.OVN_METHOD} or remove it")


def _http_only_fields(monitor: MonitorArgs, path: str) -> Iterator[Problem]:
    """``path`` and ``expectedCodes`` given to a monitor that sends no HTTP request: Octavia refuses them there (the
    endpoint would otherwise drop them without a word)."""
    if monitor.type in HTTP_MONITOR_TYPES:
        return
    for field, key in (("path", "path"), ("expected_codes", "expectedCodes")):
        if field in monitor.model_fields_set:
            yield Problem(f"{path}.{key}", f"{key} is for HTTP and HTTPS health monitors only, and this monitor is "
                                           f"{monitor.type} (Octavia refuses {key} on it); remove {key}, or set "
                                           "type: HTTP (or HTTPS) to probe a URL")


def _timeouts(listener: ListenerArgs, provider: Optional[str], path: str) -> Iterator[Problem]:
    """Listener timeouts given where nothing applies them (:func:`listener_timeouts_problem`): the user would believe
    idle connections are governed by them."""
    problem = listener_timeouts_problem(provider, listener.protocol)
    if problem is None:
        return
    fix = ("remove it (under ovn an idle connection is bounded by the conntrack timeouts of the hosts, not by Octavia)"
           if predicates.is_ovn(provider) else
           "remove it, or use protocol TCP for a listener the amphora proxies")
    for field, key in predicates.TIMEOUT_KEYS:
        if getattr(listener, field) is not None:
            yield Problem(f"{path}.{key}", f"{key} is set but {problem}; {fix}")

"""What Octavia refuses that only the cloud can tell, asked at preview: its availability zones and the certificates;
and the A records the endpoint's DNS zone holds already (how a record is replaced depends on them).

A load balancer pinned to an availability zone Octavia does not know (or has disabled) is refused when it is created,
and so is a TERMINATED_HTTPS listener whose certificate Octavia cannot load from the key manager (Barbican). The
OpenStack provider this project runs (pulumi-openstack 5.5.3, terraform-provider-openstack v3.4.0) has no data source
for either: nothing answers "which AZs does Octavia have" through a provider invoke, and its Barbican data sources find
containers by name, not by the reference a listener takes. So these two questions are asked with openstacksdk, at
preview, of the same cloud and region the readiness gates poll (:class:`ha_endpoint.core.plan.PollTarget`:
``readiness.cloud``/``readiness.region``, or the ``cloud``/``region`` the stack program passes to HaEndpoint: the
stack's ``openstack:cloud``/``openstack:region``), which is the cloud the provider creates the load balancers in.

A cloud that cannot be asked (unreachable, credentials refused, a policy that hides the AZ list, an explicit provider
whose cloud is known only once it is configured, a default provider whose cloud the component was not told) gets a
warning that says what could not be checked, and Octavia judges at ``up``; which failures count as the cloud's is
:func:`ha_endpoint.cloud.connection.cloud_failure`'s rule (the lookups' too): anything else, a bug or an SDK that
changed, is raised as itself; a name the cloud answers it does not have is refused at once (:class:`CloudLookupError`).
The DNS zone's record sets are not a check but an input of the plan: a failed listing is retried, then fails the
preview (:func:`published_records`). Tests replace the catalog (:func:`use_catalog`) with the fake cloud's.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Protocol

import openstack.exceptions as os_exc
import pulumi

from ..core import contract, predicates
from ..core.args import EndpointArgs, placed_zones
from ..core.errors import CloudLookupError, HaEndpointError, Problem
from ..core.plan import PollTarget
from .connection import cloud_failure, connect, describe, translate
from .errors import CallFailed, CloudError
from .retry import CredentialsRefused, RetriesExhausted, call_with_retries

API_TIMEOUT_SECONDS = 20
"""How long one question to the cloud may take at preview."""


class CatalogUnavailable(CloudError):
    """The cloud could not be asked; the message says why."""


class NoLoadBalancerService(CloudError):
    """The cloud's catalog has no load-balancer service (Octavia): the endpoint's load balancers cannot be created
    there, which the preview refuses."""


class NoCloudToAsk(CatalogUnavailable):
    """The component does not know which cloud to ask (an explicit provider, or a default provider whose cloud it was
    not told): nothing was asked, so nothing failed."""


RECORDS_RETRY_SECONDS = 60.0
"""How long the preview retries listing the DNS zone's record sets (:func:`published_records`) before it fails."""


@dataclass(frozen=True)
class OctaviaAz:
    """An availability zone as Octavia knows it."""

    name: str
    enabled: bool = True


class Catalog(Protocol):
    """What the checks ask the cloud (the seam tests replace)."""

    def octavia_azs(self, target: PollTarget) -> list[OctaviaAz]:
        """Octavia's availability zones; :class:`CatalogUnavailable` when the cloud cannot be asked."""
        ...

    def certificate(self, target: PollTarget, ref: str) -> Optional[bool]:
        """Whether the key manager holds ``ref`` (None: the cloud has no key manager); :class:`CatalogUnavailable`
        when it cannot be asked."""
        ...

    def a_records(self, target: PollTarget, dns_zone_id: str) -> dict[str, Optional[str]]:
        """The A recordsets the DNS zone holds: name (with the trailing dot) -> description; :class:`NoCloudToAsk`
        when there is no cloud to ask, and a failed call as the cloud layer's categories
        (:func:`ha_endpoint.cloud.connection.translate`: retry, re-authenticate, or :class:`CallFailed`)."""
        ...


    def tagged_members(self, target: PollTarget, pool_names: list[str], tag: str) -> set[tuple[str, str, int]]:
        """``(pool name, address, protocol port)`` of every member carrying ``tag`` in the pools named
        ``pool_names`` (a pool that does not exist yet has none)."""
        ...


class OpenStackCatalog:
    """The real cloud, through the cloud layer's connection (:func:`ha_endpoint.cloud.connection.connect`), one per
    cloud and region."""

    def __init__(self) -> None:
        self._connections: dict[tuple[Optional[str], Optional[str]], Any] = {}

    def _connection(self, target: PollTarget) -> Any:
        if target.source == "provider":
            raise NoCloudToAsk("the endpoint's OpenStack provider is given explicitly and its cloud is known only "
                                     "once it is configured; set readiness.cloud (and readiness.region) to have it "
                                     "checked at preview")
        cloud, region = target.cloud, target.region
        if target.source == "stack" and cloud is None:
            # Never guessed from OS_CLOUD: that may be another cloud than the stack's provider, whose AZs would refuse
            # a valid configuration. The stack program passes the stack's openstack:cloud/region (HaEndpoint(cloud=,
            # region=)); the component itself reads no stack configuration.
            raise NoCloudToAsk("the component was not told which cloud its default OpenStack provider uses; "
                                     "pass cloud= and region= to HaEndpoint (the stack's openstack:cloud and "
                                     "openstack:region) or set readiness.cloud to have it checked at preview")
        key = (cloud, region)
        if key not in self._connections:
            try:
                self._connections[key] = connect(cloud, region, API_TIMEOUT_SECONDS)
            except os_exc.ConfigException as error:  # the user's configuration, not the cloud's failure, nor a bug
                path = "readiness.cloud" if target.source == "readiness" else "openstack:cloud"
                raise CloudLookupError([Problem(path, f"cloud '{cloud}' could not be used from clouds.yaml ({error}); "
                                                      "name an entry of clouds.yaml (OS_CLIENT_CONFIG_FILE), or set "
                                                      "OS_CLOUD")]) from None
        return self._connections[key]

    def octavia_azs(self, target: PollTarget) -> list[OctaviaAz]:
        with _unavailable_on_cloud_failure():
            conn = self._connection(target)
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
        with _unavailable_on_cloud_failure():
            conn = self._connection(target)
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
        with _unavailable_on_cloud_failure():
            conn = self._connection(target)
            found: set[tuple[str, str, int]] = set()
            for name in pool_names:
                for pool in conn.load_balancer.pools(name=name):
                    found |= {(name, member.address, int(member.protocol_port))
                              for member in conn.load_balancer.members(pool, tags=tag)}
            return found

    def a_records(self, target: PollTarget, dns_zone_id: str) -> dict[str, Optional[str]]:
        try:
            conn = self._connection(target)
            return {recordset.name: recordset.description for recordset in conn.dns.recordsets(dns_zone_id)
                    if recordset.type == "A"}
        except HaEndpointError:
            raise
        except Exception as error:
            if not cloud_failure(error):
                raise
            raise translate(error, f"listing the record sets of DNS zone {dns_zone_id}") from error


@contextlib.contextmanager
def _unavailable_on_cloud_failure() -> Iterator[None]:
    """A cloud failure inside the block (:func:`ha_endpoint.cloud.connection.cloud_failure`: an answer with an HTTP
    status, or none: refused, timed out, TLS) as :class:`CatalogUnavailable`, which the checks warn about; anything
    else (a bug of ours, an SDK that changed, a clouds.yaml without the cloud) is raised as itself."""
    try:
        yield
    except HaEndpointError:
        raise
    except Exception as error:
        if not cloud_failure(error):
            raise
        raise CatalogUnavailable(describe(error)) from None


_CATALOG: list[Catalog] = [OpenStackCatalog()]


@contextlib.contextmanager
def use_catalog(catalog: Catalog) -> Iterator[None]:
    """Answer the checks from ``catalog`` inside the block (the fake cloud's, in tests)."""
    _CATALOG.append(catalog)
    try:
        yield
    finally:
        _CATALOG.remove(catalog)


@dataclass(frozen=True)
class PreviewAnswers:
    """What the cloud answered at preview through openstacksdk: the problems Octavia's answers reveal (and a DNS zone
    whose record sets could not be read), and the A records the DNS zone holds already (None: not known, because the
    zone is not known yet or there is no cloud to ask; never because a call failed)."""

    problems: list[Problem]
    published: Optional[dict[str, Optional[str]]] = None
    agent_held: frozenset[tuple[str, str, int]] = frozenset()
    """``(pool name, address, port)`` of the members the member agent holds already (:func:`agent_held`)."""


def ask_at_preview(args: EndpointArgs, target: PollTarget, root: str, dns_zone_id: Optional[str],
                   octavia: bool = True) -> PreviewAnswers:
    """Every question of this module, asked once: Octavia's AZs and certificates (:func:`check_octavia`, when the
    zones are served by ``octavia``) and, with a DNS zone, its A records (:func:`published_records`)."""
    problems = check_octavia(args, target, root) if octavia else []
    published = None
    if args.dns is not None:
        try:
            published = published_records(target, dns_zone_id)
        except RecordsUnreadable as error:
            zone = f"DNS zone {args.dns.dns_zone}" if isinstance(args.dns.dns_zone, str) else "the DNS zone"
            problems.append(Problem(
                f"{root}.dns.dnsZone",
                f"the record sets {zone} holds could not be read at preview ({error}); how the endpoint's records are "
                "replaced and whether another stack holds their names depend on them, so nothing is planned without "
                "them: run the preview again once the DNS service (Designate) answers, or give the credentials the "
                "right to list the zone's record sets (openstack recordset list <zone>)"))
    return PreviewAnswers(problems, published, agent_held(args, target, root) if octavia else frozenset())


def agent_held(args: EndpointArgs, target: PollTarget, root: str) -> frozenset[tuple[str, str, int]]:
    """The members the member agent holds already in the pools its members would join: ``(pool name, address,
    port)`` of each member carrying a member's agent tag (``up`` then leaves it to the agent: docs/members.md). Not
    known (no cloud to ask): none, with a warning (Octavia refuses a second member at an address and port)."""
    wanted: dict[str, set[str]] = {}
    for member in args.members:
        if member._agent_tag is not None:
            wanted.setdefault(member._agent_tag, set()).update(
                contract.pool_name(args.name, az, listener.port) for az in placed_zones(args, member.az)
                for listener in args.listeners)
    held: set[tuple[str, str, int]] = set()
    for tag, pools in sorted(wanted.items()):
        try:
            held |= _CATALOG[-1].tagged_members(target, sorted(pools), tag)
        except CatalogUnavailable as reason:
            pulumi.log.warn(f"{root}.memberSources: the members the member agent holds ({tag}) could not be read at "
                            f"preview ({reason}); each Machine gets a member resource, which Octavia refuses where "
                            "the agent holds one already")
    return frozenset(held)


def check_octavia(args: EndpointArgs, target: PollTarget, root: str) -> list[Problem]:
    """Every zone's availability zone and every TERMINATED_HTTPS listener's certificate, as the cloud answers; what
    could not be asked is warned about (Octavia then judges at ``up``)."""
    catalog = _CATALOG[-1]
    problems: list[Problem] = []
    try:
        # under ovn no load balancer is pinned to an Octavia AZ (ZonePlan.octavia_az): nothing to ask
        known = None if not predicates.pins_availability_zone(args.load_balancer_provider) else \
            {az.name: az for az in catalog.octavia_azs(target)}
    except NoLoadBalancerService as reason:
        return [Problem(f"{root}.zones", f"the cloud has no load-balancer service (Octavia) in its catalog ({reason}), "
                                         "and each zone's load balancer is an Octavia load balancer; use a cloud with "
                                         "Octavia (openstack catalog list: load-balancer)")]
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


class RecordsUnreadable(CloudError):
    """Listing the DNS zone's record sets failed: retrying did not help, or could not (the message says which)."""


def published_records(target: PollTarget, dns_zone_id: Optional[str],
                      clock: Optional[Callable[[], float]] = None, sleep: Optional[Callable[[float], None]] = None,
                      timeout_seconds: Optional[float] = None) -> Optional[dict[str, Optional[str]]]:
    """The A recordsets the endpoint's DNS zone holds already (name -> description), which decide how a record is
    replaced (:attr:`ha_endpoint.core.plan.DnsPlan.delete_first`) and which names another stack holds.

    None when they are not known and nothing failed: the zone is not known yet (an Output of a zone declared beside
    the endpoint) or there is no cloud to ask (:class:`NoCloudToAsk`); every record is then replaced delete-first,
    which never meets Designate's 409. A failed call is retried by the one retry policy
    (:func:`ha_endpoint.cloud.retry.call_with_retries`, for :data:`RECORDS_RETRY_SECONDS`); if it still fails,
    :class:`RecordsUnreadable` (the preview fails): a transient error never changes the plan."""
    if not dns_zone_id:
        return None
    catalog = _CATALOG[-1]
    try:
        return call_with_retries(lambda: catalog.a_records(target, dns_zone_id),
                                 timeout_seconds=RECORDS_RETRY_SECONDS if timeout_seconds is None else timeout_seconds,
                                 clock=clock or time.monotonic, sleep=sleep or time.sleep)
    except NoCloudToAsk:
        return None
    except (CallFailed, RetriesExhausted, CredentialsRefused) as error:
        raise RecordsUnreadable(str(error)) from error

"""What the cloud answers at preview through openstacksdk, for every backend: the connection the questions share, the
one seam tests replace (:func:`use_catalog`), and the A records the endpoint's DNS zone holds already (how a record is
replaced depends on them: :func:`published_records`).

The questions are asked of the same cloud and region the readiness gates poll
(:class:`ha_endpoint.core.plan.PollTarget`: ``readiness.cloud``/``readiness.region``, or the ``cloud``/``region`` the
stack program passes to HaEndpoint: the stack's ``openstack:cloud``/``openstack:region``), which is the cloud the
provider creates the endpoint's objects in. A backend's own questions (Octavia's AZs and certificates:
:mod:`ha_endpoint.backends.octavia.checks`) extend :class:`OpenStackCatalog` and ask through the same seam.

A cloud that cannot be asked (unreachable, credentials refused, an explicit provider whose cloud is known only once
it is configured, a default provider whose cloud the component was not told) is :class:`CatalogUnavailable`; which
failures count as the cloud's is :func:`ha_endpoint.cloud.connection.cloud_failure`'s rule (the lookups' too):
anything else, a bug or an SDK that changed, is raised as itself. The DNS zone's record sets are not a check but an
input of the plan: a failed listing is retried, then fails the preview (:func:`published_records`).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Protocol

import openstack.exceptions as os_exc

from ..core.errors import CloudLookupError, HaEndpointError, Problem
from ..core.plan import PollTarget
from .connection import cloud_failure, connect, describe, translate
from .errors import CallFailed, CloudError
from .retry import READ_RETRY_SECONDS, CredentialsRefused, RetriesExhausted, call_with_retries

API_TIMEOUT_SECONDS = 20
"""How long one question to the cloud may take at preview."""



class CatalogUnavailable(CloudError):
    """The cloud could not be asked; the message says why."""


class NoCloudToAsk(CatalogUnavailable):
    """The component does not know which cloud to ask (an explicit provider, or a default provider whose cloud it was
    not told): nothing was asked, so nothing failed."""


class RecordsUnreadable(CloudError):
    """Listing the DNS zone's record sets failed: retrying did not help, or could not (the message says which)."""


class Catalog(Protocol):
    """What the preview asks the cloud for every backend (the seam tests replace; a backend's catalog adds its own
    questions)."""

    def a_records(self, target: PollTarget, dns_zone_id: str) -> dict[str, Optional[str]]:
        """The A recordsets the DNS zone holds: name (with the trailing dot) -> description; :class:`NoCloudToAsk`
        when there is no cloud to ask, and a failed call as the cloud layer's categories
        (:func:`ha_endpoint.cloud.connection.translate`: retry, re-authenticate, or :class:`CallFailed`)."""
        ...


class OpenStackCatalog:
    """The real cloud, through the cloud layer's connection (:func:`ha_endpoint.cloud.connection.connect`), one per
    cloud and region."""

    def __init__(self) -> None:
        self._connections: dict[tuple[Optional[str], Optional[str]], Any] = {}

    def connection(self, target: PollTarget) -> Any:
        """The connection to ``target``'s cloud; :class:`NoCloudToAsk` when the component does not know it, and
        :class:`CloudLookupError` when clouds.yaml cannot give it."""
        if target.source == "provider":
            raise NoCloudToAsk("the endpoint's OpenStack provider is given explicitly and its cloud is known only "
                               "once it is configured; set readiness.cloud (and readiness.region) to have it "
                               "checked at preview")
        cloud, region = target.cloud, target.region
        if target.source == "stack" and cloud is None:
            # Never guessed from OS_CLOUD: that may be another cloud than the stack's provider, whose answers would
            # refuse a valid configuration. The stack program passes the stack's openstack:cloud/region
            # (HaEndpoint(cloud=, region=)); the component itself reads no stack configuration.
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

    def a_records(self, target: PollTarget, dns_zone_id: str) -> dict[str, Optional[str]]:
        try:
            conn = self.connection(target)
            return {recordset.name: recordset.description for recordset in conn.dns.recordsets(dns_zone_id)
                    if recordset.type == "A"}
        except HaEndpointError:
            raise
        except Exception as error:
            if not cloud_failure(error):
                raise
            raise translate(error, f"listing the record sets of DNS zone {dns_zone_id}") from error


@contextlib.contextmanager
def unavailable_on_cloud_failure() -> Iterator[None]:
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


_CATALOG: list[Any] = []


@contextlib.contextmanager
def use_catalog(catalog: Any) -> Iterator[None]:
    """Answer every preview question, the backends' too, from ``catalog`` inside the block (the fake cloud's, in
    tests)."""
    _CATALOG.append(catalog)
    try:
        yield
    finally:
        _CATALOG.remove(catalog)


def current_catalog(default: Any) -> Any:
    """The catalog :func:`use_catalog` put in place, else ``default`` (the caller's real one)."""
    return _CATALOG[-1] if _CATALOG else default


_OPENSTACK = OpenStackCatalog()


@dataclass(frozen=True)
class PreviewAnswers:
    """What the cloud answered at preview about the DNS zone: a zone whose record sets could not be read (a problem),
    and the A records it holds already (None: not known, because the zone is not known yet or there is no cloud to
    ask; never because a call failed)."""

    problems: list[Problem]
    published: Optional[dict[str, Optional[str]]] = None


def ask_at_preview(dns_zone: Any, target: PollTarget, root: str, dns_zone_id: Optional[str]) -> PreviewAnswers:
    """With a DNS zone (``dns_zone``: the ``dns.dnsZone`` key's value; None without a DNS name), its A records
    (:func:`published_records`), asked once."""
    problems: list[Problem] = []
    published = None
    if dns_zone is not None:
        try:
            published = published_records(target, dns_zone_id)
        except RecordsUnreadable as error:
            zone = f"DNS zone {dns_zone}" if isinstance(dns_zone, str) else "the DNS zone"
            problems.append(Problem(
                f"{root}.dns.dnsZone",
                f"the record sets {zone} holds could not be read at preview ({error}); how the endpoint's records are "
                "replaced and whether another stack holds their names depend on them, so nothing is planned without "
                "them: run the preview again once the DNS service (Designate) answers, or give the credentials the "
                "right to list the zone's record sets (openstack recordset list <zone>)"))
    return PreviewAnswers(problems, published)


def published_records(target: PollTarget, dns_zone_id: Optional[str],
                      clock: Optional[Callable[[], float]] = None, sleep: Optional[Callable[[float], None]] = None,
                      timeout_seconds: Optional[float] = None) -> Optional[dict[str, Optional[str]]]:
    """The A recordsets the endpoint's DNS zone holds already (name -> description), which decide how a record is
    replaced (:attr:`ha_endpoint.core.plan.DnsPlan.delete_first`) and which names another stack holds.

    None when they are not known and nothing failed: the zone is not known yet (an Output of a zone declared beside
    the endpoint) or there is no cloud to ask (:class:`NoCloudToAsk`); every record is then replaced delete-first,
    which never meets Designate's 409. A failed call is retried by the one retry policy
    (:func:`ha_endpoint.cloud.retry.call_with_retries`, for :data:`READ_RETRY_SECONDS`); if it still fails,
    :class:`RecordsUnreadable` (the preview fails): a transient error never changes the plan."""
    if not dns_zone_id:
        return None
    catalog: Catalog = current_catalog(_OPENSTACK)
    try:
        return call_with_retries(lambda: catalog.a_records(target, dns_zone_id),
                                 timeout_seconds=READ_RETRY_SECONDS if timeout_seconds is None else timeout_seconds,
                                 clock=clock or time.monotonic, sleep=sleep or time.sleep)
    except NoCloudToAsk:
        return None
    except (CallFailed, RetriesExhausted, CredentialsRefused) as error:
        raise RecordsUnreadable(str(error)) from error

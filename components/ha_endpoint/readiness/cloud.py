"""The openstacksdk side of readiness: connections, status fetches, member weights, error categories.

Credentials come from the standard OpenStack client environment, read when a connection is built (inside a
provider method, never at program time): ``OS_CLOUD`` / ``OS_CLIENT_CONFIG_FILE`` / ``clouds.yaml`` (or ``OS_*``
variables), optionally narrowed by a cloud name. Nothing here is stored in Pulumi state.

API cost: :meth:`OctaviaStatusSource.fetch_pool` is one ``GET /v2/lbaas/pools/{pool_id}/members``; openstacksdk
follows ``members_links`` only when Octavia paginates (more members than its ``pagination_max_limit``, 1000 by
default), so a poll costs one call per pool whatever the number of members.

Error categories (:func:`classify`), the one list of retryable errors:

- re-authenticate: 401, and any 4xx raised by keystoneauth while authenticating;
- transient, retried within the deadline: 408, 409 (PENDING_* objects are immutable), 429, 5xx, connection failures
  and timeouts, a service that cannot be discovered (keystoneauth's ``DiscoveryFailure``: Keystone unreachable with an
  unversioned auth_url, or a service restarting), an answer that is not JSON (an HTML page from a proxy, with status
  200), openstacksdk's generic ``SDKException`` and ``OSError``;
- terminal, reported at once: other HTTP statuses (403, 404, 400), TLS errors, configuration (clouds.yaml, a missing
  endpoint, a malformed URL, a local file that cannot be read) and anything else.
"""

from __future__ import annotations

import enum
import json
from contextlib import contextmanager
from typing import Any, Iterator, Optional

import keystoneauth1.exceptions as ks_exc
import openstack
import openstack.exceptions as os_exc
import requests

from .errors import AuthExpired, FetchFailed, ReadinessError, TransientFetchError
from .model import LoadBalancerStatus, MemberStatus

TRANSIENT_HTTP_STATUSES = frozenset({408, 409, 429})
"""HTTP statuses below 500 that are retried: request timeout, conflict (PENDING_* immutable), rate limit."""


TERMINAL_TYPES: tuple[type[BaseException], ...] = (
    ks_exc.SSLError,
    requests.exceptions.SSLError,
    os_exc.ConfigException,
    os_exc.EndpointNotFound,
    os_exc.InvalidRequest,
    os_exc.InvalidResourceQuery,
    os_exc.MethodNotSupported,
    os_exc.NotSupported,
    os_exc.ValidationException,
    os_exc.DuplicateResource,
    requests.exceptions.InvalidURL,
    requests.exceptions.MissingSchema,
    requests.exceptions.InvalidSchema,
    requests.exceptions.InvalidHeader,
    FileNotFoundError,
    PermissionError,
    IsADirectoryError,
    NotADirectoryError,
)
"""Exceptions without an HTTP status that retrying cannot fix (checked before :data:`TRANSIENT_TYPES`, which holds
some of their base classes): TLS, configuration, malformed requests, local files."""

TRANSIENT_TYPES: tuple[type[BaseException], ...] = (
    ks_exc.ConnectionError,
    ks_exc.RetriableConnectionFailure,
    ks_exc.DiscoveryFailure,
    ks_exc.InvalidResponse,
    requests.ConnectionError,
    requests.Timeout,
    json.JSONDecodeError,
    os_exc.SDKException,
    OSError,
)
"""Exceptions without an HTTP status that are retried: connection failures and timeouts (``ConnectionError`` and
``TimeoutError`` are ``OSError``), a service that cannot be discovered, a body that is not JSON (requests' and
keystoneauth's wrappers of it), openstacksdk's generic errors."""


class Category(str, enum.Enum):
    """How a failed cloud call is handled: retried, re-authenticated then retried, or reported."""

    TRANSIENT = "transient"
    AUTH = "auth"
    TERMINAL = "terminal"


def connect(cloud: Optional[str] = None, region: Optional[str] = None) -> Any:
    """Build an openstacksdk connection from the standard environment (the seam tests replace).

    ``cloud`` names an entry of clouds.yaml; without it ``OS_CLOUD`` (or the ``OS_*`` variables) decide. ``region``
    narrows it to one region (``region_name``); without it the entry's (or ``OS_REGION_NAME``) applies.
    """
    options = {"region_name": region} if region else {}
    if cloud:
        return openstack.connect(cloud=cloud, **options)
    return openstack.connect(**options)


def http_status(exc: BaseException) -> Optional[int]:
    """The HTTP status carried by an openstacksdk or keystoneauth exception, if any."""
    if isinstance(exc, os_exc.HttpException):
        return exc.status_code
    if isinstance(exc, ks_exc.HttpError):
        return exc.http_status
    return None


def classify(exc: BaseException) -> Category:
    """The category of an exception raised by openstacksdk, keystoneauth or requests."""
    status = http_status(exc)
    if isinstance(exc, ks_exc.HttpError) and status is not None and status < 500:
        # openstacksdk turns service responses into its own exceptions: a keystoneauth HTTP error comes from
        # authenticating (e.g. 404 "Failed to validate token" when re-authenticating with an expired token).
        return Category.TRANSIENT if status in TRANSIENT_HTTP_STATUSES else Category.AUTH
    if status == 401 or isinstance(exc, ks_exc.AuthorizationFailure):
        return Category.AUTH
    if status is not None:
        if status in TRANSIENT_HTTP_STATUSES or status >= 500:
            return Category.TRANSIENT
        return Category.TERMINAL
    if isinstance(exc, TERMINAL_TYPES):
        return Category.TERMINAL
    if isinstance(exc, TRANSIENT_TYPES):
        return Category.TRANSIENT
    return Category.TERMINAL


def describe(exc: BaseException, limit: int = 300) -> str:
    """A one-line description: ``"HTTP 409 Conflict: <details>"`` or ``"<ExceptionType>: <message>"``."""
    status = http_status(exc)
    body = _not_json(exc)
    if body is not None:
        return _shorten(f"{type(exc).__name__}: the answer is not JSON (a proxy's page?): {body}", limit)
    cause = exc.__cause__ or exc.__context__
    if isinstance(exc, ks_exc.DiscoveryFailure) and isinstance(cause, ks_exc.ConnectionError):
        return _shorten(f"{type(exc).__name__} (the service did not answer): {describe(cause, limit)}", limit)
    if status is not None:
        response = getattr(exc, "response", None)
        reason = getattr(response, "reason", "") or ""
        details = getattr(exc, "details", None) or getattr(exc, "message", "") or ""
        details = str(details).removesuffix(f" (HTTP {status})")  # keystoneauth repeats the status
        text = f"HTTP {status}" + (f" {reason}" if reason else "") + (f": {details}" if details else "")
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return _shorten(text, limit)


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _not_json(exc: BaseException) -> Optional[str]:
    """The start of the body when ``exc`` says an answer was not JSON (requests' or keystoneauth's wording)."""
    if isinstance(exc, json.JSONDecodeError):
        return repr(exc.doc[:80]) if exc.doc else "an empty body"
    if isinstance(exc, ks_exc.InvalidResponse):
        response = getattr(exc, "response", None)
        text = getattr(response, "text", "") or ""
        code = getattr(response, "status_code", None)
        return (f"HTTP {code} " if code else "") + (repr(text[:80]) if text else "an empty body")
    return None


def translate(exc: BaseException, action: str) -> Exception:
    """The waiter's exception for a failed cloud call made while doing ``action``."""
    category = classify(exc)
    if category is Category.TRANSIENT:
        return TransientFetchError(describe(exc))
    if category is Category.AUTH:
        return AuthExpired(describe(exc))
    return FetchFailed(f"{action} failed: {describe(exc)}")


@contextmanager
def translated(action: str) -> Iterator[None]:
    """Re-raise cloud exceptions as the waiter's categories (see :func:`translate`)."""
    try:
        yield
    except (TransientFetchError, AuthExpired, ReadinessError):
        raise
    except Exception as exc:
        raise translate(exc, action) from exc


class OctaviaStatusSource:
    """Status fetches and member writes over one connection, rebuilt on re-authentication.

    Attributes:
        cloud: the clouds.yaml entry to use, or ``None`` for the environment's default.
        region: the region to use, or ``None`` for the entry's (or the environment's).
        calls: API calls made through this source (member listings, load balancer fetches, member updates).
    """

    def __init__(self, cloud: Optional[str] = None, region: Optional[str] = None) -> None:
        self.cloud = cloud
        self.region = region
        self.calls = 0
        self._conn: Any = None

    def _connection(self) -> Any:
        if self._conn is None:
            with translated("building the OpenStack connection (OS_CLOUD / clouds.yaml)"):
                self._conn = connect(self.cloud, self.region) if self.region else connect(self.cloud)
        return self._conn

    def fetch_pool(self, pool_id: str) -> list[MemberStatus]:
        """Every member of the pool with its statuses: one ``GET .../pools/{pool_id}/members``."""
        conn = self._connection()
        self.calls += 1
        with translated(f"listing the members of pool {pool_id}"):
            return [
                MemberStatus(str(m.id), str(m.provisioning_status), str(m.operating_status))
                for m in conn.load_balancer.members(pool_id)
            ]

    def fetch_load_balancer(self, load_balancer_id: str) -> LoadBalancerStatus:
        """The load balancer's provisioning and operating statuses: one ``GET .../loadbalancers/{id}``."""
        conn = self._connection()
        self.calls += 1
        with translated(f"fetching load balancer {load_balancer_id}"):
            lb = conn.load_balancer.get_load_balancer(load_balancer_id)
            return LoadBalancerStatus(str(lb.id), str(lb.provisioning_status), str(lb.operating_status))

    def set_member_weight(self, pool_id: str, member_id: str, weight: int) -> bool:
        """Set a member's weight; ``False`` when the member (or its pool) no longer exists."""
        conn = self._connection()
        self.calls += 1
        try:
            with translated(f"setting the weight of member {member_id} in pool {pool_id}"):
                conn.load_balancer.update_member(member_id, pool_id, weight=weight)
        except FetchFailed as exc:
            cause = exc.__cause__
            if cause is not None and http_status(cause) == 404:
                return False
            raise
        return True

    def reauth(self) -> None:
        """Drop the connection and authenticate a new one (fetches a fresh token now)."""
        self.close()
        conn = self._connection()
        with translated("re-authenticating"):
            conn.session.get_token()

    def close(self) -> None:
        """Release the connection (a later call builds a new one)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # closing must never mask the outcome of a wait
                pass

"""The cloud layer: one way to reach OpenStack (:func:`connect`) and one classification of what a failed call means.

Every part of the package that talks to openstacksdk directly -- the readiness gates and drains (through their
backends' member clients, e.g. :mod:`ha_endpoint.backends.octavia.status`), the preview's questions
(:mod:`ha_endpoint.cloud.catalog`) and recovery (``scripts/recover.py``) -- builds its connection with :func:`connect` and sorts failures with :func:`classify`; how
often and how long to retry is :mod:`ha_endpoint.cloud.retry`'s, beside it. Credentials come from the standard
OpenStack client environment, read when a connection is built: ``OS_CLOUD`` / ``OS_CLIENT_CONFIG_FILE`` /
``clouds.yaml`` (or ``OS_*`` variables), optionally narrowed by a cloud name. Nothing here is stored in Pulumi state.

Error categories (:func:`classify`), the one list of retryable errors:

- re-authenticate: 401, and any 4xx raised by keystoneauth while authenticating;
- transient, retried within the deadline: 408, 409 (PENDING_* objects are immutable), 429, 5xx but 501, connection failures
  and timeouts, a service that cannot be discovered (keystoneauth's ``DiscoveryFailure``: Keystone unreachable with an
  unversioned auth_url, or a service restarting), an answer that is not JSON (an HTML page from a proxy, with status
  200), openstacksdk's generic ``SDKException`` and ``OSError``; a failed provider invoke whose message carries such
  a status or an unanswered call;
- terminal, reported at once: other HTTP statuses (403, 404, 400, 501 Not Implemented), TLS errors, configuration (clouds.yaml, a missing
  endpoint, a malformed URL, a local file that cannot be read) and anything else.

Which failures may be reported as "could not be checked" (the preview checks' warnings) or as a problem with the
configuration (the lookups'), rather than raised as themselves, is :func:`cloud_failure`, the one rule for both.
"""

from __future__ import annotations

import enum
import json
import re
from contextlib import contextmanager
from typing import Any, Iterator, Optional

import keystoneauth1.exceptions as ks_exc
import openstack
import openstack.exceptions as os_exc
import requests

from ..core.errors import HaEndpointError
from .errors import AuthExpired, CallFailed, TransientFetchError


TRANSIENT_HTTP_STATUSES = frozenset({408, 409, 429})
"""HTTP statuses below 500 that are retried: request timeout, conflict (PENDING_* immutable), rate limit."""

TERMINAL_SERVER_STATUSES = frozenset({501})
"""5xx statuses that retrying cannot fix: 501 Not Implemented (e.g. Octavia's ovn provider refusing an option it does
not support, such as a listener's allowed CIDRs)."""


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


UNANSWERED_TYPES: tuple[type[BaseException], ...] = (
    ks_exc.ConnectionError,
    requests.ConnectionError,
    requests.Timeout,
    ConnectionError,
    TimeoutError,
    ks_exc.InvalidResponse,
    os_exc.InvalidResponse,
    requests.exceptions.InvalidJSONError,
)
"""What a call that got no usable answer raises: the connection refused, reset or timed out, TLS failed (keystoneauth's
and requests' ``SSLError`` are connection errors), or the answer was not JSON (a proxy's page)."""

PROVIDER_STATUS = re.compile(r"\bbut got (\d{3}) instead\b")
"""How the OpenStack provider (gophercloud) words the cloud's answer in a failed invoke: ``Expected HTTP response code
[200 204 300] when accessing [GET ...], but got 503 instead: {...}``."""

PROVIDER_UNANSWERED = re.compile(r"connection refused|connection reset by peer|i/o timeout|Client\.Timeout exceeded|"
                                 r"context deadline exceeded|TLS handshake timeout|\bEOF\b")
"""How the provider (Go's net/http) words a call that got no answer: refused, reset, timed out, cut short."""

DISCOVERY_TYPES: tuple[type[BaseException], ...] = (ks_exc.DiscoveryFailure, os_exc.ServiceDiscoveryException)
"""A service that could not be discovered: a cloud failure when what it wraps is one (Keystone did not answer)."""


def cloud_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is the cloud failing a call, which a caller may report ("could not be checked", "could not be
    looked up") instead of raising it: Pulumi's report of a failed provider invoke (a bare ``Exception``, whose
    message is the provider's: no results, a status, an unreachable cloud), the cloud's answer with an HTTP status
    (openstacksdk's and keystoneauth's exceptions), or a call without an answer (:data:`UNANSWERED_TYPES`; a discovery
    failure that wraps one). Anything else -- an ``AttributeError``, a ``KeyError``, an SDK error without a status
    after an SDK change, a clouds.yaml that does not name the cloud -- is not: it is raised as itself, with its
    traceback. (Whether a cloud failure is worth retrying is :func:`classify`'s question.)"""
    if type(exc) is Exception:
        return True
    if http_status(exc) is not None or isinstance(exc, UNANSWERED_TYPES):
        return True
    cause = exc.__cause__ or exc.__context__
    return isinstance(exc, DISCOVERY_TYPES) and cause is not None and type(cause) is not Exception and \
        cloud_failure(cause)


class Category(str, enum.Enum):
    """How a failed cloud call is handled: retried, re-authenticated then retried, or reported."""

    TRANSIENT = "transient"
    AUTH = "auth"
    TERMINAL = "terminal"


def connect(cloud: Optional[str] = None, region: Optional[str] = None, timeout: Optional[float] = None) -> Any:
    """An openstacksdk connection from the standard environment: the one way the package reaches the cloud (the
    readiness gates and drains, the preview checks, recovery).

    ``cloud`` names an entry of clouds.yaml; without it ``OS_CLOUD`` (or the ``OS_*`` variables) decide. ``region``
    narrows it to one region (``region_name``); without it the entry's (or ``OS_REGION_NAME``) applies. ``timeout``
    bounds every API call, in seconds (``api_timeout``); without it openstacksdk's default (none) applies.
    """
    options: dict[str, Any] = {"region_name": region} if region else {}
    if timeout is not None:
        options["api_timeout"] = timeout
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
    """The category of an exception raised by openstacksdk, keystoneauth or requests, or of a failed provider invoke
    (a bare ``Exception`` with the provider's message: :data:`PROVIDER_STATUS`, :data:`PROVIDER_UNANSWERED`)."""
    if type(exc) is Exception:
        return _provider_category(str(exc))
    status = http_status(exc)
    if isinstance(exc, ks_exc.HttpError) and status is not None and status < 500:
        # openstacksdk turns service responses into its own exceptions: a keystoneauth HTTP error comes from
        # authenticating (e.g. 404 "Failed to validate token" when re-authenticating with an expired token).
        return Category.TRANSIENT if status in TRANSIENT_HTTP_STATUSES else Category.AUTH
    if status == 401 or isinstance(exc, ks_exc.AuthorizationFailure):
        return Category.AUTH
    if status is not None:
        return _status_category(status)
    if isinstance(exc, TERMINAL_TYPES):
        return Category.TERMINAL
    if isinstance(exc, TRANSIENT_TYPES):
        return Category.TRANSIENT
    return Category.TERMINAL


def _status_category(status: int) -> Category:
    if status in TRANSIENT_HTTP_STATUSES or (status >= 500 and status not in TERMINAL_SERVER_STATUSES):
        return Category.TRANSIENT
    return Category.TERMINAL


def _provider_category(message: str) -> Category:
    """A failed invoke: the provider re-authenticates on its own, so a 401 it reports is its last word (terminal)."""
    status = PROVIDER_STATUS.search(message)
    if status is not None:
        return _status_category(int(status.group(1)))
    return Category.TRANSIENT if PROVIDER_UNANSWERED.search(message) else Category.TERMINAL


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


def translate(exc: BaseException, action: str, terminal: type[CallFailed] = CallFailed) -> Exception:
    """The category of a failed cloud call made while doing ``action``, as an exception: :class:`TransientFetchError`
    (retry), :class:`AuthExpired` (re-authenticate, then retry) or ``terminal`` (report; the readiness gate's
    :class:`ha_endpoint.gates.errors.FetchFailed`, say)."""
    category = classify(exc)
    if category is Category.TRANSIENT:
        return TransientFetchError(describe(exc))
    if category is Category.AUTH:
        return AuthExpired(describe(exc))
    return terminal(f"{action} failed: {describe(exc)}")


@contextmanager
def translated(action: str, terminal: type[CallFailed] = CallFailed) -> Iterator[None]:
    """Re-raise cloud exceptions as their categories (see :func:`translate`); the package's own errors pass."""
    try:
        yield
    except HaEndpointError:
        raise
    except Exception as exc:
        raise translate(exc, action, terminal) from exc

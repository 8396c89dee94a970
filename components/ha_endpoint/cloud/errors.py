"""What a cloud call can end in, under the package's one root (:class:`ha_endpoint.core.errors.HaEndpointError`).

Signals the callers handle (:func:`ha_endpoint.cloud.connection.classify` decides which): :class:`TransientFetchError`
(retried within the deadline) and :class:`AuthExpired` (re-authenticate, then retry). Failures reported to the user:
:class:`CallFailed` (retrying cannot fix it), and :mod:`ha_endpoint.cloud.retry`'s ``RetriesExhausted`` and
``CredentialsRefused``.
"""

from __future__ import annotations

from ..core.errors import HaEndpointError


class CloudError(HaEndpointError):
    """Base class of what a call to the cloud ended in, other than an answer."""


class TransientFetchError(CloudError):
    """A call failed in a way that retrying can fix (409, 429, 5xx, connection error, timeout).

    Attributes:
        reason: a short description, e.g. ``"HTTP 503 Service Unavailable"``.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class AuthExpired(CloudError):
    """The token was rejected (HTTP 401): the caller should re-authenticate and retry.

    Attributes:
        reason: a short description of the rejection.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class CallFailed(CloudError):
    """A call failed in a way that retrying cannot fix (403, 404, bad request, missing endpoint); the message says
    what was being done and what the cloud answered."""

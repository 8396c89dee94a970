"""The gates' side of a cloud call: what its failure is to a gate or drain.

The failures are sorted by :func:`ha_endpoint.cloud.connection.classify` (the cloud layer's one classification); a
failure retrying cannot fix is the gate's :class:`~ha_endpoint.gates.errors.FetchFailed`. The clients the gates poll
and write through are their zones' backends' (:mod:`.source`).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from ..cloud.connection import translated as _translated
from .errors import FetchFailed


@contextmanager
def translated(action: str) -> Iterator[None]:
    """Re-raise cloud exceptions as the waiter's categories: transient, re-authenticate, or :class:`FetchFailed`."""
    with _translated(action, FetchFailed):
        yield

"""The backends, by name: what serves each availability zone of an endpoint, chosen by the ``backend`` key.

A backend is one folder here (``backends/<name>/``, with what it asks at preview, how it serves a zone and its own
rules) and one line of :data:`REGISTRY`; what a backend is and gives is :mod:`.plugin`'s. The pipeline checks the
``backend`` key against the registry and plans with it; :class:`ha_endpoint.HaEndpoint` serves every zone with the
backend the plan names.
"""

from __future__ import annotations

from ..core.errors import ConfigError
from ..core.validation import unknown_backend
from . import keepalived, octavia
from .plugin import Backend

REGISTRY: dict[str, Backend] = {
    octavia.BACKEND.name: octavia.BACKEND,
    keepalived.BACKEND.name: keepalived.BACKEND,
}
"""Every backend, by the name the ``backend`` key gives."""


def names() -> tuple[str, ...]:
    """The registered backends' names, sorted."""
    return tuple(sorted(REGISTRY))


def lookup(name: str, root: str) -> Backend:
    """The backend registered as ``name``; :class:`ConfigError` naming ``<root>.backend`` when there is none."""
    if name not in REGISTRY:
        raise ConfigError([unknown_backend(name, names(), root)])
    return REGISTRY[name]

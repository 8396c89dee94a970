"""The backends, by name: what serves each availability zone of an endpoint, chosen by the ``backend`` key.

A backend is one folder here (``backends/<name>/``, with what it asks at preview, how it serves a zone and its own
rules) and one line of :data:`REGISTRY`; what a backend is and gives is :mod:`.plugin`'s. The pipeline checks the
``backend`` key against the registry and plans with it; :class:`ha_endpoint.HaEndpoint` serves every zone with the
backend the plan names.

The registry loads its backends (``backends/<name>/backend.py``) when it is first asked (:data:`REGISTRY`,
:func:`names`, :func:`lookup`), not when this package loads: the policy pack imports a backend's pure rules
(``backends/octavia/rules.py``) without the backends' preview, resource and client code (openstacksdk among them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.errors import ConfigError
from ..core.validation import unknown_backend

if TYPE_CHECKING:
    from .plugin import Backend

_REGISTERED: dict[str, Backend] = {}


def _registry() -> dict[str, Backend]:
    """:data:`REGISTRY`, its backends loaded on the first call."""
    if not _REGISTERED:
        from .keepalived.backend import BACKEND as KEEPALIVED
        from .octavia.backend import BACKEND as OCTAVIA

        _REGISTERED.update({
            OCTAVIA.name: OCTAVIA,
            KEEPALIVED.name: KEEPALIVED,
        })
    return _REGISTERED


def __getattr__(name: str) -> Any:
    """``REGISTRY``: every backend, by the name the ``backend`` key gives (loaded when first asked)."""
    if name == "REGISTRY":
        return _registry()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def names() -> tuple[str, ...]:
    """The registered backends' names, sorted."""
    return tuple(sorted(_registry()))


def lookup(name: str, root: str) -> Backend:
    """The backend registered as ``name``; :class:`ConfigError` naming ``<root>.backend`` when there is none."""
    registry = _registry()
    if name not in registry:
        raise ConfigError([unknown_backend(name, names(), root)])
    return registry[name]

"""ha-endpoint: a highly available multi-AZ API endpoint on OpenStack, as a Pulumi component.

    from ha_endpoint import HaEndpoint, EndpointArgs

``HaEndpoint`` is imported lazily so that the configuration contract (``ha_endpoint.core.args``) and the naming
contract (``ha_endpoint.core.contract``) load without the Pulumi resource machinery, e.g. inside the policy pack.
"""

from typing import Any, Mapping, Optional

from . import pulumi_types  # noqa: F401  (first: binds the core's names for Pulumi's classes)
from . import backends as _backends
from .core import validation as _validation
from .core.args import DnsArgs, EndpointArgs, ListenerArgs, MemberArgs, MonitorArgs, ReadinessArgs, ZoneArgs
from .core.errors import CloudLookupError, ConfigError, Problem

__all__ = [
    "HaEndpoint", "EndpointArgs", "ZoneArgs", "ListenerArgs", "MonitorArgs", "MemberArgs", "DnsArgs",
    "ReadinessArgs", "ConfigError", "CloudLookupError", "Problem", "load_endpoint_args",
]


def load_endpoint_args(raw: Any, root: str = _validation.DEFAULT_ROOT,
                       backends: Optional[Mapping[str, Any]] = None) -> EndpointArgs:
    """Parse and check a configuration value as the stack program does: against the registered backends
    (:data:`ha_endpoint.backends.REGISTRY`, loaded on the first call; ``backends`` names others), so the ``backend``
    key names one of them and the configuration is held to that backend's rules too; raise :class:`ConfigError`
    listing every problem found (:func:`ha_endpoint.core.validation.load_endpoint_args`)."""
    return _validation.load_endpoint_args(raw, root, _backends.REGISTRY if backends is None else backends)


def __getattr__(name: str):
    if name == "HaEndpoint":
        from .resources.endpoint import HaEndpoint

        return HaEndpoint
    raise AttributeError(f"module 'ha_endpoint' has no attribute {name!r}")

"""ha-endpoint: a highly available multi-AZ API endpoint on OpenStack, as a Pulumi component.

    from ha_endpoint import HaEndpoint, EndpointArgs

``HaEndpoint`` is imported lazily so that the configuration contract (``ha_endpoint.core.args``) and the naming
contract (``ha_endpoint.core.contract``) load without the Pulumi resource machinery, e.g. inside the policy pack.
"""

from . import pulumi_types  # noqa: F401  (first: binds the core's names for Pulumi's classes)
from .core.args import DnsArgs, EndpointArgs, ListenerArgs, MemberArgs, MonitorArgs, ReadinessArgs, ZoneArgs
from .core.errors import CloudLookupError, ConfigError, Problem
from .core.validation import load_endpoint_args

__all__ = [
    "HaEndpoint", "EndpointArgs", "ZoneArgs", "ListenerArgs", "MonitorArgs", "MemberArgs", "DnsArgs",
    "ReadinessArgs", "ConfigError", "CloudLookupError", "Problem", "load_endpoint_args",
]


def __getattr__(name: str):
    if name == "HaEndpoint":
        from .resources.endpoint import HaEndpoint

        return HaEndpoint
    raise AttributeError(f"module 'ha_endpoint' has no attribute {name!r}")

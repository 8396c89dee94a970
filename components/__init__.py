"""ha-endpoint: a highly available multi-AZ API endpoint on OpenStack, as a Pulumi component.

    from components import HaEndpoint, EndpointArgs

``HaEndpoint`` is imported lazily so that the configuration contract (``components.args``) and the naming
contract (``components.contract``) load without the Pulumi resource machinery, e.g. inside the policy pack.
"""

from .args import DnsArgs, EndpointArgs, ListenerArgs, MemberArgs, MonitorArgs, ReadinessArgs, ZoneArgs
from .errors import CloudLookupError, ConfigError, Problem
from .validation import load_endpoint_args

__all__ = [
    "HaEndpoint", "EndpointArgs", "ZoneArgs", "ListenerArgs", "MonitorArgs", "MemberArgs", "DnsArgs",
    "ReadinessArgs", "ConfigError", "CloudLookupError", "Problem", "load_endpoint_args",
]


def __getattr__(name: str):
    if name == "HaEndpoint":
        from .endpoint import HaEndpoint

        return HaEndpoint
    raise AttributeError(f"module 'components' has no attribute {name!r}")

"""The component's public arguments, at the path the README documents (``from ha_endpoint.args import MonitorType``).

They are defined in :mod:`ha_endpoint.core.args`; this module names them for consumers who import them from here.
"""

from .core.args import (
    ClusterApiSourceArgs, MachineAddressType, MemberSourcesArgs, DnsArgs, EndpointArgs, LbMethod, ListenerArgs, ListenerProtocol, LoadBalancerProvider, MemberArgs, MemberPlacement,
    MonitorArgs, MonitorType, PublishMode, ReadinessArgs, ReadinessRequirement, ZoneArgs,
)

__all__ = [
    "ClusterApiSourceArgs", "MachineAddressType", "MemberSourcesArgs", "DnsArgs", "EndpointArgs", "LbMethod", "ListenerArgs", "ListenerProtocol", "LoadBalancerProvider", "MemberArgs",
    "MemberPlacement", "MonitorArgs", "MonitorType", "PublishMode", "ReadinessArgs", "ReadinessRequirement", "ZoneArgs",
]

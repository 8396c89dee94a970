"""Provider invokes in flight at once, their plain values returned to synchronous code.

The generated SDK's functions (``openstack.networking.get_subnet``) each wait for their answer before the next is
sent: the component's lookups went one after another, and a member given by server costs three (a stack of 30
members per zone given by server spent 62.9 s in them before its first resource, 2026-12-03). :func:`invoke` sends
one as the generated function would (its token, its arguments, its result type, the provider version the package
pins) and can be awaited beside others; :func:`wait` runs a coroutine that gathers them to its end from synchronous
code, the way the SDK's own synchronous invokes wait (``pulumi.runtime.sync_await._sync_await`` pumps the program's
event loop: it works in the program's body and inside an ``apply``). A failed invoke raises as the generated
function raises it (``invoke of <token> failed: <the provider's reason>``).

Not the ``*_output`` forms: the SDK awaits every outstanding Output when the program ends and raises a failed one
again, so a lookup the component turns into a problem with the configuration (a subnet that does not exist) ended
the program with the provider's raw message instead (tests/unit/test_lookups.py).
"""

from __future__ import annotations

from collections.abc import Coroutine, Mapping
from typing import Any, Optional, TypeVar

import pulumi
import pulumi.runtime
from pulumi.runtime.sync_await import _sync_await
import pulumi_openstack as openstack
from pulumi_openstack import _utilities

T = TypeVar("T")

RESULTS: Mapping[str, type] = {
    "openstack:networking/getSubnet:getSubnet": openstack.networking.GetSubnetResult,
    "openstack:networking/getPortIds:getPortIds": openstack.networking.GetPortIdsResult,
    "openstack:networking/getPort:getPort": openstack.networking.GetPortResult,
    "openstack:networking/getRouter:getRouter": openstack.networking.GetRouterResult,
    "openstack:networking/getNetwork:getNetwork": openstack.networking.GetNetworkResult,
    "openstack:networking/getFloatingIp:getFloatingIp": openstack.networking.GetFloatingIpResult,
    "openstack:networking/getSecGroup:getSecGroup": openstack.networking.GetSecGroupResult,
    "openstack:compute/getInstanceV2:getInstanceV2": openstack.compute.GetInstanceV2Result,
    "openstack:dns/getDnsZone:getDnsZone": openstack.dns.GetDnsZoneResult,
}
"""The invokes the lookups send (the generated functions' tokens), each with its result type (taken from the package,
never by importing the function's own module: that import would put the module where the package has the function,
``openstack.networking.get_network``, for every program in the process)."""


async def invoke(token: str, args: Mapping[str, Any], opts: Optional[pulumi.InvokeOptions]) -> Any:
    """The result of the invoke ``token`` (one of :data:`RESULTS`) with ``args`` (the provider's names: ``subnetId``),
    through the provider ``opts`` names, at the provider version the package pins, as its result type."""
    merged = pulumi.InvokeOptions.merge(_utilities.get_invoke_opts_defaults(), opts)
    return await pulumi.runtime.invoke_async(token, dict(args), opts=merged, typ=RESULTS[token])


def wait(coroutine: Coroutine[Any, Any, T]) -> T:
    """``coroutine``'s result, from synchronous code."""
    return _sync_await(coroutine)

"""The cloud facts the plan needs, looked up once, with plain values, before the component goes on.

Every lookup is a provider invoke called with plain arguments (``openstack:networking/getSubnet`` by name), so
its result is known during ``pulumi preview`` and the plan (and the policy pack, which reads the component's
inputs) sees real ids, CIDRs and routers before anything is created. Invokes go through the consumer's default
provider (this module never constructs one). A name that does not resolve raises :class:`CloudLookupError` naming
the configuration key and the fix; every problem is reported at once. A cloud failing transiently (a 503 while
Keystone restarts, a refused connection) is retried by the one classification and backoff
(:func:`ha_endpoint.cloud.connection.classify`, :class:`ha_endpoint.cloud.retry.Backoff`) for
:data:`ha_endpoint.cloud.retry.READ_RETRY_SECONDS`; a lookup still failing then is reported as the cloud's failure, never as the
configuration's.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import time
from collections.abc import Awaitable, Iterable
from typing import Any, Callable, Optional, TypeVar

import pulumi

from ..core import contract, predicates
from ..core.args import EndpointArgs
from ..core.cloud_facts import (CloudFacts, FloatingIpFacts, NetworkFacts, PortFacts, RouterFacts, ServerFacts,
                                SubnetFacts, member_subnet_ref)
from ..core.errors import CloudLookupError, Problem
from ..core.identity import StackIdentity
from ..core.validation import DEFAULT_ROOT
from .concurrent import invoke, wait
from .connection import Category, classify, cloud_failure
from . import retry
from .errors import CloudError
from .retry import Backoff

ROUTER_PORT_OWNERS = (
    "network:router_interface",
    "network:router_interface_distributed",
    "network:ha_router_replicated_interface",
)
T = TypeVar("T")


class LookupProblem(CloudError):
    """A lookup found something, but not what the configuration needs; the message says what and how to fix it."""


class LookupUnavailable(CloudError):
    """The cloud failed a lookup transiently until :data:`ha_endpoint.cloud.retry.READ_RETRY_SECONDS` had passed."""

    def __init__(self, attempts: int, seconds: float, last: str) -> None:
        super().__init__(f"{attempts} attempts over {seconds:.0f} s, last: {last}")
        self.attempts, self.seconds, self.last = attempts, seconds, last


def lookup_cloud_facts(args: EndpointArgs, root: str = DEFAULT_ROOT,
                       opts: Optional[pulumi.InvokeOptions] = None,
                       identity: Optional[StackIdentity] = None) -> CloudFacts:
    """Resolve every subnet, the floating network, the brought floating IPs (and the port each is associated with
    now) and the DNS zone of ``args``, through the provider ``opts`` names (the component's: :func:`ha_endpoint.resources.endpoint.invoke_options`).
    The invokes that do not depend on each other are in flight at once (:mod:`.concurrent`): one after another, a
    stack of 30 members per zone given by server spent 62.9 s in them before its first resource (2026-12-03)."""
    return wait(_lookup(args, root, opts, identity))


async def _lookup(args: EndpointArgs, root: str, opts: Optional[pulumi.InvokeOptions],
                  identity: Optional[StackIdentity]) -> CloudFacts:
    cloud = _Cloud(opts, contract.vip_secgroup_name(args.name), identity)
    problems: list[Problem] = []
    subnet_refs: dict[str, str] = {}
    for ref, path in _subnet_refs(args, root):
        if isinstance(ref, str):  # an Output: looked up once known (ha_endpoint.pipeline)
            subnet_refs.setdefault(ref, path)
    floating = {az: zone.floating_ip for az, zone in args.zones.items() if isinstance(zone.floating_ip, str)}
    ports = {member.port: member._origin for member in reversed(args.members)  # each port named at its first member
             if member.server is None and predicates.is_uuid(member.port)}
    dns_zone = args.dns.dns_zone if args.dns is not None and isinstance(args.dns.dns_zone, str) else None
    # at once: the subnets (each with its routers), the external network, the brought floating IPs, the DNS zone and
    # the members' ports; their problems in this order whatever order the answers come in
    subnet_results, network, floating_results, zone_id, port_results = await _all([
        _all(_attempt(path, f"subnet '{ref}'", "give the name or id of an existing subnet (openstack subnet list)",
                       lambda ref=ref: cloud.subnet(ref)) for ref, path in subnet_refs.items()),
        _attempt(f"{root}.floatingNetwork", f"external network '{args.floating_network}'",
                 "give the name or id of an external network (openstack network list --external), or remove "
                 "floatingNetwork for an internal endpoint", lambda: cloud.external_network(args.floating_network))
        if isinstance(args.floating_network, str) else _none(),
        _all(_attempt(f"{root}.zones.{az}.floatingIp", f"floating IP {address}",
                       "allocate it first (openstack floating ip create --floating-ip-address ...) or remove "
                       "floatingIp to let the endpoint allocate one", lambda address=address: cloud.floating_ip(address))
              for az, address in floating.items()),
        _attempt(f"{root}.dns.dnsZone", f"DNS zone '{dns_zone}'", "create the zone first (openstack zone create) or "
                 "fix its name", lambda: cloud.dns_zone_id(dns_zone)) if dns_zone is not None else _none(),
        _all(_attempt(f"{root}.{where}.port", f"port {port}",
                       "give the id of an existing port of the member's server (openstack port list --server "
                       "<server>)", lambda port=port: cloud.port_exists(port)) for port, where in ports.items())])
    subnets = {ref: found for ref, (found, _) in zip(subnet_refs, subnet_results) if found is not None}
    # then the members given by server, at once: each needs its subnet
    wanted = [member for member in args.members
              if isinstance(member.server, str) and isinstance(member_subnet_ref(args, member), str)
              and member_subnet_ref(args, member) in subnets
              and (member.port is None or isinstance(member.port, str))]
    server_results = await _all(
        _attempt(f"{root}.{member._origin}.server", f"server '{member.server}'",
                 "give the id of an existing server (openstack server list)",
                 lambda member=member, where=member._origin:
                 cloud.server(member.server, subnets[member_subnet_ref(args, member)], member.port, f"{where}.port"))
        for member in wanted)
    servers = {member.name: found for member, (found, _) in zip(wanted, server_results) if found is not None}
    problems += [problem for _, problem in subnet_results if problem is not None]
    problems += [problem for _, problem in server_results if problem is not None]
    problems += [problem for _, problem in [network] + floating_results + [zone_id] + port_results
                 if problem is not None]
    if problems:
        raise CloudLookupError(problems)
    network_id, network_name = network[0] if network[0] is not None else (None, None)
    floating_ips = {az: found for az, (found, _) in zip(floating, floating_results)}
    # in the order they were found (the facts the component records keep it from one run to the next)
    router_ids = list(dict.fromkeys(router for subnet in subnets.values() for router in subnet.router_ids))
    network_ids = list(dict.fromkeys(zone_subnet.network_id for zone_subnet in (subnets.get(zone.subnet)
                                     for zone in args.zones.values() if isinstance(zone.subnet, str))
                                     if zone_subnet is not None))
    found_routers, found_networks = await _all([_all(cloud.router(router) for router in router_ids),
                                                _all(cloud.network(network) for network in network_ids)])
    return CloudFacts(subnets, network_id, network_name, floating_ips, zone_id[0], dict(zip(router_ids, found_routers)),
                      dict(zip(network_ids, found_networks)), servers)


def _subnet_refs(args: EndpointArgs, root: str) -> list[tuple[str, str]]:
    refs = [(zone.subnet, f"{root}.zones.{az}.subnet") for az, zone in args.zones.items()]
    refs += [(member.subnet, f"{root}.{member._origin}.subnet") for member in args.members if member.subnet is not None]
    return refs


async def _none() -> tuple[None, None]:
    return None, None


async def _all(lookups: Iterable[Awaitable[Any]]) -> list[Any]:
    """The results of ``lookups`` in their order, all in flight at once; every one has ended before a failure (a bug of
    ours) is raised, so no invoke is left to fail after the program has, where its error would replace ours."""
    results = await asyncio.gather(*lookups, return_exceptions=True)
    failed = next((result for result in results if isinstance(result, BaseException)), None)
    if failed is not None:
        raise failed
    return list(results)


async def _attempt(path: str, subject: str, fix: str,
                   lookup: Callable[[], Awaitable[T]]) -> tuple[Optional[T], Optional[Problem]]:
    """``lookup()``'s result, or the problem with the user's configuration that its failure shows (at ``path``)."""
    try:
        return await lookup(), None
    except LookupProblem as problem:  # found, but not what the configuration needs: the message says why
        return None, Problem(path, str(problem))
    except LookupUnavailable as failing:  # the cloud's failure: the configuration's fix would mislead
        return None, Problem(path, f"{subject} could not be looked up: the cloud kept failing ({failing.attempts} "
                             f"attempts over {failing.seconds:.0f} s, last: {_provider_detail(failing.last)}); "
                             "the cloud's failure, not the configuration's: run again once it answers")
    except Exception as error:
        # the provider reports "no results", several matches, no permission or an unreachable cloud as a failed
        # invoke (a bare Exception: "invoke of <token> failed: <the provider's reason>"); anything else (an
        # AttributeError, a KeyError) is a bug of ours and not a problem with the user's configuration
        if not cloud_failure(error):
            raise  # a bug is a bug, with its traceback
        detail = _provider_detail(str(error)) or type(error).__name__
        if "no results" in detail:  # the plain "not found": the message says it already
            return None, Problem(path, f"{subject} was not found; {fix}")
        # several matches, no permission, cloud unreachable...: keep what the provider said
        return None, Problem(path, f"{subject} could not be looked up ({detail}); {fix}")


def _provider_detail(message: str) -> str:
    """The provider's reason in a failed invoke's message, without Pulumi's ``invoke of <token> failed:``."""
    lines = message.strip().splitlines()
    return re.sub(r"^invoke of \S+ failed: ", "", lines[-1]).strip() if lines else ""


class _Cloud:
    """The invokes, all through one provider, each awaitable beside others (:func:`.concurrent.invoke`); router
    interfaces are looked up once per network, however many subnets of it ask at once."""

    def __init__(self, opts: Optional[pulumi.InvokeOptions], vip_group: str = "",
                 identity: Optional[StackIdentity] = None, retry_seconds: Optional[float] = None,
                 backoff: Optional[Backoff] = None) -> None:
        self.opts = opts
        self.retry_seconds = retry.READ_RETRY_SECONDS if retry_seconds is None else retry_seconds
        self.backoff = retry.READ_BACKOFF if backoff is None else backoff
        self.vip_group = vip_group
        self.identity = identity
        self._router_ports: dict[str, asyncio.Future[list[tuple[str, tuple[str, ...], str]]]] = {}

    async def _invoke(self, token: str, args: dict) -> Any:
        """The invoke's result; a transient failure (:func:`ha_endpoint.cloud.connection.classify`) is retried
        after the backoff's delay until :attr:`retry_seconds`, then :class:`LookupUnavailable`."""
        started, attempts, delays = time.monotonic(), 0, self.backoff.delays()
        while True:
            attempts += 1
            try:
                return await invoke(token, args, self.opts)
            except Exception as error:  # noqa: BLE001 (only the provider's transient failures are retried)
                if type(error) is not Exception or classify(error) is not Category.TRANSIENT:
                    raise
                delay, spent = next(delays), time.monotonic() - started
                if spent + delay > self.retry_seconds:
                    raise LookupUnavailable(attempts, spent, str(error)) from None
            await asyncio.sleep(delay)

    async def subnet(self, ref: str) -> SubnetFacts:
        key = {"subnetId": ref} if predicates.is_uuid(ref) else {"name": ref}
        found = await self._invoke("openstack:networking/getSubnet:getSubnet", key)
        cidr = str(ipaddress.ip_network(found.cidr, strict=False))
        return SubnetFacts(ref=ref, id=found.id, name=found.name or ref, cidr=cidr, network_id=found.network_id,
                           ip_version=int(found.ip_version or ipaddress.ip_network(cidr).version),
                           gateway_ip=found.gateway_ip or None, router_ids=await self.routers(found.network_id, cidr))

    async def routers(self, network_id: str, cidr: str) -> tuple[str, ...]:
        """Routers with an interface on the subnet: router-owned ports of its network with an address in it."""
        if network_id not in self._router_ports:
            self._router_ports[network_id] = asyncio.ensure_future(self._interfaces(network_id))
        network = ipaddress.ip_network(cidr, strict=False)
        return tuple(sorted({router for router, addresses, _ in await self._router_ports[network_id]
                             if any(ipaddress.ip_address(address) in network for address in addresses)}))

    async def _interfaces(self, network_id: str) -> list[tuple[str, tuple[str, ...], str]]:
        """(router, its addresses, the port's owner) of each router interface on the network."""
        ids = await _all(self._invoke("openstack:networking/getPortIds:getPortIds",
                                        {"networkId": network_id, "deviceOwner": owner}) for owner in ROUTER_PORT_OWNERS)
        owned = [(owner, port_id) for owner, found in zip(ROUTER_PORT_OWNERS, ids) for port_id in found.ids or []]
        ports = await _all(self._invoke("openstack:networking/getPort:getPort", {"portId": port_id})
                           for _, port_id in owned)
        return [(port.device_id, tuple(port.all_fixed_ips or ()), owner)
                for (owner, _), port in zip(owned, ports) if port.device_id]

    async def router(self, router_id: str) -> RouterFacts:
        """Where a router may live and whether it is HA or distributed (see :class:`RouterFacts`)."""
        found = await self._invoke("openstack:networking/getRouter:getRouter", {"routerId": router_id})
        owners = {owner for ports in self._router_ports.values() for device, _, owner in ports.result()
                  if device == router_id}
        return RouterFacts(router_id, found.name or router_id, tuple(sorted(found.availability_zone_hints or ())),
                           ha="network:ha_router_replicated_interface" in owners,
                           distributed=bool(found.distributed) or "network:router_interface_distributed" in owners,
                           external_network_id=found.external_network_id or None)

    async def network(self, network_id: str) -> NetworkFacts:
        found = await self._invoke("openstack:networking/getNetwork:getNetwork", {"networkId": network_id})
        return NetworkFacts(network_id, found.name or network_id, tuple(sorted(found.availability_zone_hints or ())))

    async def external_network(self, ref: str) -> tuple[str, str]:
        key = {"networkId": ref} if predicates.is_uuid(ref) else {"name": ref}
        found = await self._invoke("openstack:networking/getNetwork:getNetwork", {**key, "external": True})
        return found.id, found.name or ref

    async def floating_ip(self, address: str) -> FloatingIpFacts:
        found = await self._invoke("openstack:networking/getFloatingIp:getFloatingIp", {"address": address})
        port_id = found.port_id or None
        return FloatingIpFacts(address=address, id=found.id, network_id=found.pool or "",
                               port=await self.port(port_id) if port_id else None)

    async def port(self, port_id: str) -> PortFacts:
        """The port a floating IP is on; ours when one of its groups is this endpoint's VIP group of this stack."""
        found = await self._invoke("openstack:networking/getPort:getPort", {"portId": port_id})
        groups = await _all(self._invoke("openstack:networking/getSecGroup:getSecGroup", {"secgroupId": group_id})
                            for group_id in found.all_security_group_ids or [])
        ours = any(group.name == self.vip_group and self.identity is not None and
                   self.identity.owns_tags(group.all_tags) for group in groups)
        return PortFacts(port_id, found.device_owner or "", found.device_id or "", ours)

    async def port_exists(self, port_id: str) -> None:
        """A member's port given by id: it must exist."""
        await self._invoke("openstack:networking/getPort:getPort", {"portId": port_id})

    async def server(self, server_id: str, subnet: SubnetFacts, port_id: Optional[str], port_key: str) -> ServerFacts:
        """A member's server: its AZ (from Nova), and its port with an address on ``subnet`` (from Neutron:
        ``port_id`` when given, else the server's only port with such an address)."""
        instance = self._invoke("openstack:compute/getInstanceV2:getInstanceV2", {"id": server_id})
        if port_id is not None:
            found, port = await _all([instance, self._invoke("openstack:networking/getPort:getPort",
                                                             {"portId": port_id})])
            name = found.name or server_id
            if port.device_id != server_id:
                raise LookupProblem(f"port {port_id} is not a port of server {name} (it belongs to "
                                    f"{port.device_id or 'no device'}); give a port of the server as {port_key}, or "
                                    f"remove {port_key} to use its port on subnet {subnet.name}")
            candidates = [(port_id, tuple(port.all_fixed_ips or ()))]
        else:
            found, ids = await _all([instance, self._invoke("openstack:networking/getPortIds:getPortIds",
                                                           {"deviceId": server_id, "networkId": subnet.network_id})])
            name = found.name or server_id
            ports = await _all(self._invoke("openstack:networking/getPort:getPort", {"portId": pid})
                               for pid in ids.ids or [])
            candidates = [(pid, tuple(port.all_fixed_ips or ())) for pid, port in zip(ids.ids or [], ports)]
        chosen = [(pid, address) for pid, addresses in candidates for address in addresses
                  if subnet.contains(address)]
        if len(chosen) != 1:
            what = "no port" if not chosen else f"{len(chosen)} addresses"
            raise LookupProblem(f"server {name} has {what} on subnet {subnet.name} ({subnet.cidr}); give the port to "
                                f"use as {port_key}, or the member's subnet")
        port, address = chosen[0]
        return ServerFacts(server_id, name, found.availability_zone or "", port, address)

    async def dns_zone_id(self, name: str) -> str:
        return (await self._invoke("openstack:dns/getDnsZone:getDnsZone", {"name": name})).id

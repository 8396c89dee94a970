"""The cloud facts the plan needs, looked up once, synchronously, with plain values.

Every lookup is a provider invoke called with plain arguments (``openstack.networking.get_subnet(name=...)``), so
its result is known during ``pulumi preview`` and the plan (and the policy pack, which reads the component's
inputs) sees real ids, CIDRs and routers before anything is created. Invokes go through the consumer's default
provider (this module never constructs one). A name that does not resolve raises :class:`CloudLookupError` naming
the configuration key and the fix; every problem is reported at once.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Callable, Optional, TypeVar

import pulumi
import pulumi_openstack as openstack

from ..core import contract, predicates
from ..core.args import EndpointArgs, member_path
from ..core.cloud_facts import (CloudFacts, FloatingIpFacts, NetworkFacts, PortFacts, RouterFacts, ServerFacts,
                                SubnetFacts, member_subnet_ref)
from ..core.errors import CloudLookupError, Problem
from ..core.identity import StackIdentity
from ..core.validation import DEFAULT_ROOT
from .connection import cloud_failure
from .errors import CloudError

ROUTER_PORT_OWNERS = (
    "network:router_interface",
    "network:router_interface_distributed",
    "network:ha_router_replicated_interface",
)
T = TypeVar("T")


class LookupProblem(CloudError):
    """A lookup found something, but not what the configuration needs; the message says what and how to fix it."""


def lookup_cloud_facts(args: EndpointArgs, root: str = DEFAULT_ROOT,
                       opts: Optional[pulumi.InvokeOptions] = None,
                       identity: Optional[StackIdentity] = None) -> CloudFacts:
    """Resolve every subnet, the floating network, the brought floating IPs (and the port each is associated with
    now) and the DNS zone of ``args``, through the provider ``opts`` names (the component's: :func:`ha_endpoint.resources.endpoint.invoke_options`)."""
    cloud = _Cloud(opts, contract.vip_secgroup_name(args.name), identity)
    problems: list[Problem] = []
    subnets: dict[str, SubnetFacts] = {}
    for ref, path in _subnet_refs(args, root):
        if ref in subnets or not isinstance(ref, str):  # an Output: looked up once known (ha_endpoint.pipeline)
            continue
        facts = _attempt(problems, path, f"subnet '{ref}'", "give the name or id of an existing "
                         "subnet (openstack subnet list)", lambda ref=ref: cloud.subnet(ref))
        if facts is not None:
            subnets[ref] = facts
    servers: dict[str, ServerFacts] = {}
    for index, member in enumerate(args.members):
        subnet_ref = member_subnet_ref(args, member)
        if not isinstance(member.server, str) or not isinstance(subnet_ref, str) or subnet_ref not in subnets or \
                (member.port is not None and not isinstance(member.port, str)):
            continue
        where = member_path(member, index)
        found = _attempt(problems, f"{root}.{where}.server", f"server '{member.server}'",
                         "give the id of an existing server (openstack server list)",
                         lambda member=member, subnet=subnets[subnet_ref], where=where:
                         cloud.server(member.server, subnet, member.port, f"{where}.port"))
        if found is not None:
            servers[member.name] = found
    network_id = network_name = None
    if isinstance(args.floating_network, str):
        network = _attempt(problems, f"{root}.floatingNetwork",
                           f"external network '{args.floating_network}'",
                           "give the name or id of an external network (openstack network list --external), "
                           "or remove floatingNetwork for an internal endpoint",
                           lambda: cloud.external_network(args.floating_network))
        if network is not None:
            network_id, network_name = network
    floating_ips: dict[str, FloatingIpFacts] = {}
    for az, zone in args.zones.items():
        if not isinstance(zone.floating_ip, str):
            continue
        facts = _attempt(problems, f"{root}.zones.{az}.floatingIp", f"floating IP {zone.floating_ip}",
                         "allocate it first (openstack floating ip create --floating-ip-address ...) or remove "
                         "floatingIp to let the endpoint allocate one",
                         lambda zone=zone: cloud.floating_ip(zone.floating_ip))
        if facts is not None:
            floating_ips[az] = facts
    zone_id = None
    if args.dns is not None and isinstance(args.dns.dns_zone, str):
        zone_id = _attempt(problems, f"{root}.dns.dnsZone", f"DNS zone '{args.dns.dns_zone}'",
                           "create the zone first (openstack zone create) or fix its name",
                           lambda: cloud.dns_zone_id(args.dns.dns_zone))
    for port, index in {member.port: index for index, member in reversed(list(enumerate(args.members)))
                        if member.server is None and predicates.is_uuid(member.port)}.items():
        _attempt(problems, f"{root}.{member_path(args.members[index], index)}.port", f"port {port}", "give the id of an existing port of the "
                 "member's server (openstack port list --server <server>)",
                 lambda port=port: openstack.networking.get_port(port_id=port, opts=cloud.opts))
    if problems:
        raise CloudLookupError(problems)
    routers = {router: cloud.router(router) for subnet in subnets.values() for router in subnet.router_ids}
    networks = {zone_subnet.network_id: cloud.network(zone_subnet.network_id)
                for zone_subnet in (subnets.get(zone.subnet) for zone in args.zones.values()
                                    if isinstance(zone.subnet, str)) if zone_subnet is not None}
    return CloudFacts(subnets, network_id, network_name, floating_ips, zone_id, routers, networks, servers)


def _subnet_refs(args: EndpointArgs, root: str) -> list[tuple[str, str]]:
    refs = [(zone.subnet, f"{root}.zones.{az}.subnet") for az, zone in args.zones.items()]
    refs += [(member.subnet, f"{root}.{member_path(member, index)}.subnet")
             for index, member in enumerate(args.members) if member.subnet is not None]
    return refs


def _attempt(problems: list[Problem], path: str, subject: str, fix: str, lookup: Callable[[], T]) -> Optional[T]:
    try:
        return lookup()
    except LookupProblem as problem:  # found, but not what the configuration needs: the message says why
        problems.append(Problem(path, str(problem)))
        return None
    except Exception as error:
        # the provider reports "no results", several matches, no permission or an unreachable cloud as a failed
        # invoke (a bare Exception: "invoke of <token> failed: <the provider's reason>"); anything else (an
        # AttributeError, a KeyError) is a bug of ours and not a problem with the user's configuration
        if not cloud_failure(error):
            raise  # a bug is a bug, with its traceback
        detail = str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__
        detail = re.sub(r"^invoke of \S+ failed: ", "", detail)
        if "no results" in detail:  # the plain "not found": the message says it already
            problems.append(Problem(path, f"{subject} was not found; {fix}"))
        else:  # several matches, no permission, cloud unreachable...: keep what the provider said
            problems.append(Problem(path, f"{subject} could not be looked up ({detail}); {fix}"))
        return None


class _Cloud:
    """The invokes, all through one provider; router interfaces are looked up once per network."""

    def __init__(self, opts: Optional[pulumi.InvokeOptions], vip_group: str = "",
                 identity: Optional[StackIdentity] = None) -> None:
        self.opts = opts
        self.vip_group = vip_group
        self.identity = identity
        self._router_ports: dict[str, list[tuple[str, tuple[str, ...], str]]] = {}

    def subnet(self, ref: str) -> SubnetFacts:
        key = {"subnet_id": ref} if predicates.is_uuid(ref) else {"name": ref}
        found = openstack.networking.get_subnet(**key, opts=self.opts)
        cidr = str(ipaddress.ip_network(found.cidr, strict=False))
        return SubnetFacts(ref=ref, id=found.id, name=found.name or ref, cidr=cidr, network_id=found.network_id,
                           ip_version=int(found.ip_version or ipaddress.ip_network(cidr).version),
                           gateway_ip=found.gateway_ip or None, router_ids=self.routers(found.network_id, cidr))

    def routers(self, network_id: str, cidr: str) -> tuple[str, ...]:
        """Routers with an interface on the subnet: router-owned ports of its network with an address in it."""
        if network_id not in self._router_ports:
            self._router_ports[network_id] = [
                (port.device_id, tuple(port.all_fixed_ips or ()), owner)
                for owner in ROUTER_PORT_OWNERS
                for port_id in openstack.networking.get_port_ids(network_id=network_id, device_owner=owner,
                                                                 opts=self.opts).ids or []
                for port in [openstack.networking.get_port(port_id=port_id, opts=self.opts)] if port.device_id]
        network = ipaddress.ip_network(cidr, strict=False)
        return tuple(sorted({router for router, addresses, _ in self._router_ports[network_id]
                             if any(ipaddress.ip_address(address) in network for address in addresses)}))

    def router(self, router_id: str) -> RouterFacts:
        """Where a router may live and whether it is HA or distributed (see :class:`RouterFacts`)."""
        found = openstack.networking.get_router(router_id=router_id, opts=self.opts)
        owners = {owner for ports in self._router_ports.values() for device, _, owner in ports if device == router_id}
        return RouterFacts(router_id, found.name or router_id, tuple(sorted(found.availability_zone_hints or ())),
                           ha="network:ha_router_replicated_interface" in owners,
                           distributed=bool(found.distributed) or "network:router_interface_distributed" in owners,
                           external_network_id=found.external_network_id or None)

    def network(self, network_id: str) -> NetworkFacts:
        found = openstack.networking.get_network(network_id=network_id, opts=self.opts)
        return NetworkFacts(network_id, found.name or network_id, tuple(sorted(found.availability_zone_hints or ())))

    def external_network(self, ref: str) -> tuple[str, str]:
        key = {"network_id": ref} if predicates.is_uuid(ref) else {"name": ref}
        found = openstack.networking.get_network(**key, external=True, opts=self.opts)
        return found.id, found.name or ref

    def floating_ip(self, address: str) -> FloatingIpFacts:
        found = openstack.networking.get_floating_ip(address=address, opts=self.opts)
        port_id = found.port_id or None
        return FloatingIpFacts(address=address, id=found.id, network_id=found.pool or "", port_id=port_id,
                               port=self.port(port_id) if port_id else None)

    def port(self, port_id: str) -> PortFacts:
        """The port a floating IP is on; ours when one of its groups is this endpoint's VIP group of this stack."""
        found = openstack.networking.get_port(port_id=port_id, opts=self.opts)
        ours = False
        for group_id in found.all_security_group_ids or []:
            group = openstack.networking.get_sec_group(secgroup_id=group_id, opts=self.opts)
            if group.name == self.vip_group and self.identity is not None and \
                    self.identity.owns_tags(group.all_tags):
                ours = True
        return PortFacts(port_id, found.device_owner or "", found.device_id or "", ours)

    def server(self, server_id: str, subnet: SubnetFacts, port_id: Optional[str], port_key: str) -> ServerFacts:
        """A member's server: its AZ (from Nova), and its port with an address on ``subnet`` (from Neutron:
        ``port_id`` when given, else the server's only port with such an address)."""
        found = openstack.compute.get_instance_v2(id=server_id, opts=self.opts)
        name = found.name or server_id
        if port_id is not None:
            port = openstack.networking.get_port(port_id=port_id, opts=self.opts)
            if port.device_id != server_id:
                raise LookupProblem(f"port {port_id} is not a port of server {name} (it belongs to "
                                    f"{port.device_id or 'no device'}); give a port of the server as {port_key}, or "
                                    f"remove {port_key} to use its port on subnet {subnet.name}")
            candidates = [(port_id, tuple(port.all_fixed_ips or ()))]
        else:
            ids = openstack.networking.get_port_ids(device_id=server_id, network_id=subnet.network_id,
                                                    opts=self.opts).ids or []
            candidates = [(pid, tuple(openstack.networking.get_port(port_id=pid, opts=self.opts).all_fixed_ips or ()))
                          for pid in ids]
        chosen = [(pid, address) for pid, addresses in candidates for address in addresses
                  if subnet.contains(address)]
        if len(chosen) != 1:
            what = "no port" if not chosen else f"{len(chosen)} addresses"
            raise LookupProblem(f"server {name} has {what} on subnet {subnet.name} ({subnet.cidr}); give the port to "
                                f"use as {port_key}, or the member's subnet")
        port, address = chosen[0]
        return ServerFacts(server_id, name, found.availability_zone or "", port, address)

    def dns_zone_id(self, name: str) -> str:
        return openstack.dns.get_dns_zone(name=name, opts=self.opts).id

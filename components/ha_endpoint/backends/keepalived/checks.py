"""What the keepalived backend refuses at preview, every problem at once, each naming its key and the fix: what the
configuration alone refuses is its rules' (:mod:`.rules`, asked before the cloud is).

From the cloud (through the preview's catalog, :mod:`ha_endpoint.cloud.catalog`): Neutron's ``allowed-address-pairs``
extension (without it no member port can hold the VIP), each member's port (found by ``members[].port``, else by its
address on the zone's network): there, with port security on (Neutron ignores allowed address pairs without it), and
on the zone's network (VRRP and the VIP's ARP stay within one L2 segment); and a given VIP address
(``zones.<az>.vipAddress``): a host address of the zone's subnet, not its gateway, and held by no port but the zone's
own VIP port (this stack's identity tag and the port's name prove it ours). A cloud that cannot be asked gets a
warning; :class:`~.pairs.MemberVip` checks the port again when it writes it, and Neutron refuses an address in use
when the VIP port is created.
"""

from __future__ import annotations

from typing import Optional, Protocol

import ipaddress

import openstack.exceptions as os_exc
import pulumi

from ...cloud.catalog import CatalogUnavailable, OpenStackCatalog, current_catalog, unavailable_on_cloud_failure
from ...core.args import EndpointArgs, placed_zones
from ...core.cloud_facts import PortFacts, SubnetFacts
from ...core.errors import Problem
from ...core.plan import PollTarget
from ..plugin import Previewed
from .rules import NAME

EXTENSION = "allowed-address-pairs"


class KeepalivedCatalog(Protocol):
    """What the checks ask the cloud (the fake cloud's catalog answers them too, in tests)."""

    def network_extensions(self, target: PollTarget) -> set[str]:
        """The aliases of Neutron's extensions; :class:`CatalogUnavailable` when the cloud cannot be asked."""
        ...

    def subnet(self, target: PollTarget, subnet: str) -> Optional[SubnetFacts]:
        """Subnet ``subnet`` (name or id; its ``ref``); None when there is none."""
        ...

    def address_holders(self, target: PollTarget, network_id: str, address: str) -> list[PortFacts]:
        """The ports on ``network_id`` that hold ``address`` as a fixed IP."""
        ...

    def member_port(self, target: PollTarget, port_id: Optional[str], address: Optional[str],
                    network_id: Optional[str]) -> Optional[PortFacts]:
        """The port ``port_id``, else the one holding ``address`` on ``network_id``; None when there is none."""
        ...


class OpenStackKeepalivedCatalog(OpenStackCatalog):
    """The real cloud's answers, through the preview catalog's connection."""

    def network_extensions(self, target: PollTarget) -> set[str]:
        with unavailable_on_cloud_failure():
            return {str(extension.alias) for extension in self.connection(target).network.extensions()}

    def subnet(self, target: PollTarget, subnet: str) -> Optional[SubnetFacts]:
        with unavailable_on_cloud_failure():
            found = self.connection(target).network.find_subnet(subnet, ignore_missing=True)
            return None if found is None else SubnetFacts(
                ref=subnet, id=str(found.id), name=found.name or subnet, cidr=str(found.cidr),
                network_id=str(found.network_id), ip_version=int(found.ip_version), gateway_ip=found.gateway_ip)

    def address_holders(self, target: PollTarget, network_id: str, address: str) -> list[PortFacts]:
        with unavailable_on_cloud_failure():
            ports = self.connection(target).network.ports(network_id=network_id, fixed_ips=f"ip_address={address}")
            return [PortFacts(str(port.id), port.device_owner or "", port.device_id or "", name=port.name or "",
                              tags=tuple(port.tags or ())) for port in ports]

    def member_port(self, target: PollTarget, port_id: Optional[str], address: Optional[str],
                    network_id: Optional[str]) -> Optional[PortFacts]:
        with unavailable_on_cloud_failure():
            conn = self.connection(target)
            if port_id:
                try:
                    ports = [conn.network.get_port(port_id)]
                except os_exc.NotFoundException:
                    return None
            else:
                ports = list(conn.network.ports(network_id=network_id, fixed_ips=f"ip_address={address}"))
            if len(ports) != 1:
                return None
            port = ports[0]
            return PortFacts(str(port.id), network_id=str(port.network_id),
                             port_security=port.is_port_security_enabled is not False)


_OPENSTACK = OpenStackKeepalivedCatalog()


def check_keepalived(args: EndpointArgs, target: PollTarget, root: str, identity_tag: str,
                     dns_zone_id: Optional[str] = None) -> Previewed:
    """The keepalived backend's preview (:attr:`ha_endpoint.backends.plugin.Backend.preview`): what the cloud tells it
    refuses (it holds no members and adopts nothing)."""
    catalog: KeepalivedCatalog = current_catalog(_OPENSTACK)
    try:
        return Previewed(_cloud_problems(args, target, root, identity_tag, catalog))
    except CatalogUnavailable as reason:
        pulumi.log.warn(f"{root}.zones: the cloud could not be asked whether it has Neutron's {EXTENSION} extension, "
                        f"where the members' ports are and whether a given vipAddress is free ({reason}); the {NAME} "
                        "backend checks each member's port when it adds the VIP to it, and Neutron refuses an address "
                        "in use when the VIP port is created")
    return Previewed()


def _cloud_problems(args: EndpointArgs, target: PollTarget, root: str, identity_tag: str,
                    catalog: KeepalivedCatalog) -> list[Problem]:
    if EXTENSION not in catalog.network_extensions(target):
        return [Problem(f"{root}.backend", f"the cloud's Neutron has no {EXTENSION} extension (openstack extension "
                        f"list --network), so no member port can hold a zone's VIP; ask the cloud's operator to "
                        "enable it, or use backend octavia")]
    subnets = {az: catalog.subnet(target, zone.subnet) for az, zone in args.zones.items()
               if isinstance(zone.subnet, str)}
    problems = [problem for az, subnet in sorted(subnets.items()) if subnet is not None
                for problem in vip_address_problems(args, az, subnet, target, root, identity_tag, catalog)]
    networks = {az: subnet.network_id if subnet is not None else None for az, subnet in subnets.items()}
    for index, member in enumerate(args.members):
        if member.server is not None or not isinstance(member.address, str) or not isinstance(member.port, (str, type(None))):
            continue  # a server's port, or a value not known yet: checked when the VIP is added to it
        path = f"{root}.members[{index}]"
        for az in placed_zones(args.zones, args.member_placement, member.az):
            network = networks.get(az)
            if network is None:
                continue  # an unknown subnet: the endpoint's lookups refuse it
            port = catalog.member_port(target, member.port, member.address, network)
            if port is None:
                problems.append(Problem(path, f"no port holds {member.address} on the network of zone {az}'s subnet, "
                                        f"and the {NAME} backend adds the zone's VIP to the port of each of its "
                                        "members; give the member's port (port) or server, or its address on that "
                                        "network"))
            elif port.network_id != network:
                problems.append(Problem(f"{path}.port", f"port {port.id} is on network {port.network_id}, not on "
                                        f"zone {az}'s ({network}): VRRP and the VIP stay within one network; put the "
                                        "zone's members and its subnet on one network"))
            elif not port.port_security:
                problems.append(Problem(path, f"port {port.id} has port security disabled, so Neutron ignores "
                                        "the VIP in its allowed address pairs and the VRRP group; enable it (openstack "
                                        "port set --enable-port-security) or use backend octavia"))
    return problems


def vip_address_problems(args: EndpointArgs, az: str, subnet: SubnetFacts, target: PollTarget, root: str,
                         identity_tag: str, catalog: KeepalivedCatalog) -> list[Problem]:
    """``zones.<az>.vipAddress`` on the zone's subnet: a host address of its CIDR (outside the allocation pools is
    fine: Neutron accepts any of them and then never hands it to another port), not its gateway, held by no port but
    this zone's own VIP port (a replacement may take the address its old port holds: that port is deleted first)."""
    address = args.zones[az].vip_address
    if not isinstance(address, str):
        return []  # none given (Neutron picks one), or an Output: checked here once known
    path = f"{root}.zones.{az}.vipAddress"
    fix = "or remove vipAddress to let Neutron pick a free one"
    cidr = ipaddress.ip_network(subnet.cidr, strict=False)
    host = ipaddress.ip_address(address)
    if host not in cidr:
        return [Problem(path, f"{address} is not in zone {az}'s subnet {args.zones[az].subnet} ({subnet.cidr}), and "
                        f"the VIP port is created on that subnet; give an address inside {subnet.cidr}, {fix}")]
    if host == cidr.network_address or (cidr.version == 4 and host == cidr.broadcast_address):
        what = "network" if host == cidr.network_address else "broadcast"
        return [Problem(path, f"{address} is the {what} address of zone {az}'s subnet ({subnet.cidr}), which Neutron "
                        f"gives to no port; give a host address inside {subnet.cidr}, {fix}")]
    if address == subnet.gateway_ip:
        return [Problem(path, f"{address} is the gateway of zone {az}'s subnet ({subnet.cidr}); give another address "
                        f"inside {subnet.cidr}, {fix}")]
    own = f"{args.name}-{az}-vip"
    taken = [port for port in catalog.address_holders(target, subnet.network_id, address)
             if not (port.name == own and identity_tag in port.tags)]
    if not taken:
        return []
    port = taken[0]
    owner = f"device_owner {port.device_owner}, device {port.device_id}" if port.device_owner else "no device"
    return [Problem(path, f"{address} is in use by port {port.id} ({port.name or 'no name'}; {owner}), and "
                    "Neutron gives one address to one port; give a free address (openstack port list --fixed-ip "
                    f"ip-address={address} shows who holds it), {fix}")]

"""A stateful in-memory OpenStack behind ``pulumi.runtime.Mocks`` ("moto-style").

It holds networks, subnets, routers, ports, floating IPs, Designate zones and the Octavia objects the program
creates; allocates ids, VIP addresses from the VIP subnet's CIDR and floating IPs from the external pool; answers
the invokes the component uses (subnet, network, port, floating IP and DNS zone lookups); and rejects what the cloud
would reject (unknown subnet or AZ, exhausted pool, a member address outside its subnet, a duplicate listener
port or rule, an OVN pool with ROUND_ROBIN, an empty recordset...) and, like Neutron, moves an associated floating
IP to a new port without a word (the component must refuse that itself).

In preview mode it validates what is known and creates nothing, returning no id and no computed outputs, as the
engine does in ``pulumi preview``.
"""

from __future__ import annotations

import ipaddress
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi
from pulumi.output import Unknown

from . import invokes


class CloudError(Exception):
    """What the fake cloud answers when the real one would refuse a request."""


@dataclass
class Subnet:
    id: str
    name: str
    cidr: str
    network_id: str
    gateway_ip: str
    used: set = field(default_factory=set)

    @property
    def net(self):
        return ipaddress.ip_network(self.cidr)

    def allocate(self) -> str:
        for host in self.net.hosts():
            address = str(host)
            if address != self.gateway_ip and address not in self.used and not address.endswith(".255"):
                if int(address.rsplit(".", 1)[-1]) >= 100:  # VIPs from .100 up, below: the tests' servers
                    self.used.add(address)
                    return address
        raise CloudError(f"No more IP addresses available on subnet {self.id}")


@dataclass
class FloatingIp:
    id: str
    address: str
    network_id: str
    port_id: Optional[str] = None
    brought: bool = False


class FakeCloud(pulumi.runtime.Mocks):
    """The fake cloud; build one with :meth:`dev` (the dev stack's topology) or :meth:`topology`."""

    def __init__(self, preview: bool = False, azs: tuple[str, ...] = ("az1", "az2", "az3"),
                 providers: tuple[str, ...] = ("amphora", "ovn")):
        self.preview = preview
        self.azs, self.providers = set(azs), set(providers)
        self.disabled_azs: set[str] = set()  # Octavia AZs that exist but are disabled
        self.certificates: set[str] = set()  # Barbican container/secret references the key manager holds
        self.key_manager = True  # whether the cloud's catalog has a key manager (Barbican)
        self.catalog_error: Optional[str] = None  # set: the Octavia checks cannot ask the cloud (a warning)
        # what listing the DNS zone's record sets raises, one per call, before it answers (the real catalog's
        # categories: TransientFetchError, AuthExpired, CallFailed)
        self.records_errors: list[Exception] = []
        self.unready_azs: set[str] = set()  # zones whose readiness gate answers ready=False
        # Neutron's extensions (the keepalived backend needs allowed-address-pairs)
        self.network_extensions: set[str] = {"allowed-address-pairs", "port-security", "security-group"}
        self.lock = threading.RLock()
        self.counter = 0
        self.networks: dict[str, dict] = {}
        self.subnets: dict[str, Subnet] = {}
        self.ports: dict[str, dict] = {}
        self.routers: dict[str, dict] = {}
        self.floating_ips: dict[str, FloatingIp] = {}
        self.fip_pools: dict[str, list[str]] = {}
        self.dns_zones: dict[str, str] = {}
        self.objects: dict[str, dict[str, dict]] = {}  # resource kind -> id -> state
        self.pool_members: dict[str, set] = {}  # pool id -> {(address, port)}
        self.registrations: list[dict] = []
        self.calls: list[tuple[str, dict, str]] = []  # token, arguments, provider reference
        self.deleted: list[tuple[str, str]] = []
        self.current = threading.local()
        # load balancers another tool made, by name and id, that ``zones.<az>.adopt`` may take over (the preview's
        # answer: an AdoptedLoadBalancer), and A record sets another tool made: (zone id, name) -> (id, records)
        self.adoptable: dict[str, Any] = {}
        self.foreign_records: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {}

    # ----- building the cloud -------------------------------------------------------------------------------------
    def new_id(self) -> str:
        with self.lock:
            self.counter += 1
            return str(uuid.UUID(int=self.counter))

    def add_network(self, name: str, external: bool = False) -> str:
        network_id = self.new_id()
        self.networks[network_id] = {"id": network_id, "name": name, "external": external, "subnets": []}
        return network_id

    def add_subnet(self, network_id: str, name: str, cidr: str) -> str:
        subnet_id = self.new_id()
        gateway = str(next(ipaddress.ip_network(cidr).hosts()))
        self.subnets[subnet_id] = Subnet(subnet_id, name, cidr, network_id, gateway, {gateway})
        self.networks[network_id]["subnets"].append(subnet_id)
        return subnet_id

    def add_router(self, name: str, subnet_ids: list[str], az_hints: tuple[str, ...] = (), ha: bool = False,
                   distributed: bool = False, external_network_id: Optional[str] = None) -> str:
        """A router with an interface on each subnet (HA routers' interfaces are owned by
        network:ha_router_replicated_interface, as Neutron does), AZ hints, and an external gateway."""
        router_id = self.new_id()
        owner = "network:ha_router_replicated_interface" if ha else "network:router_interface"
        self.routers[router_id] = {"id": router_id, "name": name, "az_hints": tuple(az_hints),
                                   "distributed": distributed, "external_network_id": external_network_id}
        for subnet_id in subnet_ids:
            subnet = self.subnets[subnet_id]
            self.add_port(subnet.network_id, [(subnet_id, subnet.gateway_ip)], owner, router_id)
        return router_id

    def add_port(self, network_id: str, fixed_ips: list[tuple[str, str]], owner: str = "", device: str = "") -> str:
        port_id = self.new_id()
        self.ports[port_id] = {"id": port_id, "network_id": network_id, "fixed_ips": list(fixed_ips),
                               "device_owner": owner, "device_id": device, "security_groups": set(),
                               "port_security": True, "allowed_address_pairs": []}
        return port_id

    def add_member_port(self, subnet_name: str, address: str, port_security: bool = True) -> str:
        """A server's port at ``address`` on subnet ``subnet_name`` (what the keepalived backend adds its VIP to)."""
        subnet = self.subnets[self.subnet_id(subnet_name)]
        subnet.used.add(address)
        port_id = self.add_port(subnet.network_id, [(subnet.id, address)], "compute:nova", f"server-{address}")
        self.ports[port_id]["port_security"] = port_security
        return port_id

    def port_at(self, address: str) -> dict:
        return next(port for port in self.ports.values() if any(ip == address for _, ip in port["fixed_ips"]))

    def add_floating_pool(self, network_id: str, first: str, count: int) -> None:
        start = ipaddress.ip_address(first)
        self.fip_pools[network_id] = [str(start + offset) for offset in range(count)]

    def bring_floating_ip(self, network_id: str, address: str) -> str:
        """A floating IP the user allocated before (a BYO address)."""
        fip_id = self.new_id()
        self.floating_ips[fip_id] = FloatingIp(fip_id, address, network_id, brought=True)
        return fip_id

    @classmethod
    def topology(cls, preview: bool = False, zones: int = 3, fip_count: int = 50, byo: tuple[str, ...] = (),
                 providers: tuple[str, ...] = ("amphora", "ovn"), wide: bool = False) -> "FakeCloud":
        """``zones`` AZs az1..azN with subnets cp-az1.. (10.10.N.0/24; 10.N.0.0/16 when ``wide``) on network cp behind
        one HA router hinted to every AZ that holds the external gateway; external
        network ``public`` (172.24.4.0/24, ``fip_count`` addresses from .100); DNS zone example.test.; and an
        isolated network ``island`` (subnet island-sub 10.99.0.0/24, no router)."""
        cloud = cls(preview, tuple(f"az{n}" for n in range(1, zones + 1)), providers)
        cp = cloud.add_network("cp")
        subnets = [cloud.add_subnet(cp, f"cp-az{n}", f"10.{n}.0.0/16" if wide else f"10.10.{n}.0/24")
                   for n in range(1, zones + 1)]
        cloud.add_subnet(cp, "cp-extra", "10.10.100.0/24")
        public = cloud.add_network("public", external=True)
        azs = tuple(f"az{n}" for n in range(1, zones + 1))
        cloud.router_id = cloud.add_router("cp-router", subnets + [cloud.subnet_id("cp-extra")], az_hints=azs,
                                           ha=True, external_network_id=public)
        cloud.add_subnet(public, "public-subnet", "172.24.4.0/24")
        cloud.add_floating_pool(public, "172.24.4.100", fip_count)
        for address in byo:
            cloud.bring_floating_ip(public, address)
        island = cloud.add_network("island")
        cloud.add_subnet(island, "island-sub", "10.99.0.0/24")
        cloud.dns_zones[cloud.new_id()] = "example.test."
        return cloud

    @classmethod
    def dev(cls, preview: bool = False) -> "FakeCloud":
        """The dev stack's cloud (Pulumi.dev.yaml, Pulumi.amphora.yaml), with 172.24.4.50 already allocated for BYO tests."""
        return cls.topology(preview, byo=("172.24.4.50",))

    def add_certificate(self) -> str:
        """A certificate container in the key manager; its reference."""
        ref = f"https://barbican.example:9311/v1/containers/{self.new_id()}"
        self.certificates.add(ref)
        return ref

    def subnet_id(self, name: str) -> str:
        return next(subnet.id for subnet in self.subnets.values() if subnet.name == name)

    def network_id(self, name: str) -> str:
        return next(network["id"] for network in self.networks.values() if network["name"] == name)

    def kind(self, kind: str) -> dict[str, dict]:
        return self.objects.setdefault(kind, {})

    def destroy(self) -> None:
        """Delete everything the program created, as ``pulumi destroy`` would (see resources.destroy)."""
        from . import resources

        resources.destroy(self)

    # ----- Mocks --------------------------------------------------------------------------------------------------
    def call(self, args: pulumi.runtime.MockCallArgs):
        with self.lock:
            self.calls.append((args.token, dict(args.args), args.provider))
            try:
                return invokes.answer(self, args.token, args.args), []
            except invokes.NotFound as error:  # the engine returns provider errors to the caller, as failures
                return {}, [(error.property, str(error))]

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        from . import resources

        with self.lock:
            # args.inputs is the mock monitor's own fresh copy of the request: kept as is (no copies per registration)
            record = {"type": args.typ, "name": args.name, "inputs": args.inputs, "custom": args.custom,
                      "urn": getattr(self.current, "urn", None), "parent": getattr(self.current, "parent", None),
                      "dependencies": getattr(self.current, "dependencies", []), "provider": args.provider,
                      "aliases": getattr(self.current, "aliases", []),
                      "delete_before_replace": getattr(self.current, "delete_before_replace", False),
                      "retain_on_delete": getattr(self.current, "retain_on_delete", False),
                      "replace_on_changes": getattr(self.current, "replace_on_changes", []),
                      "ignore_changes": getattr(self.current, "ignore_changes", [])}
            self.registrations.append(record)
            if not args.custom:
                return "", args.inputs
            if args.resource_id:  # imported (the import resource option): the existing object, updated to inputs
                record["import_id"] = args.resource_id
                resource_id = args.resource_id.rsplit("/", 1)[-1]
                found = next((lb for lb in self.adoptable.values() if lb.id == resource_id), None)
                state = {**args.inputs, **({"vipPortId": found.vip_port_id, "vipAddress": found.vip_address}
                                           if found is not None else {})}
                record["id"], record["state"] = resource_id, state
                if not self.preview:
                    self.kind(args.typ)[resource_id] = state
                    if args.typ == "openstack:networking/floatingIpAssociate:FloatingIpAssociate" and \
                            known(args.inputs.get("portId")):  # the update after the import: moved by Neutron
                        self.floating_ips[resource_id].port_id = args.inputs["portId"]
                return resource_id, state
            resource_id, state = resources.create(self, args.typ, args.name, args.inputs)
            record["id"], record["state"] = resource_id, state
            return resource_id, state


class FakeCatalog:
    """The fake cloud's answers to the preview's questions (:mod:`ha_endpoint.cloud.catalog`, and the Octavia
    backend's, :mod:`ha_endpoint.backends.octavia.checks`: Octavia's availability zones, the key
    manager's certificates, the DNS zone's record sets), which the real component asks with openstacksdk."""

    def __init__(self, cloud: FakeCloud) -> None:
        self.cloud = cloud
        self.asked: list[tuple[str, Any]] = []

    def _available(self) -> None:
        from ha_endpoint.cloud.catalog import CatalogUnavailable

        if self.cloud.catalog_error:
            raise CatalogUnavailable(self.cloud.catalog_error)

    def octavia_azs(self, target):
        from ha_endpoint.backends.octavia.checks import OctaviaAz

        self.asked.append(("azs", target))
        self._available()
        return [OctaviaAz(az, az not in self.cloud.disabled_azs) for az in sorted(self.cloud.azs)]

    def network_extensions(self, target):
        self.asked.append(("extensions", target))
        self._available()
        return set(self.cloud.network_extensions)

    def subnet(self, target, subnet: str):
        from ha_endpoint.core.cloud_facts import SubnetFacts

        found = [s for s in self.cloud.subnets.values() if subnet in (s.id, s.name)]
        return SubnetFacts(subnet, found[0].id, found[0].name, found[0].cidr, found[0].network_id,
                           found[0].net.version, found[0].gateway_ip) if found else None

    def address_holders(self, target, network_id: str, address: str):
        from ha_endpoint.core.cloud_facts import PortFacts

        self.asked.append(("address", address))
        return [PortFacts(port["id"], port["device_owner"], port["device_id"], name=port.get("name", ""),
                          tags=tuple(port.get("tags", ()))) for port in self.cloud.ports.values()
                if port["network_id"] == network_id and any(ip == address for _, ip in port["fixed_ips"])]

    def member_port(self, target, port_id, address, network_id):
        from ha_endpoint.core.cloud_facts import PortFacts

        ports = [self.cloud.ports[port_id]] if port_id in self.cloud.ports else [] if port_id else \
            [port for port in self.cloud.ports.values() if port["network_id"] == network_id
             and any(ip == address for _, ip in port["fixed_ips"])]
        if len(ports) != 1:
            return None
        return PortFacts(ports[0]["id"], network_id=ports[0]["network_id"], port_security=ports[0]["port_security"])

    def certificate(self, target, ref: str):
        self.asked.append(("certificate", ref))
        self._available()
        if not self.cloud.key_manager:
            return None
        return ref in self.cloud.certificates

    def members_down(self, target, identity_tag: str, pool_names: set):
        """(pool name, member name) of the members created administratively down in the pools named ``pool_names``
        that carry ``identity_tag`` (what the earlier runs of the program created)."""
        self.asked.append(("members_down", sorted(pool_names)))
        self._available()
        pools = {pool_id: state["name"] for pool_id, state in self.cloud.kind("openstack:loadbalancer/pool:Pool").items()
                 if state.get("name") in pool_names and identity_tag in (state.get("tags") or [])}
        latest = {(pools[state["poolId"]], state.get("name", "")): state.get("adminStateUp", True) for state in
                  self.cloud.kind("openstack:loadbalancer/member:Member").values() if state.get("poolId") in pools}
        return {key for key, up in latest.items() if up is False}  # each run creates its members anew: the last

    def tagged_members(self, target, pool_names: list[str], tag: str):
        """Members carrying ``tag`` in the pools named ``pool_names``, as Octavia lists them (the member agent's)."""
        from tests.mocks.resources import MEMBER, POOL

        self.asked.append(("tagged_members", tag))
        self._available()
        pools = {pool_id: state.get("name") for pool_id, state in self.cloud.kind(POOL).items()}
        return {(pools[state["poolId"]], state["address"], int(state["protocolPort"]))
                for state in self.cloud.kind(MEMBER).values()
                if pools.get(state.get("poolId")) in pool_names and tag in (state.get("tags") or [])}

    def adoptable(self, target, ref: str):
        from ha_endpoint.backends.octavia.adopted_tree import NotAdoptable

        self.asked.append(("adoptable", ref))
        self._available()
        found = self.cloud.adoptable.get(ref)
        if found is None:
            raise NotAdoptable(f"no load balancer '{ref}' was found (openstack loadbalancer list); give the name or "
                               "id of an existing one")
        return found

    def a_recordset(self, target, dns_zone_id: str, fqdn: str):
        from ha_endpoint.core.cloud_facts import AdoptedRecord

        found = self.cloud.foreign_records.get((dns_zone_id, fqdn))
        return AdoptedRecord(found[0], dns_zone_id, found[1]) if found else None

    def a_records(self, target, dns_zone_id: str):
        self.asked.append(("a_records", dns_zone_id))
        if self.cloud.records_errors:
            raise self.cloud.records_errors.pop(0)
        found = {state["name"]: state.get("description") for state in
                 self.cloud.kind("openstack:dns/recordSet:RecordSet").values()
                 if state.get("zoneId") == dns_zone_id and state.get("type", "A") == "A"}
        return {**{name: None for zone, name in self.cloud.foreign_records if zone == dns_zone_id}, **found}


def known(value: Any) -> bool:
    """True when ``value`` (and everything inside it) is known, as opposed to a preview's unknown."""
    if isinstance(value, Unknown):
        return False
    if isinstance(value, (list, tuple)):
        return all(known(item) for item in value)
    if isinstance(value, dict):
        return all(known(item) for item in value.values())
    return True

"""The names and type tokens the component gives its resources: one contract shared by the resource code,
the policy pack and the tests, so that none of them has to know how another is written.

Every child name derives from the endpoint name, the availability zone and (for per-listener objects) the listener
port, never from a list position: reordering zones, listeners or members in the configuration leaves every URN
unchanged. Members are named by their address, which is what Octavia keys them on (address + port, unique in a
pool), not by their configured name: renaming a member is then an in-place update of its ``name``, not a new member
with the same address created next to the old one (which Octavia refuses with 409).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Mapping, Optional

ENDPOINT_TYPE = "haendpoint:index:HaEndpoint"
ZONE_TYPE = "haendpoint:index:EndpointZone"

LOADBALANCER_TYPE = "openstack:loadbalancer/loadBalancer:LoadBalancer"
LISTENER_TYPE = "openstack:loadbalancer/listener:Listener"
POOL_TYPE = "openstack:loadbalancer/pool:Pool"
MONITOR_TYPE = "openstack:loadbalancer/monitor:Monitor"
MEMBER_TYPE = "openstack:loadbalancer/member:Member"
FLOATING_IP_TYPE = "openstack:networking/floatingIp:FloatingIp"
FLOATING_IP_ASSOCIATE_TYPE = "openstack:networking/floatingIpAssociate:FloatingIpAssociate"
SECGROUP_TYPE = "openstack:networking/secGroup:SecGroup"
SECGROUP_RULE_TYPE = "openstack:networking/secGroupRule:SecGroupRule"
PORT_SECGROUP_TYPE = "openstack:networking/portSecGroupAssociate:PortSecGroupAssociate"
RECORDSET_TYPE = "openstack:dns/recordSet:RecordSet"


def zone_component_name(endpoint: str, az: str) -> str:
    """The per-zone component that parents one zone's LB, listeners, pools, monitors, members and FIP."""
    return f"{endpoint}-{az}"


def loadbalancer_name(endpoint: str, az: str) -> str:
    return f"{endpoint}-{az}-lb"


def listener_name(endpoint: str, az: str, port: int) -> str:
    return f"{endpoint}-{az}-{port}-listener"


def pool_name(endpoint: str, az: str, port: int) -> str:
    return f"{endpoint}-{az}-{port}-pool"


def monitor_name(endpoint: str, az: str, port: int) -> str:
    return f"{endpoint}-{az}-{port}-monitor"


def member_key(address: str) -> str:
    """A member address as it appears in resource names: canonical (``FD00::0010`` -> ``fd00::10``), with IPv6's
    colons as dots (``fd00..10``; a ``::`` would split the URN). IPv4 addresses are unchanged."""
    try:
        address = ipaddress.ip_address(address.strip()).compressed
    except ValueError:
        pass  # validation rejects such an address before anything is named; name it as given
    return address.replace(":", ".")


def member_name(endpoint: str, az: str, port: int, address: str) -> str:
    """The Octavia member for the member at ``address`` in zone ``az``'s pool of listener ``port``.

    Keyed by address (what Octavia keys members on; addresses are unique per endpoint), not by the member's
    configured name: a rename keeps the URN and updates the member's ``name`` in place; a new address is a new
    member (created before the old one is deleted); a move to another zone is a member of the other zone's pool."""
    return f"{endpoint}-{az}-{port}-member-{member_key(address)}"


def floating_ip_name(endpoint: str, az: str) -> str:
    return f"{endpoint}-{az}-fip"


def floating_ip_association_name(endpoint: str, az: str) -> str:
    return f"{endpoint}-{az}-fip-assoc"


def readiness_name(endpoint: str, az: str) -> str:
    return f"{endpoint}-{az}-ready"


def vip_secgroup_name(endpoint: str) -> str:
    return f"{endpoint}-vip-sg"


def members_secgroup_name(endpoint: str) -> str:
    return f"{endpoint}-members-sg"


def recordset_name(endpoint: str) -> str:
    return f"{endpoint}-dns"


def zone_recordset_name(endpoint: str, az: str) -> str:
    return f"{endpoint}-{az}-dns"


PUBLISHED_ADDRESS_KEYS = ("floatingIp", "vipAddress")
"""The keys of one zone of the ``zones`` output that its address in the A record comes from, the first given."""


def published_address(zone_output: Mapping[str, Any]) -> Optional[str]:
    """The zone's address in the endpoint's A record, from one zone of the ``zones`` output: its floating IP, else
    its VIP address (an internal endpoint); None when it has neither."""
    return next((zone_output[key] for key in PUBLISHED_ADDRESS_KEYS if zone_output.get(key)), None)


def zone_record_label(record: str, az: str) -> str:
    """The label of a zone's own record (``perZoneRecords``): ``api`` in ``az1`` -> ``api-az1``."""
    return f"{record}-{az}"


PACKAGE = ENDPOINT_TYPE.split(":", 1)[0]


def dynamic_type(name: str) -> str:
    """A dynamic resource of ours as a Python program registers it: ``pulumi-python:dynamic/haendpoint:<name>``."""
    return f"pulumi-python:dynamic/{PACKAGE}:{name}"


def hosted_type(name: str) -> str:
    """The same resource as the package's provider host serves it to a YAML or TypeScript program:
    ``haendpoint:index:<name>`` (:mod:`ha_endpoint.gates.hosted`)."""
    return f"{PACKAGE}:index:{name}"


READINESS_TYPE = dynamic_type("MemberReadiness")
DRAIN_TYPE = dynamic_type("MemberDrain")
PUT_BACK_TYPE = dynamic_type("PutBack")
VIP_READINESS_TYPE = dynamic_type("VipReadiness")
WAITS = ("MemberReadiness", "MemberDrain", "PutBack", "VipReadiness")
"""Our resources that hold no cloud object (they wait, or take a member out and put it back): a create interrupted
in the middle leaves nothing to undo."""
LEGACY_DYNAMIC_TYPE = "pulumi-python:dynamic:Resource"
"""The generic token of every Python dynamic resource; MemberReadiness and MemberDrain had it before they got their
own and carry it as an alias, so deployed stacks update in place."""


def vip_port_secgroup_name(endpoint: str, az: str) -> str:
    """Attaches the VIP security group to one zone's load balancer VIP port (enforce=false: Octavia's stays)."""
    return f"{endpoint}-{az}-vip-sg-assoc"


def member_port_secgroup_name(endpoint: str, port_id: str) -> str:
    """Attaches the members' security group to a member's Neutron port (when the member gives its port id). Keyed by
    the port, not the member name: renaming a member must not detach and reattach its port's security group."""
    return f"{endpoint}-port-{port_id}-sg-assoc"


def secgroup_rule_name(secgroup: str, protocol: str, port: int, remote_cidr: str) -> str:
    """One ingress rule of a security group, named by what it admits (never by position): remote CIDR, port."""
    remote = remote_cidr.replace("/", "_").replace(":", ".")
    return f"{secgroup}-{protocol}-{port}-from-{remote}"


def member_drain_name(endpoint: str, az: str, port: int, address: str) -> str:
    """The MemberDrain companion of one member resource (drains it before it is deleted), keyed like it."""
    return f"{member_name(endpoint, az, port, address)}-drain"


def legacy_member_name(endpoint: str, az: str, port: int, member: str) -> str:
    """The name member resources had before they were keyed by address (keyed by the member's configured name).
    Member resources carry it as an alias, so a stack deployed with it updates in place instead of creating a second
    member with the same address and port (which Octavia refuses with 409)."""
    return f"{endpoint}-{az}-{port}-member-{member}"


def natural_key(text: str) -> list[Any]:
    """Sort key: numbers in names compared as numbers (az2 before az10, port 6443 before 22623); the component and
    the policy pack order zones, members and resources by it."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]

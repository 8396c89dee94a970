"""The names and type tokens the component gives its resources: one contract shared by the resource code,
the policy pack and the tests, so that none of them has to know how another is written.

Every child name derives from the endpoint name, the availability zone and (for per-listener objects) the listener
port or member name, never from a list position: reordering zones, listeners or members in the configuration leaves
every URN unchanged.
"""

from __future__ import annotations

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


def member_name(endpoint: str, az: str, port: int, member: str) -> str:
    return f"{endpoint}-{az}-{port}-member-{member}"


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

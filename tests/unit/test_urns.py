"""URNs are the identity of resources in state: a changed URN means delete + create (an outage for a load
balancer). The reference configuration's URNs are pinned, and reordering zones, listeners or members changes none.
"""

from __future__ import annotations

import pytest

from tests.mocks import FakeCloud, run_component
from tests.mocks.configs import dev_endpoint

PREFIX = "urn:pulumi:dev::ha-endpoint::"
TYPES = {"E": "haendpoint:index:HaEndpoint", "Z": "haendpoint:index:EndpointZone"}
# The dev stack's endpoint (Pulumi.dev.yaml). E = HaEndpoint, Z = EndpointZone; "E$Z$x" is a child of a zone.
PINNED = """
    E$Z$openstack:loadbalancer/listener:Listener::k8s-api-az1-22623-listener
    E$Z$openstack:loadbalancer/listener:Listener::k8s-api-az1-6443-listener
    E$Z$openstack:loadbalancer/listener:Listener::k8s-api-az2-22623-listener
    E$Z$openstack:loadbalancer/listener:Listener::k8s-api-az2-6443-listener
    E$Z$openstack:loadbalancer/listener:Listener::k8s-api-az3-22623-listener
    E$Z$openstack:loadbalancer/listener:Listener::k8s-api-az3-6443-listener
    E$Z$openstack:loadbalancer/loadBalancer:LoadBalancer::k8s-api-az1-lb
    E$Z$openstack:loadbalancer/loadBalancer:LoadBalancer::k8s-api-az2-lb
    E$Z$openstack:loadbalancer/loadBalancer:LoadBalancer::k8s-api-az3-lb
    E$Z$openstack:loadbalancer/member:Member::k8s-api-az1-22623-member-cp-0
    E$Z$openstack:loadbalancer/member:Member::k8s-api-az1-6443-member-cp-0
    E$Z$openstack:loadbalancer/member:Member::k8s-api-az2-22623-member-cp-1
    E$Z$openstack:loadbalancer/member:Member::k8s-api-az2-6443-member-cp-1
    E$Z$openstack:loadbalancer/member:Member::k8s-api-az3-22623-member-cp-2
    E$Z$openstack:loadbalancer/member:Member::k8s-api-az3-6443-member-cp-2
    E$Z$openstack:loadbalancer/monitor:Monitor::k8s-api-az1-22623-monitor
    E$Z$openstack:loadbalancer/monitor:Monitor::k8s-api-az1-6443-monitor
    E$Z$openstack:loadbalancer/monitor:Monitor::k8s-api-az2-22623-monitor
    E$Z$openstack:loadbalancer/monitor:Monitor::k8s-api-az2-6443-monitor
    E$Z$openstack:loadbalancer/monitor:Monitor::k8s-api-az3-22623-monitor
    E$Z$openstack:loadbalancer/monitor:Monitor::k8s-api-az3-6443-monitor
    E$Z$openstack:loadbalancer/pool:Pool::k8s-api-az1-22623-pool
    E$Z$openstack:loadbalancer/pool:Pool::k8s-api-az1-6443-pool
    E$Z$openstack:loadbalancer/pool:Pool::k8s-api-az2-22623-pool
    E$Z$openstack:loadbalancer/pool:Pool::k8s-api-az2-6443-pool
    E$Z$openstack:loadbalancer/pool:Pool::k8s-api-az3-22623-pool
    E$Z$openstack:loadbalancer/pool:Pool::k8s-api-az3-6443-pool
    E$Z$openstack:networking/floatingIp:FloatingIp::k8s-api-az1-fip
    E$Z$openstack:networking/floatingIp:FloatingIp::k8s-api-az2-fip
    E$Z$openstack:networking/floatingIp:FloatingIp::k8s-api-az3-fip
    E$Z$openstack:networking/floatingIpAssociate:FloatingIpAssociate::k8s-api-az1-fip-assoc
    E$Z$openstack:networking/floatingIpAssociate:FloatingIpAssociate::k8s-api-az2-fip-assoc
    E$Z$openstack:networking/floatingIpAssociate:FloatingIpAssociate::k8s-api-az3-fip-assoc
    E$Z$openstack:networking/portSecGroupAssociate:PortSecGroupAssociate::k8s-api-az1-vip-sg-assoc
    E$Z$openstack:networking/portSecGroupAssociate:PortSecGroupAssociate::k8s-api-az2-vip-sg-assoc
    E$Z$openstack:networking/portSecGroupAssociate:PortSecGroupAssociate::k8s-api-az3-vip-sg-assoc
    E$Z$pulumi-python:dynamic:Resource::k8s-api-az1-ready
    E$Z$pulumi-python:dynamic:Resource::k8s-api-az2-ready
    E$Z$pulumi-python:dynamic:Resource::k8s-api-az3-ready
    E$Z::k8s-api-az1
    E$Z::k8s-api-az2
    E$Z::k8s-api-az3
    E$openstack:dns/recordSet:RecordSet::k8s-api-az1-dns
    E$openstack:dns/recordSet:RecordSet::k8s-api-az2-dns
    E$openstack:dns/recordSet:RecordSet::k8s-api-az3-dns
    E$openstack:dns/recordSet:RecordSet::k8s-api-dns
    E$openstack:networking/secGroup:SecGroup::k8s-api-members-sg
    E$openstack:networking/secGroup:SecGroup::k8s-api-vip-sg
    E$openstack:networking/secGroupRule:SecGroupRule::k8s-api-members-sg-tcp-22623-from-10.10.1.0_24
    E$openstack:networking/secGroupRule:SecGroupRule::k8s-api-members-sg-tcp-22623-from-10.10.2.0_24
    E$openstack:networking/secGroupRule:SecGroupRule::k8s-api-members-sg-tcp-22623-from-10.10.3.0_24
    E$openstack:networking/secGroupRule:SecGroupRule::k8s-api-members-sg-tcp-6443-from-10.10.1.0_24
    E$openstack:networking/secGroupRule:SecGroupRule::k8s-api-members-sg-tcp-6443-from-10.10.2.0_24
    E$openstack:networking/secGroupRule:SecGroupRule::k8s-api-members-sg-tcp-6443-from-10.10.3.0_24
    E$openstack:networking/secGroupRule:SecGroupRule::k8s-api-vip-sg-tcp-22623-from-0.0.0.0_0
    E$openstack:networking/secGroupRule:SecGroupRule::k8s-api-vip-sg-tcp-6443-from-0.0.0.0_0
    E::k8s-api
"""


def expand(line: str) -> str:
    chain, name = line.strip().split("::")
    parts = [TYPES.get(part, part) for part in chain.split("$")]
    return PREFIX + "$".join(parts) + "::" + name


def pinned_urns() -> list[str]:
    return sorted(expand(line) for line in PINNED.strip().splitlines())


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_the_reference_configuration_keeps_its_urns(preview):
    assert run_component(dev_endpoint(), FakeCloud.dev(), preview=preview).urns == pinned_urns()


def test_reordering_zones_listeners_and_members_changes_no_urn():
    raw = dev_endpoint()
    raw["zones"] = dict(reversed(list(raw["zones"].items())))
    raw["listeners"].reverse()
    raw["members"] = [raw["members"][2], raw["members"][0], raw["members"][1]]
    assert run_component(raw, FakeCloud.dev(), preview=True).urns == pinned_urns()


def test_adding_a_zone_adds_urns_and_changes_none_of_the_others():
    raw = dev_endpoint()
    del raw["zones"]["az3"]
    raw["members"] = [m for m in raw["members"] if m["zone"] != "az3"]
    two = set(run_component(raw, FakeCloud.dev(), preview=True).urns)
    assert two < set(pinned_urns())
    assert all("az3" in urn or "-sg-tcp-" in urn for urn in set(pinned_urns()) - two)

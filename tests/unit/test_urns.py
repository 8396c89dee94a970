"""URNs are the identity of resources in state: a changed URN means delete + create (an outage for a load
balancer). The reference configuration's URNs are pinned, and reordering zones, listeners or members changes none.
"""

from __future__ import annotations

import pytest
from pulumi.output import Unknown

from ha_endpoint.core import contract
from tests.mocks import FakeCloud, run_component
from tests.mocks.configs import amphora_endpoint

PREFIX = "urn:pulumi:dev::ha-endpoint::"
TYPES = {"E": "haendpoint:index:HaEndpoint", "Z": "haendpoint:index:EndpointZone"}
# The amphora shape's endpoint (Pulumi.amphora.yaml). E = HaEndpoint, Z = EndpointZone; "E$Z$x" is a child of a zone.
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
    E$Z$openstack:loadbalancer/member:Member::k8s-api-az1-22623-member-10.10.1.10
    E$Z$openstack:loadbalancer/member:Member::k8s-api-az1-6443-member-10.10.1.10
    E$Z$openstack:loadbalancer/member:Member::k8s-api-az2-22623-member-10.10.2.10
    E$Z$openstack:loadbalancer/member:Member::k8s-api-az2-6443-member-10.10.2.10
    E$Z$openstack:loadbalancer/member:Member::k8s-api-az3-22623-member-10.10.3.10
    E$Z$openstack:loadbalancer/member:Member::k8s-api-az3-6443-member-10.10.3.10
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
    E$Z$pulumi-python:dynamic/haendpoint:MemberDrain::k8s-api-az1-22623-member-10.10.1.10-drain
    E$Z$pulumi-python:dynamic/haendpoint:MemberDrain::k8s-api-az1-6443-member-10.10.1.10-drain
    E$Z$pulumi-python:dynamic/haendpoint:MemberDrain::k8s-api-az2-22623-member-10.10.2.10-drain
    E$Z$pulumi-python:dynamic/haendpoint:MemberDrain::k8s-api-az2-6443-member-10.10.2.10-drain
    E$Z$pulumi-python:dynamic/haendpoint:MemberDrain::k8s-api-az3-22623-member-10.10.3.10-drain
    E$Z$pulumi-python:dynamic/haendpoint:MemberDrain::k8s-api-az3-6443-member-10.10.3.10-drain
    E$Z$pulumi-python:dynamic/haendpoint:MemberReadiness::k8s-api-az1-ready
    E$Z$pulumi-python:dynamic/haendpoint:MemberReadiness::k8s-api-az2-ready
    E$Z$pulumi-python:dynamic/haendpoint:MemberReadiness::k8s-api-az3-ready
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
    assert run_component(amphora_endpoint(), FakeCloud.dev(), preview=preview).urns == pinned_urns()


def test_reordering_zones_listeners_and_members_changes_no_urn():
    raw = amphora_endpoint()
    raw["zones"] = dict(reversed(list(raw["zones"].items())))
    raw["listeners"].reverse()
    raw["members"] = [raw["members"][2], raw["members"][0], raw["members"][1]]
    assert run_component(raw, FakeCloud.dev(), preview=True).urns == pinned_urns()


def test_adding_a_zone_adds_urns_and_changes_none_of_the_others():
    raw = amphora_endpoint()
    del raw["zones"]["az3"]
    raw["members"] = [m for m in raw["members"] if m["az"] != "az3"]
    two = set(run_component(raw, FakeCloud.dev(), preview=True).urns)
    assert two < set(pinned_urns())
    assert all("az3" in urn or "-sg-tcp-" in urn for urn in set(pinned_urns()) - two)


def inputs_by_urn(run) -> dict[str, dict]:
    """Each cloud resource's inputs (a preview's: ids and addresses the cloud has yet to make are unknown) and the
    URNs it depends on, by URN: what the engine diffs against the stack's state. (Components are left out: their
    inputs are the configuration echoed, never diffed into an update or a replacement.)"""

    def norm(value):
        if isinstance(value, dict):
            return {key: norm(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [norm(item) for item in value]
        return "<unknown>" if isinstance(value, Unknown) else value

    return {r["urn"]: {**norm(r["inputs"]), "<dependencies>": r["dependencies"]} for r in run.registrations
            if r["custom"]}


def member_urns(run, address: str) -> list[str]:
    return sorted(r["urn"] for r in run.of_type(contract.MEMBER_TYPE) if r["inputs"]["address"] == address)


def test_members_are_named_by_their_address():
    assert contract.member_name("k8s-api", "az1", 6443, "10.10.1.10") == "k8s-api-az1-6443-member-10.10.1.10"
    assert contract.member_drain_name("k8s-api", "az1", 6443, "10.10.1.10") == \
        "k8s-api-az1-6443-member-10.10.1.10-drain"
    # IPv6: canonical form, colons as dots ("::" would split the URN); spellings of one address name one member
    assert contract.member_name("ep", "az1", 443, "FD00:0::0010") == contract.member_name("ep", "az1", 443, "fd00::10") \
        == "ep-az1-443-member-fd00..10"


@pytest.mark.parametrize("drain_seconds", [0, 10])
def test_renaming_a_member_keeps_its_urns_and_updates_only_its_name(drain_seconds):
    """Octavia refuses a second member with the same address and port in a pool (409), so a rename must not be a
    replacement (which creates the new member before deleting the old one): same URNs, only ``name`` changes."""
    raw = amphora_endpoint()
    raw["readiness"] = {"drainSeconds": drain_seconds}
    before = run_component(raw, FakeCloud.dev(), preview=True)
    raw["members"][0]["name"] = "cp-0-renamed"
    after = run_component(raw, FakeCloud.dev(), preview=True)
    assert after.urns == before.urns
    old, new = inputs_by_urn(before), inputs_by_urn(after)
    changed = {urn: {key for key in set(old[urn]) | set(new[urn]) if old[urn].get(key) != new[urn].get(key)}
               for urn in old if old[urn] != new[urn]}
    assert changed == {urn: {"name"} for urn in member_urns(before, "10.10.1.10")}
    assert {new[urn]["name"] for urn in changed} == {"cp-0-renamed"}


def test_changing_a_members_address_changes_its_urns_only():
    raw = amphora_endpoint()
    raw["members"][0]["address"] = "10.10.1.11"
    after = run_component(raw, FakeCloud.dev(), preview=True)
    gone, added = set(pinned_urns()) - set(after.urns), set(after.urns) - set(pinned_urns())
    assert sorted(urn.rsplit("::", 1)[1] for urn in gone) == \
        [f"k8s-api-az1-{port}-member-10.10.1.10{drain}" for port in (22623, 6443) for drain in ("", "-drain")]
    assert sorted(urn.rsplit("::", 1)[1] for urn in added) == \
        [f"k8s-api-az1-{port}-member-10.10.1.11{drain}" for port in (22623, 6443) for drain in ("", "-drain")]


def test_moving_a_member_to_another_zone_makes_it_a_member_of_that_zones_pools():
    raw = amphora_endpoint()
    raw["members"].append({"name": "cp-3", "address": "10.10.1.20", "az": "az1"})  # az1 keeps a member
    before = set(run_component(raw, FakeCloud.dev(), preview=True).urns)
    raw["members"][0].update(az="az2", subnet="cp-az1")
    after = set(run_component(raw, FakeCloud.dev(), preview=True).urns)
    assert sorted(urn.rsplit("::", 1)[1] for urn in before - after) == \
        [f"k8s-api-az1-{port}-member-10.10.1.10{drain}" for port in (22623, 6443) for drain in ("", "-drain")]
    assert sorted(urn.rsplit("::", 1)[1] for urn in after - before) == \
        [f"k8s-api-az2-{port}-member-10.10.1.10{drain}" for port in (22623, 6443) for drain in ("", "-drain")]


def test_the_dynamic_resources_carry_their_former_generic_type_as_an_alias():
    """MemberReadiness and MemberDrain had the generic ``pulumi-python:dynamic:Resource`` token: the alias makes a
    stack deployed with it update in place (verified on the dev stack brought up from the previous main)."""
    run = run_component(amphora_endpoint(), FakeCloud.dev(), preview=True)
    gates, drains = run.of_type(contract.READINESS_TYPE), run.of_type(contract.DRAIN_TYPE)
    assert len(gates) == 3 and len(drains) == 6
    assert all({"type": contract.LEGACY_DYNAMIC_TYPE} in r["aliases"] for r in gates + drains)

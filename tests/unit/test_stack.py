"""The whole program (``__main__.py`` -> stacks/endpoint_stack.py) against the fake cloud, and bad input through it."""

from __future__ import annotations

import pulumi
import pytest

from ha_endpoint import CloudLookupError, ConfigError

from ha_endpoint.core import contract
from tests.mocks import CloudError, FakeCloud, run_component, run_stack
from tests.mocks.configs import amphora_endpoint

EXPORTS = {"fqdn", "ports", "addresses", "membersSecurityGroupId", "vipSecurityGroupId", "zones"}
ZONE_OUTPUTS = {"loadbalancerId", "vipAddress", "vipPortId", "floatingIp", "poolIds", "memberIds", "memberStatuses", "ready", "published",
                "notReadyReason", "gate"}


def stack_config(endpoint: dict) -> dict:
    return {"endpoint": endpoint}


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_the_dev_stack_builds_and_exports_its_outputs(preview):
    cloud = FakeCloud.dev()
    run = run_stack(cloud, stack_config(amphora_endpoint()), preview=preview)
    assert set(run.outputs) == EXPORTS
    assert run.outputs["fqdn"] == "api.example.test." and run.outputs["ports"] == [6443, 22623]
    assert len(run.of_type(contract.ENDPOINT_TYPE)) == 1 and len(run.of_type(contract.LOADBALANCER_TYPE)) == 3
    if preview:
        assert run.outputs["addresses"] is None  # not known before the floating IPs exist
        assert not any(cloud.objects.values())  # a preview creates nothing
    else:
        assert run.outputs["addresses"] == ["172.24.4.100", "172.24.4.101", "172.24.4.102"]
        assert set(run.outputs["zones"]["az1"]) == ZONE_OUTPUTS
        assert run.outputs["zones"]["az1"]["memberIds"]["6443"].keys() == {"cp-0"}


R = "ha-endpoint:endpoint"
BAD = {  # the invalid cases, through the whole program: the exact message the user reads (no traceback)
    "unknown key": (lambda raw: raw.update(flaotingNetwork="public"), [
        f"{R}.flaotingNetwork: flaotingNetwork is not a setting here; did you mean floatingNetwork? Fix its spelling "
        "or remove it (the settings here: name, backend, loadBalancerProvider, floatingNetwork, allowedCidrs, zones, "
        "listeners, members, memberSources, memberPlacement, dns, readiness, tags)"]),
    "one zone": (lambda raw: [raw["zones"].pop("az2"), raw["zones"].pop("az3"), raw.update(members=raw["members"][:1])],
                 [f"{R}.zones: 1 zone(s) given (az1); an HA endpoint needs at least 2: add another availability zone "
                  "and its subnet"]),
    "member in unknown zone": (lambda raw: raw["members"][0].update(az="az9"), [
        f"{R}.members[0].az: member cp-0 is in zone 'az9', which is not configured; use one of az1, az2, az3, or "
        "add 'az9' under zones with its subnet",
        f"{R}.zones.az1: zone az1 has no members, so its load balancer would serve nothing under memberPlacement "
        "own-zone; add a member with az: az1, remove the zone, or set memberPlacement: all-zones"]),
    "port out of range": (lambda raw: raw["listeners"][0].update(port=70000), [
        f"{R}.listeners[0].port: port is 70000, above the most allowed, 65535; give a value from 1 to 65535, e.g. "
        "port: 6443"]),
    "ovn with https monitor": (lambda raw: raw.update(loadBalancerProvider="ovn"), [
        f"{R}.listeners[0].monitor.type: the ovn provider has no HTTPS health monitors; use one of TCP, "
        "UDP-CONNECT, SCTP"]),
    "ttl out of range": (lambda raw: raw["dns"].update(ttl=0), [
        f"{R}.dns.ttl: ttl is 0, below the least allowed, 1; give a value from 1 to 86400, e.g. ttl: 30"]),
    "byo ip not ipv4": (lambda raw: raw["zones"]["az3"].update(floatingIp="fe80::1"), [
        f"{R}.zones.az3.floatingIp: 'fe80::1' is not an IPv4 address; give the address of an existing floating IP"]),
    "unknown backend": (lambda raw: raw.update(backend="haproxy"), [
        f"{R}.backend: no backend is registered as 'haproxy' (registered: keepalived, octavia); set backend to one of "
        "them, or leave it out for the default"]),
}


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_config_raises_config_error_and_registers_nothing(case, preview):
    change, expected = BAD[case]
    raw = amphora_endpoint()
    change(raw)
    cloud = FakeCloud.dev()
    with pytest.raises(ConfigError) as caught:
        run_stack(cloud, stack_config(raw), preview=preview)
    assert isinstance(caught.value, pulumi.RunError)  # the engine prints the message alone, no traceback
    assert str(caught.value).splitlines() == [
        f"invalid endpoint configuration ({len(expected)} problem{'s' if len(expected) > 1 else ''}):",
        *(f"  - {line}" for line in expected)]
    assert cloud.registrations == []


CLOUD_BAD = {
    "unknown subnet": (lambda raw: raw["zones"]["az2"].update(subnet="cp-az9"), CloudLookupError,
                       "ha-endpoint:endpoint.zones.az2.subnet: subnet 'cp-az9' was not found"),
    "unknown floating network": (lambda raw: raw.update(floatingNetwork="outside"), CloudLookupError,
                                 "ha-endpoint:endpoint.floatingNetwork: external network 'outside' was not found"),
    "unknown dns zone": (lambda raw: raw["dns"].update(dnsZone="nowhere.test."), CloudLookupError,
                         "ha-endpoint:endpoint.dns.dnsZone: DNS zone 'nowhere.test.' was not found"),
    "unknown floating ip": (lambda raw: raw["zones"]["az1"].update(floatingIp="172.24.4.77"), CloudLookupError,
                            "ha-endpoint:endpoint.zones.az1.floatingIp: floating IP 172.24.4.77 was not found"),
    "address outside subnet": (lambda raw: raw["members"][1].update(address="10.10.1.20"), ConfigError,
                               "ha-endpoint:endpoint.members[1].address: address 10.10.1.20 of member cp-1 is "
                               "outside its subnet cp-az2 (10.10.2.0/24)"),
    "unreachable member subnet": (lambda raw: raw["members"][1].update(address="10.99.0.5", subnet="island-sub"),
                                  ConfigError, "ha-endpoint:endpoint.members[1].subnet: member cp-1 on subnet "
                                  "island-sub (10.99.0.0/24) is not reachable from zone az2's load balancer"),
}


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
@pytest.mark.parametrize("case", sorted(CLOUD_BAD))
def test_names_the_cloud_does_not_know_fail_before_anything_is_registered(case, preview):
    change, error, message = CLOUD_BAD[case]
    raw = amphora_endpoint()
    change(raw)
    cloud = FakeCloud.dev()
    with pytest.raises(error) as caught:
        run_stack(cloud, stack_config(raw), preview=preview)
    assert message in str(caught.value)
    assert cloud.registrations == []


def test_the_fake_cloud_refuses_an_exhausted_floating_ip_pool():
    cloud = FakeCloud.topology(fip_count=2)
    with pytest.raises(CloudError, match="no more IP addresses available"):
        run_component(amphora_endpoint(), cloud, preview=False)


def test_the_fake_cloud_refuses_a_load_balancer_in_an_unknown_az():
    """The component asks Octavia's AZs before registering (ha_endpoint.backends.octavia.checks); the fake cloud refuses a
    raw load balancer there too."""
    import pulumi_openstack as openstack

    from tests.mocks import run_program

    cloud = FakeCloud.dev()
    cloud.azs.discard("az3")
    with pytest.raises(CloudLookupError, match="Octavia has no availability zone 'az3'"):
        run_component(amphora_endpoint(), cloud, preview=True)
    with pytest.raises(CloudError, match="availability zone 'az3' does not exist"):
        run_program(lambda: openstack.loadbalancer.LoadBalancer("stray", availability_zone="az3",
                                                                vip_subnet_id=cloud.subnet_id("cp-az3")),
                    cloud, preview=True)


def test_the_fake_cloud_refuses_a_member_outside_its_subnet():
    """The component checks this before registering; the fake cloud refuses it too (a raw Member)."""
    import pulumi_openstack as openstack

    from tests.mocks import run_program

    cloud = FakeCloud.dev()
    with pytest.raises(CloudError, match="is not in subnet cp-az1"):
        run_program(lambda: openstack.loadbalancer.Member(
            "stray", pool_id="p", address="10.10.2.10", protocol_port=1, subnet_id=cloud.subnet_id("cp-az1")),
            cloud, preview=True)


def test_a_lookup_with_more_than_twenty_problems_lists_twenty_and_says_how_many_more():
    """Like invalid configuration: at most 20 problems are listed, then "and N more"; every one stays in problems."""
    raw = amphora_endpoint()
    raw["members"] = [{**raw["members"][zone], "name": f"cp-{zone}-{n}", "address": f"10.10.{zone + 1}.{10 + n}",
                       "port": f"00000000-0000-4000-8000-{zone:06d}{n:06d}"} for zone in (0, 1) for n in range(11)]
    raw["zones"] = {az: raw["zones"][az] for az in ("az1", "az2")}
    cloud = FakeCloud.dev()
    with pytest.raises(CloudLookupError) as caught:
        run_stack(cloud, stack_config(raw), preview=True)
    lines = str(caught.value).splitlines()
    assert lines[0] == "cloud lookup failed (22 problems):"
    assert len(lines) == 22 and lines[-1].startswith("  ... and 2 more")
    assert len(caught.value.problems) == 22
    assert cloud.registrations == []

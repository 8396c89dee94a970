"""HaEndpoint against the fake cloud: what a user of the endpoint would notice if it were built wrong."""

from __future__ import annotations

import functools
import ipaddress

import pytest

from pydantic.alias_generators import to_camel

from ha_endpoint.core import contract
from ha_endpoint.core.outputs import ZoneOutputs
from tests.mocks import FakeCloud, run_component
from tests.mocks.configs import byo_endpoint, amphora_endpoint, internal_endpoint

MODES = [pytest.param(True, id="preview"), pytest.param(False, id="up")]


@functools.lru_cache(maxsize=None)
def dev_run(preview: bool):
    """The amphora shape built on a fresh dev cloud, once per worker for each mode: read, never changed, by the tests
    that only look at what it registered and exported (a test that changes the cloud or the configuration builds its
    own)."""
    return run_component(amphora_endpoint(), FakeCloud.dev(), preview=preview)


def zone_of_lb(cloud: FakeCloud, lb_id: str) -> str:
    return cloud.kind(contract.LOADBALANCER_TYPE)[lb_id]["availabilityZone"]


def zone_of_pool(cloud: FakeCloud, pool_id: str) -> str:
    listener = cloud.kind(contract.LISTENER_TYPE)[cloud.kind(contract.POOL_TYPE)[pool_id]["listenerId"]]
    return zone_of_lb(cloud, listener["loadbalancerId"])


@pytest.mark.parametrize("preview", MODES)
def test_each_zone_gets_one_load_balancer_in_its_az_on_its_subnet(preview):
    cloud = FakeCloud.dev()
    run = run_component(amphora_endpoint(), cloud, preview=preview)
    lbs = run.of_type(contract.LOADBALANCER_TYPE)
    assert sorted(lb["name"] for lb in lbs) == [contract.loadbalancer_name("k8s-api", az)
                                                for az in ("az1", "az2", "az3")]
    for lb in lbs:
        az = lb["inputs"]["availabilityZone"]
        assert lb["name"] == contract.loadbalancer_name("k8s-api", az)
        assert lb["inputs"]["vipSubnetId"] == cloud.subnet_id(f"cp-{az}")
        assert lb["inputs"]["loadbalancerProvider"] == "amphora"
        if not preview:
            subnet = cloud.subnets[cloud.subnet_id(f"cp-{az}")]
            assert ipaddress.ip_address(lb["state"]["vipAddress"]) in subnet.net


def test_vip_addresses_and_outputs_per_zone_come_from_each_zones_subnet():
    run = dev_run(preview=False)
    zones = run.outputs["zones"]
    assert sorted(zones) == ["az1", "az2", "az3"]
    for az, zone in zones.items():
        assert ipaddress.ip_address(zone["vipAddress"]) in ipaddress.ip_network(f"10.10.{az[-1]}.0/24")
        assert zone["vipPortId"] and zone["loadbalancerId"]
        assert sorted(zone["poolIds"]) == ["22623", "6443"]
        assert zone["ready"] is True and zone["published"] is True
        typed = {to_camel(key) for key in ZoneOutputs.__annotations__}  # the schema's type (test_packaging.py)
        assert set(zone) <= typed, f"keys a typed SDK (Go, C#, Java) would drop: {sorted(set(zone) - typed)}"
    assert run.outputs["ports"] == [6443, 22623]
    assert run.outputs["fqdn"] == "api.example.test."


def test_members_stay_in_their_own_zone_under_own_zone_placement():
    cloud = FakeCloud.dev()
    run = run_component(amphora_endpoint(), cloud, preview=False)
    home = {m["address"]: m["az"] for m in amphora_endpoint()["members"]}
    members = run.of_type(contract.MEMBER_TYPE)
    assert len(members) == 3 * 2  # one per member and listener
    for member in members:
        assert zone_of_pool(cloud, member["inputs"]["poolId"]) == home[member["inputs"]["address"]]
        assert member["inputs"]["subnetId"] == cloud.subnet_id(f"cp-{home[member['inputs']['address']]}")


def test_all_zones_placement_puts_every_member_in_every_zone_with_its_own_subnet():
    cloud = FakeCloud.dev()
    raw = amphora_endpoint()
    raw["memberPlacement"] = "all-zones"
    run = run_component(raw, cloud, preview=False)
    placed = {(zone_of_pool(cloud, m["inputs"]["poolId"]), m["inputs"]["address"], m["inputs"]["protocolPort"])
              for m in run.of_type(contract.MEMBER_TYPE)}
    home = {m["address"]: m["az"] for m in raw["members"]}
    assert placed == {(az, address, port) for az in ("az1", "az2", "az3") for address in home for port in (6443, 22623)}
    for member in run.of_type(contract.MEMBER_TYPE):
        assert member["inputs"]["subnetId"] == cloud.subnet_id(f"cp-{home[member['inputs']['address']]}")


def test_listener_pool_and_monitor_follow_the_config():
    cloud = FakeCloud.dev()
    run = run_component(amphora_endpoint(), cloud, preview=False)
    listener = run.named(contract.listener_name("k8s-api", "az1", 6443))["inputs"]
    assert (listener["protocol"], listener["protocolPort"], listener["allowedCidrs"]) == ("TCP", 6443, ["0.0.0.0/0"])
    assert run.named(contract.pool_name("k8s-api", "az1", 6443))["inputs"]["lbMethod"] == "ROUND_ROBIN"
    monitor = run.named(contract.monitor_name("k8s-api", "az1", 6443))["inputs"]
    assert (monitor["type"], monitor["urlPath"], monitor["delay"], monitor["timeout"], monitor["maxRetriesDown"]) == \
        ("HTTPS", "/readyz", 5, 3, 3)
    assert "urlPath" not in run.named(contract.monitor_name("k8s-api", "az1", 22623))["inputs"]


def test_ovn_pools_use_source_ip_port():
    raw = amphora_endpoint()
    raw["loadBalancerProvider"] = "ovn"
    raw["listeners"][0]["monitor"] = {"type": "TCP"}
    run = run_component(raw, FakeCloud.dev(), preview=False)
    assert {p["inputs"]["lbMethod"] for p in run.of_type(contract.POOL_TYPE)} == {"SOURCE_IP_PORT"}
    assert {lb["inputs"]["loadbalancerProvider"] for lb in run.of_type(contract.LOADBALANCER_TYPE)} == {"ovn"}
    # Octavia answers 501 "This provider does not support validating availability zones" to an ovn LB with one
    assert [lb["inputs"].get("availabilityZone") for lb in run.of_type(contract.LOADBALANCER_TYPE)] == [None] * 3
    assert {tuple(listener["inputs"].get("allowedCidrs") or ()) for listener in run.of_type(contract.LISTENER_TYPE)} \
        == {()}


@pytest.mark.parametrize("preview", MODES)
def test_a_brought_floating_ip_is_associated_never_created(preview):
    cloud = FakeCloud.dev()
    byo = next(fip for fip in cloud.floating_ips.values() if fip.brought)
    run = run_component(byo_endpoint(), cloud, preview=preview)
    fips = run.of_type(contract.FLOATING_IP_TYPE)
    assert sorted(f["name"] for f in fips) == [contract.floating_ip_name("k8s-api", az) for az in ("az1", "az2")]
    association = run.named(contract.floating_ip_association_name("k8s-api", "az3"))
    assert association["inputs"]["floatingIp"] == "172.24.4.50"
    if not preview:
        az3_lb = run.named(contract.loadbalancer_name("k8s-api", "az3"))
        assert cloud.floating_ips[byo.id].port_id == az3_lb["state"]["vipPortId"]
        assert run.outputs["zones"]["az3"]["floatingIp"] == "172.24.4.50"
        assert "172.24.4.50" in run.outputs["addresses"]


def test_destroying_the_endpoint_keeps_the_brought_floating_ip_and_leaves_nothing_else():
    cloud = FakeCloud.dev()
    byo = next(fip for fip in cloud.floating_ips.values() if fip.brought)
    run_component(byo_endpoint(), cloud, preview=False)
    cloud.destroy()
    assert list(cloud.floating_ips) == [byo.id] and cloud.floating_ips[byo.id].port_id is None
    assert all(not objects for objects in cloud.objects.values())
    assert not [port for port in cloud.ports.values() if port["device_owner"] == "Octavia"]


@pytest.mark.parametrize("make", [amphora_endpoint, byo_endpoint, internal_endpoint])
def test_dns_records_are_exactly_the_zones_published_addresses(make):
    run = run_component(make(), FakeCloud.dev(), preview=False)
    zones = run.outputs["zones"]
    expected = sorted((zone["floatingIp"] or zone["vipAddress"]) for zone in zones.values())
    record = run.named(contract.recordset_name("k8s-api"))["inputs"]
    assert (record["name"], record["type"], record["ttl"]) == ("api.example.test.", "A", 30)
    assert sorted(record["records"]) == expected == run.outputs["addresses"]
    for az, zone in zones.items():
        per_zone = run.named(contract.zone_recordset_name("k8s-api", az))["inputs"]
        assert per_zone["name"] == f"api-{az}.example.test." and per_zone["records"] == [zone["floatingIp"] or
                                                                                          zone["vipAddress"]]


def test_dns_waits_for_each_zones_readiness_gate_when_ready():
    run = dev_run(preview=False)
    gates = {r["name"]: r for r in run.of_type(contract.READINESS_TYPE) if "pools" in r["inputs"]}  # not drains
    assert sorted(gates) == [contract.readiness_name("k8s-api", az) for az in ("az1", "az2", "az3")]
    record = run.named(contract.recordset_name("k8s-api"))
    assert {gate["urn"] for gate in gates.values()} <= set(record["dependencies"])
    for az in ("az1", "az2", "az3"):
        gate = gates[contract.readiness_name("k8s-api", az)]["inputs"]
        assert gate["require"] == "online"
        member_ids = {m["id"] for m in run.of_type(contract.MEMBER_TYPE) if f"-{az}-" in m["name"]}
        assert {i for pool in gate["pools"].values() for i in pool["member_ids"]} == member_ids
        assert all(pool["monitored"] for pool in gate["pools"].values())


def test_bootstrap_publishes_on_load_balancer_and_requires_provisioned_only():
    raw = amphora_endpoint()
    raw["dns"]["publish"] = "bootstrap"
    run = run_component(raw, FakeCloud.dev(), preview=False)
    gates = [r for r in run.of_type(contract.READINESS_TYPE) if "pools" in r["inputs"]]  # not the drains
    assert len(gates) == 3 and {g["inputs"]["require"] for g in gates} == {"provisioned"}
    record = run.named(contract.recordset_name("k8s-api"))
    assert not {g["urn"] for g in gates} & set(record["dependencies"])
    assert {lb["urn"] for lb in run.of_type(contract.LOADBALANCER_TYPE)} <= set(record["dependencies"])
    assert len(run.outputs["addresses"]) == 3


def test_security_groups_admit_clients_on_listeners_and_load_balancers_on_member_and_monitor_ports():
    cloud = FakeCloud.dev()
    raw = amphora_endpoint()
    raw["listeners"][1]["memberPort"] = 32623
    raw["listeners"][1]["monitor"]["port"] = 10256
    raw["allowedCidrs"] = ["192.0.2.0/24", "198.51.100.0/24"]
    run = run_component(raw, cloud, preview=False)
    rules = run.of_type(contract.SECGROUP_RULE_TYPE)
    vip_sg = run.named(contract.vip_secgroup_name("k8s-api"))["id"]
    members_sg = run.named(contract.members_secgroup_name("k8s-api"))["id"]
    vip = {(r["inputs"]["remoteIpPrefix"], r["inputs"]["portRangeMin"]) for r in rules
           if r["inputs"]["securityGroupId"] == vip_sg}
    assert vip == {(cidr, port) for cidr in raw["allowedCidrs"] for port in (6443, 22623)}
    members = {(r["inputs"]["remoteIpPrefix"], r["inputs"]["portRangeMin"]) for r in rules
               if r["inputs"]["securityGroupId"] == members_sg}
    assert members == {(f"10.10.{n}.0/24", port) for n in (1, 2, 3) for port in (6443, 32623, 10256)}
    assert all(r["inputs"]["direction"] == "ingress" for r in rules)
    for lb in run.of_type(contract.LOADBALANCER_TYPE):
        assert vip_sg in cloud.ports[lb["state"]["vipPortId"]]["security_groups"]
    assert run.outputs["membersSecurityGroupId"] == members_sg
    members_by_member = {r["name"]: r for r in run.of_type(contract.MEMBER_TYPE)}
    assert members_by_member[contract.member_name("k8s-api", "az1", 22623, "10.10.1.10")]["inputs"]["monitorPort"] == 10256


def test_member_ports_given_get_the_members_security_group():
    cloud = FakeCloud.dev()
    port = cloud.add_port(cloud.network_id("cp"), [(cloud.subnet_id("cp-az1"), "10.10.1.10")], "compute:az1", "vm")
    raw = amphora_endpoint()
    raw["members"][0]["port"] = port
    run = run_component(raw, cloud, preview=False)
    association = run.named(contract.member_port_secgroup_name("k8s-api", port))["inputs"]
    assert association["portId"] == port and association["enforce"] is False
    assert run.named(contract.members_secgroup_name("k8s-api"))["id"] in cloud.ports[port]["security_groups"]
    # registered after, deregistered before its port admits the load balancer (Pulumi deletes dependents first):
    # a rotation under ovn otherwise detached the old ports' group while OVN still sent them clients
    guard = run.named(contract.member_port_secgroup_name("k8s-api", port))["urn"]
    cp0 = [m for m in run.of_type(contract.MEMBER_TYPE) if m["inputs"]["address"] == "10.10.1.10"]
    assert cp0 and all(guard in member["dependencies"] for member in cp0)
    assert not any(guard in member["dependencies"] for member in run.of_type(contract.MEMBER_TYPE)
                   if member["inputs"]["address"] != "10.10.1.10")
    raw["members"][0]["name"] = "cp-0-renamed"
    again = FakeCloud.dev()
    assert again.add_port(again.network_id("cp"), [(again.subnet_id("cp-az1"), "10.10.1.10")], "compute:az1",
                          "vm") == port
    renamed = run_component(raw, again, preview=True)
    assert renamed.named(contract.member_port_secgroup_name("k8s-api", port))["inputs"]["portId"] == port


@pytest.mark.parametrize("preview", MODES)
def test_every_child_is_parented_to_the_endpoint(preview):
    run = dev_run(preview=preview)
    endpoint = run.of_type(contract.ENDPOINT_TYPE)
    assert len(endpoint) == 1 and endpoint[0]["parent"].endswith("::pulumi:pulumi:Stack::ha-endpoint-dev")
    for registration in run.registrations[1:]:
        assert registration["urn"].split("::")[2].startswith(contract.ENDPOINT_TYPE + "$"), registration["urn"]
    zone_children = [r for r in run.registrations if contract.ZONE_TYPE + "$" in r["urn"]]
    assert {r["type"] for r in zone_children} >= {contract.LOADBALANCER_TYPE, contract.MEMBER_TYPE,
                                                  contract.FLOATING_IP_TYPE, contract.READINESS_TYPE}


def test_preview_registers_what_up_creates_and_leaves_cloud_values_unknown():
    preview = dev_run(preview=True)
    up = dev_run(preview=False)
    assert preview.urns == up.urns
    assert preview.outputs["fqdn"] == "api.example.test." and preview.outputs["ports"] == [6443, 22623]
    assert preview.outputs["addresses"] is None and preview.outputs["zones"] is None


def test_the_component_records_the_cloud_facts_for_the_policy_pack_once():
    cloud = FakeCloud.dev()
    run = run_component(amphora_endpoint(), cloud, preview=True)
    endpoint = run.of_type(contract.ENDPOINT_TYPE)[0]
    assert endpoint["inputs"] == {"name": "k8s-api"}  # recorded once: in the outputs, where stack policies read them
    facts = endpoint["outputs"]["facts"]
    az1 = facts["zones"]["az1"]
    vip = facts["subnets"][az1["vipSubnetId"]]
    assert (az1["vipSubnetId"], vip["cidr"], vip["networkId"]) == \
        (cloud.subnet_id("cp-az1"), "10.10.1.0/24", cloud.network_id("cp"))
    assert vip["routerIds"] == [cloud.router_id] and az1["members"] == ["cp-0"]
    cp1 = facts["members"]["cp-1"]
    assert (cp1["az"], cp1["address"], cp1["subnetId"], facts["subnets"][cp1["subnetId"]]["routerIds"]) == \
        ("az2", "10.10.2.10", cloud.subnet_id("cp-az2"), [cloud.router_id])
    assert [(listener["port"], listener["memberPort"], listener["monitor"]["port"])
            for listener in facts["listeners"]] == [(6443, 6443, 6443), (22623, 22623, 22623)]
    assert facts["publish"] == "when-ready" and facts["internal"] is False


@pytest.mark.parametrize("preview", MODES)
def test_an_explicit_provider_serves_the_lookups_and_every_child(preview):
    import pulumi
    import pulumi_openstack as openstack

    from ha_endpoint import HaEndpoint
    from tests.mocks import run_program

    cloud = FakeCloud.dev()

    def program():
        other = openstack.Provider("other-cloud", cloud="elsewhere")
        return HaEndpoint("k8s-api", amphora_endpoint(), opts=pulumi.ResourceOptions(providers={"openstack": other}))

    run = run_program(program, cloud, preview=preview, outputs=lambda _: {})
    assert cloud.calls and all(provider.startswith("urn:pulumi:dev::ha-endpoint::pulumi:providers:openstack::"
                                                   "other-cloud::") for _, _, provider in cloud.calls)
    children = [r for r in run.registrations if r["custom"] and r["type"].startswith("openstack:")]
    assert children and all("::other-cloud::" in (r["provider"] or "") for r in children)


def _gates_and_drains(run):
    return run.of_type(contract.READINESS_TYPE) + run.of_type(contract.DRAIN_TYPE)


@pytest.mark.parametrize("preview", MODES)
def test_gates_and_drains_poll_the_explicit_providers_cloud_and_region(preview):
    """Issue 9: with providers=[openstack.Provider(cloud=..., region=...)] the waits polled OS_CLOUD's default region."""
    import pulumi
    import pulumi_openstack as openstack

    from ha_endpoint import HaEndpoint
    from tests.mocks import run_program

    def program():
        other = openstack.Provider("other-cloud", cloud="elsewhere", region="RegionTwo")
        return HaEndpoint("k8s-api", amphora_endpoint(), opts=pulumi.ResourceOptions(providers=[other]))

    run = run_program(program, FakeCloud.dev(), preview=preview, outputs=lambda _: {})
    polled = {(r["inputs"]["cloud"], r["inputs"]["region"], r["inputs"]["cloud_source"]) for r in _gates_and_drains(run)}
    assert polled == {("elsewhere", "RegionTwo", "provider")}
    # and through the member client of the zones' backend, which the gates and drains name (issue 47)
    assert {r["inputs"]["backend"] for r in _gates_and_drains(run)} == {"octavia"}


def test_gates_and_drains_of_the_default_provider_poll_the_stacks_cloud(monkeypatch):
    monkeypatch.delenv("OS_CLOUD", raising=False)
    run = run_component(amphora_endpoint(), FakeCloud.dev(), preview=True)
    polled = {(r["inputs"].get("cloud"), r["inputs"].get("region"), r["inputs"]["cloud_source"])
              for r in _gates_and_drains(run)}
    assert polled == {(None, None, "stack")}  # nothing names a cloud: the provider's OS_* variables, at run time


@pytest.mark.parametrize("config, environment, expected", [
    ({"openstack:cloud": "stackcloud", "openstack:region": "RegionTwo"}, {"OS_CLOUD": "othercloud"},
     ("stackcloud", "RegionTwo")),
    ({}, {"OS_CLOUD": "envcloud", "OS_REGION_NAME": "RegionOne"}, ("envcloud", "RegionOne")),
], ids=["stack config", "environment"])
def test_a_programs_endpoint_polls_and_asks_the_cloud_its_default_provider_uses(monkeypatch, config, environment,
                                                                                 expected):
    """A consumer's program passes no cloud= (issue 29, finding 5): the component takes the default provider's own
    choice (openstack:cloud/region, else OS_CLOUD/OS_REGION_NAME), so its gates poll that cloud and the preview asks
    it, with no warning."""
    from ha_endpoint import HaEndpoint
    from tests.mocks import run_program

    for key in ("OS_CLOUD", "OS_REGION_NAME"):
        monkeypatch.delenv(key, raising=False)
    for key, value in environment.items():
        monkeypatch.setenv(key, value)
    warned: list[str] = []
    monkeypatch.setattr("pulumi.log.warn", lambda message, *args, **kwargs: warned.append(message))
    cloud = FakeCloud.dev()
    run = run_program(lambda: HaEndpoint("k8s-api", amphora_endpoint()), cloud, preview=True, config=config,
                      outputs=lambda _: {})
    polled = {(r["inputs"].get("cloud"), r["inputs"].get("region")) for r in _gates_and_drains(run)}
    assert polled == {expected}
    assert not [message for message in warned if "could not be checked" in message]


def test_readiness_cloud_overrides_the_provider_and_a_lone_region_is_refused():
    import pulumi
    import pulumi_openstack as openstack

    from ha_endpoint import ConfigError, HaEndpoint
    from tests.mocks import run_program

    raw = amphora_endpoint()
    raw["readiness"] = {"cloud": "mirror", "region": "RegionThree"}

    def program():
        other = openstack.Provider("other-cloud", cloud="elsewhere")
        return HaEndpoint("k8s-api", raw, opts=pulumi.ResourceOptions(providers=[other]))

    run = run_program(program, FakeCloud.dev(), preview=True, outputs=lambda _: {})
    assert {(r["inputs"]["cloud"], r["inputs"]["region"], r["inputs"]["cloud_source"])
            for r in _gates_and_drains(run)} == {("mirror", "RegionThree", "readiness")}

    raw["readiness"] = {"region": "RegionThree"}
    with pytest.raises(ConfigError, match=r"readiness\.region: readiness\.region needs readiness\.cloud too"):
        run_program(program, FakeCloud.dev(), preview=True, outputs=lambda _: {})


def test_each_zones_octavia_writes_follow_one_another_and_zones_stay_independent():
    """Octavia refuses a write to a load balancer while another is in progress (409): a zone's listeners, pools,
    monitors and members form one chain, each depending on the one before, so the engine never sends two at once
    to one load balancer; the zones' chains are separate, so the zones are still built in parallel."""
    run = dev_run(preview=True)
    octavia = (contract.LISTENER_TYPE, contract.POOL_TYPE, contract.MONITOR_TYPE, contract.MEMBER_TYPE)
    writes = [r for r in run.registrations if r["type"] in octavia]
    for az in ("az1", "az2", "az3"):
        lb = run.named(contract.loadbalancer_name("k8s-api", az))
        chain = [r for r in writes if r["name"].startswith(f"k8s-api-{az}-")]
        assert len(chain) == 2 * (1 + 1 + 1 + 1)  # per listener: listener, pool, monitor, one member of this zone
        assert lb["urn"] in chain[0]["dependencies"]
        for before, after in zip(chain, chain[1:]):
            assert before["urn"] in after["dependencies"], (before["name"], after["name"])
        others = {r["urn"] for r in writes if not r["name"].startswith(f"k8s-api-{az}-")}
        assert not any(others & set(r["dependencies"]) for r in chain)


# -- listener timeouts (issue 46, finding 5) -----------------------------------------------------------------------

TIMEOUT_INPUTS = ("timeoutClientData", "timeoutMemberData", "timeoutMemberConnect", "timeoutTcpInspect")


def _timeouts(run, port: int) -> dict:
    inputs = run.named(contract.listener_name("k8s-api", "az1", port))["inputs"]
    return {key: inputs[key] for key in TIMEOUT_INPUTS if key in inputs}


def test_amphora_listeners_keep_idle_api_connections_for_an_hour():
    """Octavia's default (50 s) cut idle kubectl watch, logs -f and exec sessions through an amphora; the connect and
    inspect timeouts stay the cloud's."""
    run = dev_run(preview=False)
    for port in (6443, 22623):
        assert _timeouts(run, port) == {"timeoutClientData": 3600000, "timeoutMemberData": 3600000}


def test_configured_listener_timeouts_reach_the_listener():
    raw = amphora_endpoint()
    raw["listeners"][0].update(timeoutClientData=7200000, timeoutMemberData=5400000, timeoutMemberConnect=3000,
                               timeoutTcpInspect=0)
    run = run_component(raw, FakeCloud.dev(), preview=True)
    assert _timeouts(run, 6443) == {"timeoutClientData": 7200000, "timeoutMemberData": 5400000,
                                    "timeoutMemberConnect": 3000, "timeoutTcpInspect": 0}
    assert _timeouts(run, 22623) == {"timeoutClientData": 3600000, "timeoutMemberData": 3600000}


def test_no_timeouts_are_sent_where_nothing_applies_them():
    """ovn-octavia-provider ignores listener timeouts, and an amphora serves UDP with LVS: nothing is sent there."""
    raw = amphora_endpoint()
    raw["loadBalancerProvider"] = "ovn"
    raw["listeners"][0]["monitor"] = {"type": "TCP"}
    run = run_component(raw, FakeCloud.dev(), preview=True)
    assert [_timeouts(run, port) for port in (6443, 22623)] == [{}, {}]
    raw = amphora_endpoint()
    raw["listeners"][1] = {"port": 53, "protocol": "UDP", "monitor": {"type": "UDP-CONNECT"}}
    run = run_component(raw, FakeCloud.dev(), preview=True)
    assert _timeouts(run, 53) == {}

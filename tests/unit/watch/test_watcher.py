"""The watcher against fakes of Octavia and Designate (components/ha_endpoint/watch): one zone's health, the record
it may write, the loop's log and writes."""

from __future__ import annotations

import json
import threading
from types import SimpleNamespace

import pytest
from openstack.exceptions import NotFoundException

from ha_endpoint.backends import REGISTRY
from ha_endpoint.backends.watching import status_source, watched_outputs, zones_of
from ha_endpoint.cloud.errors import TransientFetchError
from ha_endpoint.core.identity import StackIdentity
from ha_endpoint.core.outputs import ZoneOutputs
from ha_endpoint.gates.model import LoadBalancerStatus, MemberStatus
from ha_endpoint.watch.decide import Thresholds
from ha_endpoint.watch.observe import ZoneStatus, zone_health
from ha_endpoint.watch.records import EndpointRecord, NotTheEndpoints, Owner, owner_of
from ha_endpoint.watch.watcher import Watcher

DEV = StackIdentity("ha-endpoint", "dev")
ZONES = {"az1": "172.24.4.11", "az2": "172.24.4.12", "az3": "172.24.4.13"}


class Octavia:
    """Load balancer lb-<az> with pool pool-<az> holding one member per zone, read as one status tree; ``down``
    zones' members are ERROR, ``gone`` zones' load balancers are DELETED (as the backend's source reads Octavia's 404:
    tests/unit/gates/test_cloud.py), ``flaky`` raises a transient error."""

    def __init__(self):
        self.down, self.gone, self.flaky = set(), set(), False

    def fetch_zone(self, out):
        lb_id = out.loadbalancer_id
        zone = lb_id.removeprefix("lb-")
        if self.flaky:
            raise TransientFetchError("octavia answered 503")
        if zone in self.gone:
            return ZoneStatus(LoadBalancerStatus(lb_id, "DELETED", "OFFLINE"), out.pool_ids, {})
        return ZoneStatus(LoadBalancerStatus(lb_id, "ACTIVE", "ONLINE"), out.pool_ids, {f"pool-{zone}": [
            MemberStatus(f"m-{zone}", "ACTIVE", "ERROR" if zone in self.down else "ONLINE")]})


class Record:
    fqdn = "api.example.test."

    def __init__(self, addresses):
        self.held, self.writes, self.fail = list(addresses), [], None

    def addresses(self):
        return sorted(self.held)

    def write(self, addresses):
        if self.fail:
            raise self.fail
        self.writes.append(list(addresses))
        self.held = list(addresses)


def zones():
    return {zone: ZoneOutputs(loadbalancer_id=f"lb-{zone}", pool_ids={"6443": f"pool-{zone}"}, floating_ip=address)
            for zone, address in ZONES.items()}


def watcher(octavia, record, reach=None, **kwargs):
    lines = []
    return Watcher(zones(), octavia, record, Thresholds(3, 2), reach, log=lines.append, **kwargs), lines


def test_a_zone_whose_members_fail_leaves_after_three_polls_and_returns_after_two():
    octavia, record = Octavia(), Record(ZONES.values())
    watch, lines = watcher(octavia, record)
    octavia.down.add("az2")
    for _ in range(3):
        watch.poll()
    assert record.writes == [["172.24.4.11", "172.24.4.13"]]
    octavia.down.clear()
    for _ in range(2):
        watch.poll()
    assert record.writes[-1] == sorted(ZONES.values())
    assert [line for line in lines if line.startswith(("removing", "restoring"))] == [
        "removing zone az2: no ONLINE member in pool 6443 (ACTIVE/ERROR)",
        "restoring zone az2: members ONLINE 1/1"]


def test_a_gone_load_balancer_or_a_dark_address_counts_as_unhealthy():
    octavia = Octavia()
    octavia.gone.add("az1")
    assert zone_health(octavia, zones()["az1"], None).reason == "load balancer lb-az1 is gone"
    dark = zone_health(Octavia(), zones()["az3"],
                       lambda address, port: f"{address}:{port} does not accept a connection")
    assert (dark.healthy, dark.reason) == (False, "172.24.4.13:6443 does not accept a connection")
    assert zone_health(Octavia(), zones()["az3"], lambda *_: None).reason == \
        "members ONLINE 1/1, 172.24.4.13 accepts connections"


def test_an_octavia_outage_gives_no_verdict_and_moves_nothing():
    octavia, record = Octavia(), Record(ZONES.values())
    watch, _ = watcher(octavia, record)
    octavia.down.add("az2")
    watch.poll()
    watch.poll()
    octavia.flaky = True
    for _ in range(5):
        watch.poll()
    assert record.writes == [] and watch.streaks["az2"].count == 2


def test_the_last_zone_stays_when_every_zone_is_down():
    octavia, record = Octavia(), Record(ZONES.values())
    watch, lines = watcher(octavia, record)
    octavia.down.update(ZONES)
    for _ in range(4):
        watch.poll()
    assert record.writes == [] and record.held == list(ZONES.values())
    assert any("failing open" in line for line in lines)


def test_a_dry_run_logs_and_writes_nothing():
    octavia, record = Octavia(), Record(ZONES.values())
    watch, lines = watcher(octavia, record, dry_run=True)
    octavia.down.add("az3")
    for _ in range(4):
        watch.poll()
    assert record.writes == []
    assert "would be removing zone az3: no ONLINE member in pool 6443 (ACTIVE/ERROR)" in lines


def test_a_failed_write_is_reported_and_decided_again_at_the_next_poll():
    octavia, record = Octavia(), Record(ZONES.values())
    watch, lines = watcher(octavia, record)
    octavia.down.add("az1")
    record.fail = RuntimeError("designate answered 500")
    for _ in range(3):
        watch.poll()
    assert record.writes == [] and any("writing api.example.test. failed (RuntimeError: designate answered 500)"
                                       in line for line in lines)
    record.fail = None
    watch.poll()
    assert record.writes == [["172.24.4.12", "172.24.4.13"]]


def test_it_starts_from_what_the_record_publishes_and_stops_when_asked():
    octavia, record = Octavia(), Record(["172.24.4.11"])
    watch, lines = watcher(octavia, record)
    assert watch.published == {"az1"}
    stop = threading.Event()
    stop.set()
    watch.run(stop, interval=5)
    assert lines[-1] == "stopped"


# -- whose record --------------------------------------------------------------------------------------------------

def lb(zone, stack=DEV, endpoint="k8s-api"):
    return SimpleNamespace(id=f"lb-{zone}", description=stack.describe("HA endpoint", f"{endpoint}-{zone}-lb"))


def test_the_owner_is_the_one_the_load_balancers_name():
    assert owner_of([(z, lb(z)) for z in ZONES], DEV) == Owner(DEV, "k8s-api")
    with pytest.raises(NotTheEndpoints, match="not ha-endpoint/prod's"):
        owner_of([(z, lb(z)) for z in ZONES], StackIdentity("ha-endpoint", "prod"))
    with pytest.raises(NotTheEndpoints, match="2 owners"):
        owner_of([("az1", lb("az1")), ("az2", lb("az2", endpoint="other"))], None)
    with pytest.raises(NotTheEndpoints, match="carries no endpoint identity"):
        owner_of([("az1", SimpleNamespace(id="lb-az1", description="made by hand"))], None)
    with pytest.raises(NotTheEndpoints, match="none of the zones' load balancers exists"):
        owner_of([], DEV)


def test_a_watcher_started_while_a_zones_load_balancer_is_gone_starts_and_takes_that_zone_out(capsys):
    """The outage the watcher exists for can be under way when it (re)starts (a rescheduled Deployment): az2's load
    balancer deleted out of band answers 404. The owner is proven by the other zones', the gone zone is skipped there
    and found unhealthy by the polls: az2 leaves the record. Nothing proves the owner when no zone's exists."""
    from ha_endpoint.watch.__main__ import existing_load_balancers

    class LoadBalancers:
        def __init__(self, gone):
            self.gone = gone

        def get_load_balancer(self, lb_id):
            if lb_id in self.gone:
                raise NotFoundException(f"No LoadBalancer found for {lb_id}")
            return lb(lb_id.removeprefix("lb-"))

    octavia_backend = REGISTRY["octavia"]
    conn = SimpleNamespace(load_balancer=LoadBalancers({"lb-az2"}))
    assert owner_of(existing_load_balancers(conn, octavia_backend, zones()), DEV) == Owner(DEV, "k8s-api")
    assert "zone az2: load balancer lb-az2 is gone" in capsys.readouterr().out
    octavia = Octavia()
    octavia.gone.add("az2")
    assert not zone_health(octavia, zones()["az2"], None).healthy
    with pytest.raises(NotTheEndpoints, match="none of the zones' load balancers exists"):
        owner_of(existing_load_balancers(SimpleNamespace(load_balancer=LoadBalancers({f"lb-{z}" for z in ZONES})),
                                         octavia_backend, zones()), DEV)


class Designate:
    def __init__(self, description):
        self.record = SimpleNamespace(id="rs-1", type="A", records=["172.24.4.11"], description=description)
        self.updates = []

    def zones(self, name):
        return [SimpleNamespace(id="zone-1", name=name)] if name == "example.test." else []

    def recordsets(self, zone, name):
        return [self.record] if name == "api.example.test." else []

    def update_recordset(self, record, **attrs):
        self.updates.append(attrs)


def test_the_record_is_written_only_when_its_description_is_the_endpoints():
    ours = Designate(DEV.describe("HA endpoint: one A record per ready availability zone", "k8s-api-dns"))
    EndpointRecord(SimpleNamespace(dns=ours), "api.example.test.", Owner(DEV, "k8s-api")).write(["172.24.4.12"])
    assert ours.updates == [{"records": ["172.24.4.12"]}]
    for description in ("made by hand", StackIdentity("ha-endpoint", "prod").describe("x", "k8s-api-dns"),
                        DEV.describe("x", "other-dns")):
        theirs = Designate(description)
        with pytest.raises(NotTheEndpoints, match="never written"):
            EndpointRecord(SimpleNamespace(dns=theirs), "api.example.test.", Owner(DEV, "k8s-api")).write([])
        assert theirs.updates == []


def test_the_outputs_give_each_zone_read_by_its_backend():
    outputs = {"fqdn": "api.example.test.", "zones": {
        "az1": {"loadbalancerId": "lb-az1", "poolIds": {"6443": "pool-az1"}, "floatingIp": "172.24.4.11",
                "vipAddress": "10.10.1.5"},
        "az2": {"loadbalancerId": "lb-az2", "poolIds": {"6443": "pool-az2"}, "floatingIp": None,
                "vipAddress": "10.10.2.5"}}}
    backend, read = zones_of(outputs)
    assert backend.name == "octavia"
    assert {az: (backend.watched.owner_id(zone), zone.pools, zone.address) for az, zone in read.items()} == {
        "az1": ("lb-az1", ((6443, "pool-az1"),), "172.24.4.11"), "az2": ("lb-az2", ((6443, "pool-az2"),), "10.10.2.5")}
    with pytest.raises(Exception, match="the outputs have no zones"):
        zones_of({"zones": {}})
    keepalived_az2 = {**outputs["zones"], "az2": {"vipPortId": "vip-az2", "vipAddress": "10.10.2.5"}}
    with pytest.raises(Exception, match=r"served by 2 backends \(keepalived, octavia\)"):
        zones_of({**outputs, "ports": [6443], "zones": keepalived_az2})


def test_an_octavia_endpoint_is_polled_through_its_backends_member_client_the_one_its_gates_poll():
    """The Octavia backend's watcher names no client of its own (``Watched.status_source`` None): the watcher polls
    through the backend's member client (``Backend.status_source``), reaching the zones' addresses or not."""
    from ha_endpoint.backends.octavia.status import OctaviaStatusSource

    backend, _ = zones_of({"fqdn": "api.example.test.", "zones": {
        "az1": {"loadbalancerId": "lb-az1", "poolIds": {"6443": "pool-az1"}, "floatingIp": "172.24.4.11"}}})
    for reach in (True, False):
        source = status_source(backend, None, "c", "r", reach)
        assert isinstance(source, OctaviaStatusSource) and (source.cloud, source.region) == ("c", "r")


# -- the keepalived backend -------------------------------------------------------------------------------------------

KEEPALIVED_OUTPUTS = {"fqdn": "api.example.test.", "ports": [6443], "zones": {
    zone: {"vipPortId": f"vip-{zone}", "vipAddress": f"10.10.{n}.9", "floatingIp": address, "keepalived": {},
           "vrrpGroupId": f"vrrp-{zone}"} for n, (zone, address) in enumerate(ZONES.items(), start=1)}}


class VipPorts:
    """The keepalived zones' VIP ports as VipStatusSource reports them without a probe: the port's host stays the
    last holder's even when no node holds the VIP any more (measured: docs/keepalived.md)."""

    def fetch_zone(self, out):
        port_id = out.vip_port_id
        return ZoneStatus(LoadBalancerStatus(port_id, "DOWN", "cmp-az1"), {"6443": port_id},
                          {port_id: [MemberStatus(port_id, "ACTIVE", "ONLINE")]})


def test_a_keepalived_zone_whose_nodes_are_all_gone_leaves_dns_by_its_address_not_answering():
    backend, read = zones_of(KEEPALIVED_OUTPUTS)
    assert (backend.name, backend.watched.owner_id(read["az1"]), read["az1"].address) == \
        ("keepalived", "vip-az1", ZONES["az1"])
    dark = {ZONES["az2"]}
    record, lines = Record(ZONES.values()), []
    watch = Watcher(read, VipPorts(), record, Thresholds(3, 2),
                    lambda address, port: f"{address}:{port} does not accept a connection" if address in dark else None,
                    log=lines.append)
    for _ in range(3):
        watch.poll()
    assert record.writes == [[ZONES["az1"], ZONES["az3"]]]
    assert any("zone az2 is stably unhealthy: 172.24.4.12:6443 does not accept a connection" in line for line in lines)


def test_the_owner_of_a_keepalived_endpoint_is_the_one_its_vip_ports_name():
    ports = [(zone, SimpleNamespace(id=f"vip-{zone}", description=DEV.describe("VIP", f"k8s-api-{zone}-vip")))
             for zone in ZONES]
    backend, _ = zones_of(KEEPALIVED_OUTPUTS)
    suffix_of, kind = lambda az: f"-{az}-{backend.watched.owner_suffix}", backend.watched.owner_kind
    assert owner_of(ports, DEV, suffix_of, kind) == Owner(DEV, "k8s-api")
    with pytest.raises(NotTheEndpoints, match="carries no endpoint identity"):
        owner_of(ports, DEV)  # read as load balancers' names, they prove nothing
    with pytest.raises(NotTheEndpoints, match=r"^the VIP ports are stack ha-endpoint/dev's, not ha-endpoint/prod's"):
        owner_of(ports, StackIdentity("ha-endpoint", "prod"), suffix_of, kind)


def test_outputs_with_neither_a_load_balancer_nor_a_vip_port_are_refused_naming_the_zone():
    with pytest.raises(Exception, match="zone az1 of the outputs has neither a load balancer"):
        zones_of({"fqdn": "api.example.test.", "zones": {"az1": {"floatingIp": "172.24.4.11"}}})
    with pytest.raises(Exception, match="the outputs have no ports, which the keepalived backend's zones"):
        zones_of({**KEEPALIVED_OUTPUTS, "ports": []})


def test_a_keepalived_endpoint_is_watched_by_connecting_to_its_zones_addresses_only():
    """Neutron shows a project's user no VIP holder: the VIP port existing counts as held, the connect decides; and
    without the connect there is nothing to judge, so --no-reach is refused with the reason."""
    backend, read = zones_of(KEEPALIVED_OUTPUTS)
    with pytest.raises(Exception, match="--no-reach: a keepalived zone's health is whether its address answers"):
        status_source(backend, [6443], None, None, reach=False)
    source = status_source(backend, [6443], None, None, reach=True)
    ports = {"vip-az1": SimpleNamespace(id="vip-az1", binding_host_id=None)}  # no holder shown, as to a project user
    source._conn = SimpleNamespace(network=SimpleNamespace(get_port=lambda port_id: _port_or_404(ports, port_id)))
    assert zone_health(source, read["az1"], lambda address, port: None).healthy
    gone = zone_health(source, read["az2"], lambda address, port: None,  # az2's VIP port deleted behind the stack
                       backend.watched.owner_kind)
    assert not gone.healthy and gone.reason == "VIP port vip-az2 is gone"


def _port_or_404(ports: dict, port_id: str):
    """Neutron's ``GET /v2.0/ports/{id}``: the port, or a 404."""
    if port_id not in ports:
        raise NotFoundException("Port not found", http_status=404)
    return ports[port_id]


def test_the_in_cluster_watcher_reads_a_keepalived_endpoint_from_its_watched_outputs():
    """The WatcherDeployment's Secret holds watched_outputs (not the stack's whole outputs, whose keepalived zones carry
    their members' configuration): the endpoint's ports and each zone's VIP port are in it, so the in-cluster watcher
    finds the same keepalived zones as `make watch` does from the full outputs."""
    watched = watched_outputs(KEEPALIVED_OUTPUTS["fqdn"], KEEPALIVED_OUTPUTS["zones"], KEEPALIVED_OUTPUTS["ports"])
    assert "keepalived" not in json.dumps(watched)
    backend, read = zones_of(watched)
    full_backend, full = zones_of(KEEPALIVED_OUTPUTS)
    assert backend.name == full_backend.name == "keepalived"
    assert {az: (zone.vip_port_id, zone.address) for az, zone in read.items()} == \
        {az: (zone.vip_port_id, zone.address) for az, zone in full.items()}


def test_a_zone_the_agent_took_out_stays_out_while_the_watcher_writes_another_zone():
    """The record is shared (docs/agent.md): the member agent takes az1 out before its only member leaves, while az1
    still serves. The watcher must neither put az1 back (it did not take it out) nor write it back with az2's change;
    once az1's member is drained it takes az1 out itself (nothing to write), and puts it back once it serves again."""
    octavia, record = Octavia(), Record(ZONES.values())
    watch, lines = watcher(octavia, record)
    record.held = [ZONES["az2"], ZONES["az3"]]  # the agent's write
    for _ in range(4):
        watch.poll()
    assert record.writes == []
    octavia.down.add("az2")
    for _ in range(3):
        watch.poll()
    assert record.writes == [[ZONES["az3"]]]
    octavia.down.add("az1")  # drained by the agent
    for _ in range(3):
        watch.poll()
    assert record.writes == [[ZONES["az3"]]] and "az1" not in watch.published
    octavia.down.clear()
    for _ in range(2):
        watch.poll()
    assert record.writes[-1] == sorted(ZONES.values())
    assert not any(line.startswith("keeping") for line in lines)


def test_a_change_that_would_empty_a_record_someone_else_changed_is_not_written():
    octavia, record = Octavia(), Record(ZONES.values())
    watch, lines = watcher(octavia, record)
    record.held = [ZONES["az2"]]  # az1 and az3 taken out by the agent while they serve
    octavia.down.add("az2")
    for _ in range(3):
        watch.poll()
    assert record.writes == [] and record.held == [ZONES["az2"]]
    assert any("would leave it empty" in line for line in lines)

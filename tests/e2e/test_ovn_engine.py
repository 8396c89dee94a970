"""The endpoint under the real engine on Octavia's real OVN provider (the local cloud's data plane,
LOCALCLOUD_DATAPLANE=ovn): real packets from the machine through each zone's floating IP to the member serving in that
zone, member status from OVN's own health checks, real clients failing over while a zone is lost three ways (with and
without the watcher that keeps DNS following health), a member rotation that no client notices, an `up` that leaves
a zone that does not serve unpublished, and a destroy that leaves nothing in Octavia, Neutron or OVN's northbound
database.

The members are Nova servers (one serving namespace each, lab/localcloud/dataplane) given to the endpoint by server id:
the component finds their address and port and attaches its members' security group, the only group that admits
anything to them (Nova's default group admits nothing from outside). So every request that gets through proves the
component's rules admit what the OVN provider really sends: the clients' own addresses (OVN balances without a
proxy: a member sees the client) and the health checks from the provider's port on the member's subnet.

Collected only when the cloud under test has the data plane (tests/e2e/conftest.py); exclusive, as the data-plane
integration tests are (scripts/test.sh runs it alone).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

from localcloud.dataplane import ovn
from localcloud.testing import eventually
from tests.e2e import ovn_endpoint
from tests.e2e.cloud_checks import PoolSampler, loadbalancers_named, pools_of, published, resolve_a
from tests.e2e.failover import BOUNDED
from tests.e2e.ovn_endpoint import PORT, address_of, ask
from tests.e2e.pulumi_cli import PulumiStack

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.exclusive]

ENDPOINT = f"e2e-ovn-{uuid.uuid4().hex[:4]}"
FQDN = f"{ENDPOINT}.example.test."


ZONES = ("az1", "az2")
"""Two zones, the fewest an HA endpoint has: every step acts on az1 or az2 (a rotation in each, a member taken out in
az1, az2 lost, az2 left unpublished), and a third zone only added two servers and a load balancer to every step
(issue 53: the suite's budget; lab/bench/failover_figures.py measures the same failover over three)."""

DRAIN = 5  # readiness.drainSeconds from the first `up` on (a drain's grace is the one its state recorded)


def endpoint_config(servers: dict[str, str], **readiness) -> dict:
    """The dev stack's shape on the ovn provider (tests/e2e/ovn_endpoint.py), one member per zone given by server
    id (``servers``: az -> server id), removed members drained for ``DRAIN`` s; ``readiness`` adds to the readiness
    settings."""
    return ovn_endpoint.endpoint_config(
        ENDPOINT, [{"name": f"node-{zone}", "server": servers[zone], "az": zone} for zone in ZONES], zones=ZONES,
        **{"drainSeconds": DRAIN, **readiness})


@pytest.fixture(scope="module")
def servers(localcloud):
    """Two serving servers per AZ (Nova's default security group only): ``first`` are the members of the first up,
    ``second`` replace them; and a ``spare`` in az2, never a member before test_4 (OVN keeps a health check's last
    status for an address it probed before, and would report a returning member ONLINE while its AZ is down)."""
    keys = [(zone, generation) for zone in ZONES for generation in ("first", "second")] + [("az2", "spare")]
    wanted = {(zone, generation): (f"{ENDPOINT}-{zone}-{generation}", zone) for zone, generation in keys}
    with ovn_endpoint.serving_servers(localcloud, ENDPOINT, wanted) as made:
        found = {generation: {zone: made[(zone, generation)] for zone in ZONES} for generation in ("first", "second")}
        found["spare"] = {"az2": made[("az2", "spare")]}
        yield found


@pytest.fixture(scope="module")
def stack(tmp_path_factory, pulumi_environment, servers):
    instance = PulumiStack.create(tmp_path_factory.mktemp("e2e-ovn"), "e2e-ovn", pulumi_environment)
    instance.write_config(endpoint_config({zone: server.id for zone, server in servers["first"].items()}))
    yield instance
    instance.destroy(check=False)


@pytest.fixture(scope="module")
def seen(stack):
    """What the steps learn about the stack (its load balancers, ports and floating IPs) for the last step."""
    return {"lbs": set(), "ports": set(), "addresses": set()}


def test_1_preview_with_the_policy_pack_then_up_every_zone_serving_its_own_member(stack, servers, localcloud,
                                                                                   seen):
    preview = stack.preview()
    assert "Policy Violations" not in preview.output and "mandatory" not in preview.output
    up = stack.up()
    print(f"\npreview {preview.seconds:.1f}s, up {up.seconds:.1f}s")
    zones = stack.outputs()["zones"]
    conn = localcloud.conn
    for zone in ZONES:
        out = zones[zone]
        lb = conn.load_balancer.get_load_balancer(out["loadbalancerId"])
        assert (lb.provider, lb.provisioning_status) == ("ovn", "ACTIVE"), (zone, lb.provider)
        seen["lbs"].add(lb.id)
        seen["ports"].add(lb.vip_port_id)
        seen["addresses"] |= {out["floatingIp"], lb.vip_address}
        [pool] = pools_of(conn, lb.id)
        assert pool.lb_algorithm == "SOURCE_IP_PORT"
        assert conn.load_balancer.get_health_monitor(pool.health_monitor_id).type == "TCP"
        members = list(conn.load_balancer.members(pool.id))
        # ONLINE from OVN's health checks: the heartbeat daemon plays amphorae only, and none exists here
        assert [(m.name, m.operating_status) for m in members] == [(f"node-{zone}", "ONLINE")], (
            zone, [(m.address, m.operating_status) for m in members],
            ovn.sbctl(localcloud.paths, "--columns=ip,port,src_ip,status,logical_port", "list", "Service_Monitor"))
    # the gate saw the members ONLINE (OVN's probes come from the members' subnet); the floating IP is associated
    # after the gate and its path programmed by the provider's driver agent, asynchronously: within seconds. (Before
    # the association waited for the gate, the agent's rewrite of the OVN VIP list raced octavia-api's and a zone's
    # floating IP could stay dark for good: a CI run.) The lag is printed; a dark one shows its OVN rows.
    lag = {}
    for zone in ZONES:
        server, out = servers["first"][zone], zones[zone]
        started = time.monotonic()
        try:
            answer = eventually(f"{zone}'s floating IP answers", lambda: ask(out["floatingIp"]).split(), 15, 0.25)
        except AssertionError as dark:
            raise AssertionError(f"{dark}; OVN: {ovn_endpoint.ovn_rows(localcloud, seen['lbs'], seen['ports'], seen['addresses'])}")
        assert answer == [server.name, zone]
        lag[zone] = round(time.monotonic() - started, 1)
    print(f"floating IPs answering after up: {lag} s later")
    every_zone = {zones[zone]["floatingIp"] for zone in ZONES}
    eventually("the name resolves to every zone's floating IP", lambda: resolve_a(FQDN) == every_zone, 30)


FAILOVER_LOOP = 35      # seconds each failover loop lasts; the zone is lost 5 s in
TTL = 30                # the record's TTL (endpoint_config); the goal: no client waits longer than TTL + 15 s


def test_3_replacing_every_member_fails_no_request_and_a_drained_member_gets_no_new_connection(stack, servers,
                                                                                                localcloud, seen):
    """Every zone's member replaced by another server while one client per zone asks its floating IP 10 times a
    second: no request fails, the old member answers until the new one does; and the old member, once Octavia lists
    its drain applied (weight 0 and admin state down: the ovn provider ignores the weight), answers no request
    started after it (ha_endpoint.core.predicates.drains_admin_down), while it is still in the pool for the grace."""
    zones = stack.outputs()["zones"]
    # every zone answers before the rotation starts: a request lost to the data plane before anything changed is not
    # the rotation's (a CI run saw two zones' floating IPs silent for 6 s right after az2's member was restarted;
    # the watcher's log showed those zones' members ERROR meanwhile: OVN's health checks, cause not established); how
    # long it took is printed
    started = time.monotonic()
    for zone in ZONES:
        eventually(f"{zone} answers before the rotation", lambda: ask(zones[zone]["floatingIp"]), 30, 0.25)
    print(f"\nevery zone answered {time.monotonic() - started:.1f}s after test_1")
    stack.write_config(endpoint_config({zone: server.id for zone, server in servers["second"].items()}))
    pools = {zone: zones[zone]["poolIds"][str(PORT)] for zone in ZONES}
    with ovn_endpoint.ZoneAskers({zone: zones[zone]["floatingIp"] for zone in ZONES}) as clients, \
            PoolSampler(localcloud.conn, pools) as sampler:
        up = stack.up()
        time.sleep(3)                                          # the new members keep answering after the update
    for zone in ZONES:
        answered = Counter(name for _, name in clients.answers[zone])
        print(f"\n{zone}: {dict(answered)}, failures {clients.failures[zone][:5]}, slower than "
              f"{ovn_endpoint.SLOW:.0f} s {clients.slow[zone][:5]}")
    print(f"rotation up {up.seconds:.1f}s")
    for zone in ZONES:
        old, new = servers["first"][zone].name, servers["second"][zone].name
        names = [name for _, name in clients.answers[zone]]
        assert clients.failures[zone] == [], (zone, clients.failures[zone][:10])
        assert set(names) <= {old, new} and names[0] == old and names[-1] == new, (zone, Counter(names))
        # drained, then in the pool for the grace, then gone; and no new connection to it meanwhile
        drained = sampler.drained(zone)
        assert list(drained) == [address_of(servers["first"][zone], zone)], (zone, drained)
        assert all(seconds is not None and seconds >= DRAIN - 1.5 for seconds in drained.values()), (zone, drained)
        late = ovn_endpoint.new_connections_after_drain(
            sampler, clients, zone, {address_of(servers["first"][zone], zone): old})
        assert late == [], (zone, late[:5])
    after = stack.outputs()["zones"]
    for zone in ZONES:
        [pool] = pools_of(localcloud.conn, after[zone]["loadbalancerId"])
        members = list(localcloud.conn.load_balancer.members(pool.id))
        assert [(m.address, m.operating_status) for m in members] == [
            (address_of(servers["second"][zone], zone), "ONLINE")], (zone, members)
        seen["lbs"].add(after[zone]["loadbalancerId"])
        seen["addresses"].add(after[zone]["floatingIp"])


OUT_ZONE = "az1"  # test_3b: the zone given a second member, then that member taken out


def taken_out_config(servers: dict, enabled: bool, zone_enabled: bool = True) -> dict:
    """test_3b's configuration: every zone's ``second`` server, and ``OUT_ZONE``'s ``first`` server as a second member
    of that zone with ``enabled``; ``zone_enabled`` false takes ``OUT_ZONE``'s other member out too."""
    raw = endpoint_config({zone: server.id for zone, server in servers["second"].items()})
    for member in raw["members"]:
        if member["az"] == OUT_ZONE and not zone_enabled:
            member["enabled"] = False
    raw["members"].append({"name": f"node-{OUT_ZONE}-out", "server": servers["first"][OUT_ZONE].id, "az": OUT_ZONE,
                           "enabled": enabled})
    return raw


def test_3b_a_member_taken_out_answers_no_new_connection_and_a_zone_left_without_capacity_is_refused(
        stack, servers, localcloud, tmp_path):
    """Issue 46: ``enabled: false`` takes a member out under the ovn provider, which ignores the weight. OUT_ZONE gets
    a second serving member; then an `up` takes it out while a client asks the zone's floating IP 10 times a second:
    no request fails, and once Octavia lists it administratively down (weight kept) it answers no request started
    after (ha_endpoint.core.predicates.member_in_service), also past the provider's ERROR over its OFFLINE, and stays
    listed OFFLINE (the provider leaves OFFLINE members out of every rewrite of the backends). A taken-out member is no
    capacity: the pack (minMembersPerZone 2) refuses the zone left with one member in service, and the component
    refuses, before the pack, a zone whose every member is taken out. The member is removed again at the end."""
    zones = stack.outputs()["zones"]
    address, pool = zones[OUT_ZONE]["floatingIp"], zones[OUT_ZONE]["poolIds"][str(PORT)]
    out, kept = servers["first"][OUT_ZONE], servers["second"][OUT_ZONE]
    stack.write_config(taken_out_config(servers, enabled=True))
    stack.up()

    def both_answer() -> bool:
        answered = {ask(address).split()[0] for _ in range(12)}
        assert answered == {out.name, kept.name}, answered
        return True

    eventually(f"both of {OUT_ZONE}'s members answer", both_answer, 60, 0.5)
    print(f"\n{OUT_ZONE}'s answers with both members in service: {answers_per_member(address)}")
    stack.write_config(taken_out_config(servers, enabled=False))
    with ovn_endpoint.ZoneAskers({OUT_ZONE: address}) as clients, \
            PoolSampler(localcloud.conn, {OUT_ZONE: pool}) as sampler:
        up = stack.up()
        time.sleep(8)                          # past the provider's ERROR over the member's OFFLINE (0.3-3 s)
    applied = sampler.admin_down_applied(OUT_ZONE).get(address_of(out, OUT_ZONE))
    assert applied is not None, "never listed admin down and ACTIVE"
    answers = clients.answers[OUT_ZONE]
    before = Counter(name for at, name in answers if at < applied)
    after = Counter(name for at, name in answers if at > applied + ovn_endpoint.DRAIN_TAKES_EFFECT)
    print(f"\ntaking {out.name} out: up {up.seconds:.1f}s; answers before its admin down applied {dict(before)}, "
          f"more than {ovn_endpoint.DRAIN_TAKES_EFFECT:.0f}s after {dict(after)} "
          f"({max(at for at, _ in answers) - applied:.1f}s of them); failures {clients.failures[OUT_ZONE][:5]}, slow "
          f"{clients.slow[OUT_ZONE][:5]}")
    assert clients.failures[OUT_ZONE] == [], clients.failures[OUT_ZONE][:10]
    assert before[out.name] > 0 and before[kept.name] > 0, before
    late = ovn_endpoint.new_connections_after_drain(sampler, clients, OUT_ZONE, {address_of(out, OUT_ZONE): out.name},
                                                    taken_out=True)
    assert late == [], late[:5]
    assert after[kept.name] > 0 and max(at for at, _ in answers) - applied > 8, after
    listed = {m.address: m for m in localcloud.conn.load_balancer.members(pool)}
    member = listed[address_of(out, OUT_ZONE)]
    assert (member.is_admin_state_up, member.weight, member.operating_status) == (False, 1, "OFFLINE"), member
    assert listed[address_of(kept, OUT_ZONE)].operating_status == "ONLINE"

    pack_config = tmp_path / "pack.json"
    pack_config.write_text(json.dumps({"ha-endpoint-member-zones": {"minMembersPerZone": 2}}))
    judged = stack.preview("--policy-pack-config", str(pack_config), check=False)
    assert judged.returncode != 0, judged.output[-3000:]
    assert f"zone {OUT_ZONE} of endpoint {ENDPOINT} has 1 member(s) in service (1 more taken out" in \
        judged.output.replace("\n", " "), judged.output[-3000:]
    stack.write_config(taken_out_config(servers, enabled=False, zone_enabled=False))
    refused = stack.preview(check=False)
    assert refused.returncode != 0 and f"zone {OUT_ZONE}'s only member(s)" in refused.output, refused.output[-3000:]
    print(f"{OUT_ZONE}'s answers with {out.name} taken out: {answers_per_member(address)}")


PUT_BACK_TIMEOUT = 120  # test_3c's readiness.timeoutSeconds: a member put back is ready in the hold (20 s) and a poll


def test_3c_a_member_put_back_is_online_and_gets_new_connections_again(stack, servers, localcloud):
    """Issue 46, the way back: the member test_3b took out is put back (``enabled: true`` again) while a client asks
    the zone's floating IP 10 times a second. Under the ovn provider an admin-up update of a member it holds OFFLINE
    keeps it OFFLINE and out of the OVN backends for good with a health monitor (ovn-octavia-provider 3.1.2,
    ``OvnProviderHelper.member_update``): the component re-creates it instead. The `up` completes, no request fails,
    the member is listed admin up and ONLINE, and it answers new connections again (both members do). The member is
    removed again at the end."""
    zones = stack.outputs()["zones"]
    address, pool = zones[OUT_ZONE]["floatingIp"], zones[OUT_ZONE]["poolIds"][str(PORT)]
    out, kept = servers["first"][OUT_ZONE], servers["second"][OUT_ZONE]
    listed = {m.address: m for m in localcloud.conn.load_balancer.members(pool)}
    assert listed[address_of(out, OUT_ZONE)].is_admin_state_up is False, "test_3b left no member taken out"
    stack.write_config(taken_out_config(servers, enabled=True) | {"readiness": {
        **taken_out_config(servers, enabled=True)["readiness"], "timeoutSeconds": PUT_BACK_TIMEOUT}})
    with ovn_endpoint.ZoneAskers({OUT_ZONE: address}) as clients:
        back = stack.up(check=False)
        time.sleep(3)
    listed = {m.address: m for m in localcloud.conn.load_balancer.members(pool)}
    member = listed[address_of(out, OUT_ZONE)]
    print(f"\nputting {out.name} back: up {back.seconds:.1f}s (exit {back.returncode}); listed "
          f"{member.provisioning_status}/{member.operating_status} admin {member.is_admin_state_up}; answers during "
          f"the up {dict(Counter(name for _, name in clients.answers[OUT_ZONE]))}, failures "
          f"{clients.failures[OUT_ZONE][:5]}, slow {clients.slow[OUT_ZONE][:5]}")
    assert back.returncode == 0, "\n".join(line for line in back.output.splitlines()
                                            if "error" in line.lower() or "failed" in line.lower())[-6000:]
    assert clients.failures[OUT_ZONE] == [], clients.failures[OUT_ZONE][:10]
    assert (member.is_admin_state_up, member.provisioning_status, member.operating_status) == (
        True, "ACTIVE", "ONLINE"), member
    counted: Counter = Counter()

    def both_answer_again() -> bool:
        counted.clear()
        counted.update(answers_per_member(address))
        assert counted[out.name] > 0 and counted[kept.name] > 0, dict(counted)
        return True

    eventually(f"{out.name} answers new connections again", both_answer_again, 30, 1)
    print(f"{OUT_ZONE}'s answers after putting {out.name} back: {dict(counted)}")
    member_ids = stack.outputs()["zones"][OUT_ZONE]["memberIds"][str(PORT)]
    assert member.id in member_ids.values() if isinstance(member_ids, dict) else member.id in member_ids, member_ids

    stack.write_config(endpoint_config({zone: server.id for zone, server in servers["second"].items()}))
    stack.up()
    assert [m.address for m in localcloud.conn.load_balancer.members(pool)] == [address_of(kept, OUT_ZONE)]


def test_3d_clients_fail_over_when_az2_goes_dark_without_and_with_the_watcher(stack, servers, localcloud, seen):
    """Issue 26's failover, measured with real clients (tests/e2e/failover.py: curl, Go's net/http, Python requests,
    each resolving the name at the cloud's DNS server before every request) while az2's chassis is stopped
    (``az-down``), without the watcher and with it at its defaults (lab/bench/failover_figures.py prints every way
    without it). The table is printed (the README's). The two other ways (its member stopped, its load balancer
    deleted out of band), with the watcher and these same clients, are measured and asserted in
    tests/e2e/test_k8s_endpoint.py::test_3, against three kube-apiservers as members (one set of loops for both:
    the same assertions, half the exclusive time).

    Asserted, as a user notices it: a client with a bounded connect loses no request in the end and is never
    without an answer for longer than the TTL + 15 s, with the watcher and without; with the watcher, az2's address
    leaves DNS within 30 s of the loss and comes back within 30 s of the recovery; a new client started once the
    address left DNS gets its first answer sooner than its 3 s connect timeout; the record is never empty; the
    watcher acts on az2 alone (removing, then restoring it) and stops cleanly on SIGTERM. And a `pulumi up` during
    az-down completes and leaves DNS as the watcher left it.

    It runs after the rotations (test_3, 3b, 3c), not before them: twice in three CI runs (2026-12-03), the rotation
    right after this test lost one request in az2, the zone whose chassis this test had just stopped and started
    (one connection unanswered for 10 s, every other answer under 2 s; cause not established, an open finding). The
    rotations' claim is about a data plane that serves; what a chassis restart leaves behind for the next member
    change is to be measured on its own."""
    from tests.e2e import failover

    cache = Path(os.environ.get("HA_ENDPOINT_CACHE", Path.home() / ".cache" / "ha-endpoint"))
    go_client = failover.build_go_client(cache)
    lost = [servers["first"]["az2"].name]
    addresses = {zone: out["floatingIp"] for zone, out in stack.outputs()["zones"].items()}

    def up_during_the_outage():
        """`pulumi up` while az2's chassis is down and the watcher has taken it out of DNS: it completes, and
        leaves DNS as the watcher left it (it does not fight the watcher)."""
        up = stack.up(policy=False)
        return up.seconds, resolve_a(FQDN)

    outcomes = {}
    for watcher, way in [(False, "az-down"), (True, "az-down")]:
        during = up_during_the_outage if (watcher, way) == (True, "az-down") else None
        outcomes[(way, watcher)] = outcome = failover.measure(
            localcloud, stack, way, "az2", lost, PORT, ask, go_client, FAILOVER_LOOP, 5, () if watcher else None,
            during=during)
        held = published(localcloud.conn, FQDN)    # Designate's record, as named answers it, once restored
        assert held == {out["floatingIp"] for out in stack.outputs()["zones"].values()}, (way, held)
        print(f"\n{way}, {'with' if watcher else 'without'} the watcher: az2 {failover.summary(outcome)}")
    rows = [row for outcome in outcomes.values() for row in outcome.rows]
    print(f"loops of {FAILOVER_LOOP} s, az2 lost 5 s in, each client's next request 0.5 s after its last; TTL {TTL} s, "
          f"TCP monitor delay 3 s timeout 2 s down after 3; the watcher's defaults")
    print(failover.table(rows))
    print("\n".join(failover.goal_lines(rows, TTL)))
    up_seconds, record = outcomes[("az-down", True)].during
    print(f"up during az-down (az2 out of DNS by the watcher): {up_seconds:.1f}s, the record then {sorted(record)}")
    assert record == {addresses["az1"]}, record
    for (way, watcher), outcome in outcomes.items():
        rows = {row["client"]: row for row in outcome.rows}
        for client in BOUNDED:
            assert failover.goal(rows[client], TTL).startswith("met"), (way, watcher, failover.goal(rows[client], TTL),
                                                                       rows[client])
        if watcher:
            failover.assert_watcher_followed(way, outcome, "az2")


def answers_per_member(address: str, requests: int = 40) -> dict[str, int]:
    """Who answers ``requests`` new connections to ``address``, one after another: server name -> count."""
    return dict(Counter(ask(address).split()[0] for _ in range(requests)))


DEAD_AFTER = 15  # seconds: the unpublish tests' readiness.deadAfterSeconds


def test_4_up_while_a_zone_does_not_serve_leaves_it_unpublished_in_bounded_time_and_below_the_floor_fails(
        stack, servers, localcloud):
    """readiness.onZoneNotReady: unpublish. az2 gets a new member whose server serves nothing
    (`lab/localcloud/fault server-down`): the OVN provider reports it ONLINE at once, before any health check, then ERROR
    once its monitor fails it; the gate holds that first ONLINE (20 s for this monitor), sees the ERROR, and after
    deadAfterSeconds of ERROR counts the zone dead (not after the 300 s timeout): the `up` completes, az2 leaves DNS,
    az1 stays. Asked for 2 ready zones, the same `up` fails naming az2, and DNS is left as it was."""
    zones = stack.outputs()["zones"]
    addresses = {zone: zones[zone]["floatingIp"] for zone in ZONES}
    assert published(localcloud.conn, FQDN) == set(addresses.values())
    members = {zone: server.id for zone, server in servers["second"].items()}
    spare = servers["spare"]["az2"]
    members["az2"] = spare.id                                     # az2's new member serves nothing
    stack.write_config(endpoint_config(members, onZoneNotReady="unpublish", deadAfterSeconds=DEAD_AFTER,
                                       minReadyZones=1))
    localcloud.faults.server_down(spare.name)
    try:
        up = stack.up()
        after = stack.outputs()["zones"]
        assert (after["az2"]["ready"], after["az2"]["published"]) == (False, False), after["az2"]
        assert "the zone is dead (every member has been down for" in after["az2"]["notReadyReason"], after["az2"]
        assert after["az1"]["published"]
        assert after["az2"]["loadbalancerId"] == zones["az2"]["loadbalancerId"], "the zone keeps its resources"
        assert published(localcloud.conn, FQDN) == {addresses["az1"]}
        assert "zone az2 is not published: load balancer" in up.output  # the warning the operator reads

        stack.write_config(endpoint_config(members, onZoneNotReady="unpublish", deadAfterSeconds=DEAD_AFTER,
                                           minReadyZones=2))
        below = stack.up(check=False)
        assert below.returncode != 0
        assert "only 1 of 2 zones are ready (az1), fewer than readiness.minReadyZones (2)" in below.output, \
            below.output[-3000:]
        assert "az2: load balancer" in below.output
        assert published(localcloud.conn, FQDN) == {addresses["az1"]}, "the floor stops the update before DNS"
    finally:
        localcloud.faults.server_up(spare.name)
    print(f"\nup with az2 not serving: {up.seconds:.1f}s (hold 20 s, deadAfterSeconds {DEAD_AFTER}, timeoutSeconds "
          f"300); below the floor: failed after {below.seconds:.1f}s")


def test_5_once_the_zone_serves_again_the_next_up_publishes_it_again(stack, servers, localcloud):
    """The same `up` gives az1's serving member `weight: 2`: under ovn a member is written in place only for its admin
    state (any other update makes the provider report it NO_MONITOR until its health next changes, and the watcher
    took a serving zone out of DNS): the member is not updated, stays ONLINE, and the preview's warning says why."""
    members = {zone: server.id for zone, server in servers["second"].items()}
    members["az2"] = servers["spare"]["az2"].id
    config = endpoint_config(members, onZoneNotReady="unpublish", deadAfterSeconds=DEAD_AFTER, minReadyZones=2)
    [weighted] = [member for member in config["members"] if member["az"] == "az1"]
    weighted["weight"] = 2
    stack.write_config(config)
    [pool] = pools_of(localcloud.conn, stack.outputs()["zones"]["az2"]["loadbalancerId"])
    eventually("az2's member ONLINE again (the zone serves)", lambda: [
        m.operating_status for m in localcloud.conn.load_balancer.members(pool.id)] == ["ONLINE"], 90, 1)
    up = stack.up()
    zones = stack.outputs()["zones"]
    assert (zones["az2"]["ready"], zones["az2"]["published"], zones["az2"]["notReadyReason"]) == (True, True, None)
    assert published(localcloud.conn, FQDN) == {zones[zone]["floatingIp"] for zone in ZONES}
    assert ask(zones["az2"]["floatingIp"]).split() == [servers["spare"]["az2"].name, "az2"]
    [az1] = localcloud.conn.load_balancer.members(zones["az1"]["poolIds"][str(PORT)])
    assert (az1.operating_status, az1.weight) == ("ONLINE", 1), (az1.operating_status, az1.weight)
    assert "members[0].weight: weight 2 does nothing under loadBalancerProvider ovn" in up.output, up.output[-3000:]
    print(f"\nup once az2 serves again (az1's member given weight 2): {up.seconds:.1f}s; az2 published again; az1's "
          f"member {az1.provisioning_status}/{az1.operating_status} weight {az1.weight}")


def test_6_destroy_leaves_nothing_in_octavia_neutron_or_ovn(stack, localcloud, seen):
    assert seen["lbs"], "the earlier steps recorded no load balancer"
    before = ovn_endpoint.ovn_rows(localcloud, seen["lbs"], seen["ports"], seen["addresses"])
    assert any(row.startswith("Load_Balancer") for row in before), before   # the query sees the stack's rows
    assert any(row.startswith("NAT") for row in before), before
    down = stack.destroy()
    print(f"\ndestroy {down.seconds:.1f}s")
    conn = localcloud.conn
    assert loadbalancers_named(conn, ENDPOINT) == []
    assert [ip.floating_ip_address for ip in conn.network.ips() if ip.floating_ip_address in seen["addresses"]] == []
    assert [port.id for port in conn.network.ports() if port.id in seen["ports"]] == []
    assert [group.name for group in conn.network.security_groups() if group.name.startswith(ENDPOINT)] == []
    left = ovn_endpoint.ovn_rows(localcloud, seen["lbs"], seen["ports"], seen["addresses"])
    deadline = time.monotonic() + 20
    while left and time.monotonic() < deadline:              # the driver agent deletes OVN rows after Octavia
        time.sleep(0.5)
        left = ovn_endpoint.ovn_rows(localcloud, seen["lbs"], seen["ports"], seen["addresses"])
    assert left == []
    eventually("the name is gone from DNS", lambda: resolve_a(FQDN) == set(), 30)

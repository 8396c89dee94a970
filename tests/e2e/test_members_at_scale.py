"""Members at scale under the real engine on Octavia's real OVN provider: the one member path (one Member and one
MemberDrain resource per member) keeps make-before-break and drain with real clients looping over the name while every
member of every pool is replaced, drains of several members of one pool at once keep each drained member out but for a
moment (test_3), and destroy leaves nothing (issue 27's figures at scale; issue 47 kept this path alone).

One stack (three zones, one TCP listener with a TCP monitor, ``HA_ENDPOINT_TEST_SCALE_MEMBERS`` members per zone:
30 in `make test-scale`, 5 with `make test-scale SCALE_MEMBERS=5`; collected only when that is set:
tests/e2e/conftest.py) whose members are Nova servers serving on the data plane, given by server id as in
tests/e2e/test_ovn_engine.py.

What N costs here: every serving member is a whole member on the local cloud's data plane
(lab/localcloud/dataplane/members.py): a Nova server and its Neutron port bound on its AZ's chassis (an OVN logical
switch port), a network namespace whose veth is a port of that chassis' userspace ovs-vswitchd (every packet goes
through that process), its own member server (member_server.py: system Python, ~20 MiB RSS, four listeners, a thread
per connection), plugged one after another by the members reconciler, and probed by OVN's TCP health check every
3 s. A rotation needs both generations at once: 6N servers, and test_3 3 x min(N, 3) more. Measured on this 2-core machine: 66 servers (N=10)
booted and serving in 86 s and the whole module in 11 min; 186 (N=30) in 304-608 s, the `up` in 163-316 s, and the
rotation alone over 10 min.

Collected only when the cloud under test has the data plane (tests/e2e/conftest.py); exclusive: it boots 6N
serving servers and rotates every member of its pools: a load the tests sharing its cloud would feel.
"""

from __future__ import annotations

import os
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

from ha_endpoint.core import contract
from localcloud.testing import eventually
from tests.e2e import failover, ovn_endpoint
from tests.e2e.cloud_checks import PoolSampler, loadbalancers_named, resolve_a
from tests.e2e.ovn_endpoint import PORT, ZONES, address_of, ask
from tests.e2e.pulumi_cli import PulumiStack

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.exclusive]

N = int(os.environ.get("HA_ENDPOINT_TEST_SCALE_MEMBERS", "5"))    # members per zone of the first stack
ENDPOINT = f"e2e-scale-{uuid.uuid4().hex[:4]}"
FQDN = f"{ENDPOINT}.example.test."
DRAIN = 10              # readiness.drainSeconds
TTL = 30                # the record's TTL (ovn_endpoint.endpoint_config)
OPEN_ENDED = 3600       # seconds: the client loops' bound; each ends once its updates are done (Loop.end_now)
# Seconds a zone's floating IP may stay dark after the `up` (printed): the ovn provider's driver agent adds the floating
# IP to the OVN load balancer's VIPs asynchronously, after the events of every member it created and health-checks
# (measured: 0.0 s with 1 member per zone in test_ovn_engine, within 15 s at 10, 40 s at 30; the README's "Members
# at scale" says what this means for publication). A dark zone's OVN rows are in the failure.
FLOATING_IP_LAG = 60
PER_MEMBER = f"{ENDPOINT}-pm"   # test_3's stack (starts with ENDPOINT: one clean-up prefix for both stacks' objects)
PER_MEMBER_N = min(N, 3)        # its members per zone: several leave each pool in one `up`
PER_MEMBER_DRAIN = 20   # test_3's drainSeconds: a member taken back and left so would answer for most of it
BURST = 6.0             # seconds a drained member may answer once taken back, until its watch takes it out


def scale_config(name: str, servers: dict[str, list], drain: int = DRAIN) -> dict:
    """The ovn shape with ``servers`` (az -> its servers) as members, each named after its server, and
    ``drainSeconds: drain``."""
    members = [{"name": server.name, "server": server.id, "az": zone} for zone in ZONES for server in servers[zone]]
    return ovn_endpoint.endpoint_config(name, members, ttl=TTL, timeoutSeconds=600, drainSeconds=drain)


def pool_ids(stack: PulumiStack) -> dict[str, str]:
    return {zone: out["poolIds"][str(PORT)] for zone, out in stack.outputs()["zones"].items()}


def pools_hold(stack: PulumiStack, conn, wanted: dict[str, list]) -> dict[str, dict]:
    """Asserts that each zone's pool holds exactly ``wanted`` (az -> servers) as members named after them, at their
    addresses, ACTIVE/ONLINE at weight 1, and that the zone's outputs name each one with its id (memberIds) and
    status (memberStatuses). az -> member name -> member."""
    zones, found = stack.outputs()["zones"], {}
    for zone in ZONES:
        members = {m.name: m for m in conn.load_balancer.members(zones[zone]["poolIds"][str(PORT)])}
        assert sorted((m.name, m.address, m.provisioning_status, m.operating_status, m.weight)
                      for m in members.values()) == sorted(
            (server.name, address_of(server, zone), "ACTIVE", "ONLINE", 1) for server in wanted[zone]), zone
        assert zones[zone]["memberIds"] == {str(PORT): {name: m.id for name, m in members.items()}}, zone
        assert zones[zone]["memberStatuses"] == {str(PORT): {name: "ACTIVE/ONLINE" for name in members}}, zone
        found[zone] = members
    return found


def per_member_resources(stack: PulumiStack) -> list[dict]:
    return [r for r in stack.resources() if r["type"] in (contract.MEMBER_TYPE, contract.DRAIN_TYPE)]


@contextmanager
def bounded_clients(stack: PulumiStack):
    """The bounded clients of tests/e2e/failover.py (curl-3s, go, requests-3s: each resolving the name at the cloud's
    DNS server before every request, a new connection each) looping over the stack's name, once every zone answers
    and the name lists every zone, from 3 s before the block to 3 s after it. Yields the loop (its rows once the
    block is over)."""
    outputs = stack.outputs()
    fqdn = outputs["fqdn"].rstrip(".")
    failover.settle(fqdn, {zone: out["floatingIp"] for zone, out in outputs["zones"].items()}, ask)
    cache = Path(os.environ.get("HA_ENDPOINT_CACHE", Path.home() / ".cache" / "ha-endpoint"))
    loop = failover.Loop(f"https://{fqdn}:{PORT}/", failover.dns_server(), failover.build_go_client(cache),
                         OPEN_ENDED, clients=failover.BOUNDED).start()
    try:
        time.sleep(3)
        yield loop
        time.sleep(3)
    finally:
        loop.end_now()


@pytest.fixture(scope="module")
def servers(localcloud):
    """Serving servers: ``first`` (N per zone, the members of the first up), ``second`` (N per zone, replacing them)
    and ``per-member`` (PER_MEMBER_N per zone, test_3's first members; it rotates them to ``first``'s, free by then):
    generation -> az -> servers."""
    wanted = {(generation, zone, index): (f"{name}-{zone}-{tag}{index:02d}", zone)
              for generation, name, tag, count in (("first", ENDPOINT, "a", N), ("second", ENDPOINT, "b", N),
                                                   ("per-member", PER_MEMBER, "p", PER_MEMBER_N))
              for zone in ZONES for index in range(count)}
    started = time.monotonic()
    with ovn_endpoint.serving_servers(localcloud, ENDPOINT, wanted, timeout=600) as made:
        print(f"\n{len(made)} serving servers in {time.monotonic() - started:.0f}s")
        found: dict[str, dict[str, list]] = {}
        for (generation, zone, _), server in sorted(made.items(), key=lambda item: item[0]):
            found.setdefault(generation, {}).setdefault(zone, []).append(server)
        yield found


@pytest.fixture(scope="module")
def stack(tmp_path_factory, pulumi_environment, servers):
    instance = PulumiStack.create(tmp_path_factory.mktemp("e2e-scale"), "e2e-scale", pulumi_environment)
    instance.write_config(scale_config(ENDPOINT, servers["first"]))
    yield instance
    instance.destroy(check=False)


@pytest.fixture(scope="module")
def seen():
    """The load balancers and pools the steps saw, for the last step."""
    return {"lbs": set(), "pools": set()}


def test_1_up_with_n_members_per_zone(stack, servers, localcloud, seen):
    """N serving members per zone: the `up` completes; each zone's pool holds exactly its N members, ACTIVE and
    ONLINE (OVN's own health checks) at weight 1, each one named in the zone's outputs with its Octavia id (memberIds)
    and status (memberStatuses); the state holds one Member and one MemberDrain per member; each zone's floating IP
    answers from one of its members and the name lists every zone."""
    up = stack.up()
    print(f"\nup with {N} members per zone: {up.seconds:.1f}s ({up.seconds / N:.2f}s per member per zone)")
    conn = localcloud.conn
    pools_hold(stack, conn, servers["first"])
    kinds = [r["type"] for r in per_member_resources(stack)]
    assert (kinds.count(contract.MEMBER_TYPE), kinds.count(contract.DRAIN_TYPE)) == (3 * N, 3 * N), kinds
    zones = stack.outputs()["zones"]
    for zone in ZONES:
        seen["lbs"].add(zones[zone]["loadbalancerId"])
        seen["pools"].add(zones[zone]["poolIds"][str(PORT)])
    lag = {}
    for zone in ZONES:
        names = {server.name for server in servers["first"][zone]}
        started = time.monotonic()
        try:
            answer = eventually(f"{zone}'s floating IP answers", lambda: ask(zones[zone]["floatingIp"]).split(),
                                FLOATING_IP_LAG, 0.25)
        except AssertionError as dark:       # how long it stays dark, and what OVN holds for it meanwhile
            rows = ovn_endpoint.ovn_rows(localcloud, {zones[zone]["loadbalancerId"]}, set(),
                                         {zones[zone]["floatingIp"]})
            try:
                eventually(f"{zone}'s floating IP answers at last", lambda: ask(zones[zone]["floatingIp"]), 120, 1)
                later = f"it answered {time.monotonic() - started:.0f} s after the up"
            except AssertionError as still:
                later = str(still)
            raise AssertionError(f"{dark}; then {later}; OVN meanwhile: {rows}") from None
        assert answer[0] in names and answer[1] == zone, (zone, answer)
        lag[zone] = round(time.monotonic() - started, 1)
    print(f"floating IPs answering after up: {lag} s later")
    published = {zones[zone]["floatingIp"] for zone in ZONES}
    eventually("the name resolves to every zone's floating IP", lambda: resolve_a(FQDN) == published, 30)


def test_2_a_full_rotation_with_drain_fails_no_request_and_never_serves_fewer_than_n(stack, servers, localcloud):
    """Every member replaced by another server (the second generation) with `drainSeconds` > 0, while the bounded
    clients of tests/e2e/failover.py loop over the name and a poller lists each zone's pool every 0.5 s (and what the
    cloud's DNS server answers for the name).

    Asserted, as a user notices it: no bounded client loses a request (a failure is followed by an answer); no
    listing ever showed a pool with fewer than N members ONLINE at a weight above 0 (the new ones serve before the
    old ones drain); every old member was listed at weight 0 before it went, and for about drainSeconds; no request
    of one asker per zone (10 a second) failed, and an old member answered requests started after its drain took
    effect (weight 0 and admin state down, the ovn provider ignores the weight,
    ha_endpoint.core.predicates.drains_admin_down) only in bursts of at most BURST s (the drains of one pool run at
    once and can take each other back until each one's watch drains its member again: test_3); the record never
    named a zone whose pool served nothing; afterwards each pool holds exactly the N new members, named in the
    outputs. The rotation's time, the floor per pool, the bursts and the clients' table are printed."""
    conn = localcloud.conn
    pools = pool_ids(stack)
    addresses = {zone: out["floatingIp"] for zone, out in stack.outputs()["zones"].items()}
    zone_of = {address: zone for zone, address in addresses.items()}
    stack.write_config(scale_config(ENDPOINT, servers["second"]))
    with bounded_clients(stack) as loop:
        with PoolSampler(conn, pools, fqdn=FQDN) as sampler, ovn_endpoint.ZoneAskers(addresses) as askers:
            started = loop.now()
            up = stack.up()
    rows = [dict(row, way="rotation", watcher=False) for row in loop.rows(started)]
    assert sampler.samples, sampler.errors
    floor = sampler.floor()
    drained = {zone: sampler.drained(zone) for zone in ZONES}
    print(f"\nrotation of {N} members per zone (drainSeconds {DRAIN}): up {up.seconds:.1f}s; {len(sampler.samples)} "
          f"listings of each pool, {len(sampler.errors)} failed {sampler.errors[:3]}")
    print("| zone | fewest serving | members gone | gone without weight 0 first | at weight 0 before going (s) |")
    print("| --- | --- | --- | --- | --- |")
    for zone in ZONES:
        seconds = [value for value in drained[zone].values() if value is not None]
        spread = f"{min(seconds):.1f}-{max(seconds):.1f}" if seconds else "-"
        print(f"| {zone} | {floor[zone]} | {len(drained[zone])} | "
              f"{sum(value is None for value in drained[zone].values())} | {spread} |")
    print(failover.table(rows))
    for row in rows:
        assert row["requests"] > 0 and row["lost"] == 0, row
    assert all(floor[zone] >= N for zone in ZONES), floor
    for zone in ZONES:
        assert sorted(drained[zone]) == sorted(address_of(server, zone) for server in servers["first"][zone]), zone
        # at weight 0 for drainSeconds before going; the listings' times are 0.5 s apart and each takes its time
        assert all(value is not None and value >= DRAIN - 3 for value in drained[zone].values()), (zone,
                                                                                                   drained[zone])
    assert sampler.published_without_serving(zone_of) == []
    # The drain takes each old member out of the OVN load balancer's backends (admin state down, repeated once the
    # provider's ERROR is in); the drains of one pool run at once and one drain's write can take another drained
    # member back, until that member's watch drains it again (ha_endpoint/gates/held_out.py): bursts, printed.
    for zone in ZONES:
        assert askers.failures[zone] == [], (zone, askers.failures[zone][:5])
    bursts = {zone: ovn_endpoint.bursts_after_drain(
        sampler, askers, zone, {address_of(server, zone): server.name for server in servers["first"][zone]})
        for zone in ZONES}
    print(f"answers after a drain took effect, as bursts (s after the drain applied): {bursts}")
    for zone in ZONES:
        long = {name: b for name, found in bursts[zone].items() for b in found if b[1] - b[0] > BURST}
        assert long == {}, (zone, long)
    pools_hold(stack, conn, servers["second"])


def test_3_per_member_drains_of_several_members_of_a_pool_at_once_keep_each_out_but_for_a_moment(
        tmp_path_factory, pulumi_environment, servers, localcloud, seen):
    """Under ovn, every member of each pool (PER_MEMBER_N) replaced in one `up`: their
    MemberDrains run at once, and one drain's write can take another drained member back among the backends (the
    provider's ERROR over that member's drain, ha_endpoint/gates/held_out.py); each drain watches its member
    through the grace and drains it again. One asker per zone (10 requests a second) runs through the rotation.

    Asserted: no request failed; an old member answers requests started after its drain took effect only in bursts
    of at most BURST s (taken back, then out at its watch's next look: measured bursts of 0.0-2.8 s, one member taken
    back twice; without the watch, with drainSeconds 10, 42-52 answers a zone through the whole grace); afterwards
    each pool holds exactly the new members."""
    pm = PulumiStack.create(tmp_path_factory.mktemp("e2e-scale-pm"), "e2e-scale-pm", pulumi_environment)
    try:
        pm.write_config(scale_config(PER_MEMBER, servers["per-member"], PER_MEMBER_DRAIN))
        first = pm.up()
        pools = pool_ids(pm)
        zones = pm.outputs()["zones"]
        for out in zones.values():
            seen["lbs"].add(out["loadbalancerId"])
            seen["pools"].add(out["poolIds"][str(PORT)])
        addresses = {zone: out["floatingIp"] for zone, out in zones.items()}
        newcomers = {zone: servers["first"][zone][:PER_MEMBER_N] for zone in ZONES}
        pm.write_config(scale_config(PER_MEMBER, newcomers, PER_MEMBER_DRAIN))
        for zone in ZONES:
            eventually(f"{zone} answers before the rotation", lambda: ask(addresses[zone]), 30, 0.25)
        with PoolSampler(localcloud.conn, pools) as sampler, ovn_endpoint.ZoneAskers(addresses) as askers:
            rotation = pm.up()
        bursts = {zone: ovn_endpoint.bursts_after_drain(
            sampler, askers, zone, {address_of(server, zone): server.name for server in servers["per-member"][zone]})
            for zone in ZONES}
        print(f"\nper-member, {PER_MEMBER_N} per zone: up {first.seconds:.1f}s, rotation {rotation.seconds:.1f}s; "
              f"answers after a drain took effect, as bursts (s after the drain applied): {bursts}")
        for zone in ZONES:
            assert askers.failures[zone] == [], (zone, askers.failures[zone][:5])
            long = {name: b for name, found in bursts[zone].items() for b in found if b[1] - b[0] > BURST}
            assert long == {}, (zone, long)
        assert {zone: sorted(m.name for m in localcloud.conn.load_balancer.members(pool))
                for zone, pool in pools.items()} == {
            zone: sorted(server.name for server in newcomers[zone]) for zone in ZONES}
    finally:
        pm.destroy(check=False)


def test_4_destroy_leaves_no_member_pool_or_load_balancer_of_either_stack(stack, localcloud, seen):
    """`pulumi destroy` of the stack (test_3's destroyed its own): Octavia holds no load balancer and no pool of the
    two (by id or name), and no pool holds a member named after one of their servers."""
    assert seen["lbs"] and seen["pools"], "the earlier steps recorded no load balancer"
    down = stack.destroy()
    print(f"\ndestroy of {stack.stack} {down.seconds:.1f}s")
    conn = localcloud.conn
    assert loadbalancers_named(conn, ENDPOINT) == []
    assert [lb.id for lb in conn.load_balancer.load_balancers() if lb.id in seen["lbs"]] == []
    pools = list(conn.load_balancer.pools())
    assert [p.id for p in pools if p.id in seen["pools"] or (p.name or "").startswith(ENDPOINT)] == []
    assert [(p.id, m.name) for p in pools for m in conn.load_balancer.members(p.id)
            if (m.name or "").startswith(ENDPOINT)] == []

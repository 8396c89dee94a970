"""The readiness gate and member drain against the real local cloud (Keystone, Octavia, heartbeat daemon), driven
through the providers' own code paths (``MemberReadinessProvider().create``, ``drain.run_drain``) with credentials
from the environment the ``localcloud`` fixture sets (OS_CLIENT_CONFIG_FILE, OS_CLOUD).

Each test builds its own zone in az1 (load balancer, TCP listener, pool, TCP health monitor, members) under the
cleanup fixture's unique prefix; the cleanup deletes it, clears member faults and thaws the worker.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import openstack
import pytest
from keystoneauth1 import exceptions as ks_exc
from openstack import exceptions as os_exc

from ha_endpoint.backends.octavia import status
from ha_endpoint.gates import drain, provider
from ha_endpoint.gates.errors import MemberFailed, ReadinessTimeout
from ha_endpoint.gates.provider import MemberReadinessProvider

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")]

POOL_NAME = "api"
PORT = 6443


def retry(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call fn, retrying 409 (PENDING_* objects) and connection resets for up to a minute (test setup only)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return fn(*args, **kwargs)
        except (os_exc.ConflictException, ks_exc.ConnectFailure):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@dataclass
class Zone:
    """One test zone: the project connection, the load balancer, its monitored pool and the VIP subnet."""

    conn: Any
    lb_id: str
    pool_id: str
    subnet_id: str
    next_address: int = 10
    network: int = 1
    """The zone's member addresses are 10.10.<network>.<n> (az1 -> 1, az2 -> 2, az3 -> 3)."""

    def lb_label(self) -> str:
        lb = retry(self.conn.load_balancer.get_load_balancer, self.lb_id)
        return f"{lb.provisioning_status}/{lb.operating_status}"

    def wait_lb(self, status: str = "ACTIVE", timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while (label := self.lb_label()).split("/")[0] != status:
            assert time.monotonic() < deadline, f"load balancer {self.lb_id} still {label}"
            time.sleep(0.2)

    def add_member(self) -> str:
        address = f"10.10.{self.network}.{self.next_address}"
        self.next_address += 1
        member = retry(self.conn.load_balancer.create_member, self.pool_id, address=address, protocol_port=PORT,
                       subnet_id=self.subnet_id)
        return member.id

    def member_label(self, member_id: str) -> str:
        member = retry(self.conn.load_balancer.get_member, member_id, self.pool_id)
        return f"{member.provisioning_status}/{member.operating_status}"

    def wait_member(self, member_id: str, label: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while (seen := self.member_label(member_id)) != label:
            assert time.monotonic() < deadline, f"member {member_id} still {seen}, expected {label}"
            time.sleep(0.1)

    def props(self, member_ids, **overrides) -> dict:
        bag = {
            "loadbalancer_id": self.lb_id,
            "pools": {POOL_NAME: {"pool_id": self.pool_id, "member_ids": list(member_ids), "monitored": True}},
            "require": "online",
            "timeout_seconds": 60,
            "poll_interval_seconds": 1.0,
            "__provider": "unused-here",
        }
        bag.update(overrides)
        return bag


def build_zone(conn: Any, subnet_id: str, name: Callable[[str], str], register: Callable[[str, Any], Any],
               az: str = "az1", monitor: bool = True) -> Zone:
    """Load balancer (in ``az``, VIP on ``subnet_id``) -> TCP listener -> pool -> TCP monitor (delay 1 s; none when
    ``monitor`` is false), each waited ACTIVE."""
    lb = retry(conn.load_balancer.create_load_balancer, name=name(f"{az}-lb"), vip_subnet_id=subnet_id,
               availability_zone=az)
    register("load_balancer", lb)
    zone = Zone(conn, lb.id, "", subnet_id, network=int(az[-1]))
    zone.wait_lb()
    listener = retry(conn.load_balancer.create_listener, name=name(f"{az}-listener"), loadbalancer_id=lb.id,
                     protocol="TCP", protocol_port=PORT)
    zone.wait_lb()
    pool = retry(conn.load_balancer.create_pool, name=name(f"{az}-pool"), listener_id=listener.id, protocol="TCP",
                 lb_algorithm="ROUND_ROBIN")
    zone.pool_id = pool.id
    zone.wait_lb()
    if monitor:
        retry(conn.load_balancer.create_health_monitor, pool_id=pool.id, type="TCP", delay=1, timeout=1,
              max_retries=1, max_retries_down=1)
        zone.wait_lb()
    return zone


@pytest.fixture
def zone(localcloud, cloud_cleanup) -> Zone:
    return build_zone(localcloud.conn, localcloud.seed["az1_subnet_id"], cloud_cleanup.name, cloud_cleanup.add)


def in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, dict]:
    box: dict = {}

    def run():
        start = time.monotonic()
        try:
            box["value"] = fn()
        except BaseException as exc:  # reported by the test
            box["error"] = exc
        box["seconds"] = time.monotonic() - start

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, box


def test_members_reach_online_and_the_gate_opens(zone):
    members = [zone.add_member() for _ in range(3)]
    labels_at_start = [zone.member_label(m) for m in members]
    outs = MemberReadinessProvider().create(zone.props(members)).outs
    assert outs["statuses"] == {m: "ACTIVE/ONLINE" for m in sorted(members)}, labels_at_start
    assert outs["ready"] and outs["all_online"]
    assert outs["api_calls"] == outs["polls"] + outs["transient_errors"], "one listing per pool per poll"
    assert all(zone.member_label(m) == "ACTIVE/ONLINE" for m in members)


def test_a_member_held_down_keeps_the_gate_closed_until_the_timeout(localcloud, zone, cloud_cleanup):
    members = [zone.add_member() for _ in range(3)]
    MemberReadinessProvider().create(zone.props(members))
    down = members[1]
    cloud_cleanup.add("member", down)
    localcloud.faults.member_down(down)
    zone.wait_member(down, "ACTIVE/ERROR")
    started = time.monotonic()
    with pytest.raises(ReadinessTimeout) as caught:
        MemberReadinessProvider().create(zone.props(members, timeout_seconds=4))
    elapsed = time.monotonic() - started
    assert zone.lb_label() == "ACTIVE/DEGRADED"
    assert str(caught.value) == (
        f"load balancer {zone.lb_id}: 1 of 3 members not ready after 4s (requirement: provisioning ACTIVE and "
        f"operating ONLINE): member {down} in pool {POOL_NAME} ({zone.pool_id}) is ACTIVE/ERROR. Load balancer "
        f"{zone.lb_id} is ACTIVE/DEGRADED."
    )
    assert elapsed >= 4  # the gate stayed closed for the whole timeout (no upper bound: these machines are noisy)
    localcloud.faults.member_clear(down)
    assert MemberReadinessProvider().create(zone.props(members)).outs["all_online"]


def test_provisioned_requirement_opens_with_a_member_down(localcloud, zone, cloud_cleanup):
    """Bootstrap publication: members need only be ACTIVE (the first node is not healthy yet)."""
    members = [zone.add_member() for _ in range(2)]
    cloud_cleanup.add("member", members[0])
    localcloud.faults.member_down(members[0])
    zone.wait_member(members[0], "ACTIVE/ERROR")
    outs = MemberReadinessProvider().create(zone.props(members, require="provisioned", timeout_seconds=30)).outs
    assert outs["ready"] and not outs["all_online"]
    assert outs["statuses"][members[0]] == "ACTIVE/ERROR"


def test_no_monitor_counts_only_for_a_pool_without_a_health_monitor(localcloud, cloud_cleanup):
    zone = build_zone(localcloud.conn, localcloud.seed["az1_subnet_id"], cloud_cleanup.name, cloud_cleanup.add,
                      monitor=False)
    members = [zone.add_member() for _ in range(2)]
    unmonitored = {"pools": {POOL_NAME: {"pool_id": zone.pool_id, "member_ids": members, "monitored": False}}}
    outs = MemberReadinessProvider().create(zone.props(members, **unmonitored)).outs
    assert outs["statuses"] == {m: "ACTIVE/NO_MONITOR" for m in sorted(members)} and outs["all_online"]
    with pytest.raises(ReadinessTimeout, match=r"is ACTIVE/NO_MONITOR \(the pool has a health monitor, so "
                                               r"NO_MONITOR does not count\)"):
        MemberReadinessProvider().create(zone.props(members, timeout_seconds=2))


def test_a_provisioning_error_fails_fast(localcloud, zone):
    members = [zone.add_member() for _ in range(2)]
    zone.wait_lb()
    localcloud.faults.force_error(members[0], kind="member")
    started = time.monotonic()
    try:
        with pytest.raises(MemberFailed) as caught:
            MemberReadinessProvider().create(zone.props(members, timeout_seconds=60))
    finally:
        localcloud.faults.force_status(members[0], "ACTIVE", kind="member")  # so that cleanup can delete it
    assert time.monotonic() - started < 30  # failed on the ERROR, not by waiting out the 60 s timeout
    assert caught.value.member_id == members[0]
    assert re.fullmatch(
        rf"member {members[0]} in pool {POOL_NAME} \({zone.pool_id}\) failed: it is ERROR/\w+ and provisioning "
        rf"ERROR is terminal\. Load balancer {zone.lb_id} is ACTIVE/\w+\. Delete or replace the member \(the "
        rf"load-balancer service's worker log says why it failed\) and run the update again\.",
        str(caught.value),
    ), str(caught.value)


@pytest.mark.exclusive  # Octavia's one worker frozen: every other client's writes stall
def test_a_frozen_worker_is_waited_out_when_thawed_in_time_and_409s_are_retried(localcloud, zone):
    members = [zone.add_member() for _ in range(2)]
    MemberReadinessProvider().create(zone.props(members))
    with localcloud.faults.frozen_worker():
        late = zone.add_member()
        assert zone.member_label(late).startswith("PENDING_CREATE/")
        assert zone.lb_label().startswith("PENDING_UPDATE/")
        with pytest.raises(os_exc.ConflictException):
            zone.conn.load_balancer.update_member(members[0], zone.pool_id, weight=2)
        gate, gate_box = in_thread(
            lambda: MemberReadinessProvider().create(zone.props([*members, late], timeout_seconds=30)).outs)
        drainer, drain_box = in_thread(lambda: drain.run_drain(
            {"pool_id": zone.pool_id, "member_id": members[0], "drain_seconds": 1, "timeout_seconds": 30}))
        time.sleep(3)
        assert gate.is_alive() and drainer.is_alive(), ("both wait while the worker is frozen", gate_box, drain_box)
    gate.join(30)
    drainer.join(30)
    assert "error" not in gate_box, gate_box.get("error")
    assert gate_box["value"]["statuses"][late] == "ACTIVE/ONLINE" and gate_box["seconds"] >= 3
    assert "error" not in drain_box, drain_box.get("error")
    result = drain_box["value"]
    assert result.drained and result.attempts > 1, "the weight update got 409 while the LB was PENDING_UPDATE"
    member = retry(zone.conn.load_balancer.get_member, members[0], zone.pool_id)
    assert member.weight == 0


@pytest.mark.exclusive  # Octavia's one worker frozen: every other client's writes stall
def test_a_frozen_worker_not_thawed_in_time_times_out_cleanly(localcloud, zone):
    members = [zone.add_member() for _ in range(2)]
    MemberReadinessProvider().create(zone.props(members))
    with localcloud.faults.frozen_worker():
        late = zone.add_member()
        started = time.monotonic()
        with pytest.raises(ReadinessTimeout) as caught:
            MemberReadinessProvider().create(zone.props([*members, late], timeout_seconds=3))
        elapsed = time.monotonic() - started
    assert elapsed >= 3  # waited the whole timeout, then failed cleanly
    assert caught.value.member_ids == (late,)
    assert re.fullmatch(
        rf"load balancer {zone.lb_id}: 1 of 3 members not ready after 3s \(requirement: provisioning ACTIVE and "
        rf"operating ONLINE\): member {late} in pool {POOL_NAME} \({zone.pool_id}\) is PENDING_CREATE/\w+\. Load "
        rf"balancer {zone.lb_id} is PENDING_UPDATE/\w+\.",
        str(caught.value),
    ), str(caught.value)


def test_an_expired_token_mid_wait_is_survived(localcloud, zone, cloud_cleanup, monkeypatch):
    """The first connection authenticates with a token (as with OS_AUTH_TYPE=v3token). After the first poll its
    token is replaced by a revoked one and the session forgets its validation, which is what an expired token
    looks like to keystoneauth (revoking the token in use would go unnoticed: Octavia caches validations for
    10 minutes). The next poll fails to authenticate; the provider rebuilds the connection from the environment
    (password) and carries on."""
    auth = dict(openstack.config.OpenStackConfig().get_one(cloud="localcloud").config["auth"])
    issue = lambda: openstack.connect(cloud="localcloud").session.get_token()  # noqa: E731
    token_conn = openstack.connect(
        auth_type="v3token", token=issue(), auth_url=auth["auth_url"], project_name=auth["project_name"],
        project_domain_name=auth["project_domain_name"], region_name="RegionOne",
        load_yaml_config=False, load_envvars=False)
    connections = []
    monkeypatch.setattr(status, "connect", lambda name=None: connections.append(name) or (
        token_conn if len(connections) == 1 else openstack.connect(cloud=name)))

    member = zone.add_member()
    cloud_cleanup.add("member", member)
    localcloud.faults.member_down(member)  # keeps the gate closed past the first poll
    expired = []

    def sleep_and_expire(seconds):
        if not expired:
            revoked = issue()
            admin = openstack.connect(cloud="localcloud")
            admin.session.delete(auth["auth_url"] + "/auth/tokens", headers={"X-Subject-Token": revoked})
            token_conn.session.auth.auth_methods[0].token = revoked
            token_conn.session.auth.invalidate()
            expired.append(time.monotonic())
            localcloud.faults.member_clear(member)
        time.sleep(seconds)

    monkeypatch.setattr(provider, "_sleep", sleep_and_expire)
    outs = MemberReadinessProvider().create(zone.props([member], timeout_seconds=60)).outs
    assert expired and outs["reauths"] == 1 and len(connections) == 2
    assert outs["statuses"] == {member: "ACTIVE/ONLINE"}


def gate_latency(zone: Zone, faults: Any, register: Callable[[str, Any], Any], hold_seconds: float = 1.7) -> float:
    """Seconds from a member turning ACTIVE/ONLINE (as a 20 Hz sampler sees it) to the gate waiting for it opening.

    The member is held DOWN while the gate starts waiting, then released at an arbitrary moment of its polling.
    """
    member = zone.add_member()
    register("member", member)
    faults.member_down(member)
    zone.wait_member(member, "ACTIVE/ERROR")
    opened: dict = {}

    def gate():
        MemberReadinessProvider().create(zone.props([member]))
        opened["at"] = time.monotonic()

    thread = threading.Thread(target=gate, daemon=True)
    thread.start()
    time.sleep(hold_seconds)
    assert "at" not in opened, "the gate opened while its member was DOWN"
    faults.member_clear(member)
    while zone.member_label(member) != "ACTIVE/ONLINE":
        time.sleep(0.05)
    online_at = time.monotonic()
    thread.join(30)
    assert "at" in opened, "the gate did not open"
    return opened["at"] - online_at


def test_gate_waits_while_the_member_is_down_and_opens_once_it_is_online(localcloud, zone, cloud_cleanup):
    """Behaviour, not timing (this machine is noisy): the gate stays shut while the member is DOWN and opens after it
    turns ONLINE (both asserted in gate_latency, for each of three hold times). The latency is printed as a figure
    (lab/bench/readiness_figures.py measures it side by side)."""
    latencies = [gate_latency(zone, localcloud.faults, cloud_cleanup.add, hold) for hold in (1.3, 1.7, 2.1)]
    print(f"gate latency after the last member ONLINE (interval 1 s): {[round(x, 3) for x in latencies]}")


def test_an_explicit_providers_second_clouds_yaml_entry_is_polled_not_os_cloud(localcloud, zone, tmp_path,
                                                                                monkeypatch):
    """Issue 9: the gate polls the cloud of the provider its resources use. A second clouds.yaml entry (the same
    cloud under another name) is what the explicit provider names; OS_CLOUD points at an entry that does not exist,
    so a gate that fell back to it could not poll at all."""
    import yaml

    clouds = yaml.safe_load(open(localcloud.clouds_yaml))
    clouds["clouds"]["second-entry"] = clouds["clouds"]["localcloud"]
    path = tmp_path / "clouds.yaml"
    path.write_text(yaml.safe_dump(clouds))
    path.chmod(0o600)
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(path))
    monkeypatch.setenv("OS_CLOUD", "no-such-entry")
    members = [zone.add_member()]
    region = clouds["clouds"]["localcloud"].get("region_name", "RegionOne")
    outs = MemberReadinessProvider().create(
        zone.props(members, cloud="second-entry", region=region, cloud_source="provider")).outs
    assert outs["ready"] and outs["statuses"] == {members[0]: "ACTIVE/ONLINE"}
    with pytest.raises(Exception, match="no-such-entry"):  # what falling back to OS_CLOUD would have done
        MemberReadinessProvider().create(zone.props(members, cloud_source="stack"))

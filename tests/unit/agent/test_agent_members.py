"""The agent on a fake management cluster and a fake Octavia that behave like the real ones: machines join and
count only when ONLINE, leave through our hook in order, maintenance, problems, faults."""

from __future__ import annotations

import openstack.exceptions as os_exc
from agent_fakes import http_error
from agent_harness import DRAIN, POOL, World

from ha_endpoint.agent.inputs import DRAINING_SINCE_ANNOTATION, HOOK_ANNOTATION, STATUS_ANNOTATION
from ha_endpoint.agent.machines import MAINTENANCE_ANNOTATION
from ha_endpoint.agent.reconcile import PENDING_POLL, PENDING_WINDOW


def serving_cluster(world, names=(("cp-1", "az1", "10.0.1.11"), ("cp-2", "az2", "10.0.2.11"),
                                  ("cp-3", "az3", "10.0.3.11"))):
    for name, az, address in names:
        world.cluster.add_machine(name, az, address)
        world.octavia.serve(address)
    agent = world.replica("agent-a")
    world.run([agent], 15)
    return agent


def test_a_new_machine_joins_once_it_has_an_address_and_counts_only_when_online():
    world = World()
    agent = world.replica("agent-a")
    world.cluster.add_machine("cp-1", "az1")
    world.run([agent], 2)
    assert world.octavia.named("cp-1") == []  # no address: nothing guessed
    assert world.cluster.annotations("cp-1")[STATUS_ANNOTATION].startswith("problem: no InternalIP address")
    world.cluster.set_address("cp-1", "10.0.1.11")
    world.run([agent], 1)
    [member] = world.octavia.named("cp-1")
    assert (member.pool_id, member.address, member.protocol_port, member.tags) == \
        ("pool1", "10.0.1.11", 6443, ["ha-endpoint:agent=default/prod"])
    assert world.cluster.annotations("cp-1")[HOOK_ANNOTATION] == "ha-endpoint-agent"
    world.run([agent], 5)  # ACTIVE, but its API server does not answer yet: OFFLINE
    assert world.cluster.annotations("cp-1")[STATUS_ANNOTATION] == "joining: 6443 ACTIVE/OFFLINE"
    assert agent.metric("ha_endpoint_agent_members", az="az1", state="joining") == 1
    assert agent.metric("ha_endpoint_agent_members", az="az1", state="serving") == 0
    world.octavia.serve("10.0.1.11")
    world.run([agent], 8)
    assert world.cluster.annotations("cp-1")[STATUS_ANNOTATION] == "serving: 6443 ACTIVE/ONLINE"
    assert agent.metric("ha_endpoint_agent_members", az="az1", state="serving") == 1


def test_deletion_drains_waits_for_another_online_member_then_deletes_and_only_then_releases_the_hook():
    world = World()
    agent = serving_cluster(world)
    world.cluster.add_machine("cp-4", "az1", "10.0.1.12")  # KubeadmControlPlane: the new machine first
    world.run([agent], 3)
    world.cluster.delete_machine("cp-1")
    world.run([agent], 3)
    [old] = world.octavia.named("cp-1")
    assert old.admin_state_up is True  # make before break: in service until cp-4 serves
    assert world.cluster.annotations("cp-1")[STATUS_ANNOTATION] == \
        "draining: 6443 in service, waiting for cp-4 to serve in az1"
    world.run([agent], 60)  # cp-4's API server never answers: cp-1 stays, in service, held by our hook
    assert world.octavia.named("cp-1")[0].admin_state_up is True and "cp-1" in world.cluster.machines
    world.octavia.serve("10.0.1.12")
    world.run([agent], 60)
    assert "cp-1" not in world.cluster.machines and world.octavia.named("cp-1") == []
    timeline = [(t, what) for t, what in world.timeline if "cp-1" in what]
    steps = [what for _, what in timeline]
    assert steps == ["create cp-1", "delete requested cp-1", "admin down cp-1", "delete cp-1", "hook released cp-1",
                     "machine gone cp-1"]
    times = dict((what, t) for t, what in timeline)
    assert times["delete cp-1"] - times["admin down cp-1"] >= 20  # the drain time
    assert world.octavia.online("pool1", "cp-4")
    assert world.cluster.reasons("cp-1") == ["HookReleased"]
    assert agent.metric("ha_endpoint_agent_hook_wait_seconds_count") == 1


def test_the_zones_only_member_leaves_when_the_endpoint_has_another_online_member():
    world = World()
    agent = serving_cluster(world, (("cp-1", "az1", "10.0.1.11"),))
    world.cluster.delete_machine("cp-1")
    world.run([agent], 60)
    assert "cp-1" in world.cluster.machines  # the endpoint's only member: held
    world.cluster.add_machine("cp-2", "az2", "10.0.2.11")
    world.octavia.serve("10.0.2.11")
    world.run([agent], 40)
    assert "cp-1" not in world.cluster.machines and world.octavia.named("cp-1") == []


def test_killed_mid_drain_the_other_replica_finishes_and_never_releases_early():
    world = World()
    a = serving_cluster(world, (("cp-1", "az1", "10.0.1.11"), ("cp-4", "az1", "10.0.1.12")))
    b = world.replica("agent-b")
    world.run([a, b], 2)
    world.cluster.delete_machine("cp-1")
    world.run([a, b], 8)  # a drains, the drain time starts (20 s)
    assert world.cluster.annotations("cp-1").get(DRAINING_SINCE_ANNOTATION)
    started = float(world.cluster.annotations("cp-1")[DRAINING_SINCE_ANNOTATION])
    writes = len(world.timeline)
    world.run([b], 10)  # a is killed; b waits for the Lease to expire and writes nothing meanwhile
    assert len(world.timeline) == writes and HOOK_ANNOTATION in world.cluster.annotations("cp-1")
    world.run([b], 40)
    assert "cp-1" not in world.cluster.machines
    steps = [what for _, what in world.timeline if "cp-1" in what]
    assert steps.index("delete cp-1") < steps.index("hook released cp-1")
    deleted = next(t for t, what in world.octavia.log if what == "delete cp-1")
    assert deleted - started >= 20  # b kept a's drain start (never shorter)
    assert any("agent-b leads (took over from agent-a)" in line for line in world.logs)


def test_the_maintenance_annotation_takes_the_member_out_and_back():
    world = World()
    agent = serving_cluster(world)
    world.cluster.annotations("cp-2")[MAINTENANCE_ANNOTATION] = "kernel update"
    world.run([agent], 3)
    [member] = world.octavia.named("cp-2")
    assert member.admin_state_up is False
    assert world.cluster.annotations("cp-2")[STATUS_ANNOTATION] == "maintenance: 6443 out (kernel update)"
    assert agent.metric("ha_endpoint_agent_members", az="az2", state="out") == 1
    del world.cluster.annotations("cp-2")[MAINTENANCE_ANNOTATION]
    world.run([agent], 10)
    assert world.octavia.named("cp-2")[0].admin_state_up is True
    assert world.cluster.annotations("cp-2")[STATUS_ANNOTATION] == "serving: 6443 ACTIVE/ONLINE"


def test_maintenance_never_takes_out_the_last_serving_member_of_the_endpoint():
    """The maintenance annotation waits as a deletion does: while no other member serves the listener anywhere, the
    member stays in service and says why; it goes out once another machine serves."""
    world = World()
    agent = serving_cluster(world, (("cp-1", "az1", "10.0.1.11"),))
    world.cluster.annotations("cp-1")[MAINTENANCE_ANNOTATION] = "kernel update"
    world.run([agent], 10)
    assert world.octavia.named("cp-1")[0].admin_state_up is True
    assert world.cluster.annotations("cp-1")[STATUS_ANNOTATION] == \
        "maintenance: 6443 in service (kernel update), waiting for another ONLINE member before it is taken out"
    world.cluster.add_machine("cp-2", "az2", "10.0.2.11")
    world.octavia.serve("10.0.2.11")
    world.run([agent], 15)
    assert world.octavia.named("cp-1")[0].admin_state_up is False
    assert world.cluster.annotations("cp-1")[STATUS_ANNOTATION] == "maintenance: 6443 out (kernel update)"


def test_a_member_of_the_zone_that_is_down_and_not_ours_does_not_hold_maintenance_or_a_deletion():
    """A zone's pool also holds a static member whose server is gone (ERROR, not the agent's: the stack's members[]):
    it will not serve, so it is not waited for as a machine joining. The zone's only agent member goes out for its
    maintenance once another zone serves, and a deleted machine's hook is released (seen in
    tests/e2e/test_k8s_rollout.py: such a member held the maintenance for good)."""
    world = World()
    world.octavia.static_member(POOL["az1"], "static-0", "10.0.1.50", 6443, ["ha-endpoint:stack=ha-endpoint/dev"],
                                down=True)
    agent = serving_cluster(world)
    world.cluster.annotations("cp-1")[MAINTENANCE_ANNOTATION] = "kernel update"
    world.run([agent], 5)
    assert world.octavia.named("cp-1")[0].admin_state_up is False
    assert world.cluster.annotations("cp-1")[STATUS_ANNOTATION] == "maintenance: 6443 out (kernel update)"
    world.cluster.delete_machine("cp-2")
    world.octavia.static_member(POOL["az2"], "static-1", "10.0.2.50", 6443, ["ha-endpoint:stack=ha-endpoint/dev"],
                                down=True)
    world.run([agent], DRAIN + 15)
    assert "cp-2" not in world.cluster.machines and world.octavia.named("cp-2") == []
    [static] = world.octavia.named("static-0")
    assert static.admin_state_up  # never touched


def test_machines_without_address_or_failure_domain_are_reported_on_the_machine():
    world = World()
    agent = world.replica("agent-a")
    world.cluster.add_machine("cp-1", None, "10.0.1.11")
    world.cluster.add_machine("cp-2", "az9", "10.0.9.11")
    world.run([agent], 5)
    assert world.octavia.members == {}
    assert world.cluster.reasons("cp-1") == ["NotServed"] and world.cluster.reasons("cp-2") == ["NotServed"]
    assert "spec.failureDomain" in world.cluster.events[0][2]
    assert "'az9' is not a zone of the endpoint" in world.cluster.annotations("cp-2")[STATUS_ANNOTATION]
    assert agent.metric("ha_endpoint_agent_machine_problems") == 2


def test_octavia_409_and_5xx_are_retried():
    world = World()
    agent = world.replica("agent-a")
    world.cluster.add_machine("cp-1", "az1", "10.0.1.11")
    world.cluster.add_machine("cp-2", "az1", "10.0.1.12")  # two creates on one load balancer: the second meets 409
    world.octavia.faults = [503, 502]
    assert agent.step()
    assert len(world.octavia.named("cp-1")) == 1 and len(world.octavia.named("cp-2")) == 1
    assert world.octavia.conflicts >= 1
    assert agent.metric("ha_endpoint_agent_errors_total", kind="cloud") == 0


def test_a_cloud_failure_that_outlasts_the_retries_is_reported_not_swallowed():
    world = World()
    agent = serving_cluster(world, (("cp-1", "az1", "10.0.1.11"),))
    world.cluster.add_machine("cp-2", "az1", "10.0.1.12")

    def forbidden(pool_id, **attrs):
        raise http_error(403, os_exc.ForbiddenException, "policy does not allow")
    agent.cloud._conn.load_balancer.create_member = forbidden
    agent.step()
    assert world.cluster.reasons("cp-2") == ["MemberFailed"]
    assert "403" in world.cluster.events[-1][2]
    assert world.cluster.annotations("cp-2")[STATUS_ANNOTATION].startswith("problem: cloud:")
    assert agent.metric("ha_endpoint_agent_errors_total", kind="cloud") == 1


def test_management_api_unreachable_deletes_nothing():
    world = World()
    agent = serving_cluster(world)
    world.cluster.reachable = False
    del world.cluster.machines["cp-2"]  # gone while nobody could see it
    writes = len(world.timeline)
    world.run([agent], 30)
    assert len(world.timeline) == writes and world.octavia.named("cp-2")
    assert agent.metric("ha_endpoint_agent_machines_synced") == 0
    assert agent.metric("ha_endpoint_agent_errors_total", kind="unsynced") > 0
    world.cluster.reachable = True  # a fresh list proves it gone: its member leaves the safe way
    world.run([agent], 40)
    assert world.octavia.named("cp-2") == []
    assert [what for _, what in world.timeline[writes:]] == ["admin down cp-2", "delete cp-2"]


def test_a_machine_held_too_long_raises_an_event_and_a_metric_and_is_not_released():
    world = World(hook_warn_after=30)
    agent = serving_cluster(world, (("cp-1", "az1", "10.0.1.11"),))
    world.cluster.delete_machine("cp-1")  # the endpoint's only member: it may not leave
    world.run([agent], 45)
    assert "cp-1" in world.cluster.machines
    assert world.cluster.reasons("cp-1") == ["HookHeldTooLong"]
    assert agent.metric("ha_endpoint_agent_hooks_held_too_long") == 1
    assert agent.metric("ha_endpoint_agent_hooks_waiting") == 1


def test_members_of_others_are_never_touched():
    world = World()
    world.octavia.static_member(POOL["az1"], "static-1", "10.0.1.50", 6443, ["ha-endpoint:stack=ha-endpoint/dev"])
    agent = serving_cluster(world)
    world.cluster.add_machine("cp-9", "az1", "10.0.1.50")  # takes a static member's address
    world.run([agent], 5)
    [static] = world.octavia.named("static-1")
    assert static.admin_state_up and world.octavia.named("cp-9") == []
    assert "is taken by member static-1" in world.cluster.annotations("cp-9")[STATUS_ANNOTATION]


def test_a_served_machine_that_turns_into_a_problem_keeps_its_member_as_it_is():
    world = World()
    agent = serving_cluster(world)
    world.cluster.annotations("cp-2")[MAINTENANCE_ANNOTATION] = "x" * 5000  # refused: not a reason
    world.cluster.machines["cp-3"]["status"]["addresses"] = []  # its provider lost the address for a while
    writes = len(world.timeline)
    world.run([agent], 60)
    assert len(world.timeline) == writes
    assert world.octavia.named("cp-2")[0].admin_state_up and world.octavia.named("cp-3")
    assert world.cluster.annotations("cp-2")[STATUS_ANNOTATION].startswith("problem: ")
    assert world.cluster.reasons("cp-3") == ["NotServed"]


def test_a_steady_state_and_a_drain_time_write_nothing_to_the_machines_at_every_pass():
    world = World(drain=60)
    agent = serving_cluster(world, (("cp-1", "az1", "10.0.1.11"), ("cp-4", "az1", "10.0.1.12")))
    before = dict(world.cluster.patches)
    world.run([agent], 20)
    assert world.cluster.patches == before  # serving: nothing to say again
    world.cluster.delete_machine("cp-1")
    world.run([agent], 5)  # drained, drain time started
    during = world.cluster.patches["cp-1"]
    world.run([agent], 40)  # within the drain time: a status that counted down would be a patch per pass
    assert world.cluster.patches["cp-1"] == during
    assert "deleted after" in world.cluster.annotations("cp-1")[STATUS_ANNOTATION]


def test_every_listener_of_the_zone_gets_the_member_on_its_member_port_and_the_hook_waits_for_all():
    import dataclasses

    from agent_harness import ZONES
    from ha_endpoint.core.outputs import ZoneOutputs

    world = World()
    world.octavia.add_pool("pool1-443", "lb1")
    zones = {**ZONES, "az1": ZoneOutputs(loadbalancer_id="lb1", pool_ids={"443": "pool1-443", "6443": "pool1"})}
    world.settings = dataclasses.replace(world.settings, zones=zones, member_ports={443: 6443})
    agent = serving_cluster(world, (("cp-1", "az1", "10.0.1.11"), ("cp-4", "az1", "10.0.1.12")))
    assert sorted((m.pool_id, m.protocol_port) for m in world.octavia.named("cp-1")) == \
        [("pool1", 6443), ("pool1-443", 6443)]
    assert world.cluster.annotations("cp-1")[STATUS_ANNOTATION] == \
        "serving: 443 ACTIVE/ONLINE; 6443 ACTIVE/ONLINE"
    world.cluster.delete_machine("cp-1")
    world.run([agent], 60)
    assert "cp-1" not in world.cluster.machines and world.octavia.named("cp-1") == []
    steps = [what for _, what in world.timeline if "cp-1" in what]
    assert steps.index("hook released cp-1") > max(i for i, what in enumerate(steps) if what == "delete cp-1")
    assert steps.count("delete cp-1") == 2


def test_a_new_machine_serves_only_once_its_api_server_is_said_healthy_and_the_old_ones_hook_waits_for_it():
    world = World()
    agent = serving_cluster(world)
    # KubeadmControlPlane: the new machine first; its address comes before its API server is ready, and its port
    # accepts connections (the TCP monitor would call it ONLINE) before /readyz answers
    world.cluster.add_machine("cp-4", "az1", "10.0.1.12", api_server=None)
    world.octavia.serve("10.0.1.12")
    world.run([agent], 3)
    assert world.octavia.named("cp-4") == []  # no member while it is not wanted in service
    world.cluster.delete_machine("cp-1")
    world.run([agent], 60)
    assert world.octavia.named("cp-4") == []
    assert "cp-1" in world.cluster.machines and world.octavia.named("cp-1")[0].admin_state_up  # held, serving
    assert world.cluster.annotations("cp-4")[STATUS_ANNOTATION] == \
        "joining: 6443 out until APIServerPodHealthy is absent"
    assert world.cluster.reasons("cp-4") == ["WaitingForCondition"]  # once, saying why
    assert "APIServerPodHealthy is True: APIServerPodHealthy is absent" in world.cluster.events[-1][2]
    world.cluster.set_api_server("cp-4", "Unknown")
    world.run([agent], 10)
    assert world.octavia.named("cp-4") == []
    world.cluster.set_api_server("cp-4", "True")
    world.run([agent], 60)
    assert world.octavia.online("pool1", "cp-4")
    assert "cp-1" not in world.cluster.machines and world.octavia.named("cp-1") == []
    steps = [what for _, what in world.timeline if "cp-4" in what or "cp-1" in what]
    assert steps.index("APIServerPodHealthy True cp-4") < steps.index("create cp-4") < \
        steps.index("admin down cp-1") < steps.index("delete cp-1")
    created = next(t for t, what in world.timeline if what == "create cp-4")
    drained = next(t for t, what in world.timeline if what == "admin down cp-1")
    assert drained - created >= world.octavia.health_seconds  # cp-1 served until cp-4 was ONLINE


def test_a_condition_turned_false_takes_the_member_out_and_unknown_leaves_it_in():
    world = World()
    agent = serving_cluster(world, (("cp-1", "az1", "10.0.1.11"), ("cp-2", "az1", "10.0.1.12"),
                                    ("cp-3", "az2", "10.0.2.11")))
    world.cluster.set_api_server("cp-2", "Unknown", "ConnectionDown")  # KCP cannot reach the workload cluster
    world.run([agent], 5)
    assert world.octavia.named("cp-2")[0].admin_state_up is True
    assert world.cluster.annotations("cp-2")[STATUS_ANNOTATION] == "serving: 6443 ACTIVE/ONLINE"
    world.cluster.set_api_server("cp-2", "False", "Failed")  # KCP saw the API server pod fail
    world.run([agent], 5)
    assert world.octavia.named("cp-2")[0].admin_state_up is False
    assert world.cluster.annotations("cp-2")[STATUS_ANNOTATION] == \
        "joining: 6443 out until APIServerPodHealthy is False (Failed)"
    world.cluster.set_api_server("cp-2", "True")
    world.run([agent], 20)
    [member] = world.octavia.named("cp-2")
    assert member.admin_state_up is True  # put back in service: deleted and created again (the ovn provider's way)
    assert world.cluster.annotations("cp-2")[STATUS_ANNOTATION] == "serving: 6443 ACTIVE/ONLINE"
    assert [what for _, what in world.timeline if what.endswith(" cp-2")][-4:] == [
        "admin down cp-2", "APIServerPodHealthy True cp-2", "delete cp-2", "create cp-2"]


def test_the_first_machine_serves_without_the_condition_kcp_can_only_set_through_the_endpoint():
    world = World()
    agent = world.replica("agent-a")
    world.cluster.add_machine("cp-1", "az1", "10.0.1.11", api_server=None)
    world.octavia.serve("10.0.1.11")
    world.run([agent], 12)
    assert world.octavia.named("cp-1")[0].admin_state_up is True  # nothing serves: nothing it could fail
    assert world.cluster.annotations("cp-1")[STATUS_ANNOTATION] == "serving: 6443 ACTIVE/ONLINE"
    world.cluster.add_machine("cp-2", "az2", "10.0.2.11", api_server=None)  # the endpoint serves now: cp-2 waits
    world.octavia.serve("10.0.2.11")
    world.run([agent], 12)
    assert world.octavia.named("cp-2") == []


def test_without_a_ready_condition_a_member_serves_once_its_machine_has_an_address():
    world = World(ready_condition=None)
    agent = serving_cluster(world, (("cp-1", "az1", "10.0.1.11"),))
    world.cluster.add_machine("cp-2", "az1", "10.0.1.12", api_server=None)
    world.run([agent], 3)
    assert world.octavia.named("cp-2")[0].admin_state_up is True


def test_paced_by_its_own_loop_the_agent_follows_octavia_at_its_fast_poll_and_is_quiet_when_nothing_waits():
    """The agent's loop at its default interval (5 s): while a change is pending it looks again every
    PENDING_POLL, so a new member counts, an old one is drained, deleted and its hook released at the first pass after
    Octavia or the drain time allows it; the drain time starts at the admin down itself; once nothing waits, a
    pass every interval."""
    world = World()
    agent = serving_cluster(world)
    assert agent.reconciler.next_pass_in(5.0) == 5.0  # steady: nothing waits on Octavia
    world.cluster.add_machine("cp-4", "az1", "10.0.1.12", api_server=None)
    world.octavia.serve("10.0.1.12")
    world.cluster.delete_machine("cp-1")
    world.run_paced(agent, 10, interval=5.0)
    assert world.octavia.named("cp-4") == [] and world.octavia.named("cp-1")[0].admin_state_up
    assert agent.reconciler.next_pass_in(5.0) == PENDING_POLL  # cp-1's deletion waits for cp-4
    world.run_paced(agent, PENDING_WINDOW, interval=5.0)  # cp-4's condition does not come: nothing changes
    assert agent.reconciler.next_pass_in(5.0) == 5.0  # the watch reports the condition; Octavia is left alone
    world.cluster.set_api_server("cp-4", "True")
    world.run_paced(agent, 60, interval=5.0)
    assert "cp-1" not in world.cluster.machines and world.octavia.named("cp-1") == []
    at = {what: t for t, what in reversed(world.timeline)}
    assert at["create cp-4"] - at["APIServerPodHealthy True cp-4"] <= PENDING_POLL
    online = at["create cp-4"] + world.octavia.health_seconds  # when the fake Octavia lists it ONLINE
    counted = next(t for t, line in world.said if line.startswith("Machine cp-4: status serving"))
    assert online <= counted <= online + PENDING_POLL
    assert online <= at["admin down cp-1"] <= online + PENDING_POLL  # make before break, no later than needed
    assert at["admin down cp-1"] <= at["delete cp-1"] - DRAIN <= at["admin down cp-1"] + PENDING_POLL  # the
    # drain time, from the admin down
    gone = at["delete cp-1"] + world.octavia.pending_seconds  # when the fake Octavia no longer lists it
    assert gone <= at["hook released cp-1"] <= gone + PENDING_POLL
    assert agent.reconciler.next_pass_in(5.0) == 5.0  # nothing waits any more
    calls, writes = agent.cloud.calls, len(world.timeline)
    world.run_paced(agent, 20, interval=5.0)
    assert len(world.timeline) == writes  # steady passes write nothing,
    assert agent.cloud.calls - calls == 4 * len(POOL)  # and list the pools once per interval


def test_during_the_drain_time_the_agent_waits_for_its_end_without_listing_the_pools():
    world = World()
    agent = serving_cluster(world, (("cp-1", "az1", "10.0.1.11"), ("cp-4", "az1", "10.0.1.12")))
    world.cluster.delete_machine("cp-1")
    agent.step()  # cp-4 serves the zone: cp-1 is drained at once, its drain time starts
    drained = next(t for t, what in world.timeline if what == "admin down cp-1")
    assert float(world.cluster.annotations("cp-1")[DRAINING_SINCE_ANNOTATION]) == drained
    assert agent.reconciler.next_pass_in(60.0) == DRAIN  # the next pass when the drain time ends, none before


def _steps(world, name):
    return [what for _, what in world.timeline if name in what or what.startswith("record ")]


def test_a_zones_only_member_leaves_dns_for_the_records_ttl_before_it_is_drained():
    """docs/agent.md, "A zone's only member": az1 has one machine; its deletion takes az1's address out of the A
    record first, drains only once the record's TTL has passed (no client still resolves to az1), and the record
    keeps the other zones. A zone that keeps another member never leaves DNS."""
    world = World(dns=["az1", "az2", "az3"], ttl=30)
    agent = serving_cluster(world)
    world.cluster.delete_machine("cp-1")
    world.run([agent], 120)
    assert "cp-1" not in world.cluster.machines
    assert _steps(world, "cp-1")[1:] == ["delete requested cp-1", "record 172.24.4.12 172.24.4.13", "admin down cp-1",
                                         "delete cp-1", "hook released cp-1", "machine gone cp-1"]
    times = {what: t for t, what in world.timeline}
    assert times["admin down cp-1"] - times["record 172.24.4.12 172.24.4.13"] >= 30
    assert any("172.24.4.11 taken out of api.example.test." in line for line in world.logs)
    # a zone that keeps a member: its other machine serves, the record is not written
    world.cluster.add_machine("cp-5", "az2", "10.0.2.12")
    world.octavia.serve("10.0.2.12")
    world.run([agent], 10)
    world.cluster.delete_machine("cp-2")
    world.run([agent], 60)
    assert "cp-2" not in world.cluster.machines and world.dns.held == ["172.24.4.12", "172.24.4.13"]


def test_the_records_last_zone_is_not_taken_out_and_its_member_waits_for_another_zone_in_dns():
    world = World(dns=["az1"], ttl=30)
    agent = serving_cluster(world)
    world.cluster.delete_machine("cp-1")
    world.run([agent], 60)
    assert world.octavia.named("cp-1")[0].admin_state_up is True and world.dns.held == ["172.24.4.11"]
    assert world.cluster.annotations("cp-1")[STATUS_ANNOTATION] == (
        "draining: 6443 in service: az1 is the only zone in api.example.test.; waiting for another zone to be "
        "published before it is taken out")
    world.dns.held = ["172.24.4.11", "172.24.4.12"]  # the watcher publishes az2
    world.run([agent], 90)
    assert "cp-1" not in world.cluster.machines and world.dns.held == ["172.24.4.12"]


def test_a_zone_put_back_in_dns_while_its_member_waits_is_taken_out_again_and_waited_for_anew():
    """A watcher restarted (or a ``pulumi up``) during the wait publishes az1 again while its member serves: the
    agent takes it out again and its TTL starts again."""
    world = World(dns=["az1", "az2", "az3"], ttl=30)
    agent = serving_cluster(world)
    world.cluster.delete_machine("cp-1")
    world.run([agent], 20)
    world.dns.held = sorted(world.dns.held + ["172.24.4.11"])
    world.run([agent], 120)
    writes = [t for t, what in world.timeline if what == "record 172.24.4.12 172.24.4.13"]
    assert len(writes) == 2
    drained = next(t for t, what in world.timeline if what == "admin down cp-1")
    assert drained - writes[1] >= 30


def test_a_record_that_is_not_the_endpoints_is_never_written_and_the_member_stays():
    world = World(dns=["az1", "az2", "az3"])
    world.dns.description = "made by hand"
    agent = serving_cluster(world)
    world.cluster.delete_machine("cp-1")
    world.run([agent], 60)
    assert world.octavia.named("cp-1")[0].admin_state_up is True and len(world.dns.held) == 3
    status = world.cluster.annotations("cp-1")[STATUS_ANNOTATION]
    assert status.startswith("problem: 6443 in service: az1's only member may leave only once the zone is out of "
                             "DNS, and A record api.example.test. (rs) is not ha-endpoint/dev's record api-dns")


def test_maintenance_of_a_zones_only_member_takes_the_zone_out_of_dns_first():
    world = World(dns=["az1", "az2", "az3"], ttl=30)
    agent = serving_cluster(world)
    world.cluster.annotations("cp-2")[MAINTENANCE_ANNOTATION] = "kernel update"
    world.run([agent], 10)
    assert world.octavia.named("cp-2")[0].admin_state_up is True and world.dns.held == ["172.24.4.11", "172.24.4.13"]
    assert world.cluster.annotations("cp-2")[STATUS_ANNOTATION].startswith(
        "maintenance: 6443 in service, az2 out of DNS; taken out after")
    world.run([agent], 30)
    assert world.octavia.named("cp-2")[0].admin_state_up is False


def test_a_zone_found_already_out_of_dns_is_waited_for_a_full_ttl_before_its_member_leaves():
    """The watcher took az1 out a moment ago (when, the agent cannot know): clients may still hold its address for a
    TTL, so az1's only member is drained a full TTL after the agent finds it out, never at once."""
    world = World(dns=["az1", "az2", "az3"], ttl=30)
    agent = serving_cluster(world)
    world.dns.held = ["172.24.4.12", "172.24.4.13"]
    world.cluster.delete_machine("cp-1")
    found = world.clock.now
    world.run([agent], 90)
    assert "cp-1" not in world.cluster.machines
    assert next(t for t, what in world.timeline if what == "admin down cp-1") - found >= 30
    assert not [what for _, what in world.timeline if what.startswith("record ")]

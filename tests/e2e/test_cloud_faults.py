"""Cloud faults in the middle of `pulumi up`, under the real engine against the local cloud.

One stack (`cloud-faults`, endpoint `fault-api`: two zones, one listener, one member per zone) is built, then rolled
out (every member replaced: new members, the readiness gates wait again, the old members are deleted at the end)
while the local cloud's fault tools (lab/localcloud/service_faults.py) break it:

1. Keystone is restarted while the new members are created, so the readiness gates start while nothing can
   authenticate (or the new members wait for Keystone and the gates start after it);
2. the Octavia API answers 503 for 30 s while the readiness gates wait;
3. the DNS record is replaced (`up --replace`): Designate allows one recordset per name, so the old one goes first;
4. a member is deleted behind the stack's back while its readiness gate waits: the update fails at once naming it,
   in a few lines; `refresh` and `up` create it again;
5. the Octavia API answers 503 for 30 s while the OpenStack provider plugin waits for members it created: the
   plugin's status waits poll on through the 503s and the update completes; the rerun (6) has nothing to do;
7. Octavia reports a new member ERROR while the provider plugin waits for it: the update fails naming the member, the
   stack records it, and the rerun converges on that same member.

Tests 0-4 run on the engine's own plugin (unpatched terraform-provider-openstack v3.4.0, what users run). Tests 5-7
are faults inside the provider's own status waits, which only the opt-in patched plugin survives (engine part
"openstack-patched", patch 0003): unpatched, v3.4.0 ends a member's wait at the first 503 and sets the member's id only
after the wait, so the update fails and leaves the members it posted out of the state, and the rerun posts them again
(Octavia refuses: 409 "already using ip", retried until the create timeout). So before test 5 the module's own
PULUMI_HOME gets the patched plugin under the same version (5.5.3): the stack moves to it with no change.

Each time the update completes, or fails with a precise message, and a rerun converges: the cloud, read back with
openstacksdk, holds exactly the stack's objects (no extra load balancer, listener, pool, member, floating IP, security
group or recordset), DNS answers the published addresses, and a preview shows no change. Every fault is undone
before the module ends (the Octavia API serving, Keystone running, heartbeats on).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Callable

import pytest

from localcloud.testing import Cleanup
from tests.e2e.cloud_checks import recordset_addresses, resolve_a
from tests.e2e.pulumi_cli import (PulumiStack, patched_openstack_plugin, program_failures, read_events,
                                  with_openstack_plugin)

# Keystone stopped, every Octavia request failed, heartbeats paused: nothing else may run meanwhile.
pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.exclusive]

ENDPOINT = "fault-api"
ZONES = ("az1", "az2")
"""Two zones: every fault here is cloud-wide (Keystone, Octavia's API) or aimed at az2, so a third zone would only add
a load balancer to build, roll and destroy in each step (issue 53: the suite's budget)."""
FQDN = f"{ENDPOINT}.example.test."
GATE_TYPE = "haendpoint:MemberReadiness"


def fault_config(host: int) -> dict:
    return {
        "name": ENDPOINT, "floatingNetwork": "public",
        "zones": {az: {"subnet": f"cp-{az}"} for az in ZONES},
        "listeners": [{"port": 6443, "monitor": {"type": "TCP"}}],
        "members": [{"name": f"cp-{n}", "address": f"10.10.{n}.{host}", "az": f"az{n}"}
                    for n in range(1, len(ZONES) + 1)],
        "dns": {"dnsZone": "example.test.", "record": ENDPOINT, "ttl": 30},
        "readiness": {"timeoutSeconds": 300, "stablePolls": 2},
    }


@pytest.fixture(scope="module")
def swept(localcloud, faults):
    sweep = Cleanup(localcloud)
    sweep.prefix = ENDPOINT
    assert not sweep.run(), "leftovers of an earlier run could not be deleted"
    yield
    faults.clear_services()
    faults.heartbeat_resume()
    assert not sweep.run()


@pytest.fixture(scope="module")
def stack(tmp_path_factory, pulumi_environment, swept):
    workdir = tmp_path_factory.mktemp("cloud-faults")
    environment = with_openstack_plugin(pulumi_environment, default_openstack_plugin(pulumi_environment),
                                        workdir / "pulumi-home")
    instance = PulumiStack.create(workdir / "project", "cloud-faults", environment)
    instance.write_config(fault_config(10))
    yield instance
    instance.destroy(check=False)


# -- reading the cloud back -------------------------------------------------------------------------------------------

def state_ids(stack: PulumiStack) -> dict[str, set[str]]:
    """The cloud ids the stack's state records, by resource kind (the last part of the type token)."""
    ids: dict[str, set[str]] = {}
    for resource in stack.resources():
        if resource["type"].startswith("openstack:") and resource.get("id"):
            ids.setdefault(resource["type"].rsplit(":", 1)[1], set()).add(resource["id"])
    return ids


def cloud_ids(conn) -> dict[str, set[str]]:
    """What the cloud holds that is named after the endpoint, by the same kinds."""
    lbs = [lb for lb in conn.load_balancer.load_balancers() if (lb.name or "").startswith(ENDPOINT)]
    lb_ids = {lb.id for lb in lbs}
    listeners = {l.id for l in conn.load_balancer.listeners() if any(r["id"] in lb_ids for r in l.load_balancers)}
    pools = [p for p in conn.load_balancer.pools() if any(r["id"] in lb_ids for r in p.loadbalancers)]
    monitors = {m.id for m in conn.load_balancer.health_monitors() if any(r["id"] in {p.id for p in pools}
                                                                          for r in m.pools)}
    zone = conn.dns.find_zone("example.test.", ignore_missing=False)
    return {
        "LoadBalancer": lb_ids,
        "Listener": listeners,
        "Pool": {p.id for p in pools},
        "Monitor": monitors,
        "Member": {m.id for p in pools for m in conn.load_balancer.members(p.id)},
        "FloatingIp": {ip.id for ip in conn.network.ips() if (ip.description or "").startswith(ENDPOINT)},
        "SecGroup": {g.id for g in conn.network.security_groups() if (g.name or "").startswith(ENDPOINT)},
        "RecordSet": {f"{zone.id}/{rs.id}" for rs in conn.dns.recordsets(zone) if rs.name.startswith(ENDPOINT)},
    }


def orphans(stack: PulumiStack, conn) -> dict[str, list[str]]:
    """Objects named after the endpoint that the stack's state does not record, by kind."""
    recorded, found = state_ids(stack), cloud_ids(conn)
    return {kind: sorted(found[kind] - recorded.get(kind, set())) for kind in found
            if found[kind] - recorded.get(kind, set())}


def assert_exactly_the_stacks_objects(stack: PulumiStack, conn) -> None:
    recorded, found = state_ids(stack), cloud_ids(conn)
    differences = {kind: {"orphaned (in the cloud only)": sorted(found[kind] - recorded.get(kind, set())),
                          "missing (in the state only)": sorted(recorded.get(kind, set()) - found[kind])}
                   for kind in found if found[kind] != recorded.get(kind, set())}
    assert not differences, differences
    assert len(found["LoadBalancer"]) == len(ZONES) and len(found["Member"]) == len(ZONES)
    assert len(found["RecordSet"]) == 1


def cloud_member_addresses(conn) -> set[str]:
    return {m.address for lb in conn.load_balancer.load_balancers() if lb.name.startswith(ENDPOINT)
            for p in conn.load_balancer.pools(loadbalancer_id=lb.id) for m in conn.load_balancer.members(p.id)}


def assert_converged(stack: PulumiStack, conn, host: int) -> None:
    """The rerun's outcome: the state and the cloud agree, DNS answers the zones' addresses, nothing left to do."""
    assert_exactly_the_stacks_objects(stack, conn)
    assert cloud_member_addresses(conn) == {f"10.10.{n}.{host}" for n in range(1, len(ZONES) + 1)}
    zones = stack.outputs()["zones"]
    published = {zones[az]["floatingIp"] for az in ZONES}
    assert recordset_addresses(conn, "example.test.", FQDN) == published
    assert resolve_a(FQDN) == published
    stack.preview("--expect-no-changes", policy=False)


def gates(stack: PulumiStack) -> dict[str, dict]:
    """The readiness gates' recorded outputs, by zone."""
    return {r["urn"].rsplit("::", 1)[1].split("-")[-2]: r.get("outputs", {}) for r in stack.resources()
            if r["type"].endswith(GATE_TYPE)}


# -- driving an update ------------------------------------------------------------------------------------------------

def started(event_log: Path, predicate: Callable[[dict], bool]) -> list[dict]:
    """The resourcePreEvents of the event log that match."""
    return [e["resourcePreEvent"]["metadata"] for e in read_events(event_log)
            if "resourcePreEvent" in e and predicate(e["resourcePreEvent"]["metadata"])]


def wait_until(process, event_log: Path, predicate: Callable[[dict], bool], count: int = 1,
               timeout: float = 300) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = started(event_log, predicate)
        if len(found) >= count:
            return found
        assert process.poll() is None, f"the update ended before the fault could be injected:\n{process.stdout.read()}"
        time.sleep(0.1)
    raise AssertionError(f"no such step within {timeout}s")


GATES_IN_OUTAGE = 5.0
"""Seconds Keystone stays stopped after the gates have started (test_1): their first calls authenticate."""
OUTAGE_CAP = 120.0
"""Seconds Keystone stays stopped at most when the gates do not start (test_1): the provider is then waiting for it."""


def is_new_member(step: dict) -> bool:
    return step.get("op") == "create" and step.get("type", "").endswith("member:Member")


def is_gate_update(step: dict) -> bool:
    return step.get("op") == "update" and step.get("type", "").endswith(GATE_TYPE)


def finish(process) -> tuple[int, str]:
    output, _ = process.communicate(timeout=900)
    return process.returncode, output


def error_lines(output: str) -> list[str]:
    return [line.strip() for line in output.splitlines() if "error" in line.lower()]


def provider_errors(output: str) -> list[str]:
    """The errors the provider plugin reported, as the CLI lists them under each failed resource (``* <message>``)."""
    return sorted({line.strip()[2:] for line in output.splitlines() if line.strip().startswith("* ")})


def default_openstack_plugin(environment: dict[str, str]) -> Path:
    """The engine's own OpenStack plugin (unpatched), beside the bin dir env.sh put on PATH."""
    return Path(environment["HA_ENGINE_BIN"]).parent / "plugins" / "pulumi-resource-openstack"


def names_a_member(output: str) -> bool:
    """Whether the CLI's diagnostics name one of the stack's members (``openstack:loadbalancer:Member (<name>):``)."""
    return any(line.strip().startswith(f"openstack:loadbalancer:Member ({ENDPOINT}-az") for line in output.splitlines())


# -- the tests --------------------------------------------------------------------------------------------------------

def test_0_the_stack_is_built_without_faults(stack, cloud):
    stack.up(policy=False)
    assert_converged(stack, cloud, 10)


def test_1_keystone_restarted_while_members_are_created_and_gates_start(stack, cloud, faults, tmp_path):
    """Keystone stopped from the moment the first new member is created until the gates have started and
    ``GATES_IN_OUTAGE`` seconds more (at most ``OUTAGE_CAP`` seconds), then started. One of three parts meets the
    outage (most likely decided by whether Octavia has checked the update's token before Keystone stops):

    - the readiness gates: their first authentication finds no Keystone; they retry it within their deadline and the
      update completes;
    - Octavia: it cannot ask Neutron about the member's subnet without Keystone and refuses the member with
      `400 Subnet ... not found` (Octavia's wording for a Keystone outage), which the provider does not retry. Then
      the update fails naming the member and Octavia's answer, nothing was created, and the rerun converges;
    - the provider's member waits: the new members do not complete while Keystone is stopped, so the gates cannot
      start; the update completes after Keystone is back (a CI run of stop 70: no gate had started 300 s into the
      outage, and the update completed once Keystone was started).

    The outage ends on the gates' start, not on a clock: with a fixed 10 s from the member's creation, a loaded
    machine (a CI run, load average 20) started the gates as Keystone was starting again, its uwsgi already held
    the socket, the gates' authentication waited for it instead of failing, and no gate met the outage."""
    stack.write_config(fault_config(11))
    event_log = tmp_path / "keystone.jsonl"
    process = stack.spawn_up(event_log)
    wait_until(process, event_log, is_new_member)
    restart: dict = {}

    def outage() -> None:
        stopped_at = time.monotonic()
        restart["old_pid"] = faults.keystone_stop()
        try:
            while process.poll() is None and not started(event_log, is_gate_update) and \
                    time.monotonic() < stopped_at + OUTAGE_CAP:
                time.sleep(0.1)
            restart["gates_started"] = bool(started(event_log, is_gate_update))
            time.sleep(GATES_IN_OUTAGE)
            restart["update_running"] = process.poll() is None
        finally:
            restart["new_pid"] = faults.keystone_start()
            restart["down_seconds"] = round(time.monotonic() - stopped_at, 1)

    restarter = threading.Thread(target=outage)  # the CLI's output is read meanwhile (a full pipe would stop it)
    restarter.start()
    code, output = finish(process)
    restarter.join(timeout=OUTAGE_CAP + 100)
    assert restart.get("old_pid") and restart.get("new_pid") not in (None, restart["old_pid"]), restart
    print(f"keystone restart: {restart}; update exit code {code}")
    if code != 0:
        answers = provider_errors(output)
        print("the provider reported:\n" + "\n".join(answers))
        assert not program_failures(output), output[-3000:]
        assert names_a_member(output), "the failure names the stack's resource ..."
        assert answers, "... and the cloud's answer"
        assert not orphans(stack, cloud), "the failed update left objects its state does not record"
        stack.up(policy=False)
    elif restart["gates_started"]:
        retried = {az: g.get("transient_errors") for az, g in gates(stack).items()}
        print(f"transient errors retried by the gates: {retried}")
        assert sum(retried.values()) >= 1, "no gate met the outage: the fault came too late to test anything"
    else:
        assert restart["update_running"], "the update ended during the outage without its gates"
    assert_converged(stack, cloud, 11)


def test_2_octavia_answering_503_for_30s_while_the_gates_wait_delays_the_update_and_it_completes(
        stack, cloud, faults, tmp_path):
    stack.write_config(fault_config(12))
    event_log = tmp_path / "octavia-gates.jsonl"
    faults.heartbeat_pause()  # the new members stay OFFLINE: the gates keep polling until the 503s begin
    try:
        process = stack.spawn_up(event_log)
        wait_until(process, event_log, is_gate_update, count=len(ZONES))
        injected = time.time()
        faults.octavia_api_unavailable(30)
        time.sleep(2)
    finally:
        faults.heartbeat_resume()
    code, output = finish(process)
    assert code == 0, "\n".join(error_lines(output)) or output[-3000:]
    met = faults.octavia_api_faulted_requests(injected)
    assert met and all("/lbaas/pools/" in line and line.endswith("/members") for line in met), met
    retried = {az: g.get("transient_errors") for az, g in gates(stack).items()}
    assert all(count >= 1 for count in retried.values()), retried
    assert all(g["statuses"] and set(g["statuses"].values()) == {"ACTIVE/ONLINE"} for g in gates(stack).values())
    assert_converged(stack, cloud, 12)


def test_3_replacing_the_dns_record_deletes_the_old_one_first(stack, cloud):
    """Designate keeps one A recordset per name in a zone (a second one is `409 Duplicate RecordSet`, see
    tests/integration/test_readiness_designate_409.py), so Pulumi's default create-before-delete can never replace a
    record (`Error creating openstack_dns_recordset_v2: ... got 409`, seen before dns.py said delete_before_replace):
    `pulumi up --replace` (or a change of its zone, name, type or region) must delete the old one first."""
    (record,) = [r for r in stack.resources() if r["type"] == "openstack:dns/recordSet:RecordSet"]
    result = stack.up("--replace", record["urn"], policy=False, check=False)
    assert result.returncode == 0, "\n".join(error_lines(result.output)) or result.output[-3000:]
    (replaced,) = state_ids(stack)["RecordSet"]
    assert replaced != record["id"], "the record was replaced"
    assert_converged(stack, cloud, 12)


def test_4_a_member_deleted_out_of_band_while_its_gate_waits_fails_the_update_at_once_naming_it(
        stack, cloud, faults, tmp_path):
    stack.write_config(fault_config(15))
    event_log = tmp_path / "member-gone.jsonl"
    faults.heartbeat_pause()  # the new members stay OFFLINE: the gates keep waiting
    try:
        process = stack.spawn_up(event_log)
        wait_until(process, event_log, is_gate_update, count=len(ZONES))
        (lb,) = [lb for lb in cloud.load_balancer.load_balancers() if lb.name == f"{ENDPOINT}-az2-lb"]
        (pool,) = list(cloud.load_balancer.pools(loadbalancer_id=lb.id))
        (gone,) = [m for m in cloud.load_balancer.members(pool) if m.address == "10.10.2.15"]
        cloud.load_balancer.delete_member(gone, pool)
        time.sleep(2)
    finally:
        faults.heartbeat_resume()
    code, output = finish(process)
    assert code != 0
    block = diagnostics_of(output, f"{ENDPOINT}-az2-ready")
    print(f"what `pulumi up` prints for the gate ({len(block)} lines):\n" + "\n".join(block))
    message = next(line for line in block if "MemberGone:" in line)
    assert f"member {gone.id} in pool {ENDPOINT}-az2-6443-pool ({pool.id})" in message
    assert "run `pulumi refresh` so that the stack forgets it, then `pulumi up` to create it again" in message
    assert "During handling" not in output and "direct cause" not in output
    assert not [line for line in block if "keystoneauth1" in line or "/openstack/" in line]
    assert len(block) <= 16, "a short traceback: the host's and the provider method's frames, then the message"
    assert not orphans(stack, cloud)
    stack.refresh()
    stack.up(policy=False)
    assert_converged(stack, cloud, 15)


def diagnostics_of(output: str, resource: str) -> list[str]:
    """The lines the CLI prints under ``<type> (<resource>):`` in its Diagnostics section."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().endswith(f"({resource}):"))
    block = []
    for line in lines[start + 1:]:
        if line.strip() and not line.startswith("    "):
            break
        block.append(line.rstrip())
    while block and not block[-1].strip():
        block.pop()
    return block


def spawn_up_until_posted(stack: PulumiStack, cloud, event_log: Path, addresses: set[str], timeout: float = 300):
    """Start `pulumi up` and return its process once Octavia holds members at every one of ``addresses`` (the
    provider has posted them and waits for them), or after ``timeout`` seconds."""
    process = stack.spawn_up(event_log)
    deadline = time.monotonic() + timeout
    while not addresses <= cloud_member_addresses(cloud) and time.monotonic() < deadline:
        assert process.poll() is None, f"the update ended before the fault:\n{process.stdout.read()}"
        time.sleep(0.2)
    return process


LEFT_BEHIND: dict[str, list[str]] = {}


def test_5_octavia_answering_503_while_the_provider_waits_for_members_it_created_delays_the_update_and_it_completes(
        stack, cloud, faults, tmp_path):
    """The provider posts each new member, then polls Octavia until it is ACTIVE; the worker is frozen meanwhile (the
    members stay PENDING_CREATE, as behind a slow amphora) and the API answers 503 for 30 s.
    terraform-provider-openstack v3.4.0 retries 500/502/503/504 and 409 around its POST/PUT/DELETE calls
    (checkForRetryableError) but not in its status waits: a refresh function's error ends StateChangeConf at once, the
    update fails and leaves the members it created unrecorded. With patch 0003 (the opt-in patched plugin, installed
    here) a transient error in a status wait is one more pending poll: the waits meet the 503s, poll on, and the update
    completes with every object recorded."""
    with_openstack_plugin(stack.env, patched_openstack_plugin(), Path(stack.env["PULUMI_HOME"]))
    stack.write_config(fault_config(14))
    event_log = tmp_path / "octavia-members.jsonl"
    new_members = {f"10.10.{n}.14" for n in range(1, len(ZONES) + 1)}
    faults.worker_freeze()
    try:
        process = spawn_up_until_posted(stack, cloud, event_log, new_members)
        injected = time.time()
        faults.octavia_api_unavailable(30)
        time.sleep(1)
    finally:
        faults.worker_thaw()
    code, output = finish(process)
    met = faults.octavia_api_faulted_requests(injected)
    faults.octavia_api_available()
    LEFT_BEHIND.update(orphans(stack, cloud))
    polls = sorted({line for line in met if line.split()[1:2] == ["GET"] and "/lbaas/" in line})
    print(f"update exit code {code}; the provider met {len(met)} answers 503, its status polls among them: "
          f"{polls[:10]}; objects the update left unrecorded: {LEFT_BEHIND}")
    assert polls, f"the provider's status waits never met the fault: {sorted(set(met))[:10]}"
    assert code == 0, "\n".join(error_lines(output)) or output[-3000:]
    assert not LEFT_BEHIND, f"the update left objects its state does not record: {LEFT_BEHIND}"
    assert cloud_member_addresses(cloud) == new_members


def test_6_the_rerun_after_a_503_in_the_providers_wait_converges_with_nothing_orphaned(stack, cloud):
    assert not LEFT_BEHIND, f"the update left objects its state does not record: {LEFT_BEHIND}"
    stack.up(policy=False)
    assert_converged(stack, cloud, 14)


def test_7_a_member_octavia_reports_error_while_the_provider_waits_is_recorded_and_the_rerun_converges_on_it(
        stack, cloud, faults, tmp_path):
    """The worker is frozen (the new members stay PENDING_CREATE, their load balancers PENDING_UPDATE); once the new
    members exist, zone az2's load balancer is set ACTIVE and its new member ERROR in Octavia's database, as Octavia
    reports a member it failed to build. The provider's wait for that member ends at once with "unexpected state
    'ERROR'": the update fails naming it, and the stack records the member (patch 0003 sets its id before the wait; the
    unpatched plugin records nothing and the rerun posts the member again, refused 409 "already using ip"). The worker
    is thawed (it goes on and makes the member ACTIVE); the rerun updates that same member, posts nothing, and
    converges."""
    stack.write_config(fault_config(16))
    event_log = tmp_path / "octavia-member-error.jsonl"
    new_members = {f"10.10.{n}.16" for n in range(1, len(ZONES) + 1)}
    faults.worker_freeze()
    try:
        process = spawn_up_until_posted(stack, cloud, event_log, new_members)
        (lb,) = [lb for lb in cloud.load_balancer.load_balancers() if lb.name == f"{ENDPOINT}-az2-lb"]
        (pool,) = list(cloud.load_balancer.pools(loadbalancer_id=lb.id))
        (failed,) = [m for m in cloud.load_balancer.members(pool) if m.address == "10.10.2.16"]
        faults.force_status(lb.id, "ACTIVE", kind="load_balancer")
        faults.force_error(failed.id, kind="member")
        wait_for_a_failed_step(process, event_log)
    finally:
        faults.worker_thaw()
    code, output = finish(process)
    answers = provider_errors(output)
    print(f"update exit code {code}; the provider reported:\n" + "\n".join(answers))
    assert code != 0
    assert not program_failures(output), output[-3000:]
    assert names_a_member(output), output[-3000:]
    assert any(f"member {failed.id}" in answer and "unexpected state 'ERROR'" in answer for answer in answers), answers
    recorded = [r for r in stack.resources() if r["type"] == "openstack:loadbalancer/member:Member"
                and r.get("id") == failed.id]
    assert recorded, f"the stack does not record member {failed.id}, which the provider created"
    assert not orphans(stack, cloud)
    stack.up(policy=False)
    assert failed.id in state_ids(stack)["Member"], "the rerun kept the member it had recorded (no second POST)"
    assert_converged(stack, cloud, 16)


def wait_for_a_failed_step(process, event_log: Path, timeout: float = 30) -> None:
    """Until the event log reports a step that failed (a diagnostic of severity error on a resource), the update ends,
    or ``timeout`` passes (then the caller's assertions on the outcome say what happened)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        if any(e.get("diagnosticEvent", {}).get("severity") == "error" and e["diagnosticEvent"].get("urn")
               for e in read_events(event_log)):
            return
        time.sleep(0.2)
    print(f"no failed step in the event log after {timeout} s")

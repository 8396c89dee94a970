"""The member agent under real clients (issue 48): a control plane rolled, a machine taken out for maintenance and put
back, a machine's ready condition False then True, and a zone's only machine deleted, while kubectl (a process per
request) and client-go (one clientset, kept connections) loop a read of an object (``rollout.REQUEST``) through the
endpoint's DNS name the whole time. The machinery is lab/bench/rollout_figures.py's (tests/e2e/rollout.py): real
kube-apiservers on the local cloud's data plane (Nova servers ``ro-0``..``ro-8``), the component's endpoint in front
of them (a real ``pulumi up``), Cluster API v1.14.2's Machines in a management cluster on 127.0.0.1, one ``python -m
ha_endpoint.agent``; the test plays KubeadmControlPlane and the Machine controller (Cluster API's controllers are not
run).

One set-up for the module: etcd on generation 0 (``ro-0``..``ro-2``), which is also the stack's static ``members[]``
with no API server behind them (``dns.publish: bootstrap``: the stack needs members; theirs are ERROR/OFFLINE the
whole time, as the bench's agent case has them), the agent serving generation 1's Machines (``cp-1-*``). Then:

1. the rollout, the bench's agent case: 3 of 3 machines replaced (``cp-1-*`` -> ``cp-2-*``): no request of any client
   fails, and no zone is ever without a member in service and ``ONLINE`` (Octavia sampled every 0.5 s);
2. ``ha-endpoint.io/maintenance`` on ``cp-2-0`` once a second machine of az1 serves (``cp-3-0``, on ``ro-3``:
   maintenance takes a member out once its zone keeps capacity without it; a zone's only agent member would be
   held for good here, since the zone's static member, which never serves, counts as one joining:
   ``ha_endpoint.agent.capacity.removable``), then removed: no request fails; the member is listed admin down while
   annotated, and is back (created again) ``ACTIVE``/``ONLINE`` after;
3. ``APIServerPodHealthy`` False on ``cp-2-1`` (az2's only machine: taken out at once), then True: no request fails;
   the member is taken out, then created again ``ACTIVE``/``ONLINE``;
4. az3's only machine (``cp-2-2``) deleted: az3 leaves the A record first, its member is drained only once the
   record's TTL has passed, the hook is released, and its API server stopped: no request fails.
Each prints its per-client table (``-s``).

Exclusive and never on the first cloud (``own_cloud``), as the other data-plane Kubernetes test
(test_k8s_endpoint.py): its figures are timing-sensitive (a cloud-wide fault of another test would fail them), and
the bench's runs on the first cloud once left new servers' members ERROR there (docs/agent.md). Alone:
``.venv/bin/python -m pytest -p no:cacheprovider -s tests/e2e/test_k8s_rollout.py``.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from localcloud.dataplane import client_ns, nodes
from localcloud.k8s import cluster
from localcloud.k8s import stack as k8s_stack
from localcloud.settings import AZS
from tests.e2e import failover, rollout
from tests.e2e.k8s_clients import K8S_CLIENTS, K8sClients, build_client_go
from tests.e2e.pulumi_cli import PulumiStack
from tests.e2e.management import agent_members

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.exclusive, pytest.mark.own_cloud]

DRAIN = 5.0     # the agent's --drain: a request takes milliseconds
TAIL = 5.0      # seconds the clients' requests still count for a step after it
TAG = "ha-endpoint:agent=default/prod"


@dataclass
class Rolled:
    cloud: object
    mgmt: rollout.Management
    etcd: object
    everything: object
    bins: cluster.Binaries
    pools: dict[str, str]          # az -> the 6443 pool
    loop: failover.Loop
    states: rollout.MemberStates
    agent_log: Path
    outputs: dict
    fqdn: str

    def member(self, machine: str, az: str):
        return agent_members(self.cloud.conn, self.pools[az]).get(machine)

    def rows(self, case: str, start: float) -> list[dict]:
        """The clients' requests since ``start`` (the loop's seconds) as the case's rows, printed as a table."""
        rows = rollout.window(self.loop, case, start, self.loop.now())
        print(f"\n{case}: failed requests (s since the clients started, client, error): "
              f"{rollout.failures_line(rows)}\n{rollout.table(rows)}")
        return rows


@pytest.fixture(scope="module")
def rolled(localcloud, pulumi_environment, tmp_path_factory):
    started = time.monotonic()
    bins = cluster.binaries()                     # the Kubernetes parts (lab/engine/build.sh --k8s), built or reused
    cache = Path(os.environ.get("HA_ENDPOINT_CACHE", Path.home() / ".cache" / "ha-endpoint"))
    client_go, go_client = build_client_go(cache), failover.build_go_client(cache)
    work = tmp_path_factory.mktemp("rollout")
    endpoint = f"e2e-roll-{uuid.uuid4().hex[:4]}"
    config = k8s_stack.endpoint_config(name=endpoint, record=endpoint)
    fqdn = k8s_stack.fqdn(config)
    gen0 = [(name, az, address) for name, az, address in rollout.ROLL.nodes[:3]]
    config = {**config, "dns": {**config["dns"], "publish": "bootstrap"},
              "members": [{"name": name, "address": address, "az": az, "subnet": nodes.KUBERNETES.network[1]}
                          for name, az, address in gen0]}
    stack = PulumiStack.create(work / "stack", "rollout", pulumi_environment)
    stack.write_config(config)
    made: dict = {}                                # what exists so far, for the clean-up
    agent = states = None
    try:
        def data_plane():
            """The servers, etcd on gen 0, gen 1's API servers (cp-1-*'s nodes)."""
            made["etcd"], made["everything"], _ = rollout.prepare_nodes(localcloud.paths, fqdn)
            etcd, everything = made["etcd"], made["everything"]
            cluster.etcd_up(etcd, bins)
            cluster.certificates(everything)       # every node's, once: the API servers below start at once
            with ThreadPoolExecutor(3) as pool:
                list(pool.map(lambda node: rollout.start_apiserver(etcd, everything, node, bins),
                              everything.nodes[3:6]))

        def management():
            made["mgmt"] = rollout.Management(work / "mgmt", bins)
            for i, az in enumerate(AZS):           # KCP's machines: their API servers are not ready yet
                made["mgmt"].api.add_machine(f"cp-1-{i}", az, rollout.ROLL.nodes[3 + i][2], api_server_healthy=False)

        with ThreadPoolExecutor(3) as pool:        # the three parts wait on different things: at once
            for part in [pool.submit(data_plane), pool.submit(management), pool.submit(stack.up, policy=False)]:
                part.result()
        mgmt, etcd, everything = made["mgmt"], made["etcd"], made["everything"]
        rollout.log(f"set-up: nodes, management cluster and stack ready after {time.monotonic() - started:.1f} s")
        outputs = stack.outputs()
        (work / "outputs.json").write_text(json.dumps(outputs))
        agent_log = work / "agent.log"
        agent, _ = rollout.start_agent(localcloud, mgmt, work / "outputs.json", DRAIN, agent_log)
        for i in range(3):
            mgmt.api.api_server_healthy(f"cp-1-{i}")   # KCP: their API servers answer
        rollout.wait_for(lambda: all(mgmt.serving(f"cp-1-{i}") for i in range(3)), "gen 1 served by the agent", 240)
        pools = {az: zone["poolIds"]["6443"] for az, zone in outputs["zones"].items()}
        static = {name for name, _, _ in gen0}
        rollout.wait_for(lambda: {m.name for pool in pools.values() for m in localcloud.conn.load_balancer.members(pool)
                                  if m.operating_status in ("ERROR", "OFFLINE")} >= static,
                         "the static members (no API server) seen down by their health monitor", 120)
        addresses = {zone["floatingIp"] for zone in outputs["zones"].values()}
        rollout.wait_for(lambda: set(rollout.published(fqdn)) == addresses, "the name lists every zone", 120)
        kubeconfig = rollout.endpoint_kubeconfig(everything, fqdn, work / "endpoint.kubeconfig")
        with client_ns.client_namespace(localcloud.paths) as namespace:
            states = rollout.MemberStates(localcloud.conn, {pool: az for az, pool in pools.items()}).start()
            loop = failover.Loop(f"https://{fqdn}:{rollout.PORT}/", failover.dns_server(), go_client, 3600,
                                 clients=K8S_CLIENTS, k8s=K8sClients(kubeconfig, namespace.name, bins.kubectl,
                                                                     client_go, rollout.REQUEST)).start()
            rollout.log(f"set-up done after {time.monotonic() - started:.1f} s: gen 1 served, clients looping")
            time.sleep(3)
            yield Rolled(localcloud, mgmt, etcd, everything, bins, pools, loop, states, agent_log, outputs, fqdn)
            loop.end_now()
    finally:
        if states is not None:
            states.stop()
        rollout.stop_agent(agent)
        if agent is not None:
            print(f"--- the agent's log (last lines)\n{agent_log.read_text()[-3000:]}")
        rollout.clean_up(localcloud, stack, made.get("everything"), made.get("mgmt"))
        print(f"the module took {time.monotonic() - started:.0f} s in all")


def test_1_a_rollout_with_the_agent_fails_no_request_and_leaves_no_zone_unserved(rolled):
    start, sampled = rolled.loop.now(), time.monotonic()
    marks: list = []
    steps = rollout.rollout("agent", rolled.mgmt, rolled.etcd, rolled.everything, rolled.bins, 1, 2, marks)
    time.sleep(TAIL)
    rows = rolled.rows("rollout", start)
    for step in steps:
        print(f"  {step['az']}: {step['new']} ready {step['new_ready_s']} s after start, {step['old']} released "
              f"{step['hook_released_s']} s after its deletion, step {step['step_s']} s")
    unserved = [(round(at - sampled, 1), az) for at, az in rolled.states.unserved if at >= sampled]
    assert not [r for r in rows if r["failed"]], rollout.failures_line(rows)
    assert all(r["requests"] > 0 for r in rows), rows
    assert not unserved, f"zones without a member in service and ONLINE (s since the rollout began, zone): {unserved}"
    for i, az in enumerate(AZS):
        assert rolled.mgmt.serving(f"cp-2-{i}")
        assert set(agent_members(rolled.cloud.conn, rolled.pools[az])) == {f"cp-2-{i}"}


def out_and_back(rolled: Rolled, machine: str, az: str, take_out, put_back, status: str) -> None:
    """``take_out()``: the machine's member listed admin down, the Machine's status ``status``; ``put_back()``: a
    new member (created again) in service, ACTIVE/ONLINE, the Machine ``serving``."""
    before = rolled.member(machine, az)
    assert before is not None and before.is_admin_state_up, before
    since = time.monotonic()
    take_out()
    out = rollout.wait_for(lambda: (m := rolled.member(machine, az)) is not None and not m.is_admin_state_up and m,
                           f"{machine} taken out", 60)
    rollout.wait_for(lambda: rolled.mgmt.status(machine).startswith(status), f"{machine}'s status says {status}", 30)
    put_back()
    back = rollout.wait_for(lambda: (m := rolled.member(machine, az)) is not None and m.is_admin_state_up
                            and m.provisioning_status == "ACTIVE" and m.operating_status == "ONLINE" and m,
                            f"{machine} back in service", 120)
    rollout.wait_for(lambda: rolled.mgmt.serving(machine), f"{machine} serving", 30)
    assert back.id != out.id, "put back by creating the member again"
    listed = rolled.states.of(machine, since)
    print(f"  {machine}'s member as Octavia listed it: {' -> '.join(listed)}")
    assert any(what.startswith("down ") for what in listed), listed


def test_2_maintenance_takes_a_member_out_and_its_removal_puts_it_back_with_no_failed_request(rolled):
    start = rolled.loop.now()
    kubectl = rolled.mgmt.api.kubectl
    # a second machine in az1 (on cp-1-0's server, free since the rollout): maintenance waits for another serving
    # member of the zone, and the zone's stack member (no API server) is one that never serves
    spare = rolled.everything.nodes[3]
    rolled.mgmt.api.add_machine("cp-3-0", "az1", spare.address, api_server_healthy=False)
    rollout.start_apiserver(rolled.etcd, rolled.everything, spare, rolled.bins)
    rolled.mgmt.api.api_server_healthy("cp-3-0")
    rollout.wait_for(lambda: rolled.mgmt.serving("cp-3-0"), "cp-3-0 serving", 120)
    out_and_back(rolled, "cp-2-0", "az1",
                 lambda: kubectl("annotate", "machines.cluster.x-k8s.io", "cp-2-0",
                                 "ha-endpoint.io/maintenance=kernel update"),
                 lambda: kubectl("annotate", "machines.cluster.x-k8s.io", "cp-2-0", "ha-endpoint.io/maintenance-"),
                 "maintenance")
    time.sleep(TAIL)
    rows = rolled.rows("maintenance", start)
    assert not [r for r in rows if r["failed"]], rollout.failures_line(rows)


def test_3_the_ready_condition_false_takes_a_member_out_and_true_puts_it_back_with_no_failed_request(rolled):
    start = rolled.loop.now()
    out_and_back(rolled, "cp-2-1", "az2", lambda: rolled.mgmt.api.api_server_healthy("cp-2-1", healthy=False),
                 lambda: rolled.mgmt.api.api_server_healthy("cp-2-1"), "joining")
    time.sleep(TAIL)
    rows = rolled.rows("condition", start)
    assert not [r for r in rows if r["failed"]], rollout.failures_line(rows)


def test_4_a_zones_only_machine_deleted_leaves_dns_for_the_ttl_before_its_member_is_drained(rolled):
    """az3's only machine deleted (a scale down, or by hand): the agent takes az3's address out of the A record, waits
    the record's TTL (30 s) while the member still serves, then drains it and releases the hook; KubeadmControlPlane's
    clean-up then stops its API server. No request fails; the name lists az1 and az2 after."""
    start = rolled.loop.now()
    az3 = {zone["floatingIp"] for az, zone in rolled.outputs["zones"].items() if az == "az3"}
    released = rolled.mgmt.api.delete_as_cluster_api("cp-2-2", timeout=300)
    cluster.stop_process(rolled.etcd, rolled.everything.nodes[8], "kube-apiserver")   # kcp-cleanup
    rollout.wait_for(lambda: rolled.mgmt.api.machine("cp-2-2") is None, "cp-2-2 gone", 60)
    time.sleep(TAIL)
    rows = rolled.rows("a zone's only machine deleted", start)
    said = rollout.agent_events(rolled.agent_log)
    out_of_dns = [at for at, what in said if what.startswith("member cp-2-2 in az3: the zone's only member is leaving")]
    drained = [at for at, what in said if what.startswith("member cp-2-2 ") and ": drained (admin down" in what]
    assert out_of_dns and drained, said[-20:]
    waited = drained[0] - out_of_dns[0]
    print(f"  cp-2-2: az3 out of DNS, drained {waited:.1f} s later (TTL 30 s), hook released {released:.1f} s after "
          f"its deletion")
    assert waited >= 30, (out_of_dns, drained)
    assert not az3 & set(rollout.published(rolled.fqdn))
    assert not [r for r in rows if r["failed"]], rollout.failures_line(rows)
    whole = rolled.rows("the whole run", 0.0)   # between the steps too
    assert not [r for r in whole if r["failed"]], rollout.failures_line(whole)

"""The agent's runtime parts: leader election on the Lease, the Machine cache over a watch, its command line and
outputs, the metrics and probes server."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import pytest
from agent_fakes import Clock, FakeCluster, FakeLease
from agent_harness import World

from ha_endpoint.agent.inputs import member_subnets, parse, published_addresses, served_zones
from ha_endpoint.agent.kube import MachineCache
from ha_endpoint.agent.lease import LeaseElector
from ha_endpoint.agent.report import Metrics, serve
from ha_endpoint.backends.watching import zones_of
from ha_endpoint.core.errors import HaEndpointError


def electors(clock, cluster, *names):
    return [LeaseElector(FakeLease(cluster), name, 15, clock, lambda line: None) for name in names]


def test_one_replica_leads_and_the_other_takes_over_when_it_dies():
    clock = Clock()
    cluster = FakeCluster(clock)
    a, b = electors(clock, cluster, "a", "b")
    assert a.try_acquire_or_renew() and not b.try_acquire_or_renew()
    for _ in range(20):  # a renews every 3 s: b never gets it
        clock.advance(3)
        assert a.try_acquire_or_renew() and not b.try_acquire_or_renew()
        assert a.leading() and not b.leading()
    # a dies: b takes over once the record has not changed for the lease duration, by b's own clock
    taken = None
    for second in range(1, 30):
        clock.advance(1)
        if b.try_acquire_or_renew():
            taken = second
            break
    assert taken is not None and 15 <= taken <= 16
    assert cluster.lease.holder == "b" and cluster.lease.transitions == 1
    assert not a.leading()  # a's deadline (2/3 of the duration) passed long before


def test_a_leader_that_cannot_renew_stops_writing_before_another_may_start():
    clock = Clock()
    cluster = FakeCluster(clock)
    [a] = electors(clock, cluster, "a")
    assert a.try_acquire_or_renew()
    cluster.reachable = False
    clock.advance(9)
    a.try_acquire_or_renew()
    assert a.leading()
    clock.advance(1.1)  # 10.1 s > 2/3 of 15 s without a renewal
    assert not a.try_acquire_or_renew() and not a.leading()


def test_two_replicas_taking_a_free_lease_at_once_one_wins():
    clock = Clock()
    cluster = FakeCluster(clock)
    a, b = electors(clock, cluster, "a", "b")
    a.try_acquire_or_renew()
    a.release()
    assert cluster.lease.holder is None and not a.leading()
    stale = FakeLease(cluster).read()
    assert b.try_acquire_or_renew()  # a stopping leader hands over at once
    with pytest.raises(Exception, match="modified"):
        FakeLease(cluster).replace(stale)


def test_only_the_leader_writes_and_the_standby_takes_over_at_a_release():
    world = World()
    world.cluster.add_machine("cp-1", "az1", "10.0.1.11")
    a, b = world.replica("a"), world.replica("b")
    a.step()
    assert not b.step()  # standby: no pass
    assert [what for _, what in world.timeline] == ["create cp-1"]
    assert a.metric("ha_endpoint_agent_leader") == 1 and b.metric("ha_endpoint_agent_leader") == 0
    a.lease.release()
    world.cluster.add_machine("cp-2", "az2", "10.0.2.11")
    world.clock.advance(3)
    assert b.step() and not a.step()
    assert [what for _, what in world.timeline] == ["create cp-1", "create cp-2"]


class Watching:
    """A MachineApi whose watch yields the given events, then fails as a dropped connection does."""

    def __init__(self, events, fail=True):
        self.events, self.fail, self.lists = events, fail, 0

    def list(self):
        self.lists += 1
        if self.lists > 1:
            raise ConnectionError("connection refused")
        return [{"metadata": {"name": "cp-1"}}], "7"

    def watch(self, version):
        assert version == "7"
        yield from self.events
        raise ConnectionError("stream reset")


def test_the_cache_follows_the_watch_and_is_not_synced_once_it_fails():
    stop = threading.Event()
    events = [{"type": "ADDED", "object": {"metadata": {"name": "cp-2"}}},
              {"type": "DELETED", "object": {"metadata": {"name": "cp-1"}}},
              {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "9"}}},
              {"type": "MODIFIED", "object": "junk"}]
    said = []
    cache = MachineCache(Watching(events), said.append)

    def wait(seconds):
        stop.set()
        return True
    stop.wait = wait  # one round: list, watch, fail, re-list fails, stop
    cache.run(stop, retry_seconds=0)
    machines, synced = cache.snapshot()
    assert [m["metadata"]["name"] for m in machines] == ["cp-2"]
    assert synced is False and "nothing is written until the Machines are listed again" in said[0]


def test_the_outputs_give_each_zone_its_pools_as_the_watcher_reads_them():
    outputs = {"fqdn": "api.example.", "zones": {
        "az1": {"loadbalancerId": "lb1", "poolIds": {"6443": "p1", "443": "p0"}, "floatingIp": "172.24.4.11"},
        "az2": {"loadbalancerId": "lb2", "poolIds": {"6443": "p2"}, "vipAddress": "10.10.2.5"}}}
    backend, read = zones_of(outputs)
    zones = served_zones(read, backend.name, "octavia")
    assert zones["az1"].pools == ((443, "p0"), (6443, "p1")) and backend.watched.owner_id(zones["az2"]) == "lb2"
    assert member_subnets(zones, [("az2", "subnet-2")]) == {"az2": "subnet-2"}
    assert published_addresses(outputs, zones) == {"az1": "172.24.4.11", "az2": "10.10.2.5"}
    assert published_addresses({"zones": outputs["zones"]}, zones) == {}  # no DNS: no record to leave first
    with pytest.raises(HaEndpointError, match="no zones"):
        zones_of({"fqdn": "x"})
    with pytest.raises(HaEndpointError, match="zone az1 of the outputs has neither a load balancer"):
        zones_of({"zones": {"az1": {"poolIds": {}}}})
    with pytest.raises(HaEndpointError, match=r"names zones the endpoint does not have \(az7\)"):
        member_subnets(zones, [("az7", "s")])
    keepalived = {"fqdn": "api.example.", "ports": [6443], "zones": {"az1": {"vipPortId": "vip1", "floatingIp": "x"}}}
    keepalived_backend, keepalived_zones = zones_of(keepalived)
    with pytest.raises(HaEndpointError, match=r"--backend octavia: the outputs' zones \(az1\) are the keepalived "):
        served_zones(keepalived_zones, keepalived_backend.name, "octavia")


@pytest.mark.parametrize("argv, words", [
    (["--drain", "0"], "--drain: must be a number of seconds above 0"),
    (["--member-port", "443"], "--member-port: must be <listener port>=<member port>"),
    (["--member-subnet", "az1"], "--member-subnet: must be <az>=<subnet id>"),
    (["--address-type", "Hostname"], "--address-type: invalid choice"),
    (["--port", "70000"], "--port: must be a TCP port"),
])
def test_refused_arguments_name_the_option_and_the_fix(argv, words, capsys):
    with pytest.raises(SystemExit) as stopped:
        parse(["--outputs", "-", "--cluster", "prod", *argv])
    assert stopped.value.code == 2 and words in capsys.readouterr().err


def test_a_bad_cluster_name_or_outputs_exit_2_with_the_reason(tmp_path, capsys):
    """The refusals before the agent starts anything are asked of its ``main`` (the exit status ``python -m`` gives:
    its process is tests/unit/watch/test_inputs.py's); the last one, past its signal handlers and its look for the
    management cluster, of a process of its own."""
    from ha_endpoint.agent.__main__ import main

    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps({"zones": {"az1": {"loadbalancerId": "l", "poolIds": {"6443": "p"}}}}))
    assert main(["--outputs", str(outputs), "--cluster", "Prod_1", "--port", "0"]) == 2
    assert "--cluster: String should match pattern" in capsys.readouterr().err
    outputs.write_text("{}")
    assert main(["--outputs", str(outputs), "--cluster", "prod", "--port", "0"]) == 2
    assert "the outputs have no zones" in capsys.readouterr().err
    outputs.write_text(json.dumps({"zones": {"az1": {"loadbalancerId": "l", "poolIds": {"6443": "p"}}}}))
    run = subprocess.run([sys.executable, "-m", "ha_endpoint.agent", "--outputs", str(outputs), "--cluster", "prod",
                          "--port", "0", "--kubeconfig", str(tmp_path / "missing.kubeconfig")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "give --kubeconfig" in run.stderr and "Traceback" not in run.stderr


def test_the_agent_writes_through_its_backends_member_client_and_refuses_a_backend_without_one(tmp_path, capsys):
    """``--backend`` (default: the ``backend`` key's default, so an agent deployed before it existed runs as it did)
    picks the member client of the registry's backend; one without pools to write members into, or no registered
    backend, exits 2 naming those the agent serves."""
    from ha_endpoint.agent.__main__ import main
    from ha_endpoint.backends import REGISTRY
    from ha_endpoint.backends.octavia.agent_client import AgentOctavia
    from ha_endpoint.core.args import DEFAULT_BACKEND

    assert parse(["--outputs", "-", "--cluster", "prod"]).backend == DEFAULT_BACKEND
    client = REGISTRY[DEFAULT_BACKEND].agent.client("c", None, clock=lambda: 0.0, sleep=lambda _: None)
    assert isinstance(client, AgentOctavia) and (client.cloud, client.service) == ("c", "Octavia")
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps({"zones": {"az1": {"loadbalancerId": "l", "poolIds": {"6443": "p"}}}}))
    for backend, what in (("keepalived", "the keepalived backend has no pools the agent writes members into"),
                          ("f5", "no backend is registered as 'f5'")):
        assert main(["--outputs", str(outputs), "--cluster", "prod", "--port", "0", "--backend", backend]) == 2
        assert capsys.readouterr().err == (f"ha_endpoint.agent: --backend: {what}; the agent serves endpoints of "
                                           "octavia: give the endpoint's backend (its `backend` key)\n")


def test_metrics_and_probes_are_served_on_127_0_0_1():
    metrics = Metrics()
    metrics.set_members({("az1", "serving"): 2}, ["az1"])
    ready = [False]
    server = serve(metrics, live=lambda: True, ready=lambda: ready[0], host="127.0.0.1", port=0)
    try:
        host, port = server.server_address[:2]
        assert host == "127.0.0.1"
        base = f"http://127.0.0.1:{port}"
        text = urllib.request.urlopen(f"{base}/metrics", timeout=5).read().decode()
        assert 'ha_endpoint_agent_members{az="az1",state="serving"} 2.0' in text
        assert urllib.request.urlopen(f"{base}/healthz", timeout=5).status == 200
        with pytest.raises(urllib.error.HTTPError, match="503"):
            urllib.request.urlopen(f"{base}/readyz", timeout=5)
        ready[0] = True
        assert urllib.request.urlopen(f"{base}/readyz", timeout=5).status == 200
    finally:
        server.shutdown()
        server.server_close()

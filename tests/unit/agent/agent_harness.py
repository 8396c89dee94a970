"""Replicas of the agent wired as ``python -m ha_endpoint.agent`` wires them (cache, Lease, Octavia client,
reconciler), over the fakes of :mod:`agent_fakes`, stepped by hand on one fake clock."""

from __future__ import annotations

from typing import Optional

from agent_fakes import Clock, FakeCluster, FakeConnection, FakeDesignate, FakeLease, FakeOctavia

from ha_endpoint.agent.dns import AgentRecord
from ha_endpoint.agent.kube import MachineCache
from ha_endpoint.agent.lease import LeaseElector
from ha_endpoint.agent.machines import API_SERVER_HEALTHY, MachineSource
from ha_endpoint.agent.reconcile import AgentSettings, Reconciler
from ha_endpoint.agent.report import Metrics
from ha_endpoint.backends.octavia.agent_client import AgentOctavia
from ha_endpoint.core.outputs import ZoneOutputs

ZONES = {az: ZoneOutputs(loadbalancer_id=f"lb{az[-1]}", pool_ids={"6443": f"pool{az[-1]}"})
         for az in ("az1", "az2", "az3")}
POOL = {"az1": "pool1", "az2": "pool2", "az3": "pool3"}
ADDRESS = {"az1": "172.24.4.11", "az2": "172.24.4.12", "az3": "172.24.4.13"}
"""Each zone's published address, with ``World(dns=...)``."""
DRAIN = 20.0
LEASE = 15.0


class World:
    def __init__(self, drain: float = DRAIN, hook_warn_after: float = 600.0,
                 ready_condition: Optional[str] = API_SERVER_HEALTHY, dns: Optional[list[str]] = None,
                 ttl: int = 30):
        """``dns``: the zones published in the endpoint's A record (none: an endpoint without DNS)."""
        self.clock = Clock()
        self.octavia = FakeOctavia(self.clock)
        for az, zone in ZONES.items():
            self.octavia.add_pool(POOL[az], zone.loadbalancer_id)
        self.cluster = FakeCluster(self.clock)
        self.cluster.log = self.timeline = self.octavia.log  # one timeline: what happened, in order
        self.dns = None if dns is None else FakeDesignate(self.clock, self.timeline, [ADDRESS[az] for az in dns], ttl)
        self.settings = AgentSettings(MachineSource(cluster="prod", readyCondition=ready_condition), ZONES,
                                      drain_seconds=drain, hook_warn_after=hook_warn_after)
        self.logs: list[str] = []
        self.said: list[tuple[float, str]] = []  # the replicas' log lines with their time

    def log(self, line: str) -> None:
        self.logs.append(line)
        self.said.append((self.clock.now, line))

    def replica(self, identity: str) -> "Replica":
        return Replica(self, identity)

    def run(self, replicas: list["Replica"], seconds: float, step: float = 1.0) -> None:
        """Let ``seconds`` pass, every replica stepping once per ``step``."""
        end = self.clock.now + seconds
        while self.clock.now < end:
            for replica in replicas:
                replica.step()
            self.clock.advance(step)

    def run_paced(self, replica: "Replica", seconds: float, interval: float) -> None:
        """Let ``seconds`` pass with ``replica`` stepping as ``python -m ha_endpoint.agent``'s loop does without a
        change of the Machines: the next pass when :meth:`Reconciler.next_pass_in` says."""
        end = self.clock.now + seconds
        while self.clock.now < end:
            replica.step()
            self.clock.advance(max(0.01, replica.reconciler.next_pass_in(interval)))


class Replica:
    def __init__(self, world: World, identity: str):
        self.world = world
        self.lease = LeaseElector(FakeLease(world.cluster), identity, LEASE, world.clock, world.logs.append)
        self.cache = MachineCache(world.cluster, world.logs.append)
        self.cloud = AgentOctavia(clock=world.clock, sleep=world.clock.advance, call_timeout=30.0)
        self.cloud._conn = FakeConnection(world.octavia, world.dns)
        self.metrics = Metrics()
        record = None if world.dns is None else AgentRecord(
            world.dns.FQDN, {az: zone.loadbalancer_id for az, zone in ZONES.items()}, ADDRESS, self.cloud)
        self.reconciler = Reconciler(world.settings, self.cloud, world.cluster, self.cache, self.metrics,
                                     world.clock, self.lease.leading, world.log, record)

    def step(self) -> bool:
        """What the agent's threads do in one interval: renew the Lease, list the Machines (the watch), reconcile."""
        self.lease.try_acquire_or_renew()
        try:
            self.cache.relist()
        except Exception as error:  # as MachineCache.run: the management API did not answer
            self.cache.unsynced(str(error))
        return self.reconciler.reconcile()

    def metric(self, name: str, **labels: str) -> float:
        value = self.metrics.registry.get_sample_value(name, labels)
        return 0.0 if value is None else value

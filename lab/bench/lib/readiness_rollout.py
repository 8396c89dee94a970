"""Rollout safety under the real engine on the local cloud: replace every member of two zones and sample, every
0.2 s, how many members of each pool are ONLINE and whether DNS publishes a zone with none.

The program is a miniature of the component's readiness wiring: per zone, members (a small dynamic resource over
openstacksdk, replaced when its address changes, create-before-delete as Pulumi does by default), one
``MemberDrain`` per member (depends on it), the zone's ``MemberReadiness`` (its pools input carries the member ids),
and one Designate A recordset (a small dynamic resource) whose records are the VIPs of the zones whose gate is
ready, depending on the gates. Load balancers and pools are made with openstacksdk by the fixture.

Figures (issue 4): minimum ONLINE members per pool during the replacement (goal >= 1) and the number of samples in
which DNS published a zone with zero ONLINE members (goal 0), printed by lab/bench/readiness_figures.py. It was a test
of `make test` until 2026-12-04 (tests/integration/test_readiness_rollout.py): the component's own rollouts assert
the same under the real engine (tests/e2e/test_engine_lifecycle.py::test_4 with the same sampling, the OVN and YAML
consumers' member replacements with clients), so the miniature only measures now (issue 53: the suite's budget).
Imports the integration tests' helpers: tests/integration on ``sys.path`` (readiness_figures.py puts it there).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field

import openstack

from test_readiness_cloud import Zone, build_zone, retry
from test_readiness_engine import Project

AZS = ("az1", "az2")
SAMPLE_SECONDS = 0.2

PROGRAM = '''
import json
import time

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult

from ha_endpoint.gates.drain import MemberDrain
from ha_endpoint.gates.inputs import DrainInputs, ReadinessInputs
from ha_endpoint.gates.provider import MemberReadiness


def connect():
    import openstack

    return openstack.connect()


def retry_conflict(call):
    from openstack import exceptions

    deadline = time.monotonic() + 120
    while True:
        try:
            return call()
        except exceptions.ConflictException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.25)


class MemberProvider(ResourceProvider):
    serialize_as_secret_always = False

    def create(self, props):
        lb = connect().load_balancer
        member = retry_conflict(lambda: lb.create_member(
            props["pool_id"], address=props["address"], protocol_port=6443, subnet_id=props["subnet_id"]))
        return CreateResult(member.id, {**props, "member_id": member.id})

    def diff(self, _id, olds, news):
        replaces = [k for k in ("pool_id", "address", "subnet_id") if olds.get(k) != news.get(k)]
        return DiffResult(changes=bool(replaces), replaces=replaces, delete_before_replace=False)

    def delete(self, id_, props):
        lb = connect().load_balancer
        retry_conflict(lambda: lb.delete_member(id_, props["pool_id"], ignore_missing=True))


class Member(Resource):
    member_id: pulumi.Output[str]

    def __init__(self, name, pool_id, address, subnet_id, opts=None):
        super().__init__(MemberProvider(), name, {"pool_id": pool_id, "address": address, "subnet_id": subnet_id,
                                                  "member_id": None}, opts)


class RecordSetProvider(ResourceProvider):
    serialize_as_secret_always = False

    def create(self, props):
        rs = connect().dns.create_recordset(props["zone_id"], name=props["name"], type="A", ttl=30,
                                            records=props["records"])
        return CreateResult(rs.id, props)

    def diff(self, _id, olds, news):
        records = news["records"]
        if not isinstance(records, list) or not all(isinstance(r, str) for r in records):
            return DiffResult(changes=True)  # unknown during preview
        return DiffResult(changes=sorted(olds["records"]) != sorted(records))

    def update(self, id_, _olds, news):
        connect().dns.update_recordset(id_, zone_id=news["zone_id"], records=news["records"])
        return UpdateResult(news)

    def delete(self, id_, props):
        connect().dns.delete_recordset(id_, props["zone_id"], ignore_missing=True)


class RecordSet(Resource):
    def __init__(self, name, zone_id, fqdn, records, opts=None):
        super().__init__(RecordSetProvider(), name, {"zone_id": zone_id, "name": fqdn, "records": records}, opts)


cfg = pulumi.Config()
zones = json.loads(cfg.require("zones"))
members = json.loads(cfg.require("members"))
gates, published = [], []
for az, zone in sorted(zones.items()):
    resources = [Member(f"ep-{az}-6443-member-{slot}", zone["pool"], address, zone["subnet"])
                 for slot, address in enumerate(members[az])]
    for slot, member in enumerate(resources):
        MemberDrain(f"ep-{az}-6443-member-{slot}-drain",
                    DrainInputs.declare(pool_id=zone["pool"], member_id=member.id, drain_seconds=1))
    gate = MemberReadiness(f"ep-{az}-ready", ReadinessInputs.declare(
        loadbalancer_id=zone["lb"],
        pools={f"ep-{az}-6443-pool": {"pool_id": zone["pool"], "member_ids": [m.id for m in resources],
                                      "monitored": True}},
        timeout_seconds=120))
    gates.append(gate)
    published.append(pulumi.Output.all(gate.ready, zone["vip"]))
records = pulumi.Output.all(*published).apply(lambda pairs: sorted(vip for ready, vip in pairs if ready))
RecordSet("ep-dns", cfg.require("dns_zone"), cfg.require("fqdn"), records,
          opts=pulumi.ResourceOptions(depends_on=gates))
'''


@dataclass
class Samples:
    """Timestamped observations: per zone (time, ONLINE, serving = ONLINE with weight > 0); DNS (time, records)."""

    zones: dict[str, list[tuple[float, int, int]]] = field(default_factory=dict)
    dns: list[tuple[float, frozenset]] = field(default_factory=list)

    def published_without_online(self, vips: dict[str, str]) -> int:
        """DNS samples x zones in which the zone's VIP was published while its latest pool sample had no ONLINE."""
        bad = 0
        for when, records in self.dns:
            for az, vip in vips.items():
                seen = [online for t, online, _ in self.zones.get(az, []) if t <= when]
                if vip in records and seen and seen[-1] == 0:
                    bad += 1
        return bad

    def figures(self, vips: dict[str, str]) -> dict:
        periods = [(z[-1][0] - z[0][0]) / max(1, len(z) - 1) for z in self.zones.values() if z]
        return {
            "samples_per_pool": min(len(z) for z in self.zones.values()),
            "mean_sample_period_s": round(max(periods), 3),
            "min_online_per_pool": {az: min(o for _, o, _ in z) for az, z in self.zones.items()},
            "min_serving_per_pool": {az: min(s for _, _, s in z) for az, z in self.zones.items()},
            "published_zones_with_zero_online": self.published_without_online(vips),
        }


def _every(period: float, stop: threading.Event, observe) -> None:
    while not stop.is_set():
        tick = time.monotonic()
        observe(tick)
        stop.wait(max(0.0, period - (time.monotonic() - tick)))


def start_sampling(zones: dict[str, Zone], dns_zone: str, fqdn: str, stop: threading.Event,
                   samples: Samples) -> list[threading.Thread]:
    """One sampler thread per pool and one for DNS, each with its own connection, every SAMPLE_SECONDS."""
    threads = []
    for az, zone in zones.items():
        conn = openstack.connect()

        def observe(tick, az=az, zone=zone, conn=conn):
            members = retry(lambda: list(conn.load_balancer.members(zone.pool_id)))
            up = [m for m in members if (m.provisioning_status, m.operating_status) == ("ACTIVE", "ONLINE")]
            samples.zones.setdefault(az, []).append((tick, len(up), len([m for m in up if m.weight])))

        threads.append(threading.Thread(target=_every, args=(SAMPLE_SECONDS, stop, observe), daemon=True))
    dns_conn = openstack.connect()

    def observe_dns(tick):
        recordsets = retry(lambda: list(dns_conn.dns.recordsets(dns_zone, name=fqdn)))
        samples.dns.append((tick, frozenset(recordsets[0].records) if recordsets else frozenset()))

    threads.append(threading.Thread(target=_every, args=(SAMPLE_SECONDS, stop, observe_dns), daemon=True))
    for thread in threads:
        thread.start()
    return threads


def run_rollout(localcloud, cleanup, tmp_path) -> dict:
    """Build two zones, `pulumi up` two members each, then replace all four while sampling; returns the figures."""
    conn = localcloud.conn
    zones = {az: build_zone(conn, localcloud.seed[f"{az}_subnet_id"], cleanup.name, cleanup.add, az=az)
             for az in AZS}
    vips = {az: retry(conn.load_balancer.get_load_balancer, zone.lb_id).vip_address for az, zone in zones.items()}
    fqdn = f"{cleanup.prefix}-api.{localcloud.seed['dns_zone']}"
    project = Project(tmp_path, PROGRAM)
    config = {az: {"lb": z.lb_id, "pool": z.pool_id, "subnet": z.subnet_id, "vip": vips[az]} for az, z in zones.items()}
    project.run("config", "set", "zones", json.dumps(config))
    project.run("config", "set", "dns_zone", localcloud.seed["dns_zone_id"])
    project.run("config", "set", "fqdn", fqdn)
    try:
        addresses = {az: [f"10.10.{az[-1]}.{20 + i}" for i in range(2)] for az in AZS}
        project.run("config", "set", "members", json.dumps(addresses))
        project.run("up", "--yes")
        samples, stop = Samples(), threading.Event()
        samplers = start_sampling(zones, localcloud.seed["dns_zone_id"], fqdn, stop, samples)
        time.sleep(1)
        replaced = {az: [f"10.10.{az[-1]}.{40 + i}" for i in range(2)] for az in AZS}
        project.run("config", "set", "members", json.dumps(replaced))
        started = time.monotonic()
        project.run("up", "--yes")
        seconds = time.monotonic() - started
        time.sleep(1)
        stop.set()
        for sampler in samplers:
            sampler.join(10)
        after = {az: sorted(m.address for m in conn.load_balancer.members(z.pool_id)) for az, z in zones.items()}
        assert after == replaced, after
        return {**samples.figures(vips), "update_seconds": round(seconds, 1)}
    finally:
        project.run("destroy", "--yes", check=False)


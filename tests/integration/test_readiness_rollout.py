"""Rollout safety under the real engine on the local cloud: replace every member of two zones and sample, every
0.2 s, how many members of each pool are ONLINE and whether DNS publishes a zone with none.

The program is a miniature of the component's readiness wiring: per zone, members (a small dynamic resource over
openstacksdk, replaced when its address changes, create-before-delete as Pulumi does by default), one
``MemberDrain`` per member (depends on it), the zone's ``MemberReadiness`` (its pools input carries the member ids),
and one Designate A recordset (a small dynamic resource) whose records are the VIPs of the zones whose gate is
ready, depending on the gates. Load balancers and pools are made with openstacksdk by the fixture.

Figures (issue 4): minimum ONLINE members per pool during the replacement (goal >= 1) and the number of samples in
which DNS published a zone with zero ONLINE members (goal 0).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field

import pytest

from test_readiness_cloud import Zone, build_zone, retry
from test_readiness_engine import Project

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")]

AZS = ("az1", "az2")
SAMPLE_SECONDS = 0.2

PROGRAM = '''
import json
import time

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult

from components.readiness.drain import MemberDrain
from components.readiness.provider import MemberReadiness


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
        MemberDrain(f"ep-{az}-6443-member-{slot}-drain", pool_id=zone["pool"], member_id=member.id,
                    drain_seconds=1)
    gate = MemberReadiness(f"ep-{az}-ready", loadbalancer_id=zone["lb"],
                           pools={f"ep-{az}-6443-pool": {"pool_id": zone["pool"],
                                                         "member_ids": [m.id for m in resources],
                                                         "monitored": True}},
                           timeout_seconds=120)
    gates.append(gate)
    published.append(pulumi.Output.all(gate.ready, zone["vip"]))
records = pulumi.Output.all(*published).apply(lambda pairs: sorted(vip for ready, vip in pairs if ready))
RecordSet("ep-dns", cfg.require("dns_zone"), cfg.require("fqdn"), records,
          opts=pulumi.ResourceOptions(depends_on=gates))
'''


@dataclass
class Samples:
    """What the sampler saw: per pool the ONLINE counts, and how often DNS published a zone with none."""

    online: dict[str, list[int]] = field(default_factory=dict)
    serving: dict[str, list[int]] = field(default_factory=dict)
    published_without_online: int = 0
    count: int = 0

    def figures(self) -> dict:
        return {
            "samples": self.count,
            "min_online_per_pool": {az: min(v) for az, v in self.online.items()},
            "min_serving_per_pool": {az: min(v) for az, v in self.serving.items()},
            "published_zones_with_zero_online": self.published_without_online,
        }


def sample_rollout(conn, zones: dict[str, Zone], vips: dict[str, str], dns_zone: str, fqdn: str,
                   stop: threading.Event, samples: Samples) -> None:
    """Every 0.2 s: ACTIVE/ONLINE members per pool (serving: with weight > 0) and the published A records."""
    while not stop.is_set():
        tick = time.monotonic()
        online = {}
        for az, zone in zones.items():
            members = retry(lambda: list(conn.load_balancer.members(zone.pool_id)))
            up = [m for m in members if (m.provisioning_status, m.operating_status) == ("ACTIVE", "ONLINE")]
            online[az] = len(up)
            samples.online.setdefault(az, []).append(len(up))
            samples.serving.setdefault(az, []).append(len([m for m in up if m.weight]))
        recordsets = retry(lambda: list(conn.dns.recordsets(dns_zone, name=fqdn)))
        records = set(recordsets[0].records) if recordsets else set()
        samples.published_without_online += sum(1 for az, vip in vips.items() if vip in records and not online[az])
        samples.count += 1
        stop.wait(max(0.0, SAMPLE_SECONDS - (time.monotonic() - tick)))


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
        sampler = threading.Thread(target=sample_rollout, daemon=True,
                                   args=(conn, zones, vips, localcloud.seed["dns_zone_id"], fqdn, stop, samples))
        sampler.start()
        time.sleep(1)
        replaced = {az: [f"10.10.{az[-1]}.{40 + i}" for i in range(2)] for az in AZS}
        project.run("config", "set", "members", json.dumps(replaced))
        started = time.monotonic()
        project.run("up", "--yes")
        seconds = time.monotonic() - started
        time.sleep(1)
        stop.set()
        sampler.join(10)
        after = {az: sorted(m.address for m in conn.load_balancer.members(z.pool_id)) for az, z in zones.items()}
        assert after == replaced, after
        return {**samples.figures(), "update_seconds": round(seconds, 1)}
    finally:
        project.run("destroy", "--yes", check=False)


def test_replacing_every_member_never_leaves_a_pool_or_a_published_zone_without_online_members(
        localcloud, cloud_cleanup, tmp_path):
    figures = run_rollout(localcloud, cloud_cleanup, tmp_path)
    print(f"rollout safety: {figures}")
    assert figures["samples"] >= 10
    assert min(figures["min_online_per_pool"].values()) >= 1
    assert min(figures["min_serving_per_pool"].values()) >= 1
    assert figures["published_zones_with_zero_online"] == 0

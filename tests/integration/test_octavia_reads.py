"""octavia-api answers its reads from a graph one relationship deep (localcloud/octavia_plugin/localcloud_octavia_reads.py):
every response it gives that way equals the one Octavia's full conversion gives, for a load balancer tree that uses
every kind of object and relation those responses show (tags everywhere, allowed CIDRs, session persistence, a
backup and a disabled member, a monitor, an L7 policy redirecting to a second pool, its rule), compared from the
cloud's own database by the module's own check; and the API serves them (a GET of each answers with its relations)."""

from __future__ import annotations

import json
import subprocess

import pytest

from localcloud.configs import db_url
from localcloud.settings import REPO, SYSTEM_PYTHON, Paths, load_secrets
from localcloud.testing import Cleanup

pytestmark = pytest.mark.integration

PLUGIN = REPO / "localcloud" / "octavia_plugin"


def _wait(lbs, lb):
    lbs.wait_for_load_balancer(lb.id, wait=180)


@pytest.fixture(scope="module")
def tree(localcloud, os_conn):
    cleanup = Cleanup(localcloud)
    try:
        yield _build(os_conn, cleanup)
    finally:
        leftovers = cleanup.run()
        assert not leftovers, leftovers


def _build(os_conn, cloud_cleanup) -> dict:
    lbs = os_conn.load_balancer
    subnet = os_conn.network.find_subnet("cp-az1") or next(iter(os_conn.network.subnets()))
    lb = lbs.create_load_balancer(name=cloud_cleanup.name("reads"), vip_subnet_id=subnet.id, provider="amphora",
                                  tags=["lb-tag"])
    cloud_cleanup.add("load_balancer", lb)
    _wait(lbs, lb)
    listener = lbs.create_listener(name="reads", protocol="HTTP", protocol_port=8080, load_balancer_id=lb.id,
                                   allowed_cidrs=["10.0.0.0/8", "192.0.2.0/24"], tags=["listener-tag"])
    _wait(lbs, lb)
    pool = lbs.create_pool(name="reads", protocol="HTTP", lb_algorithm="ROUND_ROBIN", listener_id=listener.id,
                           session_persistence={"type": "APP_COOKIE", "cookie_name": "sid"}, tags=["pool-tag"])
    _wait(lbs, lb)
    monitor = lbs.create_health_monitor(pool_id=pool.id, type="HTTP", delay=5, timeout=3, max_retries=2,
                                        url_path="/healthz", tags=["monitor-tag"])
    _wait(lbs, lb)
    members = []
    for n, extra in enumerate(({}, {"backup": True}, {"admin_state_up": False, "weight": 0})):
        members.append(lbs.create_member(pool.id, address=f"10.9.9.{10 + n}", protocol_port=8080,
                                         subnet_id=subnet.id, tags=[f"member-tag-{n}"], **extra))
        _wait(lbs, lb)
    other = lbs.create_pool(name="reads-other", protocol="HTTP", lb_algorithm="LEAST_CONNECTIONS",
                            loadbalancer_id=lb.id)
    _wait(lbs, lb)
    policy = lbs.create_l7_policy(listener_id=listener.id, action="REDIRECT_TO_POOL", redirect_pool_id=other.id,
                                  position=1, tags=["policy-tag"])
    _wait(lbs, lb)
    rule = lbs.create_l7_rule(policy.id, type="PATH", compare_type="STARTS_WITH", value="/other",
                              tags=["rule-tag"])
    _wait(lbs, lb)
    return {"loadbalancer": [lb.id], "listener": [listener.id], "pool": [pool.id, other.id],
            "healthmonitor": [monitor.id], "member": [m.id for m in members], "l7policy": [policy.id],
            "l7rule": [rule.id]}


def test_every_read_from_the_limited_graph_equals_octavias_full_one(tree):
    url = db_url(load_secrets(Paths()), "octavia")
    # the URL holds the database's password: by stdin, never on a command line (a CI run's
    # test_localcloud_control found it in this process's /proc/<pid>/cmdline)
    check = subprocess.run([SYSTEM_PYTHON, "-m", "localcloud_octavia_reads"], cwd=PLUGIN, input=url + "\n",
                           capture_output=True, text=True, timeout=300)
    lines = [json.loads(line) for line in check.stdout.splitlines() if line.startswith("{")]
    differences = [line for line in lines if "full" in line]
    assert check.returncode == 0 and not differences, (differences, check.stderr[-2000:])
    counts = {line["kind"]: line["count"] for line in lines if "count" in line}
    for kind, ids in tree.items():  # the tree is in what was compared
        assert counts.get(kind, 0) >= len(ids), (kind, counts)


def test_the_api_serves_each_object_with_its_relations(tree, os_conn):
    lbs = os_conn.load_balancer
    lb = lbs.get_load_balancer(tree["loadbalancer"][0])
    assert [x["id"] for x in lb.listeners] == tree["listener"] and sorted(x["id"] for x in lb.pools) == \
        sorted(tree["pool"]) and lb.tags == ["lb-tag"] and lb.vip_address
    listener = lbs.get_listener(tree["listener"][0])
    assert listener.default_pool_id == tree["pool"][0] and sorted(listener.allowed_cidrs) == \
        ["10.0.0.0/8", "192.0.2.0/24"] and [p["id"] for p in listener.l7_policies] == tree["l7policy"]
    pool = lbs.get_pool(tree["pool"][0])
    assert sorted(m["id"] for m in pool.members) == sorted(tree["member"]) and \
        pool.health_monitor_id == tree["healthmonitor"][0] and pool.session_persistence["cookie_name"] == "sid" \
        and [x["id"] for x in pool.listeners] == tree["listener"] and [x["id"] for x in pool.loadbalancers] == \
        tree["loadbalancer"]
    members = {m.id: m for m in lbs.members(tree["pool"][0])}
    assert sorted(members) == sorted(tree["member"])
    assert [(m.backup, m.is_admin_state_up, m.weight) for m in (members[i] for i in tree["member"])] == \
        [(False, True, 1), (True, True, 1), (False, False, 0)]
    policy = lbs.get_l7_policy(tree["l7policy"][0])
    assert policy.redirect_pool_id == tree["pool"][1] and [r["id"] for r in policy.rules] == tree["l7rule"]

"""The agents' scoped credentials on the local cloud (issue 52, docs/security.md): a Keystone application credential
with exactly the access rules the component gives each agent (ha_endpoint.cloud.access_rules, and the Octavia
backend's: ha_endpoint.backends.octavia.access), used through the clouds.yaml the component writes for it. Each
call the agent makes is allowed; deleting a load balancer, a floating IP or the DNS zone, writing another endpoint's
member or record and reading another project's zone are refused by the cloud; what the rules cannot narrow (the zone
list, a path without ids) is shown as allowed. One test per row;
``make test-security`` prints the table ``call | expected | seen``.

The objects are made with openstacksdk directly (a load balancer with two pools, ours and another endpoint's; a DNS
zone with our record and another endpoint's; a floating IP; a zone of another project), as the stack's user.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import openstack
import pytest
from openstack import exceptions

from ha_endpoint.backends.octavia.access import RecordAccess, agent_calls, watcher_reads
from ha_endpoint.cloud.access_rules import port_reads, record_calls
from ha_endpoint.kubernetes.credential import AGENT_ROLES, WATCHER_ROLES
from localcloud.settings import Paths
from localcloud.testing import Cleanup
from tests import scoped_credentials

pytestmark = pytest.mark.integration

ALLOWED, REFUSED = "allowed", "refused"


@dataclass(frozen=True)
class Row:
    agent: str
    call: str
    expected: str
    action: Callable[[Any, Any, dict], Any]
    """(the scoped connection, the stack's connection, the objects) -> anything; raises when the cloud refuses."""


def _wait(conn, lb_id: str) -> None:
    conn.load_balancer.wait_for_load_balancer(lb_id, wait=180, interval=0.5)


def _member(stack, world, pool: str, n: int) -> str:
    """A member made by the stack's user (another endpoint's, for the scoped credential to be refused)."""
    m = stack.load_balancer.create_member(world[pool], address=f"10.52.0.{n}", protocol_port=6443,
                                          subnet_id=world["subnet"])
    _wait(stack, world["lb"])
    return m.id


def _written(conn, stack, world, call: Callable[[], Any]) -> Any:
    try:
        return call()
    finally:
        _wait(stack, world["lb"])


def _agent_rows() -> list[Row]:
    lb = lambda c: c.load_balancer  # noqa: E731
    return [
        Row("agent", "GET pool (ours)", ALLOWED, lambda c, s, w: lb(c).get_pool(w["pool"])),
        Row("agent", "GET members of our pool", ALLOWED, lambda c, s, w: list(lb(c).members(w["pool"]))),
        Row("agent", "POST member in our pool", ALLOWED, lambda c, s, w: w.update(agent_member=_written(
            c, s, w, lambda: lb(c).create_member(w["pool"], address="10.52.0.10", protocol_port=6443,
                                                 subnet_id=w["subnet"], tags=["agent"])).id)),
        Row("agent", "PUT member of our pool (admin down)", ALLOWED, lambda c, s, w: _written(
            c, s, w, lambda: lb(c).update_member(w["agent_member"], w["pool"], admin_state_up=False))),
        Row("agent", "DELETE member of our pool", ALLOWED, lambda c, s, w: _written(
            c, s, w, lambda: lb(c).delete_member(w["agent_member"], w["pool"], ignore_missing=False))),
        Row("agent", "POST member in another endpoint's pool", REFUSED, lambda c, s, w: lb(c).create_member(
            w["other_pool"], address="10.52.0.20", protocol_port=6443, subnet_id=w["subnet"])),
        Row("agent", "DELETE member of another endpoint's pool", REFUSED, lambda c, s, w: lb(c).delete_member(
            w["other_member"], w["other_pool"], ignore_missing=False)),
        Row("agent", "GET members of another endpoint's pool", REFUSED,
            lambda c, s, w: list(lb(c).members(w["other_pool"]))),
        Row("agent", "GET our members' subnet (what Octavia asks Neutron with its token)", ALLOWED,
            lambda c, s, w: c.network.get_subnet(w["subnet"])),
        Row("agent", "GET another subnet", REFUSED, lambda c, s, w: c.network.get_subnet(w["other_subnet"])),
        Row("agent", "GET load balancers (list)", REFUSED, lambda c, s, w: list(lb(c).load_balancers())),
        Row("agent", "DELETE load balancer", REFUSED, lambda c, s, w: lb(c).delete_load_balancer(w["lb"])),
        Row("agent", "DELETE floating IP", REFUSED, lambda c, s, w: c.network.delete_ip(w["fip"],
                                                                                       ignore_missing=False)),
        Row("agent", "DELETE DNS zone", REFUSED, lambda c, s, w: c.dns.delete_zone(w["zone"], ignore_missing=False)),
        # the record (a zone leaves DNS before its only member leaves: ha_endpoint.agent.dns), found as the watcher
        Row("agent", "GET our load balancer (whose record it is)", ALLOWED,
            lambda c, s, w: lb(c).get_load_balancer(w["lb"])),
        Row("agent", "GET zones?name=<our zone>", ALLOWED, lambda c, s, w: _one(c.dns.zones(name=w["zone_name"]))),
        Row("agent", "GET recordsets?name=<our fqdn> in our zone", ALLOWED,
            lambda c, s, w: _one(c.dns.recordsets(w["zone"], name=w["fqdn"]))),
        Row("agent", "PUT our A record", ALLOWED, lambda c, s, w: c.dns.update_recordset(
            _one(c.dns.recordsets(w["zone"], name=w["fqdn"])), records=["192.0.2.9"])),
        Row("agent", "PUT another endpoint's A record (same zone)", REFUSED, lambda c, s, w: c.dns.update_recordset(
            s.dns.get_recordset(w["other_record"], w["zone"]), records=["192.0.2.67"])),
        Row("agent", "DELETE our A record", REFUSED, lambda c, s, w: c.dns.delete_recordset(
            w["record"], w["zone"], ignore_missing=False)),
    ]


def _watcher_rows() -> list[Row]:
    lb = lambda c: c.load_balancer  # noqa: E731
    return [
        Row("watcher", "GET our load balancer", ALLOWED, lambda c, s, w: lb(c).get_load_balancer(w["lb"])),
        Row("watcher", "GET our load balancer's status tree", ALLOWED, lambda c, s, w: exceptions.raise_from_response(
            lb(c).get(f"/lbaas/loadbalancers/{w['lb']}/status"))),
        Row("watcher", "GET members of our pool (its status tree has them)", REFUSED,
            lambda c, s, w: list(lb(c).members(w["pool"]))),
        Row("watcher", "GET our keepalived zone's VIP port", ALLOWED, lambda c, s, w: c.network.get_port(w["vip_port"])),
        Row("watcher", "GET another port", REFUSED, lambda c, s, w: c.network.get_port(w["other_port"])),
        Row("watcher", "GET zones?name=<our zone>", ALLOWED, lambda c, s, w: _one(c.dns.zones(name=w["zone_name"]))),
        Row("watcher", "GET recordsets?name=<our fqdn> in our zone", ALLOWED,
            lambda c, s, w: _one(c.dns.recordsets(w["zone"], name=w["fqdn"]))),
        Row("watcher", "PUT our A record", ALLOWED, lambda c, s, w: c.dns.update_recordset(
            _one(c.dns.recordsets(w["zone"], name=w["fqdn"])), records=["192.0.2.10", "192.0.2.11"])),
        Row("watcher", "PUT another endpoint's A record (same zone)", REFUSED, lambda c, s, w: c.dns.update_recordset(
            s.dns.get_recordset(w["other_record"], w["zone"]), records=["192.0.2.66"])),
        Row("watcher", "DELETE our A record", REFUSED, lambda c, s, w: c.dns.delete_recordset(
            w["record"], w["zone"], ignore_missing=False)),
        Row("watcher", "DELETE DNS zone", REFUSED, lambda c, s, w: c.dns.delete_zone(w["zone"], ignore_missing=False)),
        Row("watcher", "GET another project's zone (by id)", REFUSED, lambda c, s, w: c.dns.get_zone(w["foreign_zone"])),
        Row("watcher", "GET zones?name=<another project's zone>: none seen (Designate's project scope)", ALLOWED,
            lambda c, s, w: _none(c.dns.zones(name=w["foreign_zone_name"]))),
        Row("watcher", "GET zones (every zone of the project: a path without ids)", ALLOWED,
            lambda c, s, w: list(c.dns.zones())),
        Row("watcher", "DELETE load balancer", REFUSED, lambda c, s, w: lb(c).delete_load_balancer(w["lb"])),
        Row("watcher", "DELETE floating IP", REFUSED, lambda c, s, w: c.network.delete_ip(w["fip"],
                                                                                         ignore_missing=False)),
        Row("watcher", "POST member in our pool", REFUSED, lambda c, s, w: lb(c).create_member(
            w["pool"], address="10.52.0.30", protocol_port=6443, subnet_id=w["subnet"])),
    ]


def _one(found) -> Any:
    found = list(found)
    assert len(found) == 1, found
    return found[0]


def _none(found) -> None:
    found = list(found)
    assert not found, f"another project's zone is visible: {found}"


ROWS = _agent_rows() + _watcher_rows()


def seen_of(action: Callable[[], Any]) -> str:
    """What the cloud did with one call: allowed, or refused with its status (401: keystonemiddleware's access-rule
    refusal, "Token authorization failed"; 403: a service's policy)."""
    try:
        action()
    except exceptions.HttpException as error:
        if error.status_code in (401, 403):
            return f"{REFUSED} ({error.status_code})"
        return f"error {error.status_code}: {error}"
    except Exception as error:  # e.g. a row that needs what a refused row did not make
        return f"error {type(error).__name__}: {error}"
    return ALLOWED


@pytest.fixture(scope="module")
def table(localcloud, os_conn):
    unchecked = [conf for conf in ("octavia.conf", "designate.conf") if "service_type" not in Paths().conf(conf).read_text()]
    assert not unchecked, (f"{', '.join(unchecked)} of the local cloud has no [keystone_authtoken] service_type, so "
                           "its services refuse every scoped credential: lab/localcloud/restart rewrites them")
    stack = os_conn
    cleanup = Cleanup(localcloud)
    made: list[scoped_credentials.Scoped] = []
    world: dict[str, Any] = {}
    try:
        subnet = stack.network.find_subnet("cp-az1")
        world["other_subnet"] = stack.network.find_subnet("cp-az2").id
        lb = cleanup.add("load_balancer", stack.load_balancer.create_load_balancer(
            name=cleanup.name("sec"), vip_subnet_id=subnet.id, provider="amphora"))
        _wait(stack, lb.id)
        pools = {}
        for key in ("pool", "other_pool"):
            pools[key] = stack.load_balancer.create_pool(name=cleanup.name(key), protocol="TCP",
                                                         lb_algorithm="ROUND_ROBIN", loadbalancer_id=lb.id).id
            _wait(stack, lb.id)
        world.update(lb=lb.id, subnet=subnet.id, **pools)
        for key in ("vip_port", "other_port"):  # a keepalived zone's VIP port (no device), and a port not ours
            world[key] = cleanup.add("port", stack.network.create_port(
                network_id=subnet.network_id, fixed_ips=[{"subnet_id": subnet.id}], name=cleanup.name(key))).id
        world["other_member"] = _member(stack, world, "other_pool", 21)
        zone = cleanup.add("zone", stack.dns.create_zone(name=f"sec-{cleanup.prefix}.test.",
                                                         email="hostmaster@example.test", ttl=60))
        fqdn = f"api.{zone.name}"
        record = stack.dns.create_recordset(zone, name=fqdn, type="A", records=["192.0.2.1"], ttl=30)
        other = stack.dns.create_recordset(zone, name=f"other.{zone.name}", type="A", records=["192.0.2.2"], ttl=30)
        fip = cleanup.add("floating_ip", stack.network.create_ip(
            floating_network_id=localcloud.seed["public_network_id"], description=cleanup.name("fip")))
        admin = openstack.connect(cloud="localcloud-admin")
        foreign = admin.dns.create_zone(name=f"sec-{cleanup.prefix}-other.test.", email="hostmaster@example.test", ttl=60)
        world.update(zone=zone.id, zone_name=zone.name, fqdn=fqdn, record=record.id, other_record=other.id,
                     fip=fip.id, foreign_zone=foreign.id, foreign_zone_name=foreign.name)
        rules = {"agent": [call.rule() for call in agent_calls([world["pool"]], [subnet.id],
                                                              RecordAccess((lb.id,), zone.id, record.id))],
                 "watcher": [call.rule() for call in watcher_reads([lb.id])
                             + port_reads([world["vip_port"]]) + record_calls(zone.id, record.id)]}
        seen: dict[tuple[str, str], str] = {}
        with tempfile.TemporaryDirectory() as directory:
            for agent in ("agent", "watcher"):
                made.append(scoped_credentials.make(stack, f"{cleanup.prefix}-{agent}", rules[agent],
                                                    AGENT_ROLES if agent == "agent" else WATCHER_ROLES, Path(directory)))
                conn = made[-1].connect()
                for row in (r for r in ROWS if r.agent == agent):
                    seen[(row.agent, row.call)] = seen_of(lambda: row.action(conn, stack, world))
                conn.close()
        yield seen
    finally:
        for scoped in made:
            scoped_credentials.delete(stack, scoped)
        if "foreign_zone" in world:
            admin.dns.delete_zone(world["foreign_zone"], ignore_missing=True)
        leftovers = cleanup.run()
        assert not leftovers, leftovers


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.agent}: {r.call}" for r in ROWS])
def test_the_cloud_does_what_the_credential_allows(table, row):
    seen = table[(row.agent, row.call)]
    assert seen.split(" ")[0] == row.expected, f"{row.agent}: {row.call}: expected {row.expected}, seen {seen}"


def test_the_refusal_table(table):
    """The table ``make test-security`` prints (docs/security.md keeps a copy)."""
    width = max(len(f"{r.agent}: {r.call}") for r in ROWS)
    lines = [f"{'call'.ljust(width)} | expected | seen", f"{'-' * width}-|----------|-------------"]
    lines += [f"{(r.agent + ': ' + r.call).ljust(width)} | {r.expected.ljust(8)} | {table[(r.agent, r.call)]}"
              for r in ROWS]
    print("\n" + "\n".join(lines))
    wrong = [r.call for r in ROWS if table[(r.agent, r.call)].split(" ")[0] != r.expected]
    assert not wrong, wrong

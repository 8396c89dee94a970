"""Recovery deletes only what is provably this stack's (scripts/recover.py), on a fake openstacksdk connection that
holds the dev and the prod stack's objects of one endpoint name."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace as Obj

import pytest

from ha_endpoint.core import contract
from ha_endpoint.core.identity import StackIdentity
from tests import recover_script

recover = recover_script.load()

DEV, PROD = StackIdentity("ha-endpoint", "dev"), StackIdentity("ha-endpoint", "prod")


class FakeConn:
    """The listings recovery uses, and a log of the deletes it issues."""

    def __init__(self):
        self.deleted: list[str] = []
        self.lbs = [Obj(id="lb-prod", name="k8s-api-az1-lb", tags=[PROD.tag])]
        self.pools = [Obj(id="pool-prod", name="k8s-api-az1-6443-pool",
                          description=PROD.describe("pool", "k8s-api-az1-6443-pool"))]
        self.members = {"pool-prod": [Obj(id="m-prod", name="cp-0", address="10.10.1.10")],
                        "pool-dev": [Obj(id="m-dev", name="cp-0", address="10.10.1.10")]}
        self.groups = [Obj(id="sg-prod", name="k8s-api-vip-sg", tags=[PROD.tag])]
        self.ips = [Obj(id="fip-prod", description=PROD.describe("k8s-api-az1-fip: VIP", "k8s-api-az1-fip"),
                        port_id="vip-prod", floating_ip_address="172.24.4.101")]
        self.recordsets = [Obj(id="rs-prod", type="A", description=PROD.describe("A", "k8s-api-dns")),
                           Obj(id="rs-txt", type="TXT", description="")]
        lb = self
        self.load_balancer = Obj(
            load_balancers=lambda name: [x for x in lb.lbs if x.name == name],
            listeners=lambda name: [], pools=lambda name: [x for x in lb.pools if x.name == name],
            health_monitors=lambda name: [], members=lambda pool, name: [m for m in lb.members.get(pool, [])
                                                                         if m.name == name],
            delete_load_balancer=lambda ident, cascade: lb.deleted.append(ident),
            delete_pool=lb.deleted.append, delete_member=lambda member, pool: lb.deleted.append(member))
        self.network = Obj(
            security_groups=lambda name: [x for x in lb.groups if x.name == name],
            ips=lambda **kw: [x for x in lb.ips if all(getattr(x, k) == v for k, v in kw.items())],
            delete_ip=lb.deleted.append, delete_security_group=lb.deleted.append,
            update_ip=lambda ident, port_id: lb.deleted.append(f"disassociate {ident}"))
        self.dns = Obj(recordsets=lambda zone, name: list(lb.recordsets),
                       delete_recordset=lambda rs, zone: lb.deleted.append(rs))


def creating(kind: str, resource_name: str, **inputs) -> dict:
    return {"type": "creating", "resource": {"urn": f"urn:pulumi:dev::ha-endpoint::{kind}::{resource_name}", "type": kind,
                                             "inputs": inputs}}


DEV_STATE = recover.Ours(DEV, frozenset({"pool-dev", "sg-dev"}), frozenset({"vip-dev"}))

PENDING = [
    creating(contract.LOADBALANCER_TYPE, "k8s-api-az1-lb", name="k8s-api-az1-lb"),
    creating(contract.POOL_TYPE, "k8s-api-az1-6443-pool", name="k8s-api-az1-6443-pool"),
    creating(contract.MEMBER_TYPE, "k8s-api-az1-6443-member-10.10.1.10", poolId="pool-prod", name="cp-0",
             address="10.10.1.10"),
    creating(contract.SECGROUP_TYPE, "k8s-api-vip-sg", name="k8s-api-vip-sg"),
    creating(contract.FLOATING_IP_TYPE, "k8s-api-az1-fip",
             description=DEV.describe("k8s-api-az1-fip: VIP", "k8s-api-az1-fip")),
    creating(contract.FLOATING_IP_ASSOCIATE_TYPE, "k8s-api-az1-fip-assoc", floatingIp="172.24.4.101",
             portId="vip-prod"),
    creating(contract.RECORDSET_TYPE, "k8s-api-dns", zoneId="zone", name="api.example.test.", type="A"),
]


def test_recovery_of_dev_against_a_cloud_holding_only_prods_objects_deletes_nothing(capsys):
    """The defect: by name alone, recovery deleted prod's load balancer (cascade), floating IP, security group and a
    recordset of another type."""
    conn = FakeConn()
    undone, unknown, left = recover.roll_back(conn, PENDING, DEV_STATE)
    assert (conn.deleted, undone, unknown, left) == ([], [], [], [])
    assert "k8s-api-az1-lb never reached the cloud (1 object(s) of that name and type belong to another stack" in \
        capsys.readouterr().out


def test_recovery_deletes_the_object_that_carries_its_identity():
    conn = FakeConn()
    conn.lbs.append(Obj(id="lb-dev", name="k8s-api-az1-lb", tags=[DEV.tag]))
    conn.members["pool-dev"].append(Obj(id="m-dev-2", name="cp-0", address="10.10.1.10"))
    pending = [PENDING[0], creating(contract.MEMBER_TYPE, "m", poolId="pool-dev", name="cp-0", address="10.10.1.10")]
    undone, _, left = recover.roll_back(conn, pending, DEV_STATE)
    assert conn.deleted == ["lb-dev"]
    assert [u.split(" ")[0] for u in undone] == ["k8s-api-az1-lb"]
    assert left == ["m: 2 objects match it and carry this stack's identity (pool-dev/m-dev, pool-dev/m-dev-2); none "
                    "was deleted: delete the extra one by hand"]


def test_the_stacks_own_cloud_and_region_are_read_from_its_config(monkeypatch, tmp_path):
    monkeypatch.setattr(recover, "pulumi", lambda *args, cwd: '{"openstack:cloud": {"value": "other"}, '
                                                                '"openstack:region": {"value": "RegionTwo"}}')
    assert recover.stack_cloud("prod", tmp_path) == ("other", "RegionTwo")


def test_a_live_lock_holder_stops_recovery_before_the_checkpoint_is_touched(monkeypatch, tmp_path):
    touched = []
    monkeypatch.setattr(recover, "stale_locks", lambda stack, project: ([], [{"pid": 1, "hostname": "here"}]))
    monkeypatch.setattr(recover, "repair_checkpoint", lambda stack, project: touched.append("repair") or [])
    monkeypatch.setattr("sys.argv", ["recover", "--stack", "dev", "--cwd", str(Path(__file__).resolve().parents[2])])
    with pytest.raises(SystemExit, match="locked by an update that may be live"):
        recover.main()
    assert touched == []


def test_rollbacks_retry_409_under_the_one_retry_policy_and_count_404_as_done(monkeypatch):
    import openstack

    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise openstack.exceptions.ConflictException("Load balancer is immutable (PENDING_UPDATE)",
                                                         http_status=409)
        raise openstack.exceptions.NotFoundException("gone", http_status=404)

    monkeypatch.setattr(recover.time, "sleep", lambda seconds: None)
    recover.retrying(flaky)
    assert len(calls) == 3
    def forbidden():
        raise openstack.exceptions.ForbiddenException("forbidden", http_status=403)

    with pytest.raises(Exception, match="rolling back failed: HTTP 403"):
        recover.retrying(forbidden)


def test_a_replacements_unrecorded_create_never_deletes_the_live_object_the_state_records(capsys):
    """Issue 21, finding 1: a replacement load balancer's create never reached the cloud; its lookup by name and
    identity finds the live one the state records (same name, same tag). Recovery used to delete it (cascade)."""
    conn = FakeConn()
    conn.lbs.append(Obj(id="lb-dev", name="k8s-api-az1-lb", tags=[DEV.tag]))
    state = recover.Ours(DEV, DEV_STATE.ids | {"lb-dev"}, DEV_STATE.vip_ports)
    undone, unknown, left = recover.roll_back(conn, [PENDING[0]], state)
    assert (conn.deleted, undone, unknown, left) == ([], [], [], [])
    out = capsys.readouterr().out
    assert "k8s-api-az1-lb: lb-dev carries its name but is recorded in the state (live): left alone" in out
    assert "k8s-api-az1-lb never reached the cloud" in out


def test_a_replacement_that_did_reach_the_cloud_is_rolled_back_and_the_recorded_one_kept():
    """The same name twice with this stack's identity used to be 'ambiguous' (nothing rolled back, recovery stopped);
    the state tells them apart: the unrecorded one is the interrupted create."""
    conn = FakeConn()
    conn.lbs += [Obj(id="lb-dev", name="k8s-api-az1-lb", tags=[DEV.tag]),
                 Obj(id="lb-dev-new", name="k8s-api-az1-lb", tags=[DEV.tag])]
    conn.members["pool-dev"].append(Obj(id="m-dev-new", name="cp-0", address="10.10.1.10"))
    state = recover.Ours(DEV, DEV_STATE.ids | {"lb-dev", "m-dev"}, DEV_STATE.vip_ports)
    pending = [PENDING[0], creating(contract.MEMBER_TYPE, "m", poolId="pool-dev", name="cp-0", address="10.10.1.10")]
    undone, _, left = recover.roll_back(conn, pending, state)
    assert conn.deleted == ["lb-dev-new", "m-dev-new"]
    assert left == []


# Generated clouds and states: objects of one kind (load balancers, members of a recorded pool, security groups,
# pools, recordsets) under a few names, each tagged/described for dev, prod or nobody, each recorded by dev's state or
# not; pending creates of those names. Whatever recovery does, it never deletes what the state records, never deletes
# another stack's object, and rolls back an unrecorded object of dev's when it is the only one under its name.
from hypothesis import given, settings, strategies as st  # noqa: E402
from tests.budget import examples  # noqa: E402

NAMES = ("k8s-api-az1-lb", "k8s-api-az2-lb", "k8s-api-az3-lb")
OWNERS = ("dev", "prod", None)


@st.composite
def clouds(draw):
    objects = draw(st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(OWNERS), st.booleans()),
                            max_size=8))
    pending = draw(st.lists(st.sampled_from(NAMES), max_size=4, unique=True))
    return objects, pending


@given(clouds(), st.sampled_from(["lb", "sg", "pool", "member", "recordset"]))
@settings(max_examples=examples(60), deadline=None)
def test_recovery_never_deletes_a_recorded_or_foreign_object(cloud, kind):
    objects, pending_names = cloud
    conn = FakeConn()
    conn.lbs, conn.groups, conn.pools, conn.recordsets = [], [], [], []
    conn.members = {"pool-dev": []}
    recorded, foreign, ids = set(), set(), []
    for index, (name, owner, is_recorded) in enumerate(objects):
        ident = f"{kind}-{index}"
        identity = {"dev": DEV, "prod": PROD}.get(owner)
        if kind == "lb":
            conn.lbs.append(Obj(id=ident, name=name, tags=[identity.tag] if identity else []))
        elif kind == "sg":
            conn.groups.append(Obj(id=ident, name=name, tags=[identity.tag] if identity else []))
        elif kind == "pool":
            conn.pools.append(Obj(id=ident, name=name, description=identity.describe("pool", name) if identity else ""))
        elif kind == "member":  # members of dev's recorded pool, told apart by address
            address = "10.10.1.10" if owner == "dev" else "10.10.9.9"
            conn.members["pool-dev"].append(Obj(id=ident, name=name, address=address))
        else:
            conn.recordsets.append(Obj(id=ident, type="A", name=name,
                                       description=identity.describe("A", name) if identity else ""))
        if is_recorded:
            recorded.add(ident)
        if owner != "dev":
            foreign.add(ident)
        ids.append(ident)
    if kind == "recordset":
        conn.dns = Obj(recordsets=lambda zone, name: [r for r in conn.recordsets if r.name == name],
                       delete_recordset=lambda rs, zone: conn.deleted.append(rs))
    type_of = {"lb": contract.LOADBALANCER_TYPE, "sg": contract.SECGROUP_TYPE, "pool": contract.POOL_TYPE,
               "member": contract.MEMBER_TYPE, "recordset": contract.RECORDSET_TYPE}[kind]
    inputs = {"member": lambda n: {"poolId": "pool-dev", "name": n, "address": "10.10.1.10"},
              "recordset": lambda n: {"zoneId": "zone", "name": n, "type": "A"}}.get(kind, lambda n: {"name": n})
    pending = [creating(type_of, name, **inputs(name)) for name in pending_names]
    state = recover.Ours(DEV, frozenset(recorded | {"pool-dev"}), frozenset())
    recover.roll_back(conn, pending, state)
    assert not set(conn.deleted) & recorded, "recovery deleted an object the state records"
    assert not set(conn.deleted) & foreign, "recovery deleted another stack's object"
    for name in pending_names:
        candidates = [ident for ident, (n, owner, is_recorded) in zip(ids, objects)
                      if n == name and owner == "dev" and not is_recorded]
        if len(candidates) == 1:
            assert candidates[0] in conn.deleted, f"the interrupted create {candidates[0]} was left behind"


class _Clock:
    def __init__(self):
        self.now = 0.0

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class _LoadBalancers:
    """Octavia's answers over time: the stack's load balancer PENDING_UPDATE for ``pending_for`` seconds (a write
    the killed update had sent), then ACTIVE; only listings filtered by the stack's tag see it."""

    def __init__(self, clock: _Clock, pending_for: float, tag: str):
        self.clock, self.pending_for, self.tag, self.asked = clock, pending_for, tag, []

    def load_balancers(self, tags=None):
        self.asked.append(tags)
        status = "PENDING_UPDATE" if self.clock.now < self.pending_for else "ACTIVE"
        return [Obj(name="lb-dev", provisioning_status=status)] if tags == self.tag else []


def _settle(pending_for: float, timeout: float = 180):
    identity = StackIdentity("ha-endpoint", "dev")
    clock = _Clock()
    octavia = _LoadBalancers(clock, pending_for, identity.tag)
    still = recover.settle(Obj(load_balancer=octavia), identity, timeout=timeout,
                           clock=lambda: clock.now, sleep=clock.sleep)
    return still, clock.now, octavia.asked


def test_recovery_looks_only_after_the_stacks_load_balancers_stayed_out_of_pending_for_a_while():
    """A listener POST in flight when the update was killed: looked up at once, it was missed (CI: the next up met
    409 'Another Listener ... is already using' for 10 minutes). Recovery waits until it has landed."""
    still, waited, asked = _settle(pending_for=7)
    assert still == [] and waited >= 7 + recover.QUIET_SECONDS
    assert set(asked) == {"ha-endpoint:stack=ha-endpoint/dev"}   # only this stack's load balancers are asked


def test_recovery_goes_on_after_the_timeout_naming_what_is_still_pending():
    still, waited, _ = _settle(pending_for=1000, timeout=30)
    assert still == ["lb-dev"] and 30 <= waited <= 32


def test_a_killed_update_s_pending_waits_hold_nothing_to_undo_and_are_not_unknown():
    """The gates, drains and put-backs own no cloud object: an update killed while one was being created leaves
    nothing to look up (before, a put-back was reported as a type recovery cannot look up), in a Python program and
    in a YAML or TypeScript one (the provider host's tokens: before, each was warned of as a possible orphan)."""
    kinds = (contract.READINESS_TYPE, contract.DRAIN_TYPE, contract.PUT_BACK_TYPE, contract.VIP_READINESS_TYPE,
             "haendpoint:index:MemberReadiness", "haendpoint:index:MemberDrain", "haendpoint:index:PutBack",
             "haendpoint:index:VipReadiness")
    pending = [creating(kind, f"wait-{n}") for n, kind in enumerate(kinds)]
    assert recover.roll_back(FakeConn(), pending, DEV_STATE) == ([], [], [])


def test_a_killed_keepalived_member_vip_create_is_undone_from_the_ports_tags_and_only_then():
    """A MemberVip create killed after its write leaves the VIP's pair and the VRRP group on a member port (before,
    recovery called it a type it cannot look up, and a `destroy` after it failed deleting the group, still in use).
    The port's tags prove what this endpoint added: that is removed; the user's own pair and a port without the tags
    are left alone, and so is a port whose group this stack's state does not record."""
    from ha_endpoint.backends.keepalived import pairs
    from tests.unit.test_keepalived_providers import FakeNetwork, _port

    vip, group = "10.10.1.100", "sg-dev"
    kind = contract.dynamic_type(pairs.TYPE_NAME)
    inputs = {"member": "cp-0", "port_id": "port-1", "address": "10.10.1.10", "network_id": "net",
              "vip_address": vip, "group_id": group}
    users_pair = {"ip_address": "10.10.1.250", "mac_address": "fa:16:3e:00:00:09"}
    conn = FakeConn()
    conn.network = FakeNetwork(_port(allowed_address_pairs=[users_pair, {"ip_address": vip}],
                                     security_group_ids=["default", group],
                                     tags=["users-own", pairs.pair_tag(vip), pairs.group_tag(group)]))
    undone, unknown, left = recover.roll_back(conn, [creating(kind, "k8s-api-az1-vip-cp-0", **inputs)], DEV_STATE)
    assert (undone, unknown, left) == ([f"k8s-api-az1-vip-cp-0 (port-1|{vip}|{group})"], [], [])
    port = conn.network.port
    assert (port.allowed_address_pairs, port.security_group_ids, port.tags) == ([users_pair], ["default"],
                                                                                ["users-own"])
    for state, tags in ((DEV_STATE, ["users-own"]), (recover.Ours(DEV, frozenset(), frozenset()),
                                                     ["users-own", pairs.pair_tag(vip)])):
        conn.network = FakeNetwork(_port(allowed_address_pairs=[{"ip_address": vip}], tags=tags))
        assert recover.roll_back(conn, [creating(kind, "v", **inputs)], state) == ([], [], [])
        assert conn.network.port.allowed_address_pairs == [{"ip_address": vip}] and not conn.network.writes

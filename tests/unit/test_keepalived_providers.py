"""The keepalived backend's dynamic providers against a fake openstacksdk connection: MemberVip adds the VIP pair and
the VRRP group to a member port and removes only what it added; VipReadiness reads the VIP port as the gate's waiter
reads a pool."""

from __future__ import annotations

from types import SimpleNamespace

import openstack.exceptions as os_exc
import pytest

from ha_endpoint.backends.keepalived import pairs, readiness
from ha_endpoint.gates.errors import ReadinessTimeout
from ha_endpoint.gates.target import CloudTarget

VIP, GROUP = "10.10.1.100", "grp-vrrp"


class FakeNetwork:
    def __init__(self, port: SimpleNamespace, conflicts: int = 0) -> None:
        self.port, self.conflicts, self.writes = port, conflicts, []

    def get_port(self, port_id):
        if port_id != self.port.id:
            raise os_exc.NotFoundException("no such port", http_status=404)
        return SimpleNamespace(**vars(self.port))

    def ports(self, **query):
        return [self.get_port(self.port.id)] if query["fixed_ips"] == f"ip_address={self.port.address}" else []

    def find_port(self, port_id, ignore_missing=True):
        return self.get_port(port_id) if port_id == self.port.id else None

    def update_port(self, port, **changes):
        if self.conflicts:
            self.conflicts -= 1
            raise os_exc.HttpException("revision mismatch", http_status=412)
        assert changes.pop("if_revision") == self.port.revision_number
        self.writes.append(changes)
        self.port.allowed_address_pairs = changes["allowed_address_pairs"]
        self.port.security_group_ids = changes["security_group_ids"]
        self.port.revision_number += 1

    def add_tag(self, port, tag):  # as Neutron: a tag is its own call, and moves the port's revision on
        assert port.id == self.port.id
        self.port.tags = [*self.port.tags, tag] if tag not in self.port.tags else self.port.tags
        self.port.revision_number += 1

    def remove_tag(self, port, tag):
        if tag not in self.port.tags:
            raise os_exc.NotFoundException("Tag does not exist", http_status=404)
        self.port.tags = [t for t in self.port.tags if t != tag]
        self.port.revision_number += 1


def _port(**changes) -> SimpleNamespace:
    base = dict(id="port-1", address="10.10.1.10", network_id="net", is_port_security_enabled=True,
                allowed_address_pairs=[{"ip_address": "10.10.1.250", "mac_address": "fa:16:3e:00:00:09"}],
                security_group_ids=["default"], revision_number=3, status="DOWN", binding_host_id="",
                tags=["users-own"])
    return SimpleNamespace(**{**base, **changes})


@pytest.fixture
def network(monkeypatch):
    holder = {}

    def connect(cloud=None, region=None, timeout=None):
        return SimpleNamespace(network=holder["network"], close=lambda: None)

    monkeypatch.setattr(pairs, "connect", connect)
    monkeypatch.setattr(readiness, "connect", connect)
    monkeypatch.setattr(pairs.time, "sleep", lambda _: None)

    def use(port, conflicts=0):
        holder["network"] = FakeNetwork(port, conflicts)
        return holder["network"]

    return use


def _props(**changes):
    return {"member": "cp-0", "port_id": None, "address": "10.10.1.10", "network_id": "net", "vip_address": VIP,
            "group_id": GROUP, "cloud": "localcloud", "region": None, "cloud_source": "readiness", **changes}


def test_create_adds_the_vip_and_group_beside_the_users_own_and_delete_removes_only_them(network):
    fake = network(_port())
    provider = pairs.MemberVipProvider()
    created = provider.create(_props())
    assert created.outs["held_port_id"] == "port-1" and created.outs["added_pair"] and created.outs["added_group"]
    assert fake.port.allowed_address_pairs == [
        {"ip_address": "10.10.1.250", "mac_address": "fa:16:3e:00:00:09"}, {"ip_address": VIP}]
    assert fake.port.security_group_ids == ["default", GROUP]
    assert fake.port.tags == ["users-own", pairs.pair_tag(VIP), pairs.group_tag(GROUP)]
    provider.delete(created.id, created.outs)
    assert fake.port.allowed_address_pairs == [{"ip_address": "10.10.1.250", "mac_address": "fa:16:3e:00:00:09"}]
    assert fake.port.security_group_ids == ["default"]
    assert fake.port.tags == ["users-own"]


def test_a_create_killed_after_its_write_is_known_as_ours_by_the_ports_tags_and_destroy_removes_it(network):
    """The engine never recorded the first create (killed after its write): the rerun's create finds the pair and
    the group present. Before the tags it recorded them as the user's, and destroy left both on the port (and the
    group's own delete then failed with 409)."""
    fake = network(_port())
    provider = pairs.MemberVipProvider()
    provider.create(_props())                       # its outcome lost with the killed engine
    writes = len(fake.writes)
    rerun = provider.create(_props())
    assert rerun.outs["added_pair"] is True and rerun.outs["added_group"] is True
    assert len(fake.writes) == writes               # nothing written twice
    provider.delete(rerun.id, rerun.outs)
    assert fake.port.allowed_address_pairs == [{"ip_address": "10.10.1.250", "mac_address": "fa:16:3e:00:00:09"}]
    assert fake.port.security_group_ids == ["default"] and fake.port.tags == ["users-own"]


def test_a_delete_killed_after_its_write_leaves_only_a_tag_that_the_rerun_removes(network):
    fake = network(_port())
    provider = pairs.MemberVipProvider()
    created = provider.create(_props())
    fake.port.allowed_address_pairs = fake.port.allowed_address_pairs[:1]   # the first delete's write, then killed
    fake.port.security_group_ids = ["default"]
    provider.delete(created.id, created.outs)
    assert fake.port.tags == ["users-own"] and fake.port.security_group_ids == ["default"]


def test_a_pair_the_port_had_before_is_not_ours_and_stays_on_delete(network):
    fake = network(_port(allowed_address_pairs=[{"ip_address": VIP}], security_group_ids=["default", GROUP]))
    provider = pairs.MemberVipProvider()
    created = provider.create(_props(port_id="port-1"))
    assert created.outs["added_pair"] is False and created.outs["added_group"] is False and not fake.writes
    provider.delete(created.id, created.outs)
    assert fake.port.allowed_address_pairs == [{"ip_address": VIP}] and GROUP in fake.port.security_group_ids


def test_a_port_changed_while_written_is_read_again(network):
    fake = network(_port(), conflicts=2)
    pairs.MemberVipProvider().create(_props())
    assert len(fake.writes) == 1 and {"ip_address": VIP} in fake.port.allowed_address_pairs


def test_a_port_without_port_security_is_refused_with_the_fix(network):
    network(_port(is_port_security_enabled=False))
    with pytest.raises(pairs.PortNotUsable, match="port security disabled.*enable-port-security"):
        pairs.MemberVipProvider().create(_props())


def test_a_vip_change_moves_the_pair_in_place(network):
    fake = network(_port())
    provider = pairs.MemberVipProvider()
    created = provider.create(_props())
    assert provider.diff(created.id, created.outs, _props(vip_address="10.10.1.101")).replaces == []
    updated = provider.update(created.id, created.outs, _props(vip_address="10.10.1.101"))
    assert [pair["ip_address"] for pair in fake.port.allowed_address_pairs] == ["10.10.1.250", "10.10.1.101"]
    assert updated.outs["added_pair"] is True


def test_an_update_with_the_same_vip_never_removes_it_first(network):
    fake = network(_port())
    provider = pairs.MemberVipProvider()
    created = provider.create(_props())
    writes = len(fake.writes)
    updated = provider.update(created.id, created.outs, _props(cloud="other"))
    assert len(fake.writes) == writes and updated.outs["added_pair"] is True  # nothing written, still ours
    provider.delete(created.id, updated.outs)
    assert [pair["ip_address"] for pair in fake.port.allowed_address_pairs] == ["10.10.1.250"]


def test_the_vip_port_is_online_when_the_cloud_shows_it_held(network):
    network(_port(id="vip", status="ACTIVE", binding_host_id="cmp-az1"))
    source = readiness.VipStatusSource(CloudTarget("localcloud"), probe=[], ports=[6443])
    assert [status.label for status in source.fetch_pool("vip")] == ["ACTIVE/ONLINE"]
    assert source.fetch_pool("gone") == []


def test_with_a_probe_the_vip_counts_only_when_its_listener_answers(network, monkeypatch):
    network(_port(id="vip", status="ACTIVE", binding_host_id="cmp-az1"))
    answered = []
    monkeypatch.setattr(readiness, "answers", lambda address, port: answered.append((address, port)) or False)
    source = readiness.VipStatusSource(CloudTarget("localcloud"), probe=["172.24.4.101"], ports=[6443])
    assert [status.label for status in source.fetch_pool("vip")] == ["ACTIVE/OFFLINE"]
    assert answered == [("172.24.4.101", 6443)]


def test_a_vip_never_held_times_out_naming_the_port_or_is_left_out_under_unpublish(network, monkeypatch):
    network(_port(id="vip", status="DOWN", binding_host_id=""))
    clock = iter(range(0, 10_000))
    monkeypatch.setattr(readiness, "_now", lambda: float(next(clock)))
    monkeypatch.setattr(readiness, "_sleep", lambda _: None)
    props = {"loadbalancer_id": "vip", "pools": {"vip": {"pool_id": "vip", "member_ids": ["vip"], "monitored": True}},
             "probe": [], "listener_ports": [6443], "require": "online", "timeout_seconds": 20,
             "poll_interval_seconds": 1, "stable_polls": 2, "on_not_ready": "fail", "dead_after_seconds": 60,
             "cloud": "localcloud", "region": None, "cloud_source": "readiness"}
    with pytest.raises(ReadinessTimeout, match="vip"):
        readiness.wait_and_record(props, CloudTarget())
    outs = readiness.wait_and_record({**props, "on_not_ready": "unpublish"}, CloudTarget())
    assert outs["ready"] is False and "vip" in outs["not_ready_reason"]

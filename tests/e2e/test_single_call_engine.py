"""``loadBalancerCreate: single-call`` under the real engine on the ovn provider: the dev stack's shape (three zones,
one TCP listener, the data plane's serving members) with each zone's load balancer, listener, pool, monitor and first
member created in one Octavia call (a LoadBalancerTree), the pool's member set owning the members after it.

What a user notices: every zone is published with its member ONLINE and every Octavia object ACTIVE (a provider that
left them PENDING_CREATE, as Octavia 11's amphora driver does, would fail the create); a second preview and `up`
change nothing; a monitor's delay changed in the configuration is changed in place (same load balancer, same VIP);
destroy leaves no load balancer of the endpoint behind."""

from __future__ import annotations

import time
import uuid

import pytest
import yaml

from tests.e2e.cloud_checks import loadbalancers_named
from tests.e2e.ovn_endpoint import ZoneAskers
from tests.e2e.pulumi_cli import REPO, PulumiStack

pytestmark = [pytest.mark.e2e, pytest.mark.integration]
ENDPOINT = f"e2e-sc-{uuid.uuid4().hex[:4]}"


def shape() -> dict:
    dev = yaml.safe_load((REPO / "Pulumi.dev.yaml").read_text())["config"]["ha-endpoint:endpoint"]
    return {**dev, "name": ENDPOINT, "dns": {**dev["dns"], "record": ENDPOINT}, "memberUpdates": "batch",
            "loadBalancerCreate": "single-call"}


def tree_of(cloud, lb_id: str) -> dict:
    """The load balancer's listeners, pools, monitors and members with their statuses."""
    lb_api = cloud.load_balancer
    pools = [p for p in lb_api.pools() if any(ref["id"] == lb_id for ref in p.loadbalancers)]
    listeners = [l for l in lb_api.listeners() if any(ref["id"] == lb_id for ref in l.load_balancers)]
    return {"lb": lb_api.get_load_balancer(lb_id).provisioning_status,
            "listeners": [l.provisioning_status for l in listeners],
            "pools": [p.provisioning_status for p in pools],
            "monitors": [lb_api.get_health_monitor(p.health_monitor_id) for p in pools if p.health_monitor_id],
            "members": [m for p in pools for m in lb_api.members(p.id)]}


def test_single_call_zones_serve_change_in_place_and_leave_nothing(pulumi_environment, cloud, tmp_path):
    config = shape()
    stack = PulumiStack.create(tmp_path / "single-call", "single-call-e2e", pulumi_environment)
    stack.write_config(config)
    try:
        up = stack.up()
        zones = stack.outputs()["zones"]
        assert sorted(zones) == ["az1", "az2", "az3"]
        first_ids = {}
        for az, zone in zones.items():
            assert zone["ready"] and zone["published"], (az, zone)
            tree = tree_of(cloud, zone["loadbalancerId"])
            assert tree["lb"] == "ACTIVE" and tree["listeners"] == ["ACTIVE"] and tree["pools"] == ["ACTIVE"], tree
            assert [m.provisioning_status for m in tree["monitors"]] == ["ACTIVE"], tree
            [member] = tree["members"]
            assert (member.provisioning_status, member.operating_status) == ("ACTIVE", "ONLINE")
            assert f"ha-endpoint:set={ENDPOINT}-{az}-6443-pool" in member.tags  # the member set owns it
            assert zone["memberIds"]["6443"] == {m["name"]: member.id for m in config["members"] if m["az"] == az}
            first_ids[az] = (zone["loadbalancerId"], zone["vipAddress"])
        print(f"up {up.seconds:.1f}s")
        again = stack.preview()
        assert "LoadBalancerTree" not in again.output or "(update)" not in again.output, again.output[-3000:]
        config["listeners"][0]["monitor"]["delay"] += 1
        stack.write_config(config)
        changed = stack.up()
        print(f"monitor delay changed in {changed.seconds:.1f}s")
        zones = stack.outputs()["zones"]
        for az, zone in zones.items():
            assert (zone["loadbalancerId"], zone["vipAddress"]) == first_ids[az]  # in place: same LB, same VIP
            tree = tree_of(cloud, zone["loadbalancerId"])
            assert [m.delay for m in tree["monitors"]] == [config["listeners"][0]["monitor"]["delay"]]
            assert zone["ready"] and zone["published"]
    finally:
        stack.destroy(check=False)
    assert loadbalancers_named(cloud, ENDPOINT) == []


def test_a_per_object_stack_moves_to_single_call_without_a_failed_request(pulumi_environment, cloud, tmp_path):
    """Switching a deployed stack to ``single-call`` builds each zone's tree (and its members) before anything old
    goes: the member sets move to the new pools, the floating IPs move to the new VIPs (the same addresses: DNS does
    not change), then the provider's objects are deleted. A client per zone asks its floating IP all along."""
    config = {**shape(), "name": f"{ENDPOINT}-mv", "dns": {**shape()["dns"], "record": f"{ENDPOINT}-mv"},
              "loadBalancerCreate": "per-object"}
    stack = PulumiStack.create(tmp_path / "move", "single-call-move", pulumi_environment)
    stack.write_config(config)
    try:
        stack.up()
        before = stack.outputs()["zones"]
        addresses = {az: zone["floatingIp"] for az, zone in before.items()}
        config["loadBalancerCreate"] = "single-call"
        stack.write_config(config)
        with ZoneAskers(addresses) as askers:
            moved = stack.up()
            time.sleep(3)  # the last answers after the old load balancers are gone
        after = stack.outputs()["zones"]
        print(f"moved in {moved.seconds:.1f}s; answers per zone "
              f"{ {az: len(a) for az, a in askers.answers.items()} }, failures {askers.failures}")
        for az, zone in after.items():
            assert zone["floatingIp"] == addresses[az] and zone["published"]  # DNS keeps its addresses
            assert zone["loadbalancerId"] != before[az]["loadbalancerId"]
        assert sorted(lb.name for lb in loadbalancers_named(cloud, f"{ENDPOINT}-mv")) == [
            f"{ENDPOINT}-mv-{az}-lb" for az in ("az1", "az2", "az3")]  # the provider's are gone
        assert all(askers.answers[az] for az in addresses), askers.answers
        assert askers.failures == {az: [] for az in addresses}
    finally:
        stack.destroy(check=False)
    assert loadbalancers_named(cloud, f"{ENDPOINT}-mv") == []

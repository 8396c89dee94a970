"""Members from sources (issue 47 item 3, issue 48 item 1): the ``clusterApi`` source reads the control-plane Machines
of a Cluster API cluster from a management cluster (a fake Kubernetes API on 127.0.0.1, the official client against
it: tests/mocks/machines_api.py), beside the static members, under the Pulumi mocks and the fake cloud. What a user
notices: which members the load balancers get, at which address, in which zone; a Machine that cannot be served named
with the fix and never guessed; a management cluster that refuses or does not answer fails the preview."""

from __future__ import annotations

import pytest

from ha_endpoint import ConfigError
from ha_endpoint.agent.machines import MAINTENANCE_ANNOTATION
from ha_endpoint.core import contract
from ha_endpoint.pipeline import Context, run
from tests.mocks import FakeCloud, run_component
from tests.mocks.configs import amphora_endpoint
from tests.mocks.machines_api import FakeMachinesApi, agent_member, machine, serving

ROOT = "HaEndpoint('k8s-api').args"
KEY = f"{ROOT}.memberSources.clusterApi"
MODES = [pytest.param(True, id="preview"), pytest.param(False, id="up")]


def machines() -> list[dict]:
    """The cluster's two control-plane Machines in az2 and az3, a worker, and another cluster's control plane."""
    return [machine("k8s-cp-b", "az2", "10.10.2.21"), machine("k8s-cp-c", "az3", "10.10.3.21"),
            machine("k8s-worker-1", "az2", "10.10.2.30", control_plane=False),
            machine("other-cp-a", "az3", "10.10.3.40", cluster="other")]


def endpoint(kubeconfig, **source) -> dict:
    """The amphora shape with one static member (cp-0, az1) and the Machines of cluster k8s."""
    raw = amphora_endpoint()
    raw["members"] = [raw["members"][0]]
    raw["memberSources"] = {"clusterApi": {"cluster": "k8s", "kubeconfig": str(kubeconfig), **source}}
    return raw


def members_by_address(run, port: int = 6443) -> dict[str, dict]:
    return {m["inputs"]["address"]: m for m in run.of_type(contract.MEMBER_TYPE)
            if m["inputs"]["protocolPort"] == port}


@pytest.mark.parametrize("preview", MODES)
def test_members_are_the_clusters_control_plane_machines_beside_the_static_ones(tmp_path, preview):
    cloud = FakeCloud.dev()
    api = FakeMachinesApi(machines())
    with serving(api, tmp_path) as kubeconfig:
        run = run_component(endpoint(kubeconfig), cloud, preview=preview)
    members = members_by_address(run)
    assert sorted(members) == ["10.10.1.10", "10.10.2.21", "10.10.3.21"]  # no worker, no other cluster's Machine
    for address, name, az in [("10.10.1.10", "cp-0", "az1"), ("10.10.2.21", "k8s-cp-b", "az2"),
                              ("10.10.3.21", "k8s-cp-c", "az3")]:
        member = members[address]
        assert member["inputs"]["name"] == name
        assert member["name"] == contract.member_name("k8s-api", az, 6443, address)
        assert member["inputs"]["subnetId"] == cloud.subnet_id(f"cp-{az}")  # the zone's subnet
    assert len(api.requests) == 1  # read once, in one place, whatever the pipeline does after


def test_a_machine_in_maintenance_is_registered_admin_down(tmp_path):
    listed = machines() + [machine("k8s-cp-d", "az3", "10.10.3.22", **{MAINTENANCE_ANNOTATION: "kernel update"})]
    with serving(FakeMachinesApi(listed), tmp_path) as kubeconfig:
        run = run_component(endpoint(kubeconfig), FakeCloud.dev(), preview=False)
    members = members_by_address(run)
    assert members["10.10.3.22"]["inputs"]["adminStateUp"] is False
    assert members["10.10.3.21"]["inputs"].get("adminStateUp", True) is True


def test_a_machine_without_an_address_is_left_out_and_reported_naming_it(tmp_path, monkeypatch):
    warned: list[str] = []
    monkeypatch.setattr("pulumi.log.warn", lambda message, *args, **kwargs: warned.append(message))
    with serving(FakeMachinesApi(machines() + [machine("k8s-cp-d", "az3", None)]), tmp_path) as kubeconfig:
        run = run_component(endpoint(kubeconfig), FakeCloud.dev(), preview=True)
    assert sorted(members_by_address(run)) == ["10.10.1.10", "10.10.2.21", "10.10.3.21"]
    assert [w for w in warned if "k8s-cp-d" in w] == [
        f"{KEY}: Machine default/k8s-cp-d: status.addresses: no InternalIP address yet: the Machine joins once its "
        "infrastructure provider reports one (left out of the endpoint's members)"]


def test_a_zone_left_without_members_is_refused_with_the_machine_that_left_it(tmp_path):
    listed = [machine("k8s-cp-b", "az2", "10.10.2.21"), machine("k8s-cp-c", None, "10.10.3.21")]
    with serving(FakeMachinesApi(listed), tmp_path) as kubeconfig, pytest.raises(ConfigError) as refused:
        run_component(endpoint(kubeconfig), FakeCloud.dev(), preview=True)
    assert [str(p) for p in refused.value.problems] == [
        f"{ROOT}.zones.az3: zone az3 has no members, so its load balancer would serve nothing under memberPlacement "
        "own-zone; add a member with az: az3, remove the zone, or set memberPlacement: all-zones",
        f"{KEY}: Machine default/k8s-cp-c: spec.failureDomain: no failure domain yet: its zone is not guessed; the "
        "Machine joins once Cluster API sets it (give the cluster's failure domains, CAPO's are the availability "
        "zones)"]


def test_a_machine_in_a_failure_domain_that_is_no_zone_is_refused_naming_the_machine(tmp_path):
    listed = machines() + [machine("k8s-cp-d", "az9", "10.10.3.22")]
    with serving(FakeMachinesApi(listed), tmp_path) as kubeconfig, pytest.raises(ConfigError) as refused:
        run_component(endpoint(kubeconfig), FakeCloud.dev(), preview=True)
    assert [str(p) for p in refused.value.problems] == [
        f"{KEY}[Machine default/k8s-cp-d].az: member k8s-cp-d is in zone 'az9', which is not configured; use one of "
        "az1, az2, az3, or add 'az9' under zones with its subnet, or give the Machine a failure domain that is a zone"]


def test_a_machine_at_a_static_members_address_is_refused_naming_both(tmp_path):
    listed = machines() + [machine("k8s-cp-a", "az1", "10.10.1.10")]
    with serving(FakeMachinesApi(listed), tmp_path) as kubeconfig, pytest.raises(ConfigError) as refused:
        run_component(endpoint(kubeconfig), FakeCloud.dev(), preview=True)
    assert [str(p) for p in refused.value.problems] == [
        f"{KEY}[Machine default/k8s-cp-a].address: address 10.10.1.10 is already the address of members[0] (cp-0); "
        "give each member its own address (one entry per server)"]


def test_a_selector_and_an_address_type_choose_the_machines_and_their_address(tmp_path):
    listed = [machine("k8s-cp-b", "az2", "10.10.2.21"),
              {**machine("edge-b", "az2", "10.10.2.50", address_type="ExternalIP", control_plane=False),
               "metadata": {**machine("edge-b", "az2", None)["metadata"], "labels": {"role": "edge"}}},
              {**machine("edge-c", "az3", "10.10.3.50", address_type="ExternalIP", control_plane=False),
               "metadata": {**machine("edge-c", "az3", None)["metadata"], "labels": {"role": "edge"}}}]
    with serving(FakeMachinesApi(listed), tmp_path) as kubeconfig:
        run = run_component(endpoint(kubeconfig, selector={"role": "edge"}, addressType="ExternalIP"),
                            FakeCloud.dev(), preview=True)
    assert sorted(members_by_address(run)) == ["10.10.1.10", "10.10.2.50", "10.10.3.50"]


def test_an_older_cluster_api_serving_v1beta1_only_is_read(tmp_path):
    api = FakeMachinesApi(machines(), versions=("v1beta1",))
    with serving(api, tmp_path) as kubeconfig:
        run = run_component(endpoint(kubeconfig), FakeCloud.dev(), preview=True)
    assert sorted(members_by_address(run)) == ["10.10.1.10", "10.10.2.21", "10.10.3.21"]
    assert [r.split("/")[3] for r in api.requests] == ["v1beta2", "v1beta1"]


def test_a_management_cluster_that_refuses_fails_the_preview_with_the_fix(tmp_path):
    api = FakeMachinesApi(machines())
    api.refuse = 403
    cloud = FakeCloud.dev()
    with serving(api, tmp_path) as kubeconfig, pytest.raises(ConfigError) as refused:
        run_component(endpoint(kubeconfig), cloud, preview=True)
    assert [str(p) for p in refused.value.problems] == [
        f"{KEY}: the management cluster refused to list the Machines of cluster k8s in namespace default (v1beta2): "
        "403 Forbidden; give credentials that may list machines.cluster.x-k8s.io in that namespace (a Role with get "
        "and list on machines)"]


def test_a_management_cluster_that_does_not_answer_fails_the_preview_and_is_not_taken_for_no_machines(tmp_path):
    with serving(FakeMachinesApi(machines()), tmp_path) as kubeconfig:
        pass  # the server is gone: its port refuses connections
    with pytest.raises(ConfigError) as refused:
        run_component(endpoint(kubeconfig), FakeCloud.dev(), preview=True)
    [problem] = refused.value.problems
    assert problem.path == KEY
    assert problem.message.startswith("the management cluster could not be reached to list the Machines of cluster "
                                      "k8s in namespace default: MaxRetryError")
    assert problem.message.endswith("check kubeconfig (its server, credentials and CA) and that the API server answers")


def test_a_kubeconfig_that_cannot_be_loaded_names_the_key(tmp_path):
    with pytest.raises(ConfigError) as refused:
        run_component(endpoint(tmp_path / "missing.kubeconfig"), FakeCloud.dev(), preview=True)
    [problem] = refused.value.problems
    assert problem.path == f"{KEY}.kubeconfig" and "give the path of a kubeconfig file" in problem.message


def test_bootstrap_publishes_machine_members_zones_on_load_balancer_then_when_ready_waits_for_them(tmp_path):
    """dns.publish: bootstrap (the first control-plane node needs the name first), then when-ready, with members
    read from Machines: the same gates as static members."""
    cloud = FakeCloud.dev()
    with serving(FakeMachinesApi(machines()), tmp_path) as kubeconfig:
        raw = endpoint(kubeconfig)
        for publish, require, gated in [("bootstrap", "provisioned", False), ("when-ready", "online", True)]:
            raw["dns"]["publish"] = publish
            before = len(cloud.registrations)
            run = run_component(raw, cloud, preview=False)
            registered = cloud.registrations[before:]
            gates = [r for r in registered if r["type"] == contract.READINESS_TYPE and "pools" in r["inputs"]]
            assert len(gates) == 3 and {g["inputs"]["require"] for g in gates} == {require}
            waited = {i for g in gates for pool in g["inputs"]["pools"].values() for i in pool["member_ids"]}
            assert waited == {m["id"] for m in registered if m["type"] == contract.MEMBER_TYPE}
            assert len(waited) == 6  # 3 members (1 static, 2 Machines) x 2 listeners
            record = next(r for r in registered if r["name"] == contract.recordset_name("k8s-api"))
            assert bool({g["urn"] for g in gates} & set(record["dependencies"])) is gated
            assert len(run.outputs["addresses"]) == 3


def test_up_leaves_the_members_the_agent_holds_alone(tmp_path):
    """Between runs a new Machine joined az2 and the member agent added its member (with its tag) to az2's pools: the
    next up registers no member of its own for it (Octavia would refuse a second one at that address and port), and
    still registers the other Machines' members and the static one."""
    cloud = FakeCloud.dev()
    api = FakeMachinesApi(machines())
    with serving(api, tmp_path) as kubeconfig:
        raw = endpoint(kubeconfig)
        run_component(raw, cloud, preview=False)
        api.machines.append(machine("k8s-cp-e", "az2", "10.10.2.23"))
        for port in (6443, 22623):
            agent_member(cloud, contract.pool_name("k8s-api", "az2", port), "10.10.2.23", port)
        before = len(cloud.registrations)
        run = run_component(raw, cloud, preview=False)
    registered = [r for r in cloud.registrations[before:] if r["type"] == contract.MEMBER_TYPE]
    assert sorted({r["inputs"]["address"] for r in registered}) == ["10.10.1.10", "10.10.2.21", "10.10.3.21"]
    assert run.outputs["zones"]["az2"]["ready"] is True


def test_the_pipeline_never_plans_without_the_members_of_a_source_not_read(tmp_path):
    """Only HaEndpoint reads the sources (ha_endpoint.members.read_members); the pipeline given arguments whose
    sources were not read refuses, rather than planning the static members alone."""
    with pytest.raises(ConfigError) as refused:
        run(endpoint(tmp_path / "unused.kubeconfig"), Context(root="e"))
    assert [p.path for p in refused.value.problems] == ["e.memberSources"]


def shared_network_machines() -> list[dict]:
    """Control-plane Machines on one subnet shared by the zones (cp-extra, 10.10.100.0/24), not their VIP subnets."""
    return [machine("k8s-cp-b", "az2", "10.10.100.21"), machine("k8s-cp-c", "az3", "10.10.100.31")]


def test_machines_on_a_subnet_other_than_their_zones_join_on_the_subnet_given_per_zone(tmp_path):
    cloud = FakeCloud.dev()
    with serving(FakeMachinesApi(shared_network_machines()), tmp_path) as kubeconfig:
        run = run_component(endpoint(kubeconfig, subnets={"az2": "cp-extra", "az3": "cp-extra"}), cloud,
                            preview=False)
    members = members_by_address(run)
    assert members["10.10.100.21"]["inputs"]["subnetId"] == cloud.subnet_id("cp-extra")
    assert members["10.10.100.31"]["inputs"]["subnetId"] == cloud.subnet_id("cp-extra")
    assert members["10.10.1.10"]["inputs"]["subnetId"] == cloud.subnet_id("cp-az1")  # the static member's own


def test_machines_outside_their_zones_subnet_are_refused_naming_the_key_that_fixes_it(tmp_path):
    with serving(FakeMachinesApi(shared_network_machines()), tmp_path) as kubeconfig, \
            pytest.raises(ConfigError) as refused:
        run_component(endpoint(kubeconfig), FakeCloud.dev(), preview=True)
    messages = [str(p) for p in refused.value.problems]
    assert any(f"{KEY}[Machine default/k8s-cp-b].address: address 10.10.100.21 of member k8s-cp-b is outside its "
               "subnet cp-az2 (10.10.2.0/24); fix the address, or set memberSources.clusterApi.subnets.az2 to the "
               "subnet the address is on" == m for m in messages), messages


def test_subnets_of_a_zone_the_endpoint_does_not_have_are_refused(tmp_path):
    with serving(FakeMachinesApi(machines()), tmp_path) as kubeconfig, pytest.raises(ConfigError) as refused:
        run_component(endpoint(kubeconfig, subnets={"az9": "cp-extra"}), FakeCloud.dev(), preview=True)
    assert [str(p) for p in refused.value.problems] == [
        f"{KEY}.subnets.az9: 'az9' is not a zone of the endpoint (it has az1, az2, az3); key subnets by the zones "
        "whose Machines are not on the zone's VIP subnet"]

"""Machines -> members: what the agent and the clusterApi member source serve, and what they refuse and report."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ha_endpoint.agent.machines import (CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL, MAINTENANCE_ANNOTATION,
                                        MachineSource, members_from_machines)

SOURCE = MachineSource(cluster="prod")


def machine(name="prod-cp-1", az="az1", address="10.0.1.10", annotations=None, deleting=False, labels=None,
            addresses=None):
    return {"metadata": {"name": name, "uid": f"uid-{name}",
                         "labels": {CLUSTER_NAME_LABEL: "prod", CONTROL_PLANE_LABEL: ""} if labels is None else labels,
                         "annotations": annotations or {},
                         **({"deletionTimestamp": "2026-12-02T05:00:00Z"} if deleting else {})},
            "spec": {"failureDomain": az} if az is not None else {},
            "status": {"addresses": addresses if addresses is not None else
                       [{"type": "Hostname", "address": name}, {"type": "InternalIP", "address": address}]}}


def test_a_control_plane_machine_is_a_member_of_its_failure_domain():
    members, problems = members_from_machines([machine()], SOURCE)
    assert problems == []
    [member] = members
    assert (member.name, member.az, member.address, member.enabled, member.deleting) == \
        ("prod-cp-1", "az1", "10.0.1.10", True, False)


def test_the_default_selector_is_the_labels_cluster_api_sets():
    assert SOURCE.label_selector == "cluster.x-k8s.io/cluster-name=prod,cluster.x-k8s.io/control-plane"
    worker = machine(name="prod-md-1", labels={CLUSTER_NAME_LABEL: "prod"})
    other = machine(name="dev-cp-1", labels={CLUSTER_NAME_LABEL: "dev", CONTROL_PLANE_LABEL: ""})
    members, problems = members_from_machines([worker, other, machine()], SOURCE)
    assert [m.name for m in members] == ["prod-cp-1"] and problems == []


def test_machines_without_address_or_failure_domain_are_reported_not_guessed():
    members, problems = members_from_machines(
        [machine(name="a", az=None), machine(name="b", addresses=[]),
         machine(name="c", addresses=[{"type": "ExternalIP", "address": "203.0.113.5"}])], SOURCE)
    assert members == []
    assert [p.path for p in problems] == ["Machine default/a: spec.failureDomain", "Machine default/b: status.addresses",
                                          "Machine default/c: status.addresses"]
    assert "has: ExternalIP" in problems[2].message and "addressType" in problems[2].message


def test_the_address_type_is_configurable():
    source = MachineSource(cluster="prod", addressType="ExternalIP")
    members, _ = members_from_machines(
        [machine(addresses=[{"type": "ExternalIP", "address": "203.0.113.5"}])], source)
    assert members[0].address == "203.0.113.5"
    with pytest.raises(ValidationError, match="InternalIP"):
        MachineSource(cluster="prod", addressType="Hostname")


def test_maintenance_and_deletion():
    members, _ = members_from_machines(
        [machine(name="a", annotations={MAINTENANCE_ANNOTATION: "disk swap"}),
         machine(name="b", annotations={MAINTENANCE_ANNOTATION: "false"}), machine(name="c", deleting=True)], SOURCE)
    assert [(m.name, m.enabled, m.maintenance_reason, m.deleting) for m in members] == \
        [("a", False, "disk swap", False), ("b", True, None, False), ("c", True, None, True)]


@pytest.mark.parametrize("bad, where", [
    ({"annotations": {MAINTENANCE_ANNOTATION: "x" * 10_000}}, "annotations[ha-endpoint.io/maintenance]"),
    ({"annotations": {MAINTENANCE_ANNOTATION: 7}}, "annotations[ha-endpoint.io/maintenance]"),
    ({"az": ["az1"]}, "spec.failureDomain"),
    ({"az": "az1; rm -rf /"}, "spec.failureDomain"),
    ({"address": "not-an-ip"}, "status.addresses[type=InternalIP]"),
    ({"addresses": [{"type": "InternalIP", "address": "10.0.0.1"}] * 100}, "status.addresses"),
    ({"addresses": "10.0.0.1"}, "status.addresses"),
])
def test_untrusted_values_are_refused_with_a_reason(bad, where):
    members, [problem] = members_from_machines([machine(**bad)], SOURCE)
    assert members == [] and problem.path.endswith(where)
    assert len(str(problem)) < 400


def test_a_machine_listed_twice_is_served_by_neither_and_junk_is_refused():
    members, problems = members_from_machines([machine(), machine(address="10.0.1.11"), "junk"], SOURCE)
    assert members == []
    assert sorted(p.message.split(" ")[0] for p in problems) == ["listed", "not"]


def test_an_empty_selector_is_refused():
    with pytest.raises(ValidationError, match="every Machine"):
        MachineSource(cluster="prod", selector={})


def with_conditions(conditions, **kwargs):
    found = machine(**kwargs)
    found["status"]["conditions"] = conditions
    return found


@pytest.mark.parametrize("conditions, ready, said", [
    ([{"type": "APIServerPodHealthy", "status": "True", "reason": "Running"}], True, ""),
    ([{"type": "APIServerPodHealthy", "status": "False", "reason": "Failed"}], False,
     "APIServerPodHealthy is False (Failed)"),
    ([{"type": "APIServerPodHealthy", "status": "Unknown", "reason": "ConnectionDown"}], None,
     "APIServerPodHealthy is Unknown (ConnectionDown)"),
    ([{"type": "Ready", "status": "True"}], None, "APIServerPodHealthy is absent"),
    (None, None, "APIServerPodHealthy is absent"),
    ("not a list", None, "APIServerPodHealthy not readable (status.conditions is not a list of at most 64)"),
])
def test_the_api_server_condition_kubeadm_control_plane_sets_is_read_never_guessed(conditions, ready, said):
    [member], problems = members_from_machines([with_conditions(conditions)], SOURCE)
    assert (member.ready, member.ready_detail, problems) == (ready, said, [])


def test_another_ready_condition_or_none_can_be_named():
    healthy = with_conditions([{"type": "example.com/ApiReady", "status": "True"}])
    [member], _ = members_from_machines([healthy], MachineSource(cluster="prod", readyCondition="example.com/ApiReady"))
    assert member.ready is True
    [member], _ = members_from_machines([machine()], MachineSource(cluster="prod", readyCondition=None))
    assert member.ready is True
    with pytest.raises(ValidationError, match="ready_condition|readyCondition"):
        MachineSource(cluster="prod", readyCondition="not a condition")

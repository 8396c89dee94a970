"""The cluster on the local cloud's data plane, without a cloud: its nodes (one per AZ on one network, etcd admitted
between them only), the layout it starts (each node in its server's namespace on the customary ports), and the `k8s`
stack's configuration, checked by the component's own loader as `pulumi up` would."""

from __future__ import annotations

import json
from pathlib import Path

from ha_endpoint.core.validation import load_endpoint_args
from localcloud.dataplane import nodes
from localcloud.k8s import oncloud
from localcloud.k8s import stack as k8s_stack
from localcloud.settings import AZS


def test_one_kubernetes_node_per_az_on_one_network_with_etcd_open_to_the_group_only():
    assert [az for _, az, _ in nodes.KUBERNETES.nodes] == list(AZS)
    assert nodes.KUBERNETES.network[2] == "10.10.10.0/24"
    assert all(address.startswith("10.10.10.") for _, _, address in nodes.KUBERNETES.nodes)
    ports = {(rule["port_range_min"], rule["port_range_max"]): rule for rule in nodes.KUBERNETES.rules}
    assert ports[(6443, 6443)]["remote_ip_prefix"] == "0.0.0.0/0"
    assert ports[(2379, 2380)] == {**ports[(2379, 2380)], "remote_group_id": "self"}
    assert "remote_ip_prefix" not in ports[(2379, 2380)]
    assert not nodes.CONTROL_PLANE.network          # the dev stack's members stay on their AZ's subnet


def test_the_layout_runs_each_node_in_its_servers_namespace_on_the_customary_ports(tmp_path):
    plugged = [{"ip": address, "namespace": f"lc0-m-{n}"} for n, (_, _, address) in enumerate(nodes.KUBERNETES.nodes)]
    plan = oncloud.layout_for("kube", tmp_path, plugged, ("kube.example.test",))
    assert [node.address for node in plan.nodes] == [address for _, _, address in nodes.KUBERNETES.nodes]
    assert [node.wrap for node in plan.nodes] == [("ip", "netns", "exec", f"lc0-m-{n}") for n in range(3)]
    assert {node.ports() for node in plan.nodes} == {(6443, 2379, 2380)}
    assert plan.sans == ("kube.example.test",)


def test_a_hosted_marker_names_its_cluster_and_node(tmp_path):
    marker = tmp_path / "port.hosted"
    marker.write_text(json.dumps({"by": "localcloud.k8s cluster kube", "cluster": "kube", "state": "/s", "node": "kube-2"}))
    assert oncloud.hosted_by(marker)["node"] == "kube-2"
    marker.write_text("not json")
    assert oncloud.hosted_by(marker) == {}


def test_the_k8s_stacks_endpoint_is_valid_for_the_component():
    config = k8s_stack.endpoint_config(name="kube-api", record="kube")
    args = load_endpoint_args(config)
    assert k8s_stack.fqdn(config) == "kube.example.test"
    assert [(member.name, member.az, member.subnet) for member in args.members] == [
        (name, az, "k8s-subnet") for name, az, _ in nodes.KUBERNETES.nodes]
    assert [listener.port for listener in args.listeners] == [6443]
    assert args.load_balancer_provider == "ovn"


def test_the_credentials_are_the_clusters_ca_and_admin(tmp_path):
    pki = tmp_path / "pki"
    pki.mkdir()
    for name, text in (("ca.crt", "CA"), ("admin.crt", "CERT"), ("admin.key", "KEY")):
        (pki / name).write_text(text)
    assert k8s_stack.credentials(Path(tmp_path)) == {"caCertificate": "CA", "clientCertificate": "CERT",
                                                     "clientKey": "KEY"}

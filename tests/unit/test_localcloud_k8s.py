"""The local Kubernetes cluster's plan and certificates (lab/localcloud/k8s), without starting anything: its ports never
clash with a local cloud at any port offset, a node can move to an address and a namespace of its own, and the
certificates carry what each side verifies (SANs, usages, the admin's group, the right CA)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from localcloud.k8s import cluster, layout, pki
from localcloud.settings import BASE_PORTS


def all_ports(plan: layout.Layout) -> list[int]:
    return [port for node in plan.nodes for port in node.ports()]


def test_no_candidate_port_is_a_local_cloud_port_at_any_offset():
    cloud = {port + offset for port in BASE_PORTS.values() for offset in range(0, 60001, 1000)}
    for base in layout.BASES:
        ports = all_ports(layout.local("c", Path("/x"), base))
        assert len(set(ports)) == 9
        assert not cloud & set(ports), base
        assert max(ports) < 32768  # below the ephemeral range


def test_a_base_with_a_port_in_use_is_skipped():
    taken = {layout.BASES[0] + layout.ETCD_PEER_OFFSET + 2}
    assert layout.free_base(lambda ports: taken & set(ports)) == layout.BASES[1]
    with pytest.raises(RuntimeError, match="no free port base"):
        layout.free_base(lambda ports: set(ports))


def test_a_spread_layout_puts_each_node_in_its_namespace_on_the_customary_ports(tmp_path):
    plan = layout.spread("k", tmp_path, ["10.0.1.10", "10.0.2.10", "fd00::10"],
                         [("ip", "netns", "exec", f"ns{index}") for index in range(3)])
    node = plan.nodes[2]
    assert node.api_url == "https://[fd00::10]:6443" and node.etcd_peer_url == "https://[fd00::10]:2380"
    argv = cluster.etcd_argv(plan, node, Path("/bin/etcd"))
    assert argv[:5] == ["ip", "netns", "exec", "ns2", "/bin/etcd"]
    assert ("--initial-cluster=k-1=https://10.0.1.10:2380,k-2=https://10.0.2.10:2380,k-3=https://[fd00::10]:2380"
            in argv)
    api = cluster.apiserver_argv(plan, plan.nodes[0], Path("/bin/kube-apiserver"))
    assert "--bind-address=10.0.1.10" in api and "--secure-port=6443" in api
    assert ("--etcd-servers=https://10.0.1.10:2379,https://10.0.2.10:2379,https://[fd00::10]:2379" in api)
    layout.save(plan)
    assert layout.load(tmp_path) == plan


def _cert(pair: pki.KeyPair) -> x509.Certificate:
    return x509.load_pem_x509_certificate(pair.cert.read_bytes())


def test_certificates_carry_what_each_side_checks(tmp_path):
    plan = layout.local("c", tmp_path, layout.BASES[0]).with_sans("api.example.test", "172.24.4.10")
    credentials = cluster.certificates(plan)
    ca = x509.load_pem_x509_certificate(credentials.ca.read_bytes())
    etcd_ca = x509.load_pem_x509_certificate(credentials.etcd_ca.read_bytes())

    serving = x509.load_pem_x509_certificate((plan.pki / "apiserver-c-2.crt").read_bytes())
    serving.verify_directly_issued_by(ca)
    sans = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert {"api.example.test", "localhost", "kubernetes.default.svc"} <= set(sans.get_values_for_type(x509.DNSName))
    assert {"172.24.4.10", "127.0.0.1", cluster.SERVICE_IP} <= {
        str(ip) for ip in sans.get_values_for_type(x509.IPAddress)}

    admin = _cert(credentials.admin)
    admin.verify_directly_issued_by(ca)
    assert admin.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)[0].value == pki.ADMIN_GROUP
    usages = admin.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usages) == [ExtendedKeyUsageOID.CLIENT_AUTH]

    _cert(credentials.etcd_client).verify_directly_issued_by(etcd_ca)
    with pytest.raises(Exception):  # a Kubernetes client certificate never opens etcd
        admin.verify_directly_issued_by(etcd_ca)
    assert {path.stat().st_mode & 0o777 for path in plan.pki.iterdir()} == {0o600}
    assert plan.pki.stat().st_mode & 0o777 == 0o700


def test_certificates_are_reused_and_reissued_only_when_the_names_change(tmp_path):
    plan = layout.local("c", tmp_path, layout.BASES[0])
    cluster.certificates(plan)
    before = {path.name: path.read_bytes() for path in plan.pki.iterdir()}
    cluster.certificates(plan)
    assert {path.name: path.read_bytes() for path in plan.pki.iterdir()} == before
    cluster.certificates(plan.with_sans("api.example.test"))
    after = {path.name: path.read_bytes() for path in plan.pki.iterdir()}
    changed = sorted(name for name in before if after[name] != before[name])
    assert changed == [f"apiserver-c-{index}.{ext}" for index in (1, 2, 3) for ext in ("crt", "key")]

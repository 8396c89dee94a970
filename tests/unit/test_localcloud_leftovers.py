"""lab/localcloud/leftovers.py: what a cloud holds beyond its seed, as `make test` reports it for each cloud it starts."""

from types import SimpleNamespace as NS

from localcloud.leftovers import report, unseeded


def _cloud(servers=(), lbs=(), ips=(), records=()):
    zone = NS(name="example.test.")
    conn = NS(
        load_balancer=NS(load_balancers=lambda: [NS(name=n, id=f"id-{n}") for n in lbs]),
        compute=NS(servers=lambda: [NS(name=n, id=i) for n, i in servers]),
        network=NS(ips=lambda: [NS(floating_ip_address=a) for a in ips]),
        dns=NS(zones=lambda: [zone], recordsets=lambda z: [NS(name=n, type=t) for n, t in records]),
    )
    return NS(conn=conn)


def test_a_cloud_with_only_its_seed_and_its_node_sets_reports_nothing():
    cloud = _cloud(servers=[("cp-0", "seed-0"), ("cp-1", "seed-1"), ("k8s-0", "k0"), ("k8s-2", "k2"), ("cp-3", "p3"),
                            ("cp-5", "p5")],
                   records=[("example.test.", "SOA"), ("example.test.", "NS")])
    found = unseeded(cloud)
    assert not any(found.values())
    assert report("the first cloud", found) == ""


def test_an_interrupted_runs_endpoint_is_named_and_counted():
    cloud = _cloud(servers=[("cp-0", "seed-0")] + [(f"e2e-set-1-az1-a{i:02}", f"s{i}") for i in range(5)],
                   lbs=["e2e-set-1-az1-lb"], ips=["172.24.4.10"],
                   records=[("example.test.", "SOA"), ("e2e-set-1.example.test.", "A")])
    line = report("lane 2's cloud", unseeded(cloud))
    assert line.startswith("lane 2's cloud holds what its seed did not create")
    assert "1 load balancer (e2e-set-1-az1-lb)" in line
    assert "5 servers (e2e-set-1-az1-a00, e2e-set-1-az1-a01, e2e-set-1-az1-a02, 2 more)" in line
    assert "cp-0" not in line  # the cloud's own node
    assert "1 floating IP (172.24.4.10)" in line and "1 DNS record (e2e-set-1.example.test.)" in line

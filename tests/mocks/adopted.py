"""A load balancer another tool made (CAPO's shape), for the tests of ``zones.<az>.adopt``."""

from __future__ import annotations

from ha_endpoint.core.cloud_facts import (AdoptedListener, AdoptedLoadBalancer, AdoptedMember, FloatingIpFacts,
                                          PortFacts)

from .cloud import FakeCloud


def capo_lb(cloud: FakeCloud, ref: str = "capo-kubeapi", **changes) -> AdoptedLoadBalancer:
    """A CAPO-style load balancer in az1 (cp-az1, amphora) with a 6443 TCP listener, pool, HTTPS monitor, member
    cp-0 and floating IP 172.24.4.50, registered in ``cloud`` as adoptable by name and id."""
    fip = next(fip for fip in cloud.floating_ips.values() if fip.address == "172.24.4.50")
    vip_port = cloud.add_port(cloud.network_id("cp"), [(cloud.subnet_id("cp-az1"), "10.10.1.200")], "Octavia", "lb-1")
    fip.port_id = vip_port
    found = AdoptedLoadBalancer(
        ref="capo-kubeapi", id="lb-1", name="capo-kubeapi", vip_subnet_id=cloud.subnet_id("cp-az1"),
        vip_port_id=vip_port, vip_address="10.10.1.200", provider="amphora", availability_zone="az1",
        listeners=(AdoptedListener("listener-1", 6443, "TCP", "pool-1", "TCP", "monitor-1", "HTTPS",
                                   (AdoptedMember("member-1", "10.10.1.10", 6443, cloud.subnet_id("cp-az1"),
                                                  "capo-control-plane-0"),)),),
        floating_ip=FloatingIpFacts("172.24.4.50", fip.id, fip.network_id,
                                    PortFacts(vip_port, "Octavia", "lb-1", False)))
    found = AdoptedLoadBalancer(**{**found.__dict__, **changes})
    cloud.adoptable = {ref: found, "lb-1": found}
    return found

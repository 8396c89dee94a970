"""A program that builds the endpoint and declares resources of its own beside it, as a user's stack would.

The baseline is compliant in a production stack (the endpoint tagged ``production`` and admitting 192.0.2.0/24 only):
a member added to zone az1's pool of port 6443 on that zone's subnet, a rule admitting a second client network
(198.51.100.0/24) into the VIP security group, and a record set publishing the endpoint's ``addresses`` output (which
waits for the zones' readiness). Each test changes one thing: a keyword of :func:`neighbours_program`, the cloud, or one registered value.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import pulumi
import pulumi_openstack as openstack

from policy_harness import HarnessRun, run_key, run_program_for_pack
from tests.mocks.cloud import FakeCloud
from tests.mocks.configs import amphora_endpoint


def production_endpoint() -> dict[str, Any]:
    """The dev endpoint, tagged production and admitting one client network (compliant in production)."""
    raw = amphora_endpoint()
    raw["tags"] = ["production"]
    raw["allowedCidrs"] = ["192.0.2.0/24"]
    return raw


def zone_pool(az: str, port: int) -> Callable[[Any], pulumi.Output]:
    """The pool id of one zone's listener, taken from that zone alone."""
    return lambda endpoint: endpoint.zone_components[az].serving.outputs["pool_ids"].apply(lambda ids: ids[str(port)])


def any_zone_pool(az: str, port: int) -> Callable[[Any], pulumi.Output]:
    """The same pool id read from the endpoint's ``zones`` output, which depends on every zone's resources."""
    def pick(zones: dict) -> str:
        ids = zones[az].get("poolIds") or zones[az].get("pool_ids")
        return ids[str(port)]
    return lambda endpoint: endpoint.zones.apply(pick)


def neighbours_program(endpoint: Optional[dict[str, Any]] = None, member: Optional[dict[str, Any]] = None,
                       rule: Optional[dict[str, Any]] = None, record: Optional[dict[str, Any]] = None
                       ) -> Callable[[], Any]:
    """The program: the endpoint (``endpoint``: its configuration), then ``extra-member``, ``extra-rule`` and
    ``extra-dns`` beside it. ``member``/``rule``/``record`` override the baseline's settings (``None`` as a value
    leaves the argument out; ``{"skip": True}`` leaves the resource out)."""
    from ha_endpoint import HaEndpoint

    def build():
        ep = HaEndpoint("k8s-api", endpoint or production_endpoint())
        spec = {"pool": zone_pool("az1", 6443), "address": "10.10.1.20", "subnet": "cp-az1", "port": 6443,
                **(member or {})}
        if not spec.get("skip"):
            subnet = spec["subnet"]
            extra = {"subnet_id": openstack.networking.get_subnet(name=subnet).id} if subnet else {}
            openstack.loadbalancer.Member("extra-member", pool_id=spec["pool"](ep), address=spec["address"],
                                          protocol_port=spec["port"], **extra)
        spec = {"group": "vip", "direction": "ingress", "ethertype": "IPv4", "protocol": "tcp", "port": 6443,
                "prefix": "198.51.100.0/24", "remote_group": None, **(rule or {})}
        if not spec.get("skip"):
            group = ep.vip_security_group_id if spec["group"] == "vip" else ep.members_security_group_id
            optional = {key: value for key, value in (
                ("port_range_min", spec["port"]), ("port_range_max", spec["port"]),
                ("remote_ip_prefix", spec["prefix"]),
                ("remote_group_id", spec["remote_group"](ep) if spec["remote_group"] else None),
            ) if value is not None}
            openstack.networking.SecGroupRule("extra-rule", security_group_id=group, direction=spec["direction"],
                                              ethertype=spec["ethertype"], protocol=spec["protocol"], **optional)
        spec = {"records": lambda ep: ep.addresses, "depends_on": None, **(record or {})}
        if not spec.get("skip"):
            zone = openstack.dns.get_dns_zone(name="example.test.")
            depends_on = spec["depends_on"](ep) if spec["depends_on"] else None
            openstack.dns.RecordSet("extra-dns", zone_id=zone.id, name="api-extra.example.test.", type="A", ttl=30,
                                    records=spec["records"](ep),
                                    opts=pulumi.ResourceOptions(depends_on=depends_on) if depends_on else None)
        return ep

    return build


def run_neighbours(cloud: Optional[FakeCloud] = None, preview: bool = True, **changes: Any) -> HarnessRun:
    """Run :func:`neighbours_program` (with ``changes``) against ``cloud`` (the dev cloud by default; then, when the
    changes are plain data, the run is remembered for the session: policy_harness.run_key)."""
    key = run_key("neighbours_program", changes, preview) if cloud is None else None
    return run_program_for_pack(neighbours_program(**changes), cloud or FakeCloud.dev(preview=preview),
                                preview=preview, key=key)


def split_cloud(preview: bool = True) -> FakeCloud:
    """Zones az1..az3 each on a network of its own (cp-azN-net, subnet cp-azN 10.10.N.0/24) behind a router of its
    own hinted to its AZ and holding the floating network's gateway: no route between the zones' subnets. The
    endpoint's own-zone members pass; a member of az2's subnet cannot be reached from az1. Plus ``island`` (subnet
    island-sub 10.99.0.0/24), DNS zone example.test. and floating IPs 172.24.4.100.. on ``public``."""
    cloud = FakeCloud(preview)
    public = cloud.add_network("public", external=True)
    cloud.add_subnet(public, "public-subnet", "172.24.4.0/24")
    cloud.add_floating_pool(public, "172.24.4.100", 20)
    for n in (1, 2, 3):
        network = cloud.add_network(f"cp-az{n}-net")
        cloud.networks[network]["az_hints"] = [f"az{n}"]
        subnet = cloud.add_subnet(network, f"cp-az{n}", f"10.10.{n}.0/24")
        cloud.add_router(f"cp-az{n}-router", [subnet], az_hints=(f"az{n}",), ha=True, external_network_id=public)
    island = cloud.add_network("island")
    cloud.add_subnet(island, "island-sub", "10.99.0.0/24")
    cloud.dns_zones[cloud.new_id()] = "example.test."
    return cloud

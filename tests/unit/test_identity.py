"""Every object the endpoint creates says which stack it belongs to, where the API lets it (ha_endpoint.core.identity)."""

from __future__ import annotations

import pytest

from ha_endpoint import ConfigError

from ha_endpoint.core import contract
from ha_endpoint.core.identity import StackIdentity, parse_description
from tests.mocks import FakeCloud, run_component
from tests.mocks.configs import byo_endpoint, amphora_endpoint

DEV = StackIdentity("ha-endpoint", "dev")


def test_a_description_carries_the_stack_and_the_resource_name_and_parses_back():
    text = DEV.describe("HA endpoint k8s-api: load balancer of zone az1", "k8s-api-az1-lb")
    assert text == "HA endpoint k8s-api: load balancer of zone az1 [ha-endpoint ha-endpoint/dev k8s-api-az1-lb]"
    assert parse_description(text) == (DEV, "k8s-api-az1-lb")
    assert DEV.owns_description(text, "k8s-api-az1-lb")
    assert not StackIdentity("ha-endpoint", "prod").owns_description(text, "k8s-api-az1-lb")
    assert not DEV.owns_description(text, "k8s-api-az2-lb")
    assert parse_description("HA endpoint: load balancer of zone az1") is None


def test_a_long_description_keeps_its_identity_within_255_characters():
    text = DEV.describe("x" * 400, "k8s-api-az1-fip")
    assert len(text) == 255 and parse_description(text) == (DEV, "k8s-api-az1-fip")


def test_every_taggable_object_carries_the_stack_tag_and_described_ones_their_identity():
    run = run_component(amphora_endpoint(), FakeCloud.dev(), preview=True)
    tagged = [contract.LOADBALANCER_TYPE, contract.LISTENER_TYPE, contract.POOL_TYPE, contract.MEMBER_TYPE,
              contract.SECGROUP_TYPE, contract.FLOATING_IP_TYPE]
    for kind in tagged:
        resources = run.of_type(kind)
        assert resources and all(DEV.tag in r["inputs"]["tags"] for r in resources), kind
    described = [contract.LOADBALANCER_TYPE, contract.LISTENER_TYPE, contract.POOL_TYPE, contract.FLOATING_IP_TYPE,
                 contract.RECORDSET_TYPE]
    for kind in described:
        resources = run.of_type(kind)
        assert resources and all(parse_description(r["inputs"]["description"]) == (DEV, r["name"])
                                 for r in resources), kind


def test_the_declared_tags_are_the_configured_ones():
    raw = amphora_endpoint()
    raw["tags"] = ["production"]
    run = run_component(raw, FakeCloud.dev(), preview=True)
    assert run.of_type(contract.ENDPOINT_TYPE)[0]["outputs"]["facts"]["tags"] == ["production"]
    assert run.of_type(contract.LOADBALANCER_TYPE)[0]["inputs"]["tags"] == ["production", DEV.tag]


def test_a_pulumi_openstack_older_than_5_is_refused_naming_the_fix():
    from ha_endpoint.backends.octavia.serving import require_openstack_sdk

    require_openstack_sdk("5.5.3")
    with pytest.raises(ImportError, match=r"needs pulumi-openstack 5\.x \(installed: 3\.15\.1\).*"
                                          r"pip install 'pulumi-openstack>=5\.5,<6'"):
        require_openstack_sdk("3.15.1")


# -- a brought floating IP that serves something else ---------------------------------------------------------------

def _associated_elsewhere(cloud: FakeCloud) -> str:
    """172.24.4.50 (brought by the byo endpoint's az3) associated with another server's port."""
    port = cloud.add_port(cloud.network_id("cp"), [(cloud.subnet_id("cp-az1"), "10.10.1.99")], "compute:nova",
                          "server-4711")
    next(fip for fip in cloud.floating_ips.values() if fip.address == "172.24.4.50").port_id = port
    return port


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_a_brought_floating_ip_serving_another_port_is_refused_naming_the_port_and_device(preview):
    cloud = FakeCloud.dev(preview=preview)
    port = _associated_elsewhere(cloud)
    with pytest.raises(ConfigError) as caught:
        run_component(byo_endpoint(), cloud, preview=preview)
    assert [str(problem) for problem in caught.value.problems] == [
        f"HaEndpoint('k8s-api').args.zones.az3.floatingIp: floating IP 172.24.4.50 is associated with port {port} (device "
        "server-4711, owner compute:nova); the endpoint would move it there and take that service down. Bring a free "
        "floating IP, or set zones.az3.takeOverFloatingIp: true to move it on purpose"]
    assert not [r for r in cloud.registrations if r["custom"]], "nothing is created"


def test_a_takeover_that_is_asked_for_moves_the_floating_ip():
    cloud = FakeCloud.dev()
    _associated_elsewhere(cloud)
    raw = byo_endpoint()
    raw["zones"]["az3"]["takeOverFloatingIp"] = True
    run = run_component(raw, cloud)
    vip_port = run.named("k8s-api-az3-lb")["state"]["vipPortId"]
    assert next(fip for fip in cloud.floating_ips.values() if fip.address == "172.24.4.50").port_id == vip_port


def test_a_brought_floating_ip_on_this_endpoints_own_vip_is_no_takeover():
    """A second `up` finds the brought address on the endpoint's own VIP port (its VIP group, this stack's tag)."""
    cloud = FakeCloud.dev()
    run_component(byo_endpoint(), cloud)
    run_component(byo_endpoint(), cloud)  # no ConfigError


def test_another_stacks_endpoint_of_the_same_name_is_not_ours():
    cloud = FakeCloud.dev()
    run_component(byo_endpoint(), cloud)
    for group in cloud.kind(contract.SECGROUP_TYPE).values():
        group["tags"] = [StackIdentity("ha-endpoint", "prod").tag]  # as if the prod stack had created it
    with pytest.raises(ConfigError, match="floating IP 172.24.4.50 is associated with port"):
        run_component(byo_endpoint(), cloud)

"""Every object the endpoint creates says which stack it belongs to, where the API lets it (ha_endpoint.identity)."""

from __future__ import annotations

from ha_endpoint import contract
from ha_endpoint.identity import StackIdentity, parse_description
from tests.mocks import FakeCloud, run_component
from tests.mocks.configs import dev_endpoint

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
    run = run_component(dev_endpoint(), FakeCloud.dev(), preview=True)
    tagged = [contract.LOADBALANCER_TYPE, contract.LISTENER_TYPE, contract.SECGROUP_TYPE, contract.FLOATING_IP_TYPE]
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
    raw = dev_endpoint()
    raw["tags"] = ["production"]
    run = run_component(raw, FakeCloud.dev(), preview=True)
    assert run.of_type(contract.ENDPOINT_TYPE)[0]["outputs"]["facts"]["tags"] == ["production"]
    assert run.of_type(contract.LOADBALANCER_TYPE)[0]["inputs"]["tags"] == ["production", DEV.tag]

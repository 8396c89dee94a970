"""A DNS name that another endpoint (of this stack or another) or anyone else publishes already is refused at
preview, naming its owner and the fix, with nothing created (issue 29, finding 1: the README's example beside the dev
stack passed preview, created 41 resources, then failed on Designate's 409 "Duplicate RecordSet")."""

from __future__ import annotations

import pytest

from ha_endpoint import ConfigError
from tests.mocks import FakeCloud, run_component
from tests.mocks.configs import amphora_endpoint

RECORDSET = "openstack:dns/recordSet:RecordSet"
LOADBALANCER = "openstack:loadbalancer/loadBalancer:LoadBalancer"


def other_endpoint(**dns) -> dict:
    raw = amphora_endpoint()
    raw["name"] = "other-api"
    raw["dns"] = {**raw["dns"], **dns}
    return raw


def deployed() -> FakeCloud:
    cloud = FakeCloud.dev()
    run_component(amphora_endpoint(), cloud, preview=False)
    return cloud


def set_description(cloud: FakeCloud, name: str, description) -> None:
    (state,) = [s for s in cloud.kind(RECORDSET).values() if s["name"] == name]
    state["description"] = description


def refusal(cloud: FakeCloud, raw: dict, preview: bool) -> str:
    before = len(cloud.kind(LOADBALANCER))
    with pytest.raises(ConfigError) as caught:
        run_component(raw, cloud, preview=preview)
    assert len(cloud.kind(LOADBALANCER)) == before  # nothing created
    return str(caught.value)


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_a_name_another_endpoint_of_this_stack_publishes_is_refused_naming_it(preview):
    message = refusal(deployed(), other_endpoint(), preview)
    assert ("dns.record: api.example.test. is published already by another endpoint of this stack (ha-endpoint/dev, "
            "its record set k8s-api-dns); Designate keeps one A record set per name, so this endpoint's record would "
            "be refused (409 Duplicate RecordSet) after its load balancers are built; give dns.record a name of its "
            "own (e.g. record: api-2), or remove that record set first") in message


def test_a_name_another_stack_publishes_is_refused_naming_that_stack():
    cloud = deployed()
    set_description(cloud, "api.example.test.", "k8s-api [ha-endpoint ha-endpoint/prod k8s-api-dns]")
    message = refusal(cloud, amphora_endpoint(), preview=True)
    assert "api.example.test. is published already by the endpoint of stack ha-endpoint/prod (its record set " \
           "k8s-api-dns)" in message


def test_a_name_published_by_hand_is_refused():
    cloud = deployed()
    set_description(cloud, "api.example.test.", None)
    message = refusal(cloud, other_endpoint(), preview=True)
    assert "api.example.test. is published already by a record set ha-endpoint did not make" in message


def test_each_per_zone_name_taken_is_named():
    cloud = FakeCloud.dev()
    run_component({**amphora_endpoint(), "dns": {**amphora_endpoint()["dns"], "record": "solo",
                                                 "perZoneRecords": True}}, cloud, preview=False)
    message = refusal(cloud, other_endpoint(record="solo", perZoneRecords=True), preview=True)
    for name in ("solo.example.test.", "solo-az1.example.test.", "solo-az2.example.test.", "solo-az3.example.test."):
        assert f"{name} is published already by another endpoint of this stack" in message


def test_the_endpoints_own_records_are_not_in_the_way():
    cloud = deployed()
    run_component(amphora_endpoint(), cloud, preview=True)
    run_component(amphora_endpoint(), cloud, preview=False)

"""How the endpoint's records are replaced (issue 21, finding 5): a record whose name Designate already holds as this
stack's record is replaced delete-first (Designate keeps one recordset per zone, name and type); a new or renamed
record is created before the old name is deleted, so the old name answers until the new one does. Updates of the
addresses, TTL and description are in place (the provider updates them; see tests/e2e/test_engine_lifecycle.py for
the name resolving throughout under the real engine)."""

from __future__ import annotations

import pulumi_openstack as openstack
import pytest

from ha_endpoint import ConfigError
from ha_endpoint.core import contract
from tests.mocks import FakeCloud, run_component
from tests.mocks.configs import amphora_endpoint


@pytest.fixture
def delete_first(monkeypatch) -> dict[str, bool]:
    """Each record's name -> whether it is declared delete-before-replace."""
    seen: dict[str, bool] = {}
    original = openstack.dns.RecordSet

    class Recording(original):
        def __init__(self, resource_name, *args, opts=None, **kwargs):
            seen[resource_name] = bool(opts and opts.delete_before_replace)
            super().__init__(resource_name, *args, opts=opts, **kwargs)

    monkeypatch.setattr("ha_endpoint.resources.dns.openstack.dns.RecordSet", Recording)
    return seen


def per_zone(raw: dict) -> dict:
    raw["dns"]["perZoneRecords"] = True  # the dev shape has them: kept explicit here
    return raw


ALL = {"k8s-api-dns", "k8s-api-az1-dns", "k8s-api-az2-dns", "k8s-api-az3-dns"}


def test_a_first_up_creates_its_records_create_first(delete_first):
    run_component(per_zone(amphora_endpoint()), FakeCloud.dev(), preview=False)
    assert set(delete_first) == ALL and not any(delete_first.values())


def test_records_whose_name_this_stack_holds_already_are_replaced_delete_first(delete_first):
    cloud = FakeCloud.dev()
    run_component(per_zone(amphora_endpoint()), cloud, preview=False)
    delete_first.clear()
    run_component(per_zone(amphora_endpoint()), cloud, preview=True)
    assert delete_first == dict.fromkeys(ALL, True)


def test_a_renamed_record_is_created_before_the_old_name_is_deleted(delete_first):
    cloud = FakeCloud.dev()
    run_component(amphora_endpoint(), cloud, preview=False)
    renamed = amphora_endpoint()
    renamed["dns"]["record"] = "api2"
    delete_first.clear()
    run_component(renamed, cloud, preview=True)
    assert delete_first == dict.fromkeys(ALL, False)  # api2 and api2-azN are new names


def test_a_name_another_stack_holds_is_never_deleted_first(delete_first):
    """Delete-first would delete this stack's old record and then fail on Designate's 409 for the other's: the name
    would be gone. Since issue 29 (finding 1) such a name is refused at preview, before any record is declared (it
    was declared create-first before, and the create failed at up), so the other stack's record stays."""
    cloud = FakeCloud.dev()
    run_component(amphora_endpoint(), cloud, preview=False)
    for state in cloud.kind(contract.RECORDSET_TYPE).values():
        state["description"] = state["description"].replace("ha-endpoint/", "ha-endpoint/prod-of-")
    before = {key: dict(state) for key, state in cloud.kind(contract.RECORDSET_TYPE).items()}
    delete_first.clear()
    with pytest.raises(ConfigError, match="is published already by the endpoint of stack ha-endpoint/prod-of-dev"):
        run_component(amphora_endpoint(), cloud, preview=True)
    assert delete_first == {}
    assert cloud.kind(contract.RECORDSET_TYPE) == before


def test_a_cloud_that_cannot_be_asked_replaces_every_record_delete_first(delete_first):
    cloud = FakeCloud.dev()
    cloud.catalog_error = "HTTP 503"
    run_component(per_zone(amphora_endpoint()), cloud, preview=True)
    assert delete_first == dict.fromkeys(ALL, True)

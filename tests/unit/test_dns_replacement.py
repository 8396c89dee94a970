"""How the endpoint's records are replaced (issue 21, finding 5): a record whose name Designate already holds as this
stack's record is replaced delete-first (Designate keeps one recordset per zone, name and type); a new or renamed
record is created before the old name is deleted, so the old name answers until the new one does. Updates of the
addresses, TTL and description are in place (the provider updates them; see tests/e2e/test_engine_lifecycle.py for
the name resolving throughout under the real engine)."""

from __future__ import annotations

from types import SimpleNamespace

import pulumi_openstack as openstack
import pytest

from ha_endpoint import CloudLookupError, ConfigError
from ha_endpoint.cloud import catalog as preview_catalog
from ha_endpoint.cloud.errors import CallFailed, TransientFetchError
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


# Issue 46, finding 3: a lookup of the records that fails never changes the plan. It used to return None, and every
# record was then declared delete-first: a transient API error changed how the DNS records would be replaced (and
# skipped the check that another stack holds a name). Now it is retried by the one retry policy, and fails the preview
# if it keeps failing.
@pytest.fixture
def no_wait(monkeypatch):
    """The retries' clock and sleep: each sleep moves the clock on, nothing waits."""
    now = [0.0]
    clock = SimpleNamespace(monotonic=lambda: now[0], sleep=lambda seconds: now.__setitem__(0, now[0] + seconds))
    monkeypatch.setattr("ha_endpoint.cloud.catalog.time", clock, raising=False)
    return now


def test_a_lookup_of_the_records_that_fails_then_answers_leaves_the_plan_as_a_successful_one(delete_first, no_wait):
    cloud = FakeCloud.dev()
    run_component(per_zone(amphora_endpoint()), cloud, preview=False)
    delete_first.clear()
    run_component(per_zone(amphora_endpoint()), cloud, preview=True)
    answered = dict(delete_first)
    delete_first.clear()
    cloud.records_errors = [TransientFetchError("HTTP 503 Service Unavailable"), TransientFetchError("ConnectFailure")]
    run_component(per_zone(amphora_endpoint()), cloud, preview=True)
    assert delete_first == answered == dict.fromkeys(ALL, True)
    assert cloud.records_errors == [] and no_wait[0] > 0  # retried after the backoff


def test_a_lookup_of_the_records_that_keeps_failing_fails_the_preview_and_declares_no_record(delete_first, no_wait):
    cloud = FakeCloud.dev()
    cloud.records_errors = [TransientFetchError("HTTP 503 Service Unavailable")] * 1000
    with pytest.raises(CloudLookupError) as caught:
        run_component(per_zone(amphora_endpoint()), cloud, preview=True)
    assert [problem.path for problem in caught.value.problems] == ["HaEndpoint('k8s-api').args.dns.dnsZone"]
    message = caught.value.problems[0].message
    assert message.startswith("the record sets DNS zone example.test. holds could not be read at preview (") and \
        "last: HTTP 503 Service Unavailable" in message and "run the preview again once the DNS service" in message
    assert no_wait[0] >= preview_catalog.READ_RETRY_SECONDS
    assert delete_first == {} and cloud.registrations == []


def test_a_lookup_of_the_records_that_retrying_cannot_fix_fails_the_preview_at_once(delete_first, no_wait):
    cloud = FakeCloud.dev()
    cloud.records_errors = [CallFailed("listing the record sets of DNS zone z failed: HTTP 403 Forbidden")]
    with pytest.raises(CloudLookupError, match=r"dns.dnsZone: the record sets .* \(listing the record sets of DNS "
                                               r"zone z failed: HTTP 403 Forbidden\)"):
        run_component(per_zone(amphora_endpoint()), cloud, preview=True)
    assert no_wait[0] == 0 and delete_first == {}


def test_a_bug_while_reading_the_records_is_raised_as_itself(delete_first):
    cloud = FakeCloud.dev()
    cloud.records_errors = [AttributeError("'Recordset' object has no attribute 'type'")]
    with pytest.raises(AttributeError):
        run_component(per_zone(amphora_endpoint()), cloud, preview=True)
    assert delete_first == {}

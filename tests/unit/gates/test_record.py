"""The wait for a written record set (RecordServed): as long as Designate takes, from 0.1 s; an ERROR or a deadline
named with the record and the fix; transient API failures retried; a new wait only when what is served changes."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ha_endpoint.gates.record import RecordNotServed, RecordServedProvider, identity, input_failures, wait_served
from ha_endpoint.gates.target import CloudTarget
from gate_fakes import FakeClock, http_error

PROPS = {"zone_id": "zone-1", "recordset_id": "rs-1", "records": ["172.24.4.11", "172.24.4.12"], "ttl": 30}


class FakeDesignate:
    """``conn.dns.get_recordset``: one answer per read (the last repeats); an exception is raised."""

    def __init__(self, clock: FakeClock, *answers):
        self.clock, self.answers, self.reads = clock, list(answers), []

    def get_recordset(self, recordset, zone):
        self.reads.append((self.clock.now, recordset, zone))
        answer = self.answers[min(len(self.reads), len(self.answers)) - 1]
        if isinstance(answer, Exception):
            raise answer
        return SimpleNamespace(status=answer)


def wait(*answers, timeout=600):
    clock = FakeClock()
    designate = FakeDesignate(clock, *answers)
    conn = SimpleNamespace(dns=designate, close=lambda: None)
    outcome = {"clock": clock, "designate": designate}
    try:
        outcome["result"] = wait_served({**PROPS, "timeout_seconds": timeout}, CloudTarget(), clock=clock,
                                        sleep=clock.sleep, connection=conn)
    except Exception as exc:  # the test inspects it
        outcome["error"] = exc
    return outcome


def test_the_wait_ends_at_the_first_read_that_finds_the_record_active_polling_from_a_tenth_of_a_second():
    out = wait("PENDING", "PENDING", "PENDING", "ACTIVE")
    assert out["result"] == {"status": "ACTIVE", "waited_seconds": pytest.approx(0.475), "polls": 4}
    assert out["clock"].sleeps == pytest.approx([0.1, 0.15, 0.225])
    assert {(recordset, zone) for _, recordset, zone in out["designate"].reads} == {("rs-1", "zone-1")}


def test_a_record_already_active_is_read_once_and_never_slept_on():
    out = wait("ACTIVE")
    assert out["result"]["polls"] == 1 and out["clock"].sleeps == []


def test_a_record_in_error_fails_at_once_naming_it_and_what_to_do():
    out = wait("PENDING", "ERROR", "ACTIVE")
    assert isinstance(out["error"], RecordNotServed) and len(out["designate"].reads) == 2
    assert "record set rs-1 of DNS zone zone-1 is in ERROR" in str(out["error"])
    assert "run `pulumi up` again" in str(out["error"])


def test_a_record_still_pending_at_the_deadline_fails_naming_its_last_status():
    out = wait("PENDING", timeout=5)
    assert isinstance(out["error"], RecordNotServed)
    assert "record set rs-1 of DNS zone zone-1 was still PENDING after 5 s" in str(out["error"])
    assert out["clock"].now == pytest.approx(5.0)


def test_designate_answering_503_is_retried_and_a_404_is_reported_as_it_is():
    out = wait(http_error(503), "ACTIVE")
    assert out["result"]["status"] == "ACTIVE"
    gone = wait(http_error(404))
    assert "reading record set rs-1 of DNS zone zone-1" in str(gone["error"]) and "404" in str(gone["error"])


def test_a_new_wait_only_when_what_designate_serves_changes():
    provider = RecordServedProvider()
    same = {**PROPS, "records": list(reversed(PROPS["records"])), "description": "another"}
    assert not provider.diff("id", PROPS, same).changes, "the records are a set; the description is not served"
    for key, value in (("records", ["172.24.4.11"]), ("ttl", 60), ("recordset_id", "rs-2")):
        assert provider.diff("id", PROPS, {**PROPS, key: value}).changes, key
    assert identity(PROPS) == ("zone-1", "rs-1", ("172.24.4.11", "172.24.4.12"), 30)


def test_bad_inputs_are_named_at_preview():
    assert [f.property for f in input_failures({**PROPS, "recordset_id": "", "timeout_seconds": 0})] == \
        ["recordset_id", "timeout_seconds"]
    assert input_failures(PROPS) == []

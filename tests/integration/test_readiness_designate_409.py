"""What Designate answers 409 to when a recordset is created: the cause of an `up` that once failed in a benchmark.

Designate's recordsets table is unique on (zone, name, type) and its API answers a second A recordset of one name in a
zone with ``409 {"type": "duplicate_recordset", "message": "Duplicate RecordSet"}``. Nothing else in the ways the
endpoint creates records conflicts: recordsets of distinct names created at the same time in one zone, a create while
the zone is still PENDING from the previous change, and a create right after the same name was deleted all succeed.
So a 409 on create means the name was already there: a record left by an earlier stack (or an earlier run of a
benchmark whose destroy failed), or this stack's own record while Pulumi replaces it create-before-delete. The
component deletes its records before replacing them (``delete_before_replace``, components/ha_endpoint/dns.py;
tests/e2e/test_cloud_faults.py step 3 shows a replacement under the real engine).
"""

import threading

import pytest
from openstack import exceptions

pytestmark = pytest.mark.integration


def _fqdn(cleanup, suffix):
    return f"{cleanup.name(suffix)}.example.test."


def test_designate_answers_409_only_to_a_name_already_in_the_zone(localcloud, cloud_cleanup):
    conn = localcloud.conn
    zone = conn.dns.find_zone("example.test.", ignore_missing=False)
    created, failures = [], []

    def create(name, address):
        try:
            recordset = conn.dns.create_recordset(zone, name=name, type="A", records=[address], ttl=30)
            cloud_cleanup.add("recordset", recordset, zone=zone)
            created.append(recordset)
        except exceptions.SDKException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=create, args=(_fqdn(cloud_cleanup, f"c{i}"), f"172.24.4.{20 + i}"))
               for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == [] and len(created) == 6, "distinct names created at once in one zone do not conflict"
    assert conn.dns.get_zone(zone).status == "PENDING", "the zone is still busy with those changes ..."
    create(_fqdn(cloud_cleanup, "while-pending"), "172.24.4.30")  # ... and takes one more
    assert failures == []

    conn.dns.delete_recordset(created[0], zone)
    create(created[0].name, "172.24.4.31")
    assert failures == [], "a name deleted a moment ago can be created again at once"

    create(created[1].name, "172.24.4.32")
    (duplicate,) = failures
    assert isinstance(duplicate, exceptions.ConflictException) and duplicate.status_code == 409
    assert "Duplicate RecordSet" in str(duplicate)

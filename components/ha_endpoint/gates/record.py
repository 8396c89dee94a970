"""RecordServed: a Pulumi dynamic resource that exists once Designate serves a record set as it was last written.

The endpoint's record sets are written with the OpenStack provider's own status wait off (``disable_status_check``):
terraform-provider-openstack v3.4.0 polls a written record set at once, then no sooner than 3 s later
(``MinTimeout: 3 * time.Second`` in ``resource_openstack_dns_recordset_v2.go``), so each record write took 3.4 s in
the dev shape's ``up`` where Designate makes it ACTIVE in about 1 s (docs/results/2026-12-02-budgets.md). This
resource waits for the same thing, ``status`` ACTIVE, polling from 0.1 s: what depends on the record (the end of the
``up``, and the deletes the engine runs after every write: a removed zone's load balancer is deleted only once the
record that named it no longer does) still waits for Designate, and no longer than Designate takes.

Inputs: ``zone_id``, ``recordset_id``, ``records`` and ``ttl`` (what Designate serves: a change of any of them is a
new write to wait for; the description is not served, and changes nothing here), ``timeout_seconds``, and where to
poll (``cloud``, ``region``, ``cloud_source``: :mod:`.target`, as the gates). Outputs: ``status`` (ACTIVE),
``waited_seconds``, ``polls``. A record set in ERROR fails the update at once, naming it; one still PENDING at the
deadline fails it naming the last status. Read (refresh) and delete make no API call.
"""

from __future__ import annotations

import time
from typing import Any, Mapping, Optional, Sequence, Union

import pulumi
from pulumi.dynamic import CheckFailure, CheckResult, CreateResult, DiffResult, ReadResult, UpdateResult

from ..cloud.connection import connect
from ..cloud.poll import NOT_YET, Signal, poll
from ..cloud.retry import Backoff
from . import hosted
from .cloud import translated
from .errors import ReadinessError
from .inputs import InputError, positive_number, without_provider
from .provider import REPORTED, InputsChecked, contains_unknown, stale_reference
from .retrying import retried
from .target import CloudTarget, resolve

RECORD_TYPE_NAME = "RecordServed"
POLLS = Backoff(0.1, 1.5, 1.0)
"""From 0.1 s, x1.5, up to 1 s: Designate's worker makes a record set ACTIVE in about 1 s here (its poll of the
pool's name servers: ``poll_retry_interval`` 1 s), longer on a production pool; polled no more often after a second."""
DEFAULT_TIMEOUT_SECONDS = 600.0
"""The OpenStack provider's own record set timeout (``schema.TimeoutCreate`` default, 10 min)."""


class RecordNotServed(ReadinessError):
    """The record set went to ERROR, or was still not ACTIVE at the deadline."""


def _now() -> float:
    """The wait's clock (tests replace it)."""
    return time.monotonic()


def _sleep(seconds: float) -> None:
    """The wait's sleep (tests replace it)."""
    time.sleep(seconds)


def identity(props: Mapping[str, Any]) -> tuple:
    """What a wait is for: the record set and what it serves (the records as a set: Designate keeps no order)."""
    return (props.get("zone_id"), props.get("recordset_id"), tuple(sorted(props.get("records") or ())),
            props.get("ttl"))


def input_failures(news: Mapping[str, Any]) -> list[CheckFailure]:
    """The inputs' own problems (values not known yet, at preview, are not judged)."""
    failures = [CheckFailure(key, "must be the record set's zone and id (text)") for key in ("zone_id", "recordset_id")
                if not contains_unknown(news.get(key)) and not (isinstance(news.get(key), str) and news.get(key))]
    if not contains_unknown(news.get("timeout_seconds")):
        try:
            positive_number(news, "timeout_seconds", DEFAULT_TIMEOUT_SECONDS)
        except InputError as exc:
            failures.append(CheckFailure(exc.property, exc.reason))
    return failures


def wait_served(props: Mapping[str, Any], where: CloudTarget, *, clock=None, sleep=None,
                connection: Any = None) -> dict[str, Any]:
    """Poll the record set until it is ACTIVE; the outputs. Raises :class:`RecordNotServed` (ERROR, or the deadline),
    or the gates' errors for credentials refused or a terminal API failure."""
    clock, sleep = clock or _now, sleep or _sleep
    zone_id, recordset_id = str(props["zone_id"]), str(props["recordset_id"])
    timeout = positive_number(props, "timeout_seconds", DEFAULT_TIMEOUT_SECONDS)
    named = f"record set {recordset_id} of DNS zone {zone_id}"
    conn = {"value": connection}

    def connected() -> Any:
        if conn["value"] is None:
            with translated("building the OpenStack connection (OS_CLOUD / clouds.yaml)"):
                conn["value"] = connect(where.cloud, where.region) if where.region else connect(where.cloud)
        return conn["value"]

    def reauth() -> None:
        conn["value"] = None
        with translated("re-authenticating"):
            connected().session.get_token()

    def status() -> str:
        with translated(f"reading {named}"):
            return str(connected().dns.get_recordset(recordset_id, zone_id).status)

    started, polls, seen = clock(), 0, {"status": "not read"}
    deadline = started + timeout

    def step() -> Union[dict[str, Any], Signal]:
        nonlocal polls
        left = max(deadline - clock(), 0.001)
        seen["status"] = retried(
            status, timeout_seconds=left, clock=clock, sleep=sleep, backoff=Backoff(1.0, 1.25, 5.0), reauth=reauth,
            refused=f"reading {named}",
            exhausted=lambda exc: RecordNotServed(f"{named} could not be read for {timeout:.0f} s ({exc.attempts} "
                                                  f"attempts, last: {exc.last}); Designate's API did not answer"))
        polls += 1
        if seen["status"] == "ACTIVE":
            return {"status": "ACTIVE", "waited_seconds": round(clock() - started, 3), "polls": polls}
        if seen["status"] == "ERROR":
            raise RecordNotServed(
                f"{named} is in ERROR: Designate could not write it to its DNS servers, so the name does not serve "
                f"the addresses of this update. See designate-worker's log for the zone; once its servers answer "
                f"again (Designate's producer retries a zone in ERROR), run `pulumi up` again: it waits for the "
                f"record again")
        return NOT_YET

    def timed_out() -> dict[str, Any]:
        raise RecordNotServed(
            f"{named} was still {seen['status']} after {timeout:.0f} s: Designate has not made it ACTIVE on its "
            f"DNS servers. See designate-worker's log for the zone; once its worker and servers answer, run "
            f"`pulumi up` again: it waits for the record again")

    try:
        return poll(step, deadline=deadline, clock=clock, sleep=sleep, delays=POLLS.delays(), on_deadline=timed_out,
                    steady=True)
    finally:
        if conn["value"] is not None and connection is None:
            try:
                conn["value"].close()
            except Exception:  # closing must never mask the outcome of the wait
                pass


class RecordServedProvider(InputsChecked):
    """The CRUD of :class:`RecordServed`."""

    input_failures = staticmethod(input_failures)

    def _wait(self, props: Mapping[str, Any]) -> dict[str, Any]:
        try:
            outs = without_provider(props)
            outs.update(wait_served(props, resolve(props, self.stack)))
            return outs
        except REPORTED as exc:
            raise exc.with_traceback(None) from None

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        return DiffResult(changes=identity(olds) != identity(news) or stale_reference(olds, news), replaces=[],
                          delete_before_replace=False)

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(f"served-{props.get('recordset_id')}", self._wait(props))

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(self._wait(news))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        return ReadResult(id_, without_provider(props))

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        return None


class RecordServed(pulumi.dynamic.Resource, module="haendpoint", name=RECORD_TYPE_NAME):
    """Exists once Designate serves ``record`` as written (status ACTIVE); name it ``<record>-served``. Outputs:
    ``status``, ``waited_seconds``, ``polls``."""

    status: pulumi.Output[str]
    waited_seconds: pulumi.Output[float]

    def __init__(self, name: str, *, zone_id: pulumi.Input[str], recordset_id: pulumi.Input[str],
                 records: pulumi.Input[Sequence[str]], ttl: pulumi.Input[int], cloud: pulumi.Input[Optional[str]],
                 region: pulumi.Input[Optional[str]], cloud_source: str,
                 timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
                 opts: Optional[pulumi.ResourceOptions] = None) -> None:
        props = {"zone_id": zone_id, "recordset_id": recordset_id, "records": records, "ttl": ttl,
                 "timeout_seconds": timeout_seconds, "cloud": cloud, "region": region, "cloud_source": cloud_source,
                 "status": None, "waited_seconds": None, "polls": None}
        hosted.register(self, RecordServedProvider(), RECORD_TYPE_NAME, name, props, opts)

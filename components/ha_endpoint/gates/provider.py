"""MemberReadiness: a Pulumi dynamic resource that is created (or updated) only once a zone's members are ready.

Give it the zone's load balancer, its pools and the member ids expected in each; its create and update block until
every member meets the requirement (``online``: ACTIVE/ONLINE, NO_MONITOR counting in unmonitored pools;
``provisioned``: ACTIVE) and fail with :class:`~.errors.MemberFailed` at the first provisioning ERROR or
:class:`~.errors.ReadinessTimeout` at the deadline. Make whatever must wait for serving members (the zone's DNS
record, and through the engine's delete ordering the removal of replaced members) depend on it.

Lifecycle: diff reports a change when the load balancer, the pools, the member ids, the requirement or the cloud
change (never a replacement; timing inputs alone change nothing); read (refresh) makes no API call and returns the
recorded state; delete makes no API call (the resource owns nothing in the cloud).

Serialization: Pulumi pickles the provider object with dill into the state (``__provider``). The provider holds no
attributes and its class lives in an importable module, so dill stores a reference to
``ha_endpoint.gates.provider.MemberReadinessProvider`` (a few dozen bytes), not code or credentials: the engine's
provider process imports the module (install this package in the program's environment, or run from the project
root) and reads credentials from ``OS_CLOUD`` / ``clouds.yaml`` inside each method. Because nothing secret is
captured, ``serialize_as_secret_always = False`` opts out of Pulumi's default of storing ``__provider`` as a secret
(it still becomes one if a secret Output were ever captured), which keeps the state readable and the diff stable.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Mapping, Optional

import pulumi
from pulumi.output import Unknown
from pulumi.dynamic import CheckFailure, CheckResult, CreateResult, DiffResult, ReadResult, ResourceProvider
from pulumi.dynamic import UpdateResult

from ..cloud.connection import http_status
from ..core import contract
from . import hosted
from .errors import FetchFailed, MemberFailed, MemberGone, ReadinessError, ReadinessTimeout, ZoneDead
from .source import status_source
from .target import CloudTarget, StackConfigured, resolve
from .inputs import PROVIDER_KEY, GateInputs, InputError, ReadinessInputs, wait_identity, without_provider
from .waiter import WaitResult, wait_for_members

UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
"""Pulumi's wire value for an input not known yet (during preview)."""

OUTPUT_NAMES = (
    "ready", "all_online", "ready_member_ids", "statuses", "waited_seconds", "polls", "api_calls",
    "transient_errors", "reauths", "not_ready_reason",
)


def _now() -> float:
    """The waiter's clock (tests replace it)."""
    return time.monotonic()


def _sleep(seconds: float) -> None:
    """The waiter's sleep (tests replace it)."""
    time.sleep(seconds)


def contains_unknown(value: Any) -> bool:
    """Whether a property value holds a value unknown during preview, at any depth (the engine's wire string, or
    ``pulumi.output.Unknown`` as the dynamic-provider host deserializes it for check and diff)."""
    if isinstance(value, Unknown):
        return True
    if isinstance(value, str):
        return value == UNKNOWN
    if isinstance(value, Mapping):
        return any(contains_unknown(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(contains_unknown(v) for v in value)
    return False


READINESS_TYPE_NAME = "MemberReadiness"


def run_wait(inputs: ReadinessInputs, where: CloudTarget = CloudTarget()) -> WaitResult:
    """Wait against the cloud ``where`` names, through the member client of the zone's backend (:mod:`.source`): a
    connection built here, closed on return."""
    source = status_source(inputs.backend, where)
    try:
        return wait_for_members(
            inputs.wait_spec(),
            fetch_pool=source.fetch_pool,
            fetch_load_balancer=source.fetch_load_balancer,
            reauth=source.reauth,
            clock=_now,
            sleep=_sleep,
        )
    finally:
        source.close()


def outputs(props: Mapping[str, Any], result: WaitResult) -> dict[str, Any]:
    """The state recorded after a successful wait: the inputs plus what the wait observed."""
    outs = without_provider(props)
    outs.update(
        ready=True,
        all_online=result.all_online,
        ready_member_ids=sorted(result.statuses),
        statuses={member_id: status.label for member_id, status in sorted(result.statuses.items())},
        waited_seconds=round(result.waited_seconds, 3),
        polls=result.polls,
        api_calls=result.api_calls,
        transient_errors=result.transient_errors,
        reauths=result.reauths,
        not_ready_reason=None,
    )
    return outs


NOT_READY = (ZoneDead, ReadinessTimeout, MemberFailed, MemberGone)
"""What the zone itself did (it never served within the wait), as opposed to failures of the credentials or of the
cloud's API, which fail the update whatever ``on_not_ready`` says."""


def zone_not_ready(exc: ReadinessError) -> bool:
    """Whether a failed wait says the zone does not serve: one of :data:`NOT_READY`, or its load balancer or pool gone
    (a listing answered 404)."""
    if isinstance(exc, NOT_READY):
        return True
    return isinstance(exc, FetchFailed) and exc.__cause__ is not None and http_status(exc.__cause__) == 404


def not_ready_outputs(props: Mapping[str, Any], exc: ReadinessError) -> dict[str, Any]:
    """The state recorded when a zone did not become ready and ``on_not_ready`` is ``unpublish``: ``ready`` false and
    the reason, which the endpoint's outputs show; the next update checks the zone again."""
    outs = without_provider(props)
    outs.update({name: None for name in OUTPUT_NAMES})
    outs.update(ready=False, all_online=False, ready_member_ids=[], statuses={}, not_ready_reason=str(exc))
    return outs


REPORTED = (ReadinessError, InputError)
"""Failures whose message is the whole story: raised from the provider method itself with no traceback of their own
and no chained cause, so that the engine's dynamic-provider host (which reports ``traceback.format_exc()``) shows the
message under the host's and the method's frames only, never keystoneauth's or openstacksdk's."""


def wait_and_record(props: Mapping[str, Any], stack: CloudTarget = CloudTarget()) -> dict[str, Any]:
    """Validate, wait, and return the outputs (raises one of :data:`REPORTED`). A zone that does not become ready is
    recorded as not ready when ``on_not_ready`` is ``unpublish`` (:func:`zone_not_ready`), else fails the update."""
    inputs = ReadinessInputs.of_bag(props)
    try:
        return outputs(props, run_wait(inputs, resolve(props, stack)))
    except ReadinessError as exc:
        if inputs.unpublishes and zone_not_ready(exc):
            return not_ready_outputs(props, exc)
        raise


def stale_reference(olds: Mapping[str, Any], news: Mapping[str, Any]) -> bool:
    """Whether the state holds a provider reference of an older version (e.g. under ``components.`` before the
    package was ``ha_endpoint``): an in-place update re-records it, so that a later delete finds the provider."""
    old, new = olds.get(PROVIDER_KEY), news.get(PROVIDER_KEY)
    return isinstance(old, str) and isinstance(new, str) and old != new


class InputsChecked(StackConfigured, ResourceProvider):
    """A dynamic provider whose ``check`` reports what its inputs' model (:attr:`inputs`) finds wrong in a bag (values
    still unknown at preview are not judged), and where the bag cannot say which cloud to poll. Stateless: every
    method builds what it needs and keeps nothing."""

    serialize_as_secret_always = False
    inputs: type[GateInputs] = GateInputs
    """The model of the bag it serves."""

    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        failures = [CheckFailure(error.property, error.reason)
                    for error in self.inputs.problems(news, contains_unknown)]
        where = self.target_failure(news, contains_unknown)
        if where is not None:
            failures.append(CheckFailure(*where))
        return CheckResult(news, failures)


class MemberReadinessProvider(InputsChecked):
    """The CRUD of :class:`MemberReadiness`; a backend's zone gate reuses it with its own wait (``wait``)."""

    inputs = ReadinessInputs
    wait = staticmethod(wait_and_record)
    """``wait(props, stack)``: wait for the zone and give the gate's outputs."""

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        # a zone recorded not ready (on_not_ready: unpublish) is checked again at every update until it serves
        changed = (wait_identity(olds) != wait_identity(news) or stale_reference(olds, news)
                   or olds.get("ready") is False)
        return DiffResult(changes=changed, replaces=[], delete_before_replace=False)

    def create(self, props: dict[str, Any]) -> CreateResult:
        try:
            outs = self.wait(props, self.stack)
        except REPORTED as exc:
            raise exc.with_traceback(None) from None
        return CreateResult(f"ready-{uuid.uuid4().hex}", outs)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        try:
            outs = self.wait(news, self.stack)
        except REPORTED as exc:
            raise exc.with_traceback(None) from None
        return UpdateResult(outs)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        return ReadResult(id_, without_provider(props))

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        return None


class MemberReadiness(pulumi.dynamic.Resource, module="haendpoint", name=READINESS_TYPE_NAME):
    """A zone's readiness gate: exists once every member of its pools meets the requirement.

    Name it ``f"{endpoint}-{az}-ready"`` (``ha_endpoint.core.contract.readiness_name``). Outputs:

    - ``ready`` (bool): the requirement was met; false only with ``on_not_ready="unpublish"`` when the zone did not
      become ready (else a failed wait fails the deployment).
    - ``not_ready_reason`` (str or null): why the zone is not ready (the wait's failure message).
    - ``all_online`` (bool): every member was also ACTIVE/ONLINE (may be false with ``require="provisioned"``).
    - ``ready_member_ids`` (list of str), ``statuses`` (member id -> ``"ACTIVE/ONLINE"``).
    - ``waited_seconds`` (number), ``polls``, ``api_calls``, ``transient_errors``, ``reauths`` (int).
    """

    ready: pulumi.Output[bool]
    all_online: pulumi.Output[bool]
    ready_member_ids: pulumi.Output[list]
    statuses: pulumi.Output[dict]
    waited_seconds: pulumi.Output[float]
    not_ready_reason: pulumi.Output[Optional[str]]

    def __init__(self, name: str, inputs: ReadinessInputs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        """``inputs``: the gate's :class:`~.inputs.ReadinessInputs` (``ReadinessInputs.declare(...)``: its fields may
        be Pulumi inputs; a pool as the mapping of its :class:`~.inputs.PoolInputs`): ``loadbalancer_id``, ``pools``,
        ``require``, ...; ``cloud``, ``region``, ``cloud_source``: where to poll (:mod:`.target`); ``stable_polls``:
        consecutive ready polls a member needs (a flapping member does not count); ``on_not_ready``,
        ``dead_after_seconds``: what a zone that does not become ready does (:mod:`.inputs`). Typed ``pulumi-python:dynamic/haendpoint:MemberReadiness``, aliased to the
        generic dynamic token it had before (``haendpoint:index:MemberReadiness`` in the component package's provider
        host: :mod:`.hosted`)."""
        props = inputs.bag()
        props.update({key: None for key in OUTPUT_NAMES})
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=contract.LEGACY_DYNAMIC_TYPE)]))
        hosted.register(self, MemberReadinessProvider(), READINESS_TYPE_NAME, name, props, opts)  # see .hosted

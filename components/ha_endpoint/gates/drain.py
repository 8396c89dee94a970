"""MemberDrain: a per-member companion whose deletion drains the member before the member itself is deleted.

Make-before-break: the drain depends on its member (it takes the member's id), so the engine deletes the drain first.
Deleting it sets the member's weight to 0 (no new connections; with ``admin_down`` also its admin state down, for the
providers that ignore the weight: :func:`ha_endpoint.core.predicates.drains_admin_down`, and the member kept out of
the backends through the grace: :mod:`.held_out`) and waits ``drain_seconds`` so that established connections
finish; only then does the engine delete the member. Replacing a member (new address, new name, other zone) creates the
new member, its drain and the zone's readiness update first; the old drain and the old member are deleted at the end
of the deployment, in that order.

Inputs: ``pool_id`` (str), ``member_id`` (str), ``drain_seconds`` (number >= 0; 0 makes deletion a no-op, so
dropping drains never touches live members), ``timeout_seconds`` (how long 409s from PENDING_* objects are retried,
default 300), ``admin_down`` (bool, default false: drain by admin state as well as weight), ``taken_out`` (bool,
default false, recorded only when true: the configuration takes the member out, ``enabled: false``, and its member
resource writes it admin down), ``cloud`` (optional clouds.yaml entry). Create/update/read make no API call, except
when a drain with ``admin_down`` starts recording ``taken_out`` (created so, or updated to it): then the member is set
admin down again (its weight kept) and kept out of the backends through the provider's overwrite (:mod:`.held_out`),
else the ovn provider's next rewrite of the backends would take it back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult
from pulumi.dynamic import UpdateResult

from ..cloud.retry import Attempts
from ..core import contract
from . import hosted, retrying
from .errors import ReadinessError
from .held_out import OVERWRITTEN_WITHIN, POLL, Watch, hold_out
from .inputs import DrainInputs, without_provider
from .source import status_source
from .target import CloudTarget, resolve
from .provider import REPORTED, InputsChecked, _now, _sleep, stale_reference  # one clock and sleep (tests replace them here)


class DrainTimeout(ReadinessError):
    """Draining a member (weight 0) kept failing transiently (e.g. 409 while its load balancer is PENDING_*)."""


@dataclass(frozen=True)
class DrainResult:
    """What draining did.

    Attributes:
        drained: the member was drained (false when it was already gone).
        attempts: drain updates tried (409s and other transient failures included).
        waited_seconds: total time, grace included.
    """

    drained: bool
    attempts: int
    waited_seconds: float


def drain_member(
    take_out: Callable[[], bool],
    *,
    member_id: str,
    drain_seconds: float,
    timeout_seconds: float,
    pacing: retrying.Pacing,
    hold: Optional[Callable[[float, Callable[[Callable[[], Any], str], Any]], None]] = None,
) -> DrainResult:
    """Take the member out of new connections (``take_out``), retrying transient failures until ``timeout_seconds``
    (the one retry policy, :func:`ha_endpoint.cloud.retry.call_with_retries`, paced by ``pacing``), then wait
    ``drain_seconds``.

    ``take_out`` returns ``False`` when the member no longer exists (nothing to drain, no grace). ``hold``, when
    given, waits the grace instead of a sleep: called with the grace's end (``pacing.clock`` time) and the retry
    policy (``retried(action, what)``) for its own calls (:func:`run_drain`: the member kept out under the ovn
    provider).
    """
    start = pacing.clock()
    attempts = Attempts()

    def retried(action: Callable[[], Any], what: str, counted: Optional[Attempts] = None) -> Any:
        return retrying.retried(
            action, timeout_seconds=timeout_seconds, pacing=pacing, refused=f"draining member {member_id}",
            attempts=counted or Attempts(),
            exhausted=lambda exc: DrainTimeout(
                f"member {member_id}: could not {what} within {timeout_seconds:g}s ({exc.attempts} attempts, "
                f"last: {exc.last}); the member was not deleted. Wait for its load balancer to leave PENDING_* and "
                f"run the update again."))

    drained = retried(take_out, "set its weight to 0", attempts)
    if drained and drain_seconds > 0:
        if hold is None:
            pacing.sleep(drain_seconds)
        else:
            hold(pacing.clock() + drain_seconds, retried)
    return DrainResult(drained, attempts.count, pacing.clock() - start)


def run_drain(props: dict[str, Any], stack: CloudTarget = CloudTarget(),
              taking_out: bool = False) -> Optional[DrainResult]:
    """Drain the member described by a MemberDrain property bag; ``None`` when draining is off (0 s). With
    ``taking_out`` (the configuration takes the member out, under ``admin_down``): the member admin down, its weight
    kept, watched until it was set so once more after the provider's overwrite (:mod:`.held_out`), whatever the
    grace."""
    inputs = DrainInputs.of_bag(props)
    grace = OVERWRITTEN_WITHIN + POLL if taking_out else inputs.drain_seconds
    if grace == 0:
        return None
    pool_id, member_id, admin_down = inputs.pool_id, inputs.member_id, inputs.admin_down
    source = status_source(inputs.backend, resolve(props, stack))
    weight: Optional[int] = None if taking_out else 0

    def keep_out(until: float, retried: Callable[[Callable[[], Any], str], Any]) -> None:
        """Under ``admin_down`` (the ovn provider) the grace watches the member and drains it again when the provider
        overwrote its drain or took it back (:mod:`.held_out`)."""
        def listing() -> list:
            return retried(lambda: source.list_members(pool_id, missing_ok=True), "list its pool")

        def drain_again(_watch: Watch, why: str) -> None:
            retried(lambda: source.drain_member(pool_id, member_id, admin_down=True, weight=weight),
                    f"drain it again ({why})")

        hold_out([Watch(member_id, _now())], listing, drain_again, until=until, clock=_now, sleep=_sleep,
                 until_drained_again=taking_out)

    try:
        return drain_member(
            lambda: source.drain_member(pool_id, member_id, admin_down=admin_down, weight=weight),
            member_id=member_id,
            drain_seconds=grace,
            timeout_seconds=inputs.timeout_seconds,
            pacing=retrying.Pacing(_now, _sleep, source.reauth),
            hold=keep_out if admin_down else None,
        )
    finally:
        source.close()


class MemberDrainProvider(InputsChecked):
    """The CRUD of :class:`MemberDrain`: only delete talks to the cloud."""

    inputs = DrainInputs

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        replaces = [k for k in ("pool_id", "member_id") if olds.get(k) != news.get(k)]
        changed = replaces or stale_reference(olds, news) or any(
            olds.get(k) != news.get(k) for k in ("drain_seconds", "timeout_seconds", "cloud", "region")
        ) or bool(olds.get("admin_down")) != bool(news.get("admin_down")) or \
            bool(olds.get("taken_out")) != bool(news.get("taken_out"))
        return DiffResult(changes=bool(changed), replaces=replaces, delete_before_replace=False)

    def create(self, props: dict[str, Any]) -> CreateResult:
        self._keep_taken_out({}, props)
        return CreateResult(f"drain-{props['member_id']}", without_provider(props))

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        self._keep_taken_out(olds, news)
        return UpdateResult(without_provider(news))

    def _keep_taken_out(self, olds: dict[str, Any], news: dict[str, Any]) -> None:
        """A member the configuration takes out now, under ``admin_down`` (the ovn provider): kept out of the
        backends (see the module docstring)."""
        if news.get("taken_out") is True and olds.get("taken_out") is not True and news.get("admin_down") is True:
            try:
                run_drain(news, self.stack, taking_out=True)
            except REPORTED as exc:
                raise exc.with_traceback(None) from None

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        return ReadResult(id_, without_provider(props))

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        try:
            run_drain(props, self.stack)
        except REPORTED as exc:  # the message alone, under the host's and this method's frames (see REPORTED)
            raise exc.with_traceback(None) from None


DRAIN_TYPE_NAME = "MemberDrain"


class MemberDrain(pulumi.dynamic.Resource, module="haendpoint", name=DRAIN_TYPE_NAME):
    """Drains one member (weight 0, and admin down with ``admin_down``; then ``drain_seconds``) when deleted, before
    the member is deleted.

    Name it ``f"{member_resource_name}-drain"`` and give it the member's id (so it depends on the member).
    """

    def __init__(self, name: str, inputs: DrainInputs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        """``inputs``: the drain's :class:`~.inputs.DrainInputs` (``DrainInputs.declare(...)``: its fields may be
        Pulumi inputs: ``pool_id``, ``member_id``, ``drain_seconds``, ...). Typed
        ``pulumi-python:dynamic/haendpoint:MemberDrain`` (``haendpoint:index:MemberDrain`` in the package's provider
        host: :mod:`.hosted`), aliased to the generic dynamic token it had before; ``cloud``, ``region``,
        ``cloud_source``: where to poll (:mod:`.target`). ``admin_down`` is recorded only when true: a drain recorded
        before it existed, or of a provider that drains by weight alone, has no change; ``taken_out`` likewise (the
        configuration takes the member out: see the module docstring)."""
        props = inputs.bag()
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=contract.LEGACY_DYNAMIC_TYPE)]))
        hosted.register(self, MemberDrainProvider(), DRAIN_TYPE_NAME, name, props, opts)  # see .hosted

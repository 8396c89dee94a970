"""MemberSet: a Pulumi dynamic resource that owns every member of one pool and writes them with Octavia's batch member
update, in stages that keep make-before-break and drain (:mod:`.reconcile`).

One per pool (``<name>-<az>-<port>-members``, :func:`ha_endpoint.core.contract.member_set_name`), under
``memberUpdates: batch``; it replaces that pool's per-member ``Member`` and ``MemberDrain`` resources.

Lifecycle:

- **handover** (input ``handover``, under ``memberUpdates: handover``): create, update, read and delete write and
  read nothing; the state records ``handed_over``. Only a set with that record adopts members of the stack's
  per-member resources (:func:`ha_endpoint.readiness.reconcile.classify`): a stack that goes from ``per-member``
  straight to ``batch`` is refused before anything is written (:class:`~.errors.HandoverSkipped`), as the engine
  would otherwise delete the adopted members with those resources at the end of the update.
- **create / update**: the staged reconcile from what the pool lists now: (1) the new and changed members in one
  batch, then a wait until every wanted member is ready; (2) the leaving members at weight 0 in one batch (with
  ``admin_down``, under the ovn provider: also admin state down, one member per write), then ``drain_seconds``;
  (3) one batch without them, then a wait until they are gone. It fails, having removed nothing, when a wanted
  member does not become ready (with ``on_not_ready: unpublish`` it records ``ready`` false instead, and the next
  update tries again). An update that was interrupted is finished by the next one.
- **diff**: a change of any input; a member a refresh found missing, or with another weight or admin state (drift:
  the configuration is the source of truth, so a member set admin down by hand goes up again, and one the
  configuration takes out down); a set recorded not ready. A new pool or load balancer is a replacement (the new set is created before the old one is deleted).
- **read** (``pulumi refresh``): one listing of the pool; members gone out of band leave the recorded ``member_ids``,
  so the next ``up`` creates them again; a pool that is gone makes the set gone.
- **delete**: only what the set can prove its own (ids its state records, or its tag): drained (weight 0, the grace)
  and removed in one batch that writes back every other member of the pool; never an empty batch over members it
  does not own (``openstack.loadbalancer.Members`` PUTs an empty list on delete, which removes every member of the
  pool: that is why it is not used).

Outputs: ``member_ids`` (member name -> Octavia id), ``statuses`` (name -> ``"ACTIVE/ONLINE"``), ``weights`` (name ->
weight), ``taken_out`` (the names of the members listed admin down), ``owned_ids``, ``ready``, ``not_ready_reason``, ``last_change`` (what the last reconcile did: counts,
writes, API calls, seconds, stages), ``handed_over`` (the set went through the handover: it may adopt the stack's
per-member members).

Serialization and credentials: as :mod:`.provider` (a stateless provider class, ``serialize_as_secret_always =
False``, credentials read inside each method). Upgrading a stack whose members are per-member resources:
``ha_endpoint.resources.octavia`` (``memberUpdates: handover``, then ``batch``).
"""

from __future__ import annotations

import uuid
from typing import Any, Mapping, Optional

import pulumi
from pulumi.dynamic import CheckFailure, CreateResult, DiffResult, ReadResult
from pulumi.dynamic import UpdateResult

from ..cloud.connection import http_status
from . import cloud, hosted
from .errors import FetchFailed, MemberSetConflict
from .inputs import InputError, without_provider
from .provider import NOT_READY, REPORTED, InputsChecked, _now, _sleep, contains_unknown, stale_reference
from .reconcile import SetResult, reconcile
from .set_inputs import INPUT_KEYS, SetInputs, inputs_of, parse_members, parse_set
from .target import CloudTarget, resolve

SET_TYPE_NAME = "MemberSet"
OUTPUT_NAMES = ("member_ids", "statuses", "weights", "owned_ids", "ready", "not_ready_reason", "last_change",
                "handed_over", "taken_out")
REPLACING = ("loadbalancer_id", "pool_id")


def check_failures(news: Mapping[str, Any]) -> list[CheckFailure]:
    """Input problems, reported at preview; parts not known yet are skipped (the whole set when every input is
    known, else its member list when that is)."""
    if contains_unknown(news):
        parse, value = parse_members, news.get("members")
        if contains_unknown(value):
            return []
    else:
        parse, value = parse_set, news
    try:
        parse(value)
    except InputError as exc:
        return [CheckFailure(exc.property, exc.reason)]
    return []


def outputs(props: Mapping[str, Any], result: SetResult, handed_over: bool) -> dict[str, Any]:
    """The state after a reconcile: the inputs and what the pool holds."""
    outs = inputs_of(props)
    outs.update(
        member_ids={name: m.member_id for name, m in sorted(result.members.items())},
        statuses={name: m.status.label for name, m in sorted(result.members.items())},
        weights={name: m.weight for name, m in sorted(result.members.items())},
        taken_out=sorted(name for name, m in result.members.items() if not m.admin_state_up),
        owned_ids=list(result.owned_ids), ready=result.ready, not_ready_reason=result.not_ready_reason,
        last_change={"created": result.created, "updated": result.updated, "adopted": result.adopted,
                     "drained": result.drained, "removed": result.removed, "writes": result.writes,
                     "api_calls": result.api_calls, "seconds": round(result.waited_seconds, 3),
                     "stages": list(result.stages)},
        handed_over=handed_over)
    return outs


def handover_outputs(props: Mapping[str, Any]) -> dict[str, Any]:
    """The state of a set under ``memberUpdates: handover``: it owns nothing, wrote nothing, and went through the
    handover."""
    return outputs(props, SetResult(members={}, owned_ids=()), handed_over=True)


def is_handover(props: Mapping[str, Any]) -> bool:
    return props.get("handover") is True


def check_leaves_nothing(olds: Mapping[str, Any], news: Mapping[str, Any]) -> None:
    """A set that owns members cannot go back to ``handover``: the per-member resources that would take its pool over
    are refused by Octavia at the addresses the set's members hold."""
    owned = recorded(olds)
    if owned:
        raise MemberSetConflict(
            f"pool {news.get('pool_name')} ({news.get('pool_id')}): memberUpdates: handover after batch: the member "
            f"set owns {len(owned)} members, which per-member resources cannot take over (Octavia refuses a second "
            f"member at an address and port). Nothing was written. Fix: keep `memberUpdates: batch` for this "
            f"endpoint (moving back from batch is not supported).")


def recorded(olds: Mapping[str, Any]) -> frozenset[str]:
    """The member ids a set's state records as its own."""
    owned = olds.get("owned_ids") or []
    return frozenset(str(member_id) for member_id in owned if isinstance(member_id, str))


def run_reconcile(props: Mapping[str, Any], owned: frozenset[str], stack: CloudTarget,
                  inputs: Optional[SetInputs] = None, adopt: bool = False) -> SetResult:
    """Reconcile against the cloud the bag names: a connection built here, closed on return."""
    inputs = inputs or parse_set(props)
    where = resolve(props, stack)
    source = cloud.OctaviaStatusSource(where.cloud, where.region)
    try:
        return reconcile(inputs, owned, source, clock=_now, sleep=_sleep, not_ready=NOT_READY, adopt=adopt)
    finally:
        source.close()


def drifted(olds: Mapping[str, Any], news: Mapping[str, Any]) -> bool:
    """Whether the recorded state (as the last refresh read it) lacks a wanted member or holds another weight or
    admin state (a state recorded before ``taken_out`` existed says nothing of admin states)."""
    try:
        wanted = parse_members(news.get("members"))
    except InputError:
        return True
    ids, weights = olds.get("member_ids") or {}, olds.get("weights") or {}
    down = olds.get("taken_out")
    return any(m.name not in ids or weights.get(m.name, m.weight) != m.weight
               or (isinstance(down, list) and (m.name in down) == m.admin_state_up) for m in wanted)


def pool_gone(exc: BaseException) -> bool:
    return isinstance(exc, FetchFailed) and exc.__cause__ is not None and http_status(exc.__cause__) == 404


class MemberSetProvider(InputsChecked):
    """The CRUD of :class:`MemberSet`."""

    input_failures = staticmethod(check_failures)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        replaces = [key for key in REPLACING if contains_unknown(news.get(key)) or olds.get(key) != news.get(key)]
        changed = (bool(replaces) or any(olds.get(key) != news.get(key) for key in INPUT_KEYS if key != "handover")
                   or is_handover(olds) != is_handover(news)  # a state from before the input existed: not handover
                   or stale_reference(olds, news) or drifted(olds, news) or olds.get("ready") is False)
        return DiffResult(changes=changed, replaces=replaces, delete_before_replace=False)

    def create(self, props: dict[str, Any]) -> CreateResult:
        try:
            outs = handover_outputs(props) if is_handover(props) else outputs(
                props, run_reconcile(props, frozenset(), self.stack), handed_over=False)
        except REPORTED as exc:
            raise exc.with_traceback(None) from None
        return CreateResult(f"members-{uuid.uuid4().hex}", outs)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        try:
            if is_handover(news):
                check_leaves_nothing(olds, news)
                return UpdateResult(handover_outputs(news))
            adopt = olds.get("handed_over") is True
            outs = outputs(news, run_reconcile(news, recorded(olds), self.stack, adopt=adopt), handed_over=adopt)
        except REPORTED as exc:
            raise exc.with_traceback(None) from None
        return UpdateResult(outs)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        if is_handover(props):
            return ReadResult(id_, without_provider(props))
        try:
            return self._read(id_, props)
        except REPORTED as exc:
            raise exc.with_traceback(None) from None

    def _read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        outs = without_provider(props)
        where = resolve(props, self.stack)
        source = cloud.OctaviaStatusSource(where.cloud, where.region)
        try:
            live = {m.member_id: m for m in source.list_members(str(props["pool_id"]))}
        except FetchFailed as exc:
            if pool_gone(exc):
                return ReadResult("", {})
            raise
        finally:
            source.close()
        ids = {name: member_id for name, member_id in (props.get("member_ids") or {}).items() if member_id in live}
        outs.update(member_ids=ids, statuses={name: live[i].status.label for name, i in ids.items()},
                    weights={name: live[i].weight for name, i in ids.items()},
                    taken_out=sorted(name for name, i in ids.items() if not live[i].admin_state_up),
                    owned_ids=sorted(i for i in recorded(props) if i in live))
        return ReadResult(id_, outs)

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        if is_handover(props):
            return  # it owns nothing: the per-member resources hold the pool's members
        try:
            inputs = parse_set({**props, "members": []})
            run_reconcile(props, recorded(props), self.stack, inputs)
        except FetchFailed as exc:
            if not pool_gone(exc):  # a pool that is gone took its members with it
                raise exc.with_traceback(None) from None
        except REPORTED as exc:
            raise exc.with_traceback(None) from None


class MemberSet(pulumi.dynamic.Resource, module="haendpoint", name=SET_TYPE_NAME):
    """Every member of one pool, written with Octavia's batch member update in stages (see the module docstring).

    Name it ``f"{endpoint}-{az}-{port}-members"`` (``ha_endpoint.core.contract.member_set_name``)."""

    member_ids: pulumi.Output[dict]
    statuses: pulumi.Output[dict]
    weights: pulumi.Output[dict]
    taken_out: pulumi.Output[list]
    owned_ids: pulumi.Output[list]
    ready: pulumi.Output[bool]
    not_ready_reason: pulumi.Output[Optional[str]]
    last_change: pulumi.Output[dict]
    handed_over: pulumi.Output[bool]

    def __init__(self, name: str, *, loadbalancer_id: pulumi.Input[str], pool_id: pulumi.Input[str], pool_name: str,
                 members: pulumi.Input[list], tags: pulumi.Input[list], identity_tag: str, monitored: bool,
                 hold_seconds: float = 0, require: str = "online", timeout_seconds: float = 600,
                 poll_interval_seconds: float = 1.0, stable_polls: int = 2, on_not_ready: str = "fail",
                 dead_after_seconds: float = 60, drain_seconds: float = 0, write_timeout_seconds: float = 300,
                 cloud: pulumi.Input[Optional[str]] = None, region: pulumi.Input[Optional[str]] = None,
                 cloud_source: str = "stack", handover: bool = False, admin_down: bool = False,
                 opts: Optional[pulumi.ResourceOptions] = None) -> None:
        """``members``: ``[{name, address, protocol_port, weight, subnet_id, monitor_port, admin_state_up}]`` (see
        :mod:`.set_inputs`); ``handover``: the set of a pool whose members are still per-member resources (it holds
        and writes nothing; see the module docstring); ``admin_down``: drain by admin state as well as weight, one
        member per write, recorded only when true (a set recorded before it existed, or of a provider that drains
        by weight alone, has no change); the others as :class:`~.provider.MemberReadiness`'s and
        :class:`~.drain.MemberDrain`'s.
        Typed ``pulumi-python:dynamic/haendpoint:MemberSet`` (``haendpoint:index:MemberSet`` in the package's
        provider host: :mod:`.hosted`)."""
        props: dict[str, Any] = {
            "loadbalancer_id": loadbalancer_id, "pool_id": pool_id, "pool_name": pool_name, "members": members,
            "tags": tags, "identity_tag": identity_tag, "monitored": monitored, "hold_seconds": hold_seconds,
            "require": require, "timeout_seconds": timeout_seconds, "poll_interval_seconds": poll_interval_seconds,
            "stable_polls": stable_polls, "on_not_ready": on_not_ready, "dead_after_seconds": dead_after_seconds,
            "drain_seconds": drain_seconds, "write_timeout_seconds": write_timeout_seconds, "cloud": cloud,
            "region": region, "cloud_source": cloud_source, "handover": handover,
            **({"admin_down": True} if admin_down else {})}
        props.update({key: None for key in OUTPUT_NAMES})
        hosted.register(self, MemberSetProvider(), SET_TYPE_NAME, name, props, opts)  # see .hosted

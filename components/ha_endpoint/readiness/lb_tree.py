"""LoadBalancerTree: a Pulumi dynamic resource that is one zone's Octavia load balancer with its listeners, pools and
health monitors, created in ONE call (``loadBalancerCreate: single-call``).

Why: under the provider's resources a zone is nine serialized writes (load balancer, then per listener a listener, a
pool, a monitor, the members), each waited for by the provider's state-change poll (a check at once, then 1, 2, 4 s
apart) where Octavia applies it in ~0.3 s; Octavia takes the whole tree, members included, in one POST (its fully
populated create). The tree's first members are written by that POST, tagged with their pool's member-set tag: the
pool's :class:`~.member_set.MemberSet` owns them from then on (it waits until they are ready, with the ovn provider's
hold, and writes every later change in its stages), so the tree never writes members after its create.

Lifecycle:

- **create**: one ``POST /v2/lbaas/loadbalancers`` with everything (:meth:`.TreeInputs.create_body`), tagged with a
  token of this create (when the POST's answer is lost, the token finds the load balancer it made instead of posting
  a second one); then a poll (0.2 s, growing to 2 s) until Octavia lists it ACTIVE. A load balancer that goes to
  ERROR, or is not ACTIVE by ``write_timeout_seconds``, is deleted again (it is the create's own: its id came from
  the create's POST) and the create fails saying so: nothing is left behind.
- **diff**: a new tree (created before the old one is deleted) when something that cannot change in place changes
  (:meth:`.TreeInputs.structure`), or when a refresh found a listener, pool or monitor gone; an update when an
  attribute that can changes, or when a refresh found one changed out of band (drift).
- **update**: one ``PUT`` per object whose attributes differ from what it last read, one at a time, each waited for
  until the load balancer is ACTIVE again.
- **read** (``pulumi refresh``): the load balancer, its listeners, pools and monitors as Octavia lists them now; a
  load balancer that is gone makes the tree gone.
- **delete**: only what it proves its own: the load balancer must be the recorded id and carry the stack's identity
  tag (and the create's token, when recorded); every listener and pool under it must be recorded or carry the
  identity tag, and every member left in its pools must carry the identity tag (the member sets, deleted first by
  the engine, have removed theirs). Otherwise nothing is deleted and the error names what is not the stack's. Then
  one cascade delete, and a poll until Octavia no longer lists it.

Outputs: ``vip_address``, ``vip_port_id``, ``listener_ids``, ``pool_ids``, ``monitor_ids`` (listener port -> id),
``live`` (what the tree last read or wrote of each object's attributes), ``create_token``, ``provisioning_status``,
``last_change`` (calls, writes, seconds of the last create or update).

Serialization and credentials: as :mod:`.provider` (a stateless provider class, credentials read in each method).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping, Optional

import pulumi
from pulumi.dynamic import CheckFailure, CreateResult, DiffResult, ReadResult, UpdateResult

from ..cloud.errors import TransientFetchError
from ..cloud.retry import Backoff, RetriesExhausted
from . import hosted
from .errors import AuthFailed, FetchFailed, TreeError, TreeNotOurs
from .inputs import InputError
from .retrying import retried
from .provider import REPORTED, InputsChecked, _now, _sleep, contains_unknown, stale_reference
from .target import CloudTarget, resolve
from .tree_cloud import OctaviaTreeSource
from .tree_inputs import CREATE_TOKEN_PREFIX, ListenerSpec, TreeInputs, inputs_of, parse_tree, without_members

TREE_TYPE_NAME = "LoadBalancerTree"
OUTPUT_NAMES = ("vip_address", "vip_port_id", "listener_ids", "pool_ids", "monitor_ids", "live", "create_token",
                "provisioning_status", "last_change")
SETTLE_BACKOFF = Backoff(0.2, 1.5, 2.0)
"""Between two looks at a load balancer Octavia is applying a write to (it needs ~0.3 s per object here)."""
CHILDREN_GRACE_SECONDS = 30.0
"""How long after its load balancer is ACTIVE a create waits for the listeners, pools and monitors to be ACTIVE."""
WRITE_BACKOFF = Backoff(0.5, 1.5, 5.0)
"""Between two tries of a call Octavia refused with 409 or 5xx, or that got no answer."""


def check_failures(news: Mapping[str, Any]) -> list[CheckFailure]:
    """Input problems, reported at preview (not judged while any input is unknown)."""
    if contains_unknown(news):
        return []
    try:
        parse_tree(news)
    except InputError as exc:
        return [CheckFailure(exc.property, exc.reason)]
    return []


@dataclass
class LiveTree:
    """A load balancer and what hangs under it, as Octavia lists it: by listener port."""

    lb: dict[str, Any]
    listeners: dict[str, dict[str, Any]] = field(default_factory=dict)
    pools: dict[str, dict[str, Any]] = field(default_factory=dict)
    monitors: dict[str, dict[str, Any]] = field(default_factory=dict)

    def ids(self, objects: dict[str, dict[str, Any]]) -> dict[str, str]:
        return {port: str(found["id"]) for port, found in sorted(objects.items())}

    def attributes(self, inputs: TreeInputs) -> dict[str, Any]:
        """Each object's in-place attributes as listed, keyed as :func:`wanted_attributes`."""
        def pick(found: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any]:
            return _present({key: _normal(found.get(key)) for key in wanted})

        by_port = {listener.key: listener for listener in inputs.listeners}
        token = _token(self.lb)
        return {"lb": pick(self.lb, inputs.lb_attributes(token)),
                "listeners": {port: pick(found, by_port[port].listener_attributes(inputs.tags))
                              for port, found in self.listeners.items() if port in by_port},
                "pools": {port: pick(found, by_port[port].pool_attributes(inputs.tags))
                          for port, found in self.pools.items() if port in by_port},
                "monitors": {port: pick(found, by_port[port].monitor.attributes())
                             for port, found in self.monitors.items()
                             if port in by_port and by_port[port].monitor is not None}}


def _normal(value: Any) -> Any:
    """An attribute as compared: lists sorted (Octavia does not keep the order of tags or CIDRs), '' and [] as none."""
    if isinstance(value, list):
        return sorted(str(item) for item in value) or None
    return None if value == "" else value


def _present(attributes: dict[str, Any]) -> dict[str, Any]:
    """The attributes that have a value (the engine stores no null in a resource's outputs)."""
    return {key: value for key, value in attributes.items() if value is not None}


def wanted_attributes(inputs: TreeInputs, token: Optional[str]) -> dict[str, Any]:
    """Each object's in-place attributes as the inputs want them (compared with :meth:`LiveTree.attributes`)."""
    def normal(wanted: dict[str, Any]) -> dict[str, Any]:
        return _present({key: _normal(value) for key, value in wanted.items()})

    return {"lb": normal(inputs.lb_attributes(token)),
            "listeners": {l.key: normal(l.listener_attributes(inputs.tags)) for l in inputs.listeners},
            "pools": {l.key: normal(l.pool_attributes(inputs.tags)) for l in inputs.listeners},
            "monitors": {l.key: normal(l.monitor.attributes()) for l in inputs.listeners if l.monitor is not None}}


def _token(lb: Mapping[str, Any]) -> Optional[str]:
    return next((tag for tag in lb.get("tags") or [] if tag.startswith(CREATE_TOKEN_PREFIX)), None)


@dataclass
class TreeOps:
    """What a create, update, read or delete of one tree does against ``source`` (clock and sleep injected)."""

    inputs: TreeInputs
    source: OctaviaTreeSource
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    writes: int = 0
    done: list[str] = field(default_factory=list)

    @property
    def what(self) -> str:
        return f"load balancer {self.inputs.name}"

    def retried(self, action: Callable[[], Any], doing: str, backoff: Backoff = WRITE_BACKOFF) -> Any:
        """``action()`` under the one retry policy, for at most ``write_timeout_seconds``."""
        def exhausted(exc: RetriesExhausted) -> TreeError:
            so_far = "; ".join(self.done) if self.done else "nothing was changed yet"
            return TreeError(
                f"{self.what}: {doing} did not succeed within {self.inputs.write_timeout_seconds:g}s ({exc.attempts} "
                f"attempts, last: {exc.last}). Done before: {so_far}. Wait until Octavia lists the load balancer "
                f"ACTIVE, then run `pulumi up` again.")
        return retried(action, timeout_seconds=self.inputs.write_timeout_seconds, clock=self.clock, sleep=self.sleep,
                       backoff=backoff, reauth=self.source.reauth, refused=f"{self.what}: {doing}",
                       exhausted=exhausted)

    def settled(self, lb_id: str, doing: str) -> dict[str, Any]:
        """The load balancer once Octavia applied the last write to it (ACTIVE); ERROR or gone is a failure."""
        def check() -> dict[str, Any]:
            found = self.source.get("loadbalancer", lb_id)
            if found is None:
                raise TreeError(f"{self.what}: load balancer {lb_id} is gone while {doing}.")
            status = found.get("provisioning_status")
            if status == "ERROR":
                raise TreeError(f"{self.what}: Octavia put load balancer {lb_id} in ERROR while {doing}.")
            if status != "ACTIVE":
                raise TransientFetchError(f"load balancer {lb_id} is {status}")
            return found
        return self.retried(check, doing, SETTLE_BACKOFF)

    def live(self, lb_id: str) -> Optional[LiveTree]:
        """The load balancer and its listeners, pools and monitors as listed now; none when it is gone."""
        lb = self.retried(lambda: self.source.get("loadbalancer", lb_id), f"fetching load balancer {lb_id}")
        if lb is None:
            return None
        tree = LiveTree(lb)
        listeners = self.under(lb_id, "listener")
        pools = {str(pool["id"]): pool for pool in self.under(lb_id, "pool")}
        for listener in listeners:
            port = str(listener["protocol_port"])
            tree.listeners[port] = listener
            pool = pools.get(str(listener.get("default_pool_id") or ""))
            if pool is None:
                continue
            tree.pools[port] = pool
            monitor_id = pool.get("healthmonitor_id")
            if monitor_id:
                monitor = self.retried(lambda: self.source.get("healthmonitor", str(monitor_id)),
                                       f"fetching health monitor {monitor_id}")
                if monitor is not None:
                    tree.monitors[port] = monitor
        return tree

    def under(self, lb_id: str, kind: str) -> list[dict[str, Any]]:
        """The listeners or pools of load balancer ``lb_id``: asked with a filter, and kept only when they name it
        (Octavia's listing does not apply every filter it is given: one that lists another load balancer's objects
        must never lead a write or a delete there)."""
        return [found for found in self.retried(lambda: self.source.list(kind, loadbalancer_id=lb_id),
                                                f"listing the {kind}s of load balancer {lb_id}")
                if any(str(ref.get("id")) == lb_id for ref in found.get("loadbalancers") or [])]

    def create(self) -> tuple[str, LiveTree, str]:
        """Post the whole tree, then wait until it is ACTIVE; returns its id, what it lists and the create's token."""
        token = f"{CREATE_TOKEN_PREFIX}{uuid.uuid4().hex}"
        body = self.inputs.create_body(token)
        members = sum(len(listener.members) for listener in self.inputs.listeners)
        lb_id = self.retried(lambda: self.post_once(body, token),
                             f"creating the load balancer with {len(self.inputs.listeners)} listeners and {members} "
                             f"members in one call")
        self.writes += 1
        self.done.append(f"load balancer {lb_id} created")
        try:
            self.settled(lb_id, "creating it with its listeners, pools, monitors and members")
            tree = self.children_settled(lb_id)
            missing = [l.key for l in self.inputs.listeners if l.key not in tree.pools]
            if missing:
                raise TreeError(f"{self.what}: Octavia made load balancer {lb_id} without the listener or pool of "
                                f"port(s) {', '.join(missing)}.")
        except (TreeError, FetchFailed, AuthFailed) as exc:
            raise TreeError(f"{exc} {self.undo_create(lb_id)}") from None
        return lb_id, tree, token

    def children_settled(self, lb_id: str) -> LiveTree:
        """The tree once every listener, pool and monitor under the ACTIVE load balancer is ACTIVE too. A provider
        that leaves them PENDING_* (Octavia 11's amphora driver on the local cloud does, every time: the load
        balancer turns ACTIVE, what was created with it stays PENDING_CREATE) fails the create after
        :data:`CHILDREN_GRACE_SECONDS`: they are immutable for good."""
        deadline = self.clock() + CHILDREN_GRACE_SECONDS
        delays = SETTLE_BACKOFF.delays()
        while True:
            tree = self.live(lb_id)
            if tree is None:
                raise TreeError(f"{self.what}: load balancer {lb_id} is gone right after its create.")
            pending = [f"{kind} of port {port} {found.get('provisioning_status')}"
                       for kind, objects in (("listener", tree.listeners), ("pool", tree.pools),
                                             ("health monitor", tree.monitors))
                       for port, found in sorted(objects.items()) if found.get("provisioning_status") != "ACTIVE"]
            if not pending:
                return tree
            if self.clock() >= deadline:
                raise TreeError(
                    f"{self.what}: Octavia lists load balancer {lb_id} ACTIVE but not what was created with it "
                    f"({'; '.join(pending)}, {CHILDREN_GRACE_SECONDS:g}s later): its provider "
                    f"({self.inputs.provider or 'the default'}) does not finish a fully populated create. Use "
                    f"`loadBalancerCreate: per-object` with this provider.")
            self.sleep(next(delays))

    def post_once(self, body: dict[str, Any], token: str) -> str:
        """One POST; when its answer was lost (transient), the load balancer carrying ``token`` if the POST made it,
        else the failure (retried by the caller)."""
        try:
            return str(self.source.create("loadbalancer", body, f"creating {self.what} in one call")["id"])
        except TransientFetchError:
            made = [lb for lb in self.source.list("loadbalancer", name=self.inputs.name, tags=token)
                    if token in (lb.get("tags") or [])]  # the token itself, whatever filters Octavia applied
            if made:
                return str(made[0]["id"])
            raise

    def undo_create(self, lb_id: str) -> str:
        """Delete the load balancer this create made (its id came from the create's own POST); what happened, as
        a sentence."""
        try:
            self.cascade(lb_id)
        except (TreeError, FetchFailed, AuthFailed) as exc:
            return (f"The load balancer {lb_id} this create made could not be deleted ({exc}): delete it with "
                    f"`openstack loadbalancer delete --cascade {lb_id}` before running `pulumi up` again.")
        return f"The load balancer {lb_id} this create made was deleted again; nothing is left behind."

    def cascade(self, lb_id: str) -> None:
        """One cascade delete (retried while the load balancer is PENDING_*), then a poll until it is gone."""
        if not self.retried(lambda: self.source.delete_load_balancer(lb_id), f"deleting load balancer {lb_id}"):
            return
        self.writes += 1

        def gone() -> None:
            found = self.source.get("loadbalancer", lb_id)
            if found is not None:
                raise TransientFetchError(f"load balancer {lb_id} is {found.get('provisioning_status')}")
        self.retried(gone, f"waiting for load balancer {lb_id} to be deleted", SETTLE_BACKOFF)

    def update(self, lb_id: str, token: Optional[str]) -> LiveTree:
        """One PUT per object whose attributes differ from what Octavia lists now, each applied before the next."""
        tree = self.live(lb_id)
        if tree is None:
            raise TreeError(f"{self.what}: load balancer {lb_id} is gone. Run `pulumi refresh`, then `pulumi up` "
                            f"(the tree is created again).")
        wanted = wanted_attributes(self.inputs, token)
        current = tree.attributes(self.inputs)
        writes: list[tuple[str, str, dict[str, Any], str]] = []
        if wanted["lb"] != current["lb"]:
            writes.append(("loadbalancer", lb_id, self.inputs.lb_attributes(token), "the load balancer"))
        for listener in self.inputs.listeners:
            port = listener.key
            for kind, group, attributes in (
                    ("listener", "listeners", listener.listener_attributes(self.inputs.tags)),
                    ("pool", "pools", listener.pool_attributes(self.inputs.tags)),
                    ("healthmonitor", "monitors", listener.monitor.attributes() if listener.monitor else None)):
                if attributes is None:
                    continue
                found = getattr(tree, group).get(port)
                if found is None:
                    raise TreeError(f"{self.what}: the {kind} of port {port} is gone from load balancer {lb_id}. "
                                    f"Run `pulumi refresh`, then `pulumi up`: the tree is created anew.")
                if wanted[group][port] != current[group].get(port):
                    writes.append((kind, str(found["id"]), attributes, f"the {kind} of port {port}"))
        for kind, object_id, attributes, name in writes:
            self.retried(lambda: self.source.update(kind, object_id, attributes, f"updating {name} ({object_id})"),
                         f"updating {name}")
            self.writes += 1
            self.settled(lb_id, f"updating {name}")
            self.done.append(f"{name} updated")
        return self.live(lb_id) if writes else tree

    def prove_ours(self, lb_id: str, tree: LiveTree, recorded: Mapping[str, Any]) -> None:
        """Refuse (:class:`TreeNotOurs`) unless everything a cascade delete of ``tree`` would remove is the stack's."""
        identity = self.inputs.identity_tag
        token = recorded.get("create_token")
        strangers: list[str] = []
        tags = tree.lb.get("tags") or []
        if identity not in tags or (token and token not in tags):
            strangers.append(f"the load balancer itself (tags {sorted(tags)}; this stack's are {identity!r}"
                             + (f" and {token!r}" if token else "") + ")")
        known = {str(i) for group in ("listener_ids", "pool_ids", "monitor_ids")
                 for i in (recorded.get(group) or {}).values()}
        for port, found in tree.listeners.items():
            if str(found["id"]) not in known and identity not in (found.get("tags") or []):
                strangers.append(f"listener {found['id']} (port {port}, name {found.get('name')!r})")
        for pool in self.under(lb_id, "pool"):  # every pool of the load balancer, default pools or not
            if str(pool["id"]) not in known and identity not in (pool.get("tags") or []):
                strangers.append(f"pool {pool['id']} (name {pool.get('name')!r})")
            for member in self.retried(lambda: self.source.list_members(str(pool["id"]), missing_ok=True),
                                       f"listing the members of pool {pool['id']}"):
                if identity not in member.tags:
                    strangers.append(f"member {member.member_id} ({member.endpoint}, name {member.name!r}) of pool "
                                     f"{pool['id']}")
        if strangers:
            raise TreeNotOurs(
                f"{self.what}: refusing to delete load balancer {lb_id} with everything under it: "
                + "; ".join(sorted(set(strangers)))
                + f" cannot be proven this stack's (recorded by the tree, or tagged {identity!r}). Nothing was "
                  f"deleted. Remove what is not this stack's from the load balancer (or take the load balancer out "
                  f"of the stack with `pulumi state delete`), then run the update again.")


def tree_outputs(props: Mapping[str, Any], inputs: TreeInputs, tree: LiveTree, token: Optional[str],
                 ops: TreeOps, start: float) -> dict[str, Any]:
    """The state after a create, update or read: the inputs and what Octavia lists."""
    outs = inputs_of(props)
    outs.update(vip_address=tree.lb.get("vip_address"), vip_port_id=tree.lb.get("vip_port_id"),
                listener_ids=tree.ids(tree.listeners), pool_ids=tree.ids(tree.pools),
                monitor_ids=tree.ids(tree.monitors), live=tree.attributes(inputs), create_token=token,
                provisioning_status=tree.lb.get("provisioning_status"),
                last_change={"writes": ops.writes, "api_calls": ops.source.calls,
                             "seconds": round(ops.clock() - start, 3), "done": list(ops.done)})
    return outs


def open_ops(props: Mapping[str, Any], stack: CloudTarget, inputs: Optional[TreeInputs] = None) -> TreeOps:
    """A :class:`TreeOps` over a connection to the cloud the bag names (close it with ``ops.source.close()``)."""
    inputs = inputs or parse_tree(props)
    where = resolve(props, stack)
    return TreeOps(inputs, OctaviaTreeSource(where.cloud, where.region), _now, _sleep)


@contextmanager
def opened(props: Mapping[str, Any], stack: CloudTarget) -> Iterator[TreeOps]:
    """:func:`open_ops` for one provider call: the connection closed after it, its failures reported without the
    provider's traceback."""
    try:
        ops = open_ops(props, stack)
        try:
            yield ops
        finally:
            ops.source.close()
    except REPORTED as exc:
        raise exc.with_traceback(None) from None


def gone_ports(olds: Mapping[str, Any], news: Mapping[str, Any]) -> list[str]:
    """Listener ports whose listener, pool or monitor the last refresh did not find (they need a new tree)."""
    try:
        inputs = parse_tree(news)
    except InputError:
        return []
    if not olds.get("pool_ids"):
        return []
    gone = []
    for listener in inputs.listeners:
        needed = [olds.get("listener_ids"), olds.get("pool_ids")] + ([olds.get("monitor_ids")] if listener.monitor
                                                                      else [])
        if any(listener.key not in (ids or {}) for ids in needed):
            gone.append(listener.key)
    return gone


class LoadBalancerTreeProvider(InputsChecked):
    """The CRUD of :class:`LoadBalancerTree`."""

    input_failures = staticmethod(check_failures)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        if contains_unknown(without_members(news)):  # the first members are the member sets' (see the docstring)
            structural = any(contains_unknown(without_members(news).get(key)) for key in
                             ("vip_subnet_id", "availability_zone", "loadbalancer_provider", "listeners"))
            return DiffResult(changes=True, replaces=["listeners"] if structural else [],
                              delete_before_replace=False)
        replaces: list[str] = []
        try:
            # without the members: unknown at preview while their ports are made, and the member sets' after all
            old, new = parse_tree(without_members(olds)), parse_tree(without_members(news))
        except InputError:
            return DiffResult(changes=True, replaces=[], delete_before_replace=False)
        if old.structure() != new.structure():
            replaces = [key for key in ("vip_subnet_id", "availability_zone", "loadbalancer_provider")
                        if olds.get(key) != news.get(key)] or ["listeners"]
        elif gone_ports(olds, without_members(news)):
            replaces = ["listeners"]
        drifted = olds.get("live") is not None and olds.get("live") != wanted_attributes(new, olds.get("create_token"))
        changed = (bool(replaces) or without_members(olds) != without_members(news) or drifted
                   or stale_reference(olds, news))
        return DiffResult(changes=changed, replaces=replaces, delete_before_replace=False)

    def create(self, props: dict[str, Any]) -> CreateResult:
        with opened(props, self.stack) as ops:
            start = ops.clock()
            lb_id, tree, token = ops.create()
            return CreateResult(lb_id, tree_outputs(props, ops.inputs, tree, token, ops, start))

    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        with opened(news, self.stack) as ops:
            start = ops.clock()
            token = olds.get("create_token")
            tree = ops.update(id_, token)
            return UpdateResult(tree_outputs(news, ops.inputs, tree, token, ops, start))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        with opened(props, self.stack) as ops:
            start = ops.clock()
            tree = ops.live(id_)
            if tree is None:
                return ReadResult("", {})
            outs = tree_outputs(props, ops.inputs, tree, props.get("create_token"), ops, start)
            outs["last_change"] = props.get("last_change")
            return ReadResult(id_, outs)

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        with opened(props, self.stack) as ops:
            tree = ops.live(id_)
            if tree is None:
                return
            ops.prove_ours(id_, tree, props)
            ops.cascade(id_)


class LoadBalancerTree(pulumi.dynamic.Resource, module="haendpoint", name=TREE_TYPE_NAME):
    """One zone's load balancer with its listeners, pools and health monitors, created in one call (see the module
    docstring). Its id is the Octavia load balancer's. Name it like the load balancer (``<name>-<az>-lb``)."""

    vip_address: pulumi.Output[str]
    vip_port_id: pulumi.Output[str]
    listener_ids: pulumi.Output[dict]
    pool_ids: pulumi.Output[dict]
    monitor_ids: pulumi.Output[dict]
    live: pulumi.Output[dict]
    create_token: pulumi.Output[str]
    provisioning_status: pulumi.Output[str]
    last_change: pulumi.Output[dict]

    def __init__(self, name: str, *, lb_name: str, description: str, vip_subnet_id: pulumi.Input[str],
                 availability_zone: Optional[str], loadbalancer_provider: Optional[str], tags: list[str],
                 identity_tag: str, listeners: pulumi.Input[list], write_timeout_seconds: float = 300,
                 cloud: pulumi.Input[Optional[str]] = None, region: pulumi.Input[Optional[str]] = None,
                 cloud_source: str = "stack", opts: Optional[pulumi.ResourceOptions] = None) -> None:
        """``listeners``: ``[{name, description, protocol, protocol_port, allowed_cidrs, default_tls_container_ref,
        pool: {name, description, protocol, lb_method}, monitor, members, member_tag}]`` (see :mod:`.tree_inputs`).
        Typed ``pulumi-python:dynamic/haendpoint:LoadBalancerTree`` (``haendpoint:index:LoadBalancerTree`` in the
        package's provider host: :mod:`.hosted`)."""
        props: dict[str, Any] = {
            "name": lb_name, "description": description, "vip_subnet_id": vip_subnet_id,
            "availability_zone": availability_zone, "loadbalancer_provider": loadbalancer_provider, "tags": tags,
            "identity_tag": identity_tag, "listeners": listeners, "write_timeout_seconds": write_timeout_seconds,
            "cloud": cloud, "region": region, "cloud_source": cloud_source}
        props.update({key: None for key in OUTPUT_NAMES})
        hosted.register(self, LoadBalancerTreeProvider(), TREE_TYPE_NAME, name, props, opts)

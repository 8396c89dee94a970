"""MemberVip: the zone's VIP in one member port's allowed address pairs, and the zone's VRRP group on that port.

The member ports are not the stack's resources (the user's servers own them), so the stack cannot declare them as
``openstack.networking.Port`` (that would take them over, and delete them on ``destroy``), and the provider has no
resource that adds one address pair to a port (``PortSecGroupAssociate`` exists for groups only). This dynamic
resource adds exactly what it needs and removes exactly what it added:

* create: find the port (its id, else the member's fixed address on the zone's network), refuse one with port security
  off (Neutron then ignores address pairs and groups: the VIP would answer, unfiltered, from any port), add the VIP to
  its ``allowed_address_pairs`` and the group to its ``security_groups`` where they are missing; the state records
  which of the two it added (``added_pair``, ``added_group``), and so does the port itself, before the write: a tag
  per addition (:func:`pair_tag`, :func:`group_tag`). A create killed after its write (the engine never recorded it)
  is run again and finds the pair present: the tag says it is ours, where the state alone would have called it the
  user's and left it behind on ``destroy`` (with the group still on the port, the group's delete fails with 409).
* delete: remove the VIP's pair only if this resource added it (its state or its tag says so), the group likewise: a
  pair or group the port had before (the user's, another stack's) stays. What it removes is proven its own; the tags
  go after the write.
* update (the VIP, the group or the port changed): the old ones it added are removed, the new ones added; never a
  replacement (create-before-delete of the same pair would find it present, and the delete would then remove it).

Each call reads the port and writes back the whole list (Neutron has no add-one-pair call): a concurrent writer of the
same port's pairs may be overwritten in that window, which Neutron's ``revision_number`` (``If-Match``) guards
against: the write is made conditional on the revision read, and a 412 is read and retried.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Mapping, Optional

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, ResourceProvider, UpdateResult

from ...cloud.connection import connect, http_status, translated
from ...cloud.errors import CallFailed, TransientFetchError
from ...cloud.retry import call_with_retries
from ...gates import hosted
from ...gates.target import CloudTarget, StackConfigured, resolve

TYPE_NAME = "MemberVip"
WRITE_SECONDS = 120.0
INPUTS = ("port_id", "address", "network_id", "vip_address", "group_id")


class PortNotUsable(CallFailed):
    """The member's port cannot hold the VIP (not found, or port security off): the fix is in the message."""


def _port(conn: Any, props: Mapping[str, Any]) -> Any:
    """The member's port: by id, else by its fixed address on the zone's network."""
    port_id = props.get("port_id") or props.get("held_port_id")
    if port_id:
        return conn.network.get_port(port_id)
    found = list(conn.network.ports(network_id=props["network_id"], fixed_ips=f"ip_address={props['address']}"))
    if len(found) != 1:
        raise PortNotUsable(f"member {props['member']}: {len(found)} ports hold address {props['address']} on network "
                            f"{props['network_id']}; give the member's port (members[].port) or server")
    return found[0]


def pair_tag(vip_address: str) -> str:
    """The member port's tag that says this endpoint added the pair of ``vip_address`` (at most 56 characters, under
    Neutron's 60 for an IPv6 address)."""
    return f"ha-endpoint-pair={vip_address}"


def group_tag(group_id: str) -> str:
    """The member port's tag that says this endpoint added the group ``group_id`` to it (54 characters for an id)."""
    return f"ha-endpoint-group={group_id}"


def _write(conn: Any, port: Any, pairs: list[dict], groups: list[str]) -> None:
    conn.network.update_port(port, allowed_address_pairs=pairs, security_group_ids=groups,
                             if_revision=port.revision_number)


def _change(props: Mapping[str, Any], stack: CloudTarget, add: bool, added_pair: bool = True,
            added_group: bool = True) -> dict[str, Any]:
    """Add (or remove) the VIP pair and the group on the member's port; what was added (removed)."""
    where = resolve(props, stack)
    conn = connect(where.cloud, where.region)
    try:
        return edit_port(conn, props, add, added_pair, added_group)
    finally:
        conn.close()


def marked(conn: Any, props: Mapping[str, Any]) -> Optional[str]:
    """The member's port when it carries a tag of this VIP's pair or group (what a killed create added), else None
    (recovery's lookup: ``scripts/recover.py``)."""
    try:
        port = _port(conn, props)
    except Exception as error:
        if http_status(error) == 404 or isinstance(error, PortNotUsable):
            return None
        raise
    tags = set(port.tags or [])
    return port.id if {pair_tag(props["vip_address"]), group_tag(props["group_id"])} & tags else None


def edit_port(conn: Any, props: Mapping[str, Any], add: bool, added_pair: bool = True,
           added_group: bool = True) -> dict[str, Any]:
    """:func:`_change` on ``conn``; removing with ``added_pair``/``added_group`` false removes what the port's tags
    say this endpoint added (recovery's undo of a killed create)."""

    def attempt() -> dict[str, Any]:
        with translated(f"{'adding' if add else 'removing'} VIP {props['vip_address']} on member "
                        f"{props['member']}'s port", CallFailed):
            try:
                port = _port(conn, props)
            except Exception as error:
                if not add and http_status(error) == 404:
                    return {"held_port_id": props.get("held_port_id"), "added_pair": False, "added_group": False}
                raise
            if add and port.is_port_security_enabled is False:
                raise PortNotUsable(f"member {props['member']}'s port {port.id} has port security disabled: Neutron "
                                    "ignores allowed address pairs and security groups there; enable it (openstack "
                                    "port set --enable-port-security) or use another backend")
            pairs = [dict(pair) for pair in port.allowed_address_pairs or []]
            groups = list(port.security_group_ids or [])
            tags = set(port.tags or [])
            marks = {"added_pair": pair_tag(props["vip_address"]), "added_group": group_tag(props["group_id"])}
            has_pair = any(pair.get("ip_address") == props["vip_address"] for pair in pairs)
            has_group = props["group_id"] in groups
            if add:
                # ours: missing (added now), or present with our tag (added by a create that was killed)
                result = {"held_port_id": port.id, "added_pair": not has_pair or marks["added_pair"] in tags,
                          "added_group": not has_group or marks["added_group"] in tags}
                missing = [mark for key, mark in marks.items() if result[key] and mark not in tags]
                for mark in missing:  # the tags first: a write the engine never records is still known as ours
                    conn.network.add_tag(port, mark)
                if missing:
                    port = _port(conn, props)  # each tag moved the port's revision on
                pairs += [] if has_pair else [{"ip_address": props["vip_address"]}]
                groups += [] if has_group else [props["group_id"]]
                changed = not has_pair or not has_group
            else:
                result = {"held_port_id": port.id,
                          "added_pair": (added_pair or marks["added_pair"] in tags) and has_pair,
                          "added_group": (added_group or marks["added_group"] in tags) and has_group}
                if result["added_pair"]:
                    pairs = [pair for pair in pairs if pair.get("ip_address") != props["vip_address"]]
                if result["added_group"]:
                    groups = [group for group in groups if group != props["group_id"]]
                changed = result["added_pair"] or result["added_group"]
            if changed:
                try:
                    _write(conn, port, pairs, groups)
                except Exception as error:
                    if http_status(error) == 412:  # the port changed since it was read: read it again
                        raise TransientFetchError("the port changed while it was written (412)") from error
                    raise
            if not add:  # the tags last: a delete killed before its write is still known as ours
                for mark in marks.values():
                    if mark in tags:
                        conn.network.remove_tag(port, mark)
            return result

    return call_with_retries(attempt, timeout_seconds=WRITE_SECONDS, clock=time.monotonic, sleep=time.sleep)


class MemberVipProvider(StackConfigured, ResourceProvider):
    """The CRUD of :class:`MemberVip` (stateless: every method builds its connection)."""

    serialize_as_secret_always = False

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = any(olds.get(key) != news.get(key) for key in INPUTS)
        return DiffResult(changes=changed, replaces=[], delete_before_replace=False)

    def create(self, props: dict[str, Any]) -> CreateResult:
        outs = _change(props, self.stack, add=True)
        return CreateResult(f"vip-{uuid.uuid4().hex}", {**_inputs(props), **outs})

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        held = olds.get("held_port_id") or olds.get("port_id")
        if all(olds.get(key) == news.get(key) for key in ("vip_address", "group_id")) and \
                news.get("port_id") in (None, held):
            # the same VIP and group (on the same port): never removed and added again, which would make OVN forget
            # the VIP's holder until its next gratuitous ARP; only what is missing is added
            outs = _change(news, self.stack, add=True)
            if outs["held_port_id"] == held:
                outs["added_pair"] = outs["added_pair"] or bool(olds.get("added_pair"))
                outs["added_group"] = outs["added_group"] or bool(olds.get("added_group"))
                return UpdateResult({**_inputs(news), **outs})
        _change(olds, self.stack, add=False, added_pair=bool(olds.get("added_pair")),
                added_group=bool(olds.get("added_group")))
        return UpdateResult({**_inputs(news), **_change(news, self.stack, add=True)})

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        return ReadResult(id_, props)

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        _change(props, self.stack, add=False, added_pair=bool(props.get("added_pair")),
                added_group=bool(props.get("added_group")))


def _inputs(props: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in props.items() if key != "__provider"}


class MemberVip(pulumi.dynamic.Resource, module="haendpoint", name=TYPE_NAME):
    """One member port holding one zone's VIP (see the module). Outputs: ``held_port_id`` (the port found),
    ``added_pair``/``added_group`` (what this resource added, and so removes)."""

    held_port_id: pulumi.Output[str]
    added_pair: pulumi.Output[bool]
    added_group: pulumi.Output[bool]

    def __init__(self, name: str, *, member: str, port_id: pulumi.Input[Optional[str]],
                 address: pulumi.Input[str], network_id: pulumi.Input[str], vip_address: pulumi.Input[str],
                 group_id: pulumi.Input[str], cloud: pulumi.Input[Optional[str]], region: pulumi.Input[Optional[str]],
                 cloud_source: str, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        props = {"member": member, "port_id": port_id, "address": address, "network_id": network_id,
                 "vip_address": vip_address, "group_id": group_id, "cloud": cloud, "region": region,
                 "cloud_source": cloud_source, "held_port_id": None, "added_pair": None, "added_group": None}
        hosted.register(self, MemberVipProvider(), TYPE_NAME, name, props, opts)

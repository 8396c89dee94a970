"""Recover a stack after an update was killed mid-way (lost machine, SIGKILL, CI timeout), leaving no orphan.

A killed `pulumi up` leaves two things behind: the stack's lock (file backends) and "pending creates", resources the
engine had asked the cloud for but never recorded. Re-running `pulumi up` would create those again and orphan the
first copies. This tool:

1. checks the lock first (a lock file of the file backend, a lock object of the s3 backend of STATE=swift): when the
   process that holds it is alive, or runs on another machine, it stops and changes nothing; otherwise it repairs a
   checkpoint file the kill truncated (file backend only, from the CLI's own backup: an S3 object is written whole or
   not at all) and removes the lock;
2. waits until none of the stack's load balancers has been PENDING_* for 5 s (a write the killed update had sent
   lands first), then looks every pending create up in the stack's own cloud (its `openstack:cloud` and `openstack:region`) by name and
   type AND by the stack's identity (ha_endpoint.core.identity: the tag on load balancers, listeners and security groups,
   the description of pools, floating IPs and recordsets; members, monitors, rules and floating IP associations
   through a pool, group or VIP port this stack's state records), and rolls back the one object that is provably
   this stack's: deletes it (a floating IP association is only undone, the address stays), retrying Octavia's 409
   while the LB is PENDING. Objects of the same name that belong to another stack (dev and prod of one project
   share endpoint names) are never touched; an ambiguous match (two objects carrying this stack's identity) is
   reported and left alone, and the recovery stops before clearing the pending creates;
3. clears the pending creates from the state and refreshes the stack.

Nothing recorded depends on a pending create (the engine starts a dependent only after its dependencies are
recorded), so rolling them back is safe; `pulumi up` then creates them again, once. (The CLI's own
`refresh --import-pending-creates` would adopt them instead, but the CLI built here leaves adopted creates out of the
state, so the next update created duplicates: measured by tests/e2e step 7.) Run it as `scripts/stack.sh recover` (STACK=name for another
stack) or `.venv/bin/python scripts/recover.py --stack dev` in an environment from scripts/env.sh.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from xml.etree import ElementTree
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import openstack
import yaml

from ha_endpoint.backends.keepalived import pairs
from ha_endpoint.cloud.connection import connect, translated
from ha_endpoint.cloud.retry import call_with_retries
from ha_endpoint.core import contract
from ha_endpoint.core.identity import StackIdentity

Lookup = Callable[[Any, dict[str, Any], Any], Any]


def pulumi(*args: str, cwd: Path, capture: bool = True) -> str:
    completed = subprocess.run(["pulumi", *args], cwd=cwd, capture_output=capture, text=True,
                               stdin=subprocess.DEVNULL)
    if completed.returncode != 0:
        detail = (completed.stderr or completed.stdout or "").strip() if capture else ""
        raise SystemExit(f"recover: `pulumi {' '.join(args)}` failed ({completed.returncode}): {detail}")
    return completed.stdout if capture else ""


def stale_locks(stack: str, project: str) -> tuple[list[str], list[dict]]:
    """The locks of the stack (file backend: its lock files; s3 backend: its lock objects) whose holder is dead (a
    process of this machine that no longer runs), and the holders that may be alive (on this machine and running, or
    on another machine, which this tool cannot see)."""
    stale, alive = [], []
    for name, holder in lock_holders(stack, project, os.environ.get("PULUMI_BACKEND_URL", "")):
        if holder.get("hostname") == socket.gethostname() and not _alive(int(holder.get("pid", 0))):
            stale.append(name)
        else:
            alive.append(holder)
    return stale, alive


def lock_holders(stack: str, project: str, backend: str) -> list[tuple[str, dict]]:
    """Each lock of the stack in the backend: its file or object name and what it says (pid, username, hostname,
    timestamp), as the CLI's self-managed backend writes them (``.pulumi/locks/organization/<project>/<stack>/``)."""
    where = f".pulumi/locks/organization/{project}/{stack}"
    if backend.startswith("file://"):
        directory = Path(backend[len("file://"):].split("?")[0]) / where
        return [(str(path), json.loads(path.read_text()))
                for path in (sorted(directory.glob("*.json")) if directory.is_dir() else [])]
    if backend.startswith("s3://"):
        bucket = S3Bucket.from_url(backend)
        return [(key, json.loads(bucket.get(key))) for key in bucket.keys(where + "/") if key.endswith(".json")]
    return []


@dataclass
class S3Bucket:
    """The s3:// backend's bucket (``s3://<bucket>[/<prefix>]?endpoint=...&region=...``, path style), read with the
    credentials the CLI uses (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) over AWS Signature Version 4: listing and
    reading lock objects is all this tool does there (removing them is `pulumi cancel`'s)."""

    endpoint: str
    bucket: str
    prefix: str
    region: str

    @classmethod
    def from_url(cls, backend: str) -> "S3Bucket":
        parsed = urllib.parse.urlsplit(backend)
        query = dict(urllib.parse.parse_qsl(parsed.query))
        if not query.get("endpoint"):
            raise SystemExit(f"recover: the backend {backend.split('?')[0]} has no endpoint= option; this tool reads "
                             "the locks of an S3 API given by its endpoint (scripts/env.sh, STATE=swift)")
        return cls(query["endpoint"].rstrip("/"), parsed.netloc, parsed.path.strip("/"),
                   query.get("region") or os.environ.get("AWS_REGION") or "us-east-1")

    def keys(self, prefix: str) -> list[str]:
        """Every key under ``prefix`` (relative to the backend's own prefix)."""
        base = f"{self.prefix}/" if self.prefix else ""
        keys, token = [], None
        while True:
            query = {"list-type": "2", "prefix": base + prefix, **({"continuation-token": token} if token else {})}
            root = ElementTree.fromstring(self._get(f"/{self.bucket}", query))
            ns = {"s3": root.tag.split("}")[0].strip("{")} if root.tag.startswith("{") else {}
            find = (lambda node, tag: node.findall(f"s3:{tag}", ns)) if ns else (lambda node, tag: node.findall(tag))
            keys += [key.text[len(base):] for item in find(root, "Contents") for key in find(item, "Key")]
            more = find(root, "NextContinuationToken")
            if not more or not more[0].text:
                return keys
            token = more[0].text

    def get(self, key: str) -> bytes:
        base = f"{self.prefix}/" if self.prefix else ""
        return self._get(f"/{self.bucket}/{base}{key}", {})

    def _get(self, path: str, query: dict[str, str]) -> bytes:
        access, secret = os.environ.get("AWS_ACCESS_KEY_ID", ""), os.environ.get("AWS_SECRET_ACCESS_KEY", "")
        if not access or not secret:
            raise SystemExit("recover: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are needed to read the s3 "
                             "backend's locks (scripts/env.sh sets them for STATE=swift)")
        now = time.gmtime()
        stamp, day = time.strftime("%Y%m%dT%H%M%SZ", now), time.strftime("%Y%m%d", now)
        host = urllib.parse.urlsplit(self.endpoint).netloc
        quote = lambda value, safe="-_.~": urllib.parse.quote(value, safe=safe)  # noqa: E731
        canonical_query = "&".join(f"{quote(k)}={quote(v)}" for k, v in sorted(query.items()))
        payload = hashlib.sha256(b"").hexdigest()
        headers = {"host": host, "x-amz-content-sha256": payload, "x-amz-date": stamp}
        signed = ";".join(sorted(headers))
        canonical = "\n".join(["GET", quote(path, "/-_.~"), canonical_query,
                               "".join(f"{k}:{headers[k]}\n" for k in sorted(headers)), signed, payload])
        scope = f"{day}/{self.region}/s3/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
        key = f"AWS4{secret}".encode()
        for part in (day, self.region, "s3", "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        request = urllib.request.Request(
            self.endpoint + quote(path, "/-_.~") + (f"?{canonical_query}" if canonical_query else ""),
            headers={"x-amz-content-sha256": payload, "x-amz-date": stamp, "Authorization":
                     f"AWS4-HMAC-SHA256 Credential={access}/{scope}, SignedHeaders={signed}, Signature={signature}"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.read()
        except urllib.error.HTTPError as exc:
            raise SystemExit(f"recover: GET {self.endpoint}{path} answered {exc.code}: "
                             f"{exc.read()[:300].decode(errors='replace')}") from None
        except OSError as exc:
            raise SystemExit(f"recover: the s3 backend at {self.endpoint} cannot be reached ({exc}); its locks "
                             "cannot be checked: try again once it answers") from None


def repair_checkpoint(stack: str, project: str, backend: str | None = None) -> list[str]:
    """A file backend written by a process killed mid-write can hold a truncated checkpoint or an empty `.attrs`
    sidecar (the CLI then says "failed to load checkpoint: EOF"). Drop a broken sidecar (it holds only metadata) and
    put back the previous checkpoint (`.bak`, kept by the CLI) when the current one does not parse. ``backend``: the
    backend URL (default: PULUMI_BACKEND_URL)."""
    backend = os.environ.get("PULUMI_BACKEND_URL", "") if backend is None else backend
    if not backend.startswith("file://"):
        return []
    checkpoint = Path(backend[len("file://"):].split("?")[0]) / ".pulumi/stacks" / project / f"{stack}.json"
    repaired = []
    if checkpoint.exists() and not _parses(checkpoint) and _parses(checkpoint.with_name(checkpoint.name + ".bak")):
        checkpoint.rename(checkpoint.with_name(checkpoint.name + ".broken"))
        checkpoint.with_name(checkpoint.name + ".bak").replace(checkpoint)
        repaired.append(f"{checkpoint.name} was truncated: restored the previous checkpoint (.bak)")
    for sidecar in (checkpoint.with_name(checkpoint.name + ".attrs"), checkpoint.with_name(checkpoint.name + ".bak.attrs")):
        if sidecar.exists() and not _parses(sidecar):
            sidecar.unlink()
            repaired.append(f"{sidecar.name} was truncated: removed it (metadata only)")
    return repaired


def _parses(path: Path) -> bool:
    try:
        json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return True


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class Found:
    """What the cloud holds for one pending create: the matches that are provably this stack's (``ours``), and how
    many objects matched by name and type but belong to someone else or cannot be proven ours (``foreign``)."""

    ours: list[str] = field(default_factory=list)
    foreign: int = 0


@dataclass(frozen=True)
class Ours:
    """What proves an object is this stack's: its identity (tags, descriptions) and the ids this stack's state
    records (a member or monitor is ours only through a pool the state holds; a rule through its group)."""

    identity: StackIdentity
    ids: frozenset
    vip_ports: frozenset

    def records(self, ident: str) -> bool:
        """Whether the state records the object a lookup found: its id, or for the objects found through their
        parent (``pool/member``, ``zone/recordset``) the child's own id or the composite id the provider records.
        Such an object is live as far as the stack knows, so recovery never deletes it, whatever the names say."""
        return ident in self.ids or ident.rsplit("/", 1)[-1] in self.ids


def _split(candidates: list, mine: Callable[[Any], bool]) -> Found:
    ours = [item.id for item in candidates if mine(item)]
    return Found(ours, len(candidates) - len(ours))


def _tagged(listing: Callable[[Any], Callable[..., Any]]) -> Lookup:
    """Load balancers, listeners, security groups: by name, carrying this stack's identity tag."""
    def find(conn, inputs, ours: Ours) -> Found:
        name = inputs.get("name")
        if not name:
            return Found()
        return _split(list(listing(conn)(name=name)), lambda item: ours.identity.owns_tags(item.tags))
    return find


def _described(listing: Callable[[Any], Callable[..., Any]], key: str = "name") -> Lookup:
    """Pools, floating IPs: by name (or description), the description naming this stack and this resource."""
    def find(conn, inputs, ours: Ours) -> Found:
        value, name = inputs.get(key), inputs.get("__name")
        if not value:
            return Found()
        return _split(list(listing(conn)(**{key: value})),
                      lambda item: ours.identity.owns_description(item.description, name))
    return find


def _monitor(conn, inputs, ours: Ours) -> Found:
    pool, name = inputs.get("poolId"), inputs.get("name")
    if not pool or not name:
        return Found()
    candidates = list(conn.load_balancer.health_monitors(name=name))
    return _split(candidates, lambda monitor: pool in ours.ids and
                  any(item.get("id") == pool for item in (monitor.pools or [])))


def _member(conn, inputs, ours: Ours) -> Found:
    pool, name, address = inputs.get("poolId"), inputs.get("name"), inputs.get("address")
    if not pool or not name:
        return Found()
    if pool not in ours.ids:  # a pool this stack's state does not hold is not ours, whatever its members are called
        return Found([], len(list(conn.load_balancer.members(pool, name=name))))
    found = _split(list(conn.load_balancer.members(pool, name=name)), lambda member: member.address == address)
    return Found([f"{pool}/{member}" for member in found.ours], found.foreign)


def _floating_ip_association(conn, inputs, ours: Ours) -> Found:
    address, port = inputs.get("floatingIp"), inputs.get("portId")
    if not address:
        return Found()
    return _split(list(conn.network.ips(floating_ip_address=address)),
                  lambda ip: ip.port_id == port and port in ours.vip_ports)


def _security_group_rule(conn, inputs, ours: Ours) -> Found:
    group = inputs.get("securityGroupId")
    if not group:
        return Found()
    wanted = (inputs.get("direction"), inputs.get("protocol"), inputs.get("portRangeMin"), inputs.get("portRangeMax"),
              inputs.get("remoteIpPrefix"))
    same = [rule for rule in conn.network.security_group_rules(security_group_id=group)
            if (rule.direction, rule.protocol, rule.port_range_min, rule.port_range_max,
                rule.remote_ip_prefix) == wanted]
    return _split(same, lambda rule: group in ours.ids)


def _member_vip(conn, inputs, ours: Ours) -> Found:
    """A keepalived member port holding a zone's VIP: ours when its tags say this endpoint added the VIP's pair or
    its VRRP group, and the group is one this stack's state records (``ha_endpoint.backends.keepalived.pairs``). The
    id names the port, the VIP and the group, which the undo removes from it."""
    group, vip = inputs.get("group_id"), inputs.get("vip_address")
    if not group or not vip or group not in ours.ids:
        return Found()
    port = pairs.marked(conn, {**inputs, "member": inputs.get("__name")})
    return Found([f"{port}|{vip}|{group}"]) if port else Found()  # not "/": that names a child (Ours.records)


def _undo_member_vip(conn, ident: str) -> None:
    port, vip, group = ident.split("|")
    pairs.edit_port(conn, {"member": port, "port_id": port, "vip_address": vip, "group_id": group}, add=False,
                 added_pair=False, added_group=False)


def _recordset(conn, inputs, ours: Ours) -> Found:
    zone, name, kind = inputs.get("zoneId"), inputs.get("name"), inputs.get("type") or "A"
    if not zone or not name:
        return Found()
    same = [rs for rs in conn.dns.recordsets(zone, name=name) if rs.type == kind]
    found = _split(same, lambda rs: ours.identity.owns_description(rs.description, inputs.get("__name")))
    return Found([f"{zone}/{item}" for item in found.ours], found.foreign)


def retrying(action: Callable[[], Any], timeout: float = 180) -> None:
    """Run a rollback under the project's one retry policy (ha_endpoint.cloud.retry): Octavia objects in PENDING_* answer
    409 to every write, so wait for them; an object already gone (404) needs nothing more."""
    def attempt() -> None:
        with translated("rolling back"):
            try:
                action()
            except openstack.exceptions.NotFoundException:
                return
    call_with_retries(attempt, timeout_seconds=timeout, clock=time.monotonic, sleep=time.sleep)


def _delete_member(conn, ident):
    pool, member = ident.split("/", 1)
    conn.load_balancer.delete_member(member, pool)


def _delete_recordset(conn, ident):
    zone, recordset = ident.split("/", 1)
    conn.dns.delete_recordset(recordset, zone)


ROLLBACKS: dict[str, tuple[Lookup, Callable[[Any, str], Any]]] = {
    "openstack:loadbalancer/loadBalancer:LoadBalancer": (
        _tagged(lambda conn: conn.load_balancer.load_balancers),
        lambda conn, ident: conn.load_balancer.delete_load_balancer(ident, cascade=True)),
    "openstack:loadbalancer/listener:Listener": (
        _tagged(lambda conn: conn.load_balancer.listeners), lambda conn, ident: conn.load_balancer.delete_listener(ident)),
    "openstack:loadbalancer/pool:Pool": (
        _described(lambda conn: conn.load_balancer.pools), lambda conn, ident: conn.load_balancer.delete_pool(ident)),
    "openstack:loadbalancer/monitor:Monitor": (
        _monitor, lambda conn, ident: conn.load_balancer.delete_health_monitor(ident)),
    "openstack:loadbalancer/member:Member": (_member, _delete_member),
    "openstack:networking/floatingIp:FloatingIp": (
        _described(lambda conn: conn.network.ips, key="description"), lambda conn, ident: conn.network.delete_ip(ident)),
    "openstack:networking/floatingIpAssociate:FloatingIpAssociate": (
        _floating_ip_association, lambda conn, ident: conn.network.update_ip(ident, port_id=None)),
    "openstack:networking/secGroup:SecGroup": (
        _tagged(lambda conn: conn.network.security_groups),
        lambda conn, ident: conn.network.delete_security_group(ident)),
    "openstack:networking/secGroupRule:SecGroupRule": (
        _security_group_rule, lambda conn, ident: conn.network.delete_security_group_rule(ident)),
    "openstack:dns/recordSet:RecordSet": (_recordset, _delete_recordset),
    **{kind: (_member_vip, _undo_member_vip) for kind in (contract.dynamic_type(pairs.TYPE_NAME),
                                                           contract.hosted_type(pairs.TYPE_NAME))},
}
# Resources whose creation leaves nothing to undo: an added port security group is added again, idempotently, by the
# next update; the waits (readiness, drains, put-backs) hold no cloud object, whether a Python program registered
# them or the package's provider host served them to a YAML or TypeScript one.
NOTHING_TO_UNDO = ("openstack:networking/portSecGroupAssociate:PortSecGroupAssociate", contract.LEGACY_DYNAMIC_TYPE,
                   *(kind for name in contract.WAITS for kind in (contract.dynamic_type(name),
                                                                  contract.hosted_type(name))))


def ours_in(deployment: dict, identity: StackIdentity) -> Ours:
    """What this stack's state proves is its own: the ids it records, and its load balancers' VIP ports."""
    resources = deployment.get("resources") or []
    ids = frozenset(r["id"] for r in resources if r.get("id"))
    vip_ports = frozenset((r.get("outputs") or {}).get("vipPortId") for r in resources
                          if r.get("type") == contract.LOADBALANCER_TYPE) - {None}
    return Ours(identity, ids, vip_ports)


QUIET_SECONDS = 5.0   # how long this stack's load balancers stay out of PENDING_* before the cloud is looked at


def settle(conn, identity: StackIdentity, timeout: float = 180, quiet: float = QUIET_SECONDS,
           clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> list[str]:
    """Let the writes the killed update had already sent land before looking: wait until none of this stack's load
    balancers has been PENDING_* for ``quiet`` seconds in a row. A listener or member POST in flight when the update
    was killed makes its load balancer PENDING_UPDATE, then an object the lookup finds; looked up too early, it was
    missed, and the next `up` met Octavia's 409 for a duplicate listener (a CI run). Returns the names still pending
    at ``timeout`` (the lookup then goes on, and says so)."""
    deadline, calm_since = clock() + timeout, None
    while True:
        pending = sorted(lb.name for lb in conn.load_balancer.load_balancers(tags=identity.tag)
                         if str(lb.provisioning_status).startswith("PENDING"))
        now = clock()
        calm_since = None if pending else (now if calm_since is None else calm_since)
        if calm_since is not None and now - calm_since >= quiet:
            return []
        if now >= deadline:
            return pending
        sleep(1.0)


def roll_back(conn, pending: list[dict], ours: Ours) -> tuple[list[str], list[str], list[str]]:
    """Undo every pending create found in the cloud and proven this stack's: (what was undone, types this tool cannot
    look up, what it left alone: ambiguous or someone else's)."""
    undone, unknown, left = [], [], []
    for operation in pending:
        if operation.get("type") != "creating":
            continue
        resource = operation["resource"]
        urn, kind = resource["urn"], resource["type"]
        name = urn.rsplit("::", 1)[1]
        if kind in NOTHING_TO_UNDO:
            continue
        if kind not in ROLLBACKS:
            unknown.append(urn)
            continue
        lookup, undo = ROLLBACKS[kind]
        found = lookup(conn, {**(resource.get("inputs") or {}), "__name": name}, ours)
        recorded = [ident for ident in found.ours if ours.records(ident)]
        if recorded:  # a replacement's create shares the live object's name: the state's own object is never undone
            found = Found([ident for ident in found.ours if ident not in recorded], found.foreign)
            print(f"recover: {name}: {', '.join(recorded)} carries its name but is recorded in the state (live): "
                  "left alone")
        if len(found.ours) == 1:
            retrying(lambda: undo(conn, found.ours[0]))
            undone.append(f"{name} ({found.ours[0]})")
        elif len(found.ours) > 1:
            left.append(f"{name}: {len(found.ours)} objects match it and carry this stack's identity "
                        f"({', '.join(found.ours)}); none was deleted: delete the extra one by hand")
        elif found.foreign:
            print(f"recover: {name} never reached the cloud ({found.foreign} object(s) of that name and type belong to "
                  "another stack or cannot be proven this stack's: left alone)")
        else:
            print(f"recover: {name} never reached the cloud")
    return undone, unknown, left


def stack_cloud(stack: str, cwd: Path) -> tuple[Optional[str], Optional[str]]:
    """The stack's own cloud and region (``openstack:cloud``/``openstack:region``), as its default provider uses."""
    values = json.loads(pulumi("config", "--json", "--stack", stack, cwd=cwd) or "{}")
    return ((values.get("openstack:cloud") or {}).get("value"), (values.get("openstack:region") or {}).get("value"))


def project_name(cwd: Path) -> str:
    """The Pulumi project's name, from `cwd`/Pulumi.yaml (the file backend keeps each project's stacks apart)."""
    return yaml.safe_load((cwd / "Pulumi.yaml").read_text())["name"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default=os.environ.get("STACK", "dev"))
    parser.add_argument("--cwd", default=str(Path(__file__).resolve().parents[1]), help="the project directory")
    parser.add_argument("--dry-run", action="store_true", help="say what would be done, change nothing")
    options = parser.parse_args()
    cwd = Path(options.cwd)
    project = project_name(cwd)
    stale, alive = stale_locks(options.stack, project)
    if alive:  # checked before anything is touched, the checkpoint included: a live update is never interrupted
        raise SystemExit(f"recover: stack {options.stack} is locked by an update that may be live ({alive}): wait for it "
                         "to end; a holder on another machine cannot be checked from here: once you know that run is "
                         f"gone (a lost CI runner), `pulumi cancel --yes --stack {options.stack}` removes its lock, "
                         "then run this again (docs/team-state.md)")
    for repair in ([] if options.dry_run else repair_checkpoint(options.stack, project)):
        print(f"recover: {repair}")
    if stale and not options.dry_run:
        pulumi("cancel", "--yes", "--stack", options.stack, cwd=cwd)
    print(f"recover: {len(stale)} stale lock(s) removed" if stale else "recover: no stale lock")
    deployment = json.loads(pulumi("stack", "export", "--stack", options.stack, cwd=cwd))["deployment"]
    pending = deployment.get("pending_operations") or []
    creating = [op for op in pending if op.get("type") == "creating"]
    if options.dry_run:
        for operation in creating:
            print(f"recover: would roll back {operation['resource']['urn'].rsplit('::', 1)[1]} if it exists and is "
                  "this stack's")
        return
    cloud, region = stack_cloud(options.stack, cwd)
    print(f"recover: looking in cloud {cloud or os.environ.get('OS_CLOUD') or '(OS_* variables)'}"
          f"{f', region {region}' if region else ''} for stack {project}/{options.stack}'s unrecorded creations")
    conn = connect(cloud, region)
    identity = StackIdentity(project, options.stack)
    still = settle(conn, identity) if creating else []
    if still:
        print(f"recover: warning: load balancer(s) {', '.join(still)} still PENDING after 180 s; looking anyway",
              file=sys.stderr)
    undone, unknown, left = roll_back(conn, creating, ours_in(deployment, identity))
    for what in undone:
        print(f"recover: rolled back {what}: created before the interruption, never recorded")
    for urn in unknown:
        print(f"recover: warning: {urn} has a type this tool cannot look up; check the cloud for an orphan",
              file=sys.stderr)
    for what in left:
        print(f"recover: warning: {what}", file=sys.stderr)
    if left:
        raise SystemExit("recover: ambiguous matches left alone (see above); the state still lists them as pending")
    if creating:
        pulumi("refresh", "--yes", "--non-interactive", "--skip-preview", "--clear-pending-creates",
               "--stack", options.stack, cwd=cwd)
    print(f"recover: stack {options.stack} is consistent again ({len(creating)} interrupted creation(s)): "
          "run `pulumi up` (make up) to finish the update")


if __name__ == "__main__":
    main()

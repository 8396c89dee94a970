"""Recover a stack after an update was killed mid-way (lost machine, SIGKILL, CI timeout), leaving no orphan.

A killed `pulumi up` leaves two things behind: the stack's lock (file backends) and "pending creates", resources the
engine had asked the cloud for but never recorded. Re-running `pulumi up` would create those again and orphan the
first copies. This tool:

1. removes the lock, but only when the process that holds it is gone (same host, PID not alive): a running update
   is never interrupted; a checkpoint file the kill truncated is repaired from the CLI's own backup;
2. looks every pending create up in the cloud by what the component names it (its `name`, or its `description`,
   or, for associations and rules, the objects they join) and rolls back the ones that exist: deletes the object
   (a floating IP association is only undone, the address stays), retrying Octavia's 409 while the LB is PENDING;
3. clears the pending creates from the state and refreshes the stack.

Nothing recorded depends on a pending create (the engine starts a dependent only after its dependencies are
recorded), so rolling them back is safe; `pulumi up` then creates them again, once. (The CLI's own
`refresh --import-pending-creates` would adopt them instead, but the CLI built here leaves adopted creates out of the
state, so the next update created duplicates: measured by tests/e2e step 7.) Run it as `scripts/stack.sh recover` (STACK=name for another
stack) or `.venv/bin/python scripts/recover.py --stack dev` in an environment from scripts/env.sh.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional

import openstack

Lookup = Callable[[Any, dict[str, Any]], Optional[str]]


def pulumi(*args: str, cwd: Path, capture: bool = True) -> str:
    completed = subprocess.run(["pulumi", *args], cwd=cwd, capture_output=capture, text=True,
                               stdin=subprocess.DEVNULL)
    if completed.returncode != 0:
        detail = (completed.stderr or completed.stdout or "").strip() if capture else ""
        raise SystemExit(f"recover: `pulumi {' '.join(args)}` failed ({completed.returncode}): {detail}")
    return completed.stdout if capture else ""


def stale_locks(stack: str, project: str) -> tuple[list[Path], list[dict]]:
    """The lock files of a file backend whose holder is dead, and the holders still alive."""
    backend = os.environ.get("PULUMI_BACKEND_URL", "")
    if not backend.startswith("file://"):
        return [], []
    directory = Path(backend[len("file://"):].split("?")[0]) / ".pulumi/locks/organization" / project / stack
    stale, alive = [], []
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        holder = json.loads(path.read_text())
        if holder.get("hostname") == socket.gethostname() and not _alive(int(holder.get("pid", 0))):
            stale.append(path)
        else:
            alive.append(holder)
    return stale, alive


def repair_checkpoint(stack: str, project: str) -> list[str]:
    """A file backend written by a process killed mid-write can hold a truncated checkpoint or an empty `.attrs`
    sidecar (the CLI then says "failed to load checkpoint: EOF"). Drop a broken sidecar (it holds only metadata) and
    put back the previous checkpoint (`.bak`, kept by the CLI) when the current one does not parse."""
    backend = os.environ.get("PULUMI_BACKEND_URL", "")
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


def _by_name(listing: str) -> Lookup:
    def find(conn, inputs):
        name = inputs.get("name")
        matches = [item.id for item in getattr(conn.load_balancer, listing)(name=name)] if name else []
        return matches[0] if len(matches) == 1 else None
    return find


def _member(conn, inputs):
    pool, name = inputs.get("poolId"), inputs.get("name")
    matches = [m.id for m in conn.load_balancer.members(pool, name=name)] if pool and name else []
    return f"{pool}/{matches[0]}" if len(matches) == 1 else None


def _floating_ip(conn, inputs):
    description = inputs.get("description")
    matches = [ip.id for ip in conn.network.ips(description=description)] if description else []
    return matches[0] if len(matches) == 1 else None


def _floating_ip_association(conn, inputs):
    address, port = inputs.get("floatingIp"), inputs.get("portId")
    matches = [ip.id for ip in conn.network.ips(floating_ip_address=address) if ip.port_id == port] if address else []
    return matches[0] if len(matches) == 1 else None


def _security_group(conn, inputs):
    matches = [group.id for group in conn.network.security_groups(name=inputs.get("name"))]
    return matches[0] if len(matches) == 1 else None


def _security_group_rule(conn, inputs):
    group = inputs.get("securityGroupId")
    if not group:
        return None
    wanted = (inputs.get("direction"), inputs.get("protocol"), inputs.get("portRangeMin"), inputs.get("portRangeMax"),
              inputs.get("remoteIpPrefix"))
    matches = [rule.id for rule in conn.network.security_group_rules(security_group_id=group)
               if (rule.direction, rule.protocol, rule.port_range_min, rule.port_range_max,
                   rule.remote_ip_prefix) == wanted]
    return matches[0] if len(matches) == 1 else None


def _recordset(conn, inputs):
    zone, name = inputs.get("zoneId"), inputs.get("name")
    matches = [rs.id for rs in conn.dns.recordsets(zone, name=name)] if zone and name else []
    return f"{zone}/{matches[0]}" if len(matches) == 1 else None


def _retry_conflicts(action: Callable[[], Any], timeout: float = 180) -> None:
    """Octavia objects in PENDING_* answer 409 to every write: wait for them, never give up early on a 409."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            action()
            return
        except openstack.exceptions.NotFoundException:
            return
        except openstack.exceptions.ConflictException:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def _delete_member(conn, ident):
    pool, member = ident.split("/", 1)
    conn.load_balancer.delete_member(member, pool)


def _delete_recordset(conn, ident):
    zone, recordset = ident.split("/", 1)
    conn.dns.delete_recordset(recordset, zone)


ROLLBACKS: dict[str, tuple[Lookup, Callable[[Any, str], Any]]] = {
    "openstack:loadbalancer/loadBalancer:LoadBalancer": (
        _by_name("load_balancers"), lambda conn, ident: conn.load_balancer.delete_load_balancer(ident, cascade=True)),
    "openstack:loadbalancer/listener:Listener": (
        _by_name("listeners"), lambda conn, ident: conn.load_balancer.delete_listener(ident)),
    "openstack:loadbalancer/pool:Pool": (_by_name("pools"), lambda conn, ident: conn.load_balancer.delete_pool(ident)),
    "openstack:loadbalancer/monitor:Monitor": (
        _by_name("health_monitors"), lambda conn, ident: conn.load_balancer.delete_health_monitor(ident)),
    "openstack:loadbalancer/member:Member": (_member, _delete_member),
    "openstack:networking/floatingIp:FloatingIp": (_floating_ip, lambda conn, ident: conn.network.delete_ip(ident)),
    "openstack:networking/floatingIpAssociate:FloatingIpAssociate": (
        _floating_ip_association, lambda conn, ident: conn.network.update_ip(ident, port_id=None)),
    "openstack:networking/secGroup:SecGroup": (
        _security_group, lambda conn, ident: conn.network.delete_security_group(ident)),
    "openstack:networking/secGroupRule:SecGroupRule": (
        _security_group_rule, lambda conn, ident: conn.network.delete_security_group_rule(ident)),
    "openstack:dns/recordSet:RecordSet": (_recordset, _delete_recordset),
}
# Resources whose creation leaves nothing to undo: an added port security group is added again, idempotently, by the
# next update; the readiness and drain resources hold no cloud object.
NOTHING_TO_UNDO = ("openstack:networking/portSecGroupAssociate:PortSecGroupAssociate", "pulumi-python:dynamic:Resource")


def roll_back(conn, pending: list[dict]) -> tuple[list[str], list[str]]:
    """Undo every pending create found in the cloud; (what was undone, types this tool cannot look up)."""
    undone, unknown = [], []
    for operation in pending:
        if operation.get("type") != "creating":
            continue
        resource = operation["resource"]
        urn, kind = resource["urn"], resource["type"]
        if kind in NOTHING_TO_UNDO:
            continue
        if kind not in ROLLBACKS:
            unknown.append(urn)
            continue
        lookup, undo = ROLLBACKS[kind]
        found = lookup(conn, resource.get("inputs") or {})
        if found:
            _retry_conflicts(lambda: undo(conn, found))
            undone.append(f"{urn.rsplit('::', 1)[1]} ({found})")
        else:
            print(f"recover: {urn.rsplit('::', 1)[1]} never reached the cloud")
    return undone, unknown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default=os.environ.get("STACK", "dev"))
    parser.add_argument("--cwd", default=str(Path(__file__).resolve().parents[1]), help="the project directory")
    parser.add_argument("--dry-run", action="store_true", help="say what would be done, change nothing")
    options = parser.parse_args()
    cwd = Path(options.cwd)
    project = "ha-endpoint"
    for repair in ([] if options.dry_run else repair_checkpoint(options.stack, project)):
        print(f"recover: {repair}")
    stale, alive = stale_locks(options.stack, project)
    if alive:
        raise SystemExit(f"recover: stack {options.stack} is locked by a live update ({alive}); wait for it to end")
    if stale and not options.dry_run:
        pulumi("cancel", "--yes", "--stack", options.stack, cwd=cwd)
    print(f"recover: {len(stale)} stale lock(s) removed" if stale else "recover: no stale lock")
    deployment = json.loads(pulumi("stack", "export", "--stack", options.stack, cwd=cwd))["deployment"]
    pending = deployment.get("pending_operations") or []
    conn = openstack.connect(cloud=os.environ.get("OS_CLOUD"))
    creating = [op for op in pending if op.get("type") == "creating"]
    if options.dry_run:
        for operation in creating:
            print(f"recover: would roll back {operation['resource']['urn'].rsplit('::', 1)[1]} if it exists")
        return
    undone, unknown = roll_back(conn, creating)
    for what in undone:
        print(f"recover: rolled back {what}: created before the interruption, never recorded")
    for urn in unknown:
        print(f"recover: warning: {urn} has a type this tool cannot look up; check the cloud for an orphan",
              file=sys.stderr)
    if creating:
        pulumi("refresh", "--yes", "--non-interactive", "--skip-preview", "--clear-pending-creates",
               "--stack", options.stack, cwd=cwd)
    print(f"recover: stack {options.stack} is consistent again ({len(creating)} interrupted creation(s)): "
          "run `pulumi up` (make up) to finish the update")


if __name__ == "__main__":
    main()

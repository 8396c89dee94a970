"""Recover a stack after an update was killed mid-way (lost machine, SIGKILL, CI timeout), leaving no orphan.

A killed `pulumi up` leaves two things behind: the stack's lock (file backends) and "pending creates", resources the
engine had asked the cloud for but never recorded. Re-running `pulumi up` would create those again and orphan the
first copies. This tool:

1. removes the lock, but only when the process that holds it is gone (same host, PID not alive): a running update
   is never interrupted;
2. looks every pending create up in the cloud by what the component names it (its `name`, or its `description`,
   or, for associations and rules, the objects they join) and imports the ones that exist;
3. clears the pending creates that never reached the cloud (and the readiness/drain resources, which hold no cloud
   object), then refreshes the stack.

After it, `pulumi up` finishes the interrupted update. Run it as `scripts/stack.sh recover` (STACK=name for another
stack) or `.venv/bin/python scripts/recover.py --stack dev` in an environment from scripts/env.sh.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
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


def _port_security_groups(conn, inputs):
    port = inputs.get("portId")
    return port if port and conn.network.find_port(port) else None


def _recordset(conn, inputs):
    zone, name = inputs.get("zoneId"), inputs.get("name")
    matches = [rs.id for rs in conn.dns.recordsets(zone, name=name)] if zone and name else []
    return f"{zone}/{matches[0]}" if len(matches) == 1 else None


LOOKUPS: dict[str, Lookup] = {
    "openstack:loadbalancer/loadBalancer:LoadBalancer": _by_name("load_balancers"),
    "openstack:loadbalancer/listener:Listener": _by_name("listeners"),
    "openstack:loadbalancer/pool:Pool": _by_name("pools"),
    "openstack:loadbalancer/monitor:Monitor": _by_name("health_monitors"),
    "openstack:loadbalancer/member:Member": _member,
    "openstack:networking/floatingIp:FloatingIp": _floating_ip,
    "openstack:networking/floatingIpAssociate:FloatingIpAssociate": _floating_ip_association,
    "openstack:networking/secGroup:SecGroup": _security_group,
    "openstack:networking/secGroupRule:SecGroupRule": _security_group_rule,
    "openstack:networking/portSecGroupAssociate:PortSecGroupAssociate": _port_security_groups,
    "openstack:dns/recordSet:RecordSet": _recordset,
}
NO_CLOUD_OBJECT = ("pulumi-python:dynamic:Resource",)


def plan_recovery(conn, pending: list[dict]) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """(imports as (urn, id), creates to clear, creates whose cloud object could not be identified)."""
    imports, cleared, unknown = [], [], []
    for operation in pending:
        if operation.get("type") != "creating":
            continue
        resource = operation["resource"]
        urn, kind = resource["urn"], resource["type"]
        lookup = LOOKUPS.get(kind)
        found = lookup(conn, resource.get("inputs") or {}) if lookup else None
        if found:
            imports.append((urn, found))
        else:
            cleared.append(urn)
            if kind not in NO_CLOUD_OBJECT and lookup is None:
                unknown.append(urn)
    return imports, cleared, unknown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default=os.environ.get("STACK", "dev"))
    parser.add_argument("--cwd", default=str(Path(__file__).resolve().parents[1]), help="the project directory")
    parser.add_argument("--dry-run", action="store_true", help="say what would be done, change nothing")
    options = parser.parse_args()
    cwd = Path(options.cwd)
    project = "ha-endpoint"
    stale, alive = stale_locks(options.stack, project)
    if alive:
        raise SystemExit(f"recover: stack {options.stack} is locked by a live update ({alive}); wait for it to end")
    if stale and not options.dry_run:
        pulumi("cancel", "--yes", "--stack", options.stack, cwd=cwd)
    print(f"recover: {len(stale)} stale lock(s) removed" if stale else "recover: no stale lock")
    deployment = json.loads(pulumi("stack", "export", "--stack", options.stack, cwd=cwd))["deployment"]
    pending = deployment.get("pending_operations") or []
    conn = openstack.connect(cloud=os.environ.get("OS_CLOUD"))
    imports, cleared, unknown = plan_recovery(conn, pending)
    for urn, ident in imports:
        print(f"recover: adopting {urn.rsplit('::', 1)[1]} = {ident} (created before the interruption)")
    for urn in cleared:
        print(f"recover: dropping {urn.rsplit('::', 1)[1]} (never reached the cloud, or holds no cloud object)")
    for urn in unknown:
        print(f"recover: warning: {urn} has a type this tool cannot look up; check the cloud for an orphan",
              file=sys.stderr)
    if options.dry_run or not pending:
        return
    arguments = ["refresh", "--yes", "--non-interactive", "--skip-preview", "--stack", options.stack]
    for urn, ident in imports:
        arguments += ["--import-pending-creates", urn, "--import-pending-creates", ident]
    if cleared:
        arguments.append("--clear-pending-creates")
    pulumi(*arguments, cwd=cwd)
    print(f"recover: stack {options.stack} is consistent again: run `pulumi up` (make up) to finish the update")


if __name__ == "__main__":
    main()

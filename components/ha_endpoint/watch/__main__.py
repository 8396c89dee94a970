"""``python -m ha_endpoint.watch --outputs <file or ->``: keep an endpoint's A record following its zones' health.

The outputs are the endpoint stack's (``pulumi stack output --json``: ``fqdn``, ``zones``); the cloud is the
standard environment's (``OS_CLOUD``/clouds.yaml, or ``--cloud``/``--region``). ``make watch`` runs it for the dev
stack in the foreground; Ctrl-C (SIGINT) or SIGTERM stops it between two polls. Exit status: 0 when stopped, 2 when
the outputs or the record do not prove to be one endpoint's (nothing is written then).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from typing import Any, Optional, Sequence

from ..cloud.connection import connect
from ..core.errors import HaEndpointError
from ..core.identity import StackIdentity
from ..readiness.cloud import OctaviaStatusSource
from .decide import Thresholds
from .observe import ZoneTarget, tcp_reach
from .records import EndpointRecord, owner_of
from .watcher import Watcher


def targets_of(outputs: dict[str, Any]) -> list[ZoneTarget]:
    """One target per zone of the stack's ``zones`` output."""
    zones = outputs.get("zones")
    if not isinstance(zones, dict) or not zones or not outputs.get("fqdn"):
        raise HaEndpointError("the outputs have no fqdn or no zones: give the endpoint stack's `pulumi stack output "
                              "--json` (a stack with dns configured)")
    found = []
    for zone, out in sorted(zones.items()):
        found.append(ZoneTarget(zone, out["loadbalancerId"], {str(port): pool for port, pool in out["poolIds"].items()},
                                out.get("floatingIp") or out.get("vipAddress")))
    return found


def parse(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m ha_endpoint.watch", description=__doc__.split("\n\n")[0])
    parser.add_argument("--outputs", required=True, help="the endpoint stack's outputs as JSON: a file, or - for stdin")
    parser.add_argument("--stack", help="project/stack the endpoint must belong to (e.g. ha-endpoint/dev)")
    parser.add_argument("--interval", type=float, default=5.0, help="seconds between polls (default 5)")
    parser.add_argument("--unhealthy-polls", type=int, default=3, help="unhealthy polls in a row before a zone "
                        "leaves DNS (default 3)")
    parser.add_argument("--healthy-polls", type=int, default=3, help="healthy polls in a row before it comes back "
                        "(default 3)")
    parser.add_argument("--no-reach", action="store_true", help="judge by Octavia only: do not connect to the zones' "
                        "addresses (for a watcher on a network that does not reach them)")
    parser.add_argument("--connect-timeout", type=float, default=2.0, help="seconds a connect may take (default 2)")
    parser.add_argument("--dry-run", action="store_true", help="log what would change, write nothing")
    parser.add_argument("--once", action="store_true", help="one poll, then exit")
    parser.add_argument("--cloud", help="clouds.yaml entry (default: OS_CLOUD)")
    parser.add_argument("--region", help="region (default: the entry's)")
    return parser.parse_args(argv)


def log(line: str) -> None:
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}", flush=True)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse(argv)
    try:
        if args.outputs == "-":
            outputs = json.load(sys.stdin)
        else:
            with open(args.outputs) as file:
                outputs = json.load(file)
        targets = targets_of(outputs)
        expected = StackIdentity(*args.stack.split("/", 1)) if args.stack else None
        conn = connect(args.cloud, args.region)
        owner = owner_of(((t.zone, conn.load_balancer.get_load_balancer(t.load_balancer_id)) for t in targets),
                         expected)
        watcher = Watcher(targets, OctaviaStatusSource(args.cloud, args.region),
                          EndpointRecord(conn, outputs["fqdn"], owner),
                          Thresholds(args.unhealthy_polls, args.healthy_polls),
                          None if args.no_reach else tcp_reach(args.connect_timeout), dry_run=args.dry_run, log=log)
    except (HaEndpointError, ValueError, KeyError, OSError) as error:
        print(f"ha_endpoint.watch: {error}", file=sys.stderr)
        return 2
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        if args.once:
            watcher.poll()
        else:
            watcher.run(stop, args.interval)
    except HaEndpointError as error:  # the record stopped being the endpoint's, or the cloud refuses the watcher
        print(f"ha_endpoint.watch: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``python -m ha_endpoint.watch --outputs <file or ->``: keep an endpoint's A record following its zones' health.

The outputs are the endpoint stack's (``pulumi stack output --json``: ``fqdn``, ``zones``); the cloud is the
standard environment's (``OS_CLOUD``/clouds.yaml, or ``--cloud``/``--region``). ``make watch`` runs it for the dev
stack in the foreground; Ctrl-C (SIGINT) or SIGTERM stops it between two polls. Exit status: 0 when stopped, 2 when
the outputs or the record do not prove to be one endpoint's (nothing is written then).

The program is an entry point above every layer (tests/unit/test_layers.py): what each zone of the outputs is, what
proves its owner and what it is polled through, the zone's backend says (:mod:`ha_endpoint.backends.watching`); the
loop, the verdicts and the record are the watch layer's.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Iterator, Mapping, Optional, Sequence

import openstack.exceptions

from ..backends.plugin import Backend
from ..backends.watching import status_source, zones_of
from ..cloud.connection import connect
from ..core.errors import HaEndpointError
from ..core.identity import StackIdentity
from ..core.outputs import ZoneOutputs
from .decide import Thresholds
from .inputs import cannot_run, parse, read_outputs, stop_on_signals
from .observe import tcp_reach
from .records import EndpointRecord, owner_of
from .watcher import Watcher


def log(line: str) -> None:
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}", flush=True)


def existing_load_balancers(conn: Any, backend: Backend, zones: Mapping[str, ZoneOutputs]) -> Iterator[tuple[str, Any]]:
    """(zone, load balancer) for each zone whose load balancer (or the object its backend proves the owner with, e.g. a
    VIP port) exists. A zone whose load balancer is gone (404: deleted out of band, the very outage the watcher is
    for) proves nothing about the record's owner and is skipped here; the watcher's polls find it unhealthy. A
    watcher restarted during that outage must start."""
    for az, zone in zones.items():
        owner_id = backend.watched.owner_id(zone)
        try:
            yield az, backend.watched.owner_object(conn, owner_id)
        except openstack.exceptions.NotFoundException:
            log(f"zone {az}: {backend.watched.owner_kind} {owner_id} is gone (the owner is proven by the other "
                "zones'; this zone counts as unhealthy)")


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse(argv)
    try:
        outputs = read_outputs(args.outputs)
        if not isinstance(outputs, dict) or not outputs.get("fqdn"):
            raise HaEndpointError("the outputs have no fqdn: the watcher keeps the endpoint's A record; give the "
                                  "endpoint stack's `pulumi stack output --json` (a stack with dns configured)")
        backend, zones = zones_of(outputs)
        expected = StackIdentity(*args.stack.split("/", 1)) if args.stack else None
        conn = connect(args.cloud, args.region)
        owner = owner_of(existing_load_balancers(conn, backend, zones), expected,
                         lambda az: f"-{az}-{backend.watched.owner_suffix}", backend.watched.owner_kind)
        watcher = Watcher(zones, status_source(backend, outputs.get("ports"), args.cloud, args.region,
                                               not args.no_reach),
                          EndpointRecord(conn, outputs["fqdn"], owner),
                          Thresholds(args.unhealthy_polls, args.healthy_polls),
                          None if args.no_reach else tcp_reach(args.connect_timeout), dry_run=args.dry_run, log=log,
                          kind=backend.watched.owner_kind)
    except (HaEndpointError, ValueError, KeyError, OSError) as error:
        return cannot_run("ha_endpoint.watch", error)
    stop = stop_on_signals()
    try:
        if args.once:
            watcher.poll()
        else:
            watcher.run(stop, args.interval)
    except HaEndpointError as error:  # the record stopped being the endpoint's, or the cloud refuses the watcher
        return cannot_run("ha_endpoint.watch", error)
    return 0


if __name__ == "__main__":
    sys.exit(main())

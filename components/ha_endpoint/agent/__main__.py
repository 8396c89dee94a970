"""``python -m ha_endpoint.agent --outputs <file> --cluster <name> [--namespace ns]``: keep an endpoint's members
following a Cluster API cluster's control-plane Machines (docs/agent.md), written through the member client of the
endpoint's backend (``--backend``, default the ``backend`` key's: :attr:`ha_endpoint.backends.plugin.Backend.agent`,
asked of the registry here, at the top).

Three threads besides the loop: the Machines' list and watch (:class:`~.kube.MachineCache`), the Lease
(:class:`~.lease.LeaseElector`), the metrics and probes server. The loop reconciles on every change the watch
reports and every ``--interval`` seconds, faster while a change of the pools is pending
(:meth:`~.reconcile.Reconciler.next_pass_in`). SIGTERM or SIGINT stops it between two passes and hands the Lease over.
Exit status: 0 when stopped, 2 when the arguments or the outputs are refused.
"""

from __future__ import annotations

import socket
import sys
import threading
import time
from typing import Optional, Sequence

from pydantic import ValidationError

from ..backends import REGISTRY
from ..backends.watching import zones_of
from ..core.errors import HaEndpointError
from ..watch.inputs import cannot_run, read_outputs, stop_on_signals
from .dns import AgentRecord
from .inputs import member_subnets, parse, published_addresses, served_zones
from .kube import KubernetesMachines, MachineCache
from .lease import KubernetesLease, LeaseElector
from .machines import MachineSource
from .reconcile import AgentSettings, Reconciler
from .report import Metrics, serve


def log(line: str) -> None:
    """A line with its UTC time to the millisecond (the rollout bench reads each Machine's steps from it)."""
    now = time.time()
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(now))}.{int(now % 1 * 1000):03d}Z {line}", flush=True)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse(argv)
    backend = REGISTRY.get(args.backend)
    if backend is None or backend.agent is None:
        served = ", ".join(sorted(name for name, each in REGISTRY.items() if each.agent is not None))
        what = f"the {args.backend} backend has no pools the agent writes members into" if backend is not None \
            else f"no backend is registered as {args.backend!r}"
        return cannot_run("ha_endpoint.agent", f"--backend: {what}; the agent serves endpoints of {served}: give the "
                          "endpoint's backend (its `backend` key)")
    try:
        outputs = read_outputs(args.outputs)
        source = MachineSource(cluster=args.cluster, namespace=args.namespace, addressType=args.address_type,
                               readyCondition=args.ready_condition)
        served_by, read = zones_of(outputs)
        zones = served_zones(read, served_by.name, backend.name)
        settings = AgentSettings(source, zones, member_subnets(zones, args.member_subnet), dict(args.member_port),
                                 args.drain, args.hook_warn_after)
    except ValidationError as error:
        problems = "; ".join(f"--{'-'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors())
        return cannot_run("ha_endpoint.agent", problems)
    except (HaEndpointError, ValueError, KeyError, OSError) as error:
        return cannot_run("ha_endpoint.agent", error)
    stop = stop_on_signals()
    try:
        kube = KubernetesMachines(source.namespace, source.label_selector, args.kubeconfig)
    except Exception as error:  # no in-cluster service account and no usable kubeconfig
        return cannot_run("ha_endpoint.agent", f"the management cluster: {error}; run it in the cluster (its "
                          "ServiceAccount) or give --kubeconfig")
    lease = LeaseElector(KubernetesLease(args.lease, source.namespace), args.identity or socket.gethostname(),
                         args.lease_seconds, time.time, log)
    cache = MachineCache(kube, log)
    metrics = Metrics()
    cloud = backend.agent.client(args.cloud, args.region, clock=time.monotonic, sleep=time.sleep)
    addresses = published_addresses(outputs, settings.zones)
    record = AgentRecord(outputs["fqdn"], {az: backend.watched.owner_id(zone) for az, zone in settings.zones.items()},
                         addresses, cloud) if addresses else None
    reconciler = Reconciler(settings, cloud, kube, cache, metrics, time.time, lease.leading, log, record)
    last_pass = [time.monotonic()]
    stale_after = 3 * args.interval + cloud.call_timeout * 2
    server = serve(metrics, live=lambda: time.monotonic() - last_pass[0] < stale_after,
                   ready=lambda: cache.synced, host=args.listen, port=args.port) if args.port else None

    def elect() -> None:
        while not stop.is_set():
            lease.try_acquire_or_renew()
            stop.wait(max(1.0, args.lease_seconds / 5))

    threading.Thread(target=cache.run, args=(stop,), daemon=True, name="machines").start()
    threading.Thread(target=elect, daemon=True, name="lease").start()
    log(f"agent for cluster {source.namespace}/{source.cluster} ({source.label_selector}), zones "
        f"{', '.join(settings.zones)}; metrics on {args.listen}:{args.port}")
    while not stop.is_set():
        last_pass[0] = time.monotonic()
        reconciler.reconcile()
        cache.changed.wait(reconciler.next_pass_in(args.interval))
        cache.changed.clear()
    lease.release()
    if server is not None:
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())

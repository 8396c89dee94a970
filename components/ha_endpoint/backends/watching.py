"""The DNS watcher's and the member agent's questions to the registered backends: which backend owns each zone of an
endpoint's outputs, what the watcher keeps of the outputs (its Secret), the zones it polls and the agent writes into,
how it watches them (the object that proves the owner, the client it polls through), and the calls its scoped
credential allows. Each backend answers for its own zones (:class:`ha_endpoint.backends.plugin.Watched`);
``python -m ha_endpoint.watch``, ``python -m ha_endpoint.agent`` and :class:`ha_endpoint.kubernetes.WatcherDeployment`
ask here.

A zone belongs to the first registered backend that owns it (:attr:`Watched.owns`); what the watcher keeps of a zone
no backend owns is what it keeps of the default backend's.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from ..cloud.access_rules import Call, record_calls, split_record_id
from ..core.args import DEFAULT_BACKEND
from ..core.errors import HaEndpointError
from ..core.outputs import ZoneOutputs
from . import REGISTRY
from .plugin import Backend


def _watching() -> list[Backend]:
    """The registered backends whose zones the watcher watches, in the registry's order."""
    return [backend for backend in REGISTRY.values() if backend.watched is not None]


def _zone(out: object) -> Mapping[str, Any]:
    return out if isinstance(out, Mapping) else {}


def owner(out: object) -> Optional[Backend]:
    """The backend that owns a zone of the ``zones`` output, or None."""
    return next((backend for backend in _watching() if backend.watched.owns(_zone(out))), None)


def zones_of(outputs: Mapping[str, Any]) -> tuple[Backend, dict[str, ZoneOutputs]]:
    """The endpoint's zones by AZ, each read from the stack's ``zones`` output, and the backend that serves them (one
    per endpoint): what the DNS watcher polls and the member agent writes members into."""
    zones = outputs.get("zones") if isinstance(outputs, Mapping) else None
    if not isinstance(zones, dict) or not zones:
        raise HaEndpointError("the outputs have no zones: give the endpoint stack's `pulumi stack output --json`")
    owners: dict[str, Backend] = {}
    for az, out in sorted(zones.items()):
        backend = owner(out)
        if backend is None:
            shapes = " nor ".join(each.watched.shape for each in _watching())
            raise HaEndpointError(f"zone {az} of the outputs has neither {shapes}: give the endpoint stack's "
                                  "`pulumi stack output --json`")
        owners[az] = backend
    names = sorted({backend.name for backend in owners.values()})
    if len(names) != 1:
        raise HaEndpointError(f"the outputs' zones are served by {len(names)} backends ({', '.join(names)}): give "
                              "one endpoint's `pulumi stack output --json`")
    backend = next(iter(owners.values()))
    if backend.watched.reads_ports and not outputs.get("ports"):
        raise HaEndpointError(f"the outputs have no ports, which the {backend.name} backend's zones are watched on: "
                              "give the endpoint stack's `pulumi stack output --json`")
    return backend, {az: ZoneOutputs.of(_zone(zones[az])) for az in owners}


def watched_outputs(fqdn: str, zones: dict[str, Any], ports: Optional[list] = None) -> dict[str, Any]:
    """The outputs the watcher reads, from the stack's ``fqdn``, ``zones`` and ``ports``: ``fqdn``, per zone the keys
    its backend reads (:attr:`Watched.keys`; the default backend's for a zone no backend owns) and, when a zone's
    backend reads them, ``ports``; what changes at every run (``ready``, ``published``, the gate, a zone's member
    configuration) left out. An endpoint's are what they were before its backend said them here: its watcher's Secret
    is unchanged."""
    default = REGISTRY[DEFAULT_BACKEND]
    backends = {az: owner(out) or default for az, out in (zones or {}).items()}
    kept = {az: {key: _zone(out).get(key) for key in backends[az].watched.keys}
            for az, out in sorted((zones or {}).items())}
    with_ports = any(backend.watched.reads_ports for backend in backends.values())
    return {"fqdn": fqdn, "zones": kept, **({"ports": sorted(ports or [])} if with_ports else {})}


def status_source(backend: Backend, ports: Optional[Sequence[int]], cloud: Optional[str], region: Optional[str],
                  reach: bool) -> Any:
    """The client the watcher polls ``backend``'s zones through (``ports``: the endpoint's ``ports`` output): its
    watcher's own (:attr:`Watched.status_source`), else its member client, the one its gates poll through
    (:attr:`Backend.status_source`)."""
    if backend.watched.status_source is not None:
        return backend.watched.status_source(cloud, region, reach, [int(port) for port in ports or ()])
    if backend.status_source is None:
        raise HaEndpointError(f"the {backend.name} backend gives the DNS watcher no client to poll its zones through")
    return backend.status_source(cloud, region)


def watcher_calls_of(zones: Optional[Mapping[str, Any]], record_id: Optional[str]) -> list[Call]:
    """The watcher's calls on the endpoint's ``zones`` (each backend names what it reads of its own) and on its A
    record ``record_id`` (``<zone id>/<recordset id>``; None when unknown)."""
    mine: dict[str, dict[str, Any]] = {}
    for az, out in (zones or {}).items():
        backend = owner(out)
        if backend is not None:
            mine.setdefault(backend.name, {})[az] = out
    reads = [call for backend in _watching() for call in backend.watched.reads(mine.get(backend.name, {}))]
    return reads + record_calls(*split_record_id(record_id))

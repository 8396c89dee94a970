"""The watcher's loop: poll every zone, decide, write the record when the published set changes, log one line per
action; stop cleanly between polls when asked.

The published set starts as what the record holds (the zones whose address is in it), so a watcher started after
an `up` agrees with the gates. The record is shared: the member agent takes a zone out of it before its only member
leaves (docs/agent.md), and ``pulumi up`` publishes the ready zones. So a write changes only the zones of this
poll's actions, on the record as it is now (read again first): the watcher never puts back a zone it did not take out
itself, nor takes out one it did not decide on, and never writes an empty record. Writes go through :class:`~ha_endpoint.watch.records.EndpointRecord`, which proves the
record is the endpoint's before every write; under ``dry_run`` nothing is written and each action is logged as what
would be done.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Mapping, Optional, Sequence

from ..core.outputs import ZoneOutputs
from .decide import Action, Streak, Thresholds, decide, record_addresses
from .observe import Reach, zone_health
from .records import NotTheEndpoints


class Watcher:
    """Polls ``zones`` (by AZ) through ``source`` (their backend's client) and keeps ``record`` following their
    health; ``kind`` names what each zone's "load balancer" is in the log (its backend's ``Watched.owner_kind``)."""

    def __init__(self, zones: Mapping[str, ZoneOutputs], source, record, thresholds: Thresholds,
                 reach: Optional[Reach], dry_run: bool = False, log: Callable[[str], None] = print,
                 clock: Callable[[], float] = time.time, kind: str = "load balancer"):
        self.zones, self.source, self.record = dict(zones), source, record
        self.thresholds, self.reach, self.dry_run, self.log, self.clock = thresholds, reach, dry_run, log, clock
        self.kind = kind
        self.addresses: Mapping[str, Optional[str]] = {az: zone.address for az, zone in self.zones.items()}
        self.streaks: dict[str, Streak] = {az: Streak() for az in self.zones}
        held = set(record.addresses())
        self.published = frozenset(zone for zone, address in self.addresses.items() if address in held)
        self.log(f"watching {record.fqdn}: zones {', '.join(sorted(self.addresses))}; published now: "
                 f"{', '.join(sorted(self.published)) or 'none'}{' (dry run: nothing is written)' if dry_run else ''}")

    def poll(self) -> list[Action]:
        """One round: every zone polled once, then one decision (and at most one write)."""
        for az, zone in self.zones.items():
            health = zone_health(self.source, zone, self.reach, self.kind)
            if health is None:
                continue
            before = self.thresholds.stably(self.streaks[az])
            self.streaks[az] = self.streaks[az].after(health)
            now = self.thresholds.stably(self.streaks[az])
            if now != before and now is not None:
                state = "healthy" if health.healthy else "unhealthy"
                self.log(f"zone {az} is stably {state}: {health.reason}")
        following, actions = decide(self.published, self.streaks, self.addresses, self.thresholds)
        for action in actions:
            self.log(("would be " if self.dry_run and action.kind != "fail-open" else "") + action.line())
        if following != self.published:
            if not self.dry_run:
                try:
                    addresses = self._changed(actions)
                    if addresses is not None:
                        self.record.write(addresses)
                        self.log(f"{self.record.fqdn} A {' '.join(addresses)}")
                except NotTheEndpoints:
                    raise
                except Exception as error:  # noqa: BLE001 (a cloud fault: reported, and the next poll tries again)
                    self.log(f"writing {self.record.fqdn} failed ({type(error).__name__}: {error}); the next poll "
                             f"decides again")
                    return actions
            self.published = following
        return actions

    def _changed(self, actions: Sequence[Action]) -> Optional[list[str]]:
        """The record's addresses once this poll's ``remove`` and ``restore`` actions are applied to what it holds
        now; None when it holds them already, or when they would leave it empty (failing open, as :func:`decide`)."""
        held = self.record.addresses()
        gone = record_addresses(frozenset(a.zone for a in actions if a.kind == "remove"), self.addresses)
        back = record_addresses(frozenset(a.zone for a in actions if a.kind == "restore"), self.addresses)
        following = sorted((set(held) - set(gone)) | set(back))
        if not following:
            self.log(f"keeping {self.record.fqdn} A {' '.join(held)}: the change would leave it empty (failing open)")
        return following if following and following != sorted(held) else None

    def run(self, stop: threading.Event, interval: float) -> None:
        """Poll every ``interval`` seconds until ``stop`` is set (checked between polls and while waiting)."""
        while not stop.is_set():
            started = self.clock()
            self.poll()
            stop.wait(max(0.0, interval - (self.clock() - started)))
        self.log("stopped")

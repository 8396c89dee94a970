"""The watcher's rules: when a zone counts as stably unhealthy or healthy, and what the published set becomes.

Pure: no cloud, no clock. A zone's polls form streaks; a zone is *stably unhealthy* after ``unhealthy_polls``
unhealthy polls in a row and *stably healthy* after ``healthy_polls`` healthy ones (one poll of the other kind
restarts the count, so a flapping zone moves nothing). Each decision:

- a published zone that is stably unhealthy is removed;
- an unpublished zone that is stably healthy and has an address is restored;
- **fail-open**: a decision that would leave no zone published removes nothing (as Route 53's multivalue answers
  with every record when every record is unhealthy): clients then still try every address, and the first zone to
  recover serves them, where an empty answer would fail every client at once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, Mapping, Optional


@dataclass(frozen=True)
class Health:
    """One poll of one zone: healthy or not, and why (printed in the watcher's log)."""

    healthy: bool
    reason: str


@dataclass(frozen=True)
class Streak:
    """A zone's run of polls of one kind: ``healthy`` polls in a row (``count`` of them); ``last`` is the newest."""

    healthy: Optional[bool] = None
    count: int = 0
    last: Optional[Health] = None

    def after(self, health: Health) -> "Streak":
        """The streak once ``health`` is polled."""
        if health.healthy == self.healthy:
            return replace(self, count=self.count + 1, last=health)
        return Streak(health.healthy, 1, health)


@dataclass(frozen=True)
class Thresholds:
    """How many polls in a row make a zone stably unhealthy or healthy (at least 1 each)."""

    unhealthy_polls: int = 3
    healthy_polls: int = 3

    def __post_init__(self) -> None:
        if self.unhealthy_polls < 1 or self.healthy_polls < 1:
            raise ValueError(f"unhealthy_polls and healthy_polls must be at least 1 (got {self.unhealthy_polls}, "
                             f"{self.healthy_polls})")

    def stably(self, streak: Streak) -> Optional[bool]:
        """True when stably healthy, False when stably unhealthy, None while not yet stable either way."""
        if streak.healthy is None:
            return None
        return streak.healthy if streak.count >= (self.healthy_polls if streak.healthy else self.unhealthy_polls) \
            else None


@dataclass(frozen=True)
class Action:
    """One change (or refusal) the watcher logs: ``remove`` and ``restore`` change the record, ``fail-open`` keeps
    zones that the rules would remove because nothing would be left."""

    kind: Literal["remove", "restore", "fail-open"]
    zone: str
    reason: str

    def line(self) -> str:
        verb = {"remove": "removing", "restore": "restoring", "fail-open": "keeping"}[self.kind]
        why = " (every published zone is unhealthy: failing open)" if self.kind == "fail-open" else ""
        return f"{verb} zone {self.zone}: {self.reason}{why}"


def decide(published: frozenset[str], streaks: Mapping[str, Streak], addresses: Mapping[str, Optional[str]],
           thresholds: Thresholds) -> tuple[frozenset[str], list[Action]]:
    """The zones to publish next and the actions that lead there, from the ``published`` zones, each zone's
    ``streaks`` and its ``addresses`` (a zone without an address is never restored)."""
    def reason(zone: str) -> str:
        last = streaks[zone].last
        return last.reason if last else "no poll yet"

    leaving = sorted(zone for zone in published if zone in streaks and thresholds.stably(streaks[zone]) is False)
    coming = sorted(zone for zone, streak in streaks.items()
                    if zone not in published and addresses.get(zone) and thresholds.stably(streak) is True)
    following = (published - set(leaving)) | set(coming)
    if not following and published:
        return published, [Action("fail-open", zone, reason(zone)) for zone in leaving]
    return frozenset(following), [*(Action("remove", zone, reason(zone)) for zone in leaving),
                                  *(Action("restore", zone, reason(zone)) for zone in coming)]


def record_addresses(published: frozenset[str], addresses: Mapping[str, Optional[str]]) -> list[str]:
    """The A record's addresses for the ``published`` zones, sorted (the component publishes them sorted too)."""
    return sorted({address for zone in published if (address := addresses.get(zone))})

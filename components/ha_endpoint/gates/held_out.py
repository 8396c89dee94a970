"""Keeping a member drained admin down out of its load balancer's backends (the ovn provider): the one rule a member
set's drain and a MemberDrain both follow.

The ovn provider (ovn-octavia-provider 3.1.2, which ignores the weight:
:func:`ha_endpoint.core.predicates.drains_admin_down`) takes an admin-down member out of the OVN load balancer's
backends and reports it OFFLINE. OVN then drops the member's health check, and the provider reads that as the member
failing: it writes ERROR over the OFFLINE (0.3-3 s later on the local cloud; Octavia may list the two in either
order), and its next rewrite of the backends (another member's drain, create or delete) keeps every member that is not
OFFLINE: the drained member is back. The same drain once more, once that ERROR is in, makes the member OFFLINE again
without touching the backends (it is already out: OVN changes nothing and reports nothing more), so later rewrites
leave it out. One CI run still saw a drained member taken back for ~2 s some 20 s after its drain (likeliest cause:
the provider's API process and its agent each rewrite the member-status map from what they last read). So, through its
grace, a drained member is watched:

- listed OFFLINE, then anything else (the provider's ERROR, or the member back and ONLINE): drained again;
- not drained again yet :data:`OVERWRITTEN_WITHIN` seconds after its drain: drained again (the ERROR may have been
  listed before the OFFLINE, or not at all);
- listed other than OFFLINE and never OFFLINE since its last drain, that long after it: drained again.

A member gone, being deleted, or with a write pending is left alone until the next look.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Union

from ..cloud.poll import NOT_YET, Signal, poll
from .model import DELETING, LiveMember

OVERWRITTEN_WITHIN = 5.0
"""Seconds after a drain by which the ovn provider has put its ERROR over it (seen 0.3-3 s on the local cloud)."""
POLL = 1.0
"""Seconds between two looks at the pool's listing while drained members are watched."""
OFFLINE = "OFFLINE"


@dataclass
class Watch:
    """One drained member's watch: when it was last drained, whether Octavia listed it OFFLINE since, and how often it
    was drained again."""

    member_id: str
    drained_at: float
    offline_seen: bool = False
    redrains: int = 0

    def look(self, listed: Optional[LiveMember], now: float) -> Optional[str]:
        """One look at the member as Octavia lists it now (``listed``; ``None``: gone): records an OFFLINE, and says
        why the member must be drained again now (the module's rule), or ``None``."""
        if listed is None or listed.provisioning_status in DELETING or listed.provisioning_status.startswith(
                "PENDING_"):
            return None
        since = now - self.drained_at
        if listed.operating_status == OFFLINE:
            self.offline_seen = True
            if self.redrains == 0 and since >= OVERWRITTEN_WITHIN:
                return (f"listed OFFLINE {since:.1f} s after its drain: drained once more, as the provider may hold "
                        "ERROR for it unlisted")
            return None
        if self.offline_seen:
            return f"listed {listed.operating_status} after OFFLINE: the provider overwrote its drain or took it back"
        if since >= OVERWRITTEN_WITHIN:
            return f"listed {listed.operating_status}, not OFFLINE, {since:.1f} s after its drain"
        return None

    def drained_again(self, now: float) -> None:
        self.drained_at, self.offline_seen, self.redrains = now, False, self.redrains + 1


def hold_out(watches: Iterable[Watch], listing: Callable[[], list[LiveMember]],
             drain_again: Callable[[Watch, str], None], *, until: float, clock: Callable[[], float],
             sleep: Callable[[float], None], until_drained_again: bool = False) -> None:
    """Look at the pool's listing every :data:`POLL` seconds until ``until`` and drain again (``drain_again``: one
    write, applied before it returns) every watched member the rule says; with ``until_drained_again``, stop as soon
    as every watched member still listed was drained again once (a member taken out: :mod:`.drain`)."""
    watches = list(watches)

    def look() -> Union[None, Signal]:
        listed = {m.member_id: m for m in listing()}
        for watch in watches:
            reason = watch.look(listed.get(watch.member_id), clock())
            if reason:
                drain_again(watch, reason)
                watch.drained_again(clock())
        present = [w for w in watches if w.member_id in listed
                   and listed[w.member_id].provisioning_status not in DELETING]
        return None if until_drained_again and all(w.redrains for w in present) else NOT_YET

    poll(look, deadline=until, clock=clock, sleep=sleep, delays=itertools.repeat(POLL), on_deadline=lambda: None)

"""What the cloud really holds, read back with openstacksdk and DNS: the ground truth of the end-to-end tests."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from localcloud.dns import query as dns_query


def resolve_a(fqdn: str) -> set[str]:
    """The A records the local cloud's DNS server (named, Designate's backend; what a client resolves) answers for
    ``fqdn`` (empty when the name does not exist)."""
    return dns_query.resolve_a(fqdn)


def loadbalancers_named(conn, prefix: str) -> list[Any]:
    return [lb for lb in conn.load_balancer.load_balancers() if (lb.name or "").startswith(prefix)]


def pools_of(conn, loadbalancer_id: str) -> list[Any]:
    """The load balancer's pools, listed by its id: a listing of every pool of the project converts other tests'
    pools too, and Octavia answers it with 500 when one of them is deleted meanwhile."""
    return list(conn.load_balancer.pools(loadbalancer_id=loadbalancer_id))


def fewest_online(conn, loadbalancer_id: str) -> int:
    """The fewest members provisioned ACTIVE and ONLINE in any pool of the load balancer (0 when it has no pool), from
    Octavia's status tree: one request, where a listing of the pools and of each pool's members takes one per pool and
    the pools' listing returns every pool of the project (a sampler at 0.2 s cost the cloud 0.7 of a core that way)."""
    tree = conn.load_balancer.get(f"/lbaas/loadbalancers/{loadbalancer_id}/status").json()["statuses"]["loadbalancer"]
    counts = [sum(1 for member in pool.get("members", ()) if member["provisioning_status"] == "ACTIVE"
                  and member["operating_status"] == "ONLINE")
              for listener in tree.get("listeners", ()) for pool in listener.get("pools", ())]
    return min(counts, default=0)


def online_members_by_pool(conn, loadbalancer_id: str) -> dict[str, int]:
    """For each pool of the LB, how many of its members are provisioned ACTIVE and ONLINE."""
    counts = {}
    for pool in pools_of(conn, loadbalancer_id):
        members = conn.load_balancer.members(pool.id)
        counts[pool.id] = sum(1 for member in members if member.provisioning_status == "ACTIVE"
                              and member.operating_status == "ONLINE")
    return counts


def recordset_addresses(conn, zone_name: str, fqdn: str) -> set[str]:
    """The records of the A recordset ``fqdn`` as Designate's API holds them (empty when there is none)."""
    zone = conn.dns.find_zone(zone_name, ignore_missing=False)
    for recordset in conn.dns.recordsets(zone, name=fqdn):
        if recordset.type == "A":
            return set(recordset.records)
    return set()


def published(conn, fqdn: str, zone_name: str = "example.test.") -> set[str]:
    """The A record ``fqdn`` as Designate holds it, once the cloud's DNS server answers the same (waited for up to
    30 s: named follows Designate within a few seconds)."""
    from localcloud.testing import eventually

    held = recordset_addresses(conn, zone_name, fqdn)
    eventually("named answers what Designate holds", lambda: resolve_a(fqdn) == held, 30, 0.25)
    return held


class Sampling:
    """A background loop for a dataclass with ``interval``, ``samples`` and ``errors`` fields and a ``sample()``
    method: ``with sampler:`` appends a sample every ``interval`` seconds until the block ends; a sample that fails is
    recorded in ``errors``, not hidden."""

    def __post_init__(self):
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.samples.append(self.sample())
            except Exception as error:  # noqa: BLE001 (recorded, not hidden)
                self.errors.append(repr(error))
            self._stop.wait(self.interval)


@dataclass
class RolloutSample:
    at: float
    online_by_zone: dict[str, int]
    published_zones: set[str]


@dataclass
class RolloutSampler(Sampling):
    """Samples, every ``interval`` seconds while an update runs, the fewest ONLINE members of any pool per zone (of
    its best load balancer while two carry its name) and the zones whose address DNS publishes. Zones are found by LB
    name (``<endpoint>-<az>-lb``)."""

    conn: Any
    endpoint: str
    zones: Iterable[str]
    dns_zone: str
    fqdn: str
    address_zone: dict[str, str]
    interval: float = 0.4
    samples: list[RolloutSample] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def sample(self) -> RolloutSample:
        # one listing of the load balancers, then each zone's status tree: a sample takes about 0.25 s of the
        # cloud's CPU, so at 0.4 s it comes as often as the former per-pool listings did at 0.2 s (0.7 s apart on a
        # quiet machine) for half the cloud's CPU (lab/bench/sampler_figures.py)
        zone_of = {f"{self.endpoint}-{zone}-lb": zone for zone in self.zones}
        online = {zone: 0 for zone in self.zones}
        for lb in self.conn.load_balancer.load_balancers():
            zone = zone_of.get(lb.name)
            if zone is not None:  # a zone serves through the load balancer whose every pool has the most ONLINE
                # members (during a replacement, the old one until the new one is ready)
                online[zone] = max(online[zone], fewest_online(self.conn, lb.id))
        published = {self.address_zone.get(address, address)
                     for address in recordset_addresses(self.conn, self.dns_zone, self.fqdn)}
        return RolloutSample(time.monotonic(), online, published)

    def min_online(self, zone: str) -> int:
        return min(sample.online_by_zone[zone] for sample in self.samples)

    def published_without_online(self) -> list[RolloutSample]:
        """Samples in which DNS published a zone that had a pool with no ONLINE member."""
        return [sample for sample in self.samples
                if any(sample.online_by_zone.get(zone, 0) == 0 for zone in sample.published_zones)]


@dataclass
class NameSampler(Sampling):
    """Resolves ``names`` at the cloud's DNS server (named) every ``interval`` seconds while an update runs: the DNS a
    client would have seen, to tell whether a name ever stopped answering (a query named did not answer is an
    error, never "no address": ``localcloud.dns.query.resolve_a``)."""

    names: Iterable[str]
    interval: float = 0.1
    samples: list[tuple[float, dict[str, set[str]]]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def __post_init__(self):
        self.names = tuple(self.names)
        super().__post_init__()

    def sample(self) -> tuple[float, dict[str, set[str]]]:
        return time.monotonic(), {name: resolve_a(name) for name in self.names}

    def unanswered(self, *names: str) -> list[float]:
        """The times (seconds since the first sample) at which none of ``names`` (default: all) resolved."""
        names = names or self.names
        start = self.samples[0][0] if self.samples else 0.0
        return [round(at - start, 2) for at, answers in self.samples if not any(answers[name] for name in names)]

    def first_answer(self, name: str) -> float | None:
        return next((at for at, answers in self.samples if answers[name]), None)

    def last_answer(self, name: str) -> float | None:
        return next((at for at, answers in reversed(self.samples) if answers[name]), None)


SERVING_PROVISIONING = ("ACTIVE", "PENDING_UPDATE")
"""A member being updated keeps serving meanwhile."""


@dataclass(frozen=True)
class Listed:
    """One member as one pool listing showed it."""

    member_id: str
    name: str
    address: str
    provisioning_status: str
    operating_status: str
    weight: int
    admin_state_up: bool = True

    @property
    def serving(self) -> bool:
        """ONLINE, provisioned (or being updated) and given a share of new connections (weight above 0, admin
        state up)."""
        return (self.operating_status == "ONLINE" and self.weight > 0 and self.admin_state_up
                and self.provisioning_status in SERVING_PROVISIONING)


@dataclass
class PoolSample:
    at: float
    members: dict[str, dict[str, Listed]]
    """Pool key -> member id -> the member as listed."""
    listed_at: dict[str, float]
    """Pool key -> when its listing was answered."""
    record: Optional[set[str]]
    """The addresses the cloud's DNS server answered for the sampler's name (None: no name given)."""


@dataclass
class PoolSampler(Sampling):
    """Lists the members of ``pools`` (a key, e.g. the zone, -> pool id; one listing per pool) every ``interval``
    seconds while an update runs and, given ``fqdn``, what the cloud's DNS server answers for it: the fewest members
    serving per pool, the members that left and whether they were drained (weight 0) first and for how long, and
    whether the record ever named a zone whose pool served nothing."""

    conn: Any
    pools: dict[str, str]
    fqdn: Optional[str] = None
    interval: float = 0.5
    samples: list[PoolSample] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def sample(self) -> PoolSample:
        at, members, listed_at = time.monotonic(), {}, {}
        for key, pool_id in self.pools.items():
            members[key] = {m.id: Listed(m.id, m.name or "", m.address, m.provisioning_status, m.operating_status,
                                         m.weight if m.weight is not None else 1, m.is_admin_state_up is not False)
                            for m in self.conn.load_balancer.members(pool_id)}
            listed_at[key] = time.monotonic()
        return PoolSample(at, members, listed_at, resolve_a(self.fqdn) if self.fqdn else None)

    def floor(self) -> dict[str, int]:
        """Pool key -> the fewest serving members one listing showed."""
        return {key: min(sum(m.serving for m in sample.members[key].values()) for sample in self.samples)
                for key in self.pools}

    def gone(self, key: str) -> dict[str, Listed]:
        """The members of pool ``key`` some listing showed and the last one did not: id -> as last listed."""
        last = self.samples[-1].members[key]
        return {member_id: member for sample in self.samples for member_id, member in sample.members[key].items()
                if member_id not in last}

    def drained(self, key: str) -> dict[str, Optional[float]]:
        """For each member that left pool ``key``, by address: the seconds between the first listing that showed it
        at weight 0 and the first listing that no longer showed it (None: never listed at weight 0 before it went)."""
        found: dict[str, Optional[float]] = {}
        for member_id, member in self.gone(key).items():
            listed = [sample.listed_at[key] for sample in self.samples if member_id in sample.members[key]]
            at_zero = [sample.listed_at[key] for sample in self.samples
                       if member_id in sample.members[key] and sample.members[key][member_id].weight == 0]
            went = min(sample.listed_at[key] for sample in self.samples if sample.listed_at[key] > max(listed))
            found[member.address] = (went - min(at_zero)) if at_zero else None
        return found

    def drain_applied(self, key: str) -> dict[str, float]:
        """For each member of pool ``key`` some listing showed drained as the ovn provider's drains leave it (weight
        0, admin state down) with Octavia done applying it (provisioning ACTIVE), by address: the first such
        listing's time (``time.monotonic()``)."""
        found: dict[str, float] = {}
        for sample in self.samples:
            for member in sample.members[key].values():
                if (member.weight == 0 and not member.admin_state_up
                        and member.provisioning_status == "ACTIVE" and member.address not in found):
                    found[member.address] = sample.listed_at[key]
        return found

    def admin_down_applied(self, key: str) -> dict[str, float]:
        """For each member of pool ``key`` some listing showed administratively down, whatever its weight (a member
        the configuration takes out: ``enabled: false``), with Octavia done applying it (provisioning ACTIVE), by
        address: the first such listing's time (``time.monotonic()``)."""
        found: dict[str, float] = {}
        for sample in self.samples:
            for member in sample.members[key].values():
                if not member.admin_state_up and member.provisioning_status == "ACTIVE" \
                        and member.address not in found:
                    found[member.address] = sample.listed_at[key]
        return found

    def published_without_serving(self, zone_of: dict[str, str]) -> list[tuple[float, list[str]]]:
        """(seconds since the first sample, the zones) of each sample in which the record named a zone (``zone_of``:
        address -> pool key) whose pool had no serving member."""
        start = self.samples[0].at if self.samples else 0.0
        found = []
        for sample in self.samples:
            dark = sorted(zone_of.get(address, address) for address in sample.record or ()
                          if not any(m.serving for m in sample.members.get(zone_of.get(address), {}).values()))
            if dark:
                found.append((round(sample.at - start, 2), dark))
        return found

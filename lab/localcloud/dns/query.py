"""Ask the local cloud's DNS server (named) for a name: once, or in a loop that records what a client saw and when.

dnspython only (the venv pins it; Debian's python3-dnspython, a Designate dependency, serves the system python).
The server defaults to this instance's named (``settings.PORTS['named']``, port offset included).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import dns.exception
import dns.flags
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype

from ..settings import HOST, PORTS


def server() -> tuple[str, int]:
    """(host, port) of this instance's named."""
    return HOST, PORTS['named']


@dataclass(frozen=True)
class Answer:
    """What the server said about one name and type: the response code and the records (sorted text)."""

    rcode: str              # 'NOERROR', 'NXDOMAIN', 'REFUSED' (a zone the server does not serve), ...; 'TIMEOUT'
    #                         (no answer), 'UNREACHABLE' (nothing listens: the port is closed)
    records: tuple = ()     # e.g. ('172.24.4.10', '172.24.4.11') for A
    authoritative: bool = False


def ask(name: str, rdtype: str = 'A', at: tuple[str, int] | None = None, timeout: float = 2.0) -> Answer:
    """One UDP query (TCP when the answer is truncated). No answer is an answer too: rcode 'TIMEOUT', or
    'UNREACHABLE' when nothing listens (a client in a loop keeps asking while the server restarts)."""
    host, port = at or server()
    query = dns.message.make_query(name, rdtype)
    query.flags &= ~dns.flags.RD
    try:
        response = dns.query.udp(query, host, port=port, timeout=timeout)
        if response.flags & dns.flags.TC:
            response = dns.query.tcp(query, host, port=port, timeout=timeout)
    except dns.exception.Timeout:
        return Answer('TIMEOUT')
    except ConnectionError:
        return Answer('UNREACHABLE')
    wanted = dns.rdatatype.from_text(rdtype)
    records = sorted(rdata.to_text() for rrset in response.answer if rrset.rdtype == wanted for rdata in rrset)
    return Answer(dns.rcode.to_text(response.rcode()), tuple(records), bool(response.flags & dns.flags.AA))


def resolve_a(name: str, at: tuple[str, int] | None = None) -> set[str]:
    """The addresses of ``name``'s A records at the server (empty when the name or the record does not exist).

    Raises ``LookupError`` when the server gives no such verdict (no answer, or a refusal: a zone it does not
    serve), so that "no address" is never concluded from a server that is down."""
    answer = ask(name, 'A', at)
    if answer.rcode not in ('NOERROR', 'NXDOMAIN') or not answer.authoritative:
        host, port = at or server()
        raise LookupError(f'{host}:{port} did not answer for {name} with authority: {answer.rcode}')
    return set(answer.records)


def soa_serial(zone: str, at: tuple[str, int] | None = None) -> int | None:
    """The zone's serial as the server answers it with authority; None when it does not serve the zone."""
    answer = ask(zone, 'SOA', at)
    if answer.rcode != 'NOERROR' or not answer.authoritative or not answer.records:
        return None
    return int(answer.records[0].split()[2])


@dataclass(frozen=True)
class Sample:
    """One query of a watch: when it was sent (seconds since the watch began) and what came back."""

    at: float
    answer: Answer


def watch(name: str, every_ms: float = 100, duration_s: float = 10.0, rdtype: str = 'A',
          at: tuple[str, int] | None = None, until: Callable[[Answer], bool] | None = None,
          ask_fn: Callable[..., Answer] = ask, clock: Callable[[], float] = time.monotonic,
          sleep: Callable[[float], None] = time.sleep) -> list[Sample]:
    """Ask for ``name`` every ``every_ms`` milliseconds for ``duration_s`` seconds (or until ``until(answer)`` is
    true) and return every sample: what a client resolving in a loop during a record change would have seen, e.g.
    ``changes(samples)``. Queries start on a fixed schedule (a slow answer does not shift later ones; one later than
    its slot is sent at once) and none after ``duration_s``; the clock, the sleep and the query are injectable."""
    if every_ms <= 0 or duration_s < 0:
        raise ValueError(f'watch: every_ms must be > 0 and duration_s >= 0 (got {every_ms}, {duration_s})')
    start = clock()
    samples: list[Sample] = []
    n = 0
    while True:
        sent = clock() - start
        answer = ask_fn(name, rdtype, at)
        samples.append(Sample(round(sent, 4), answer))
        if until is not None and until(answer):
            break
        n += 1
        next_at = n * every_ms / 1000
        elapsed = clock() - start
        if next_at > duration_s or elapsed > duration_s:
            break
        delay = next_at - elapsed
        if delay > 0:
            sleep(delay)
    return samples


def changes(samples: list[Sample]) -> list[Sample]:
    """The samples whose records differ from the sample before (the first one included): when an answer changed."""
    out: list[Sample] = []
    for sample in samples:
        if not out or sample.answer.records != out[-1].answer.records:
            out.append(sample)
    return out

"""The DNS server down: named stopped (clients get no answer; Designate's worker cannot add, change or poll zones) and
started again as `up` starts it. Mixed into :class:`localcloud.faults.Faults` (``dns-stop`` / ``dns-start`` in
``lab/localcloud/fault``; ``clear`` starts a named a fault stopped). Standard library only.

named keeps the zones Designate added in ``lib/named`` and checks each one against designate-mdns when it starts, so
a change made while it was down is answered once it is back (and turns ACTIVE if the worker was still polling: it
polls up to 30 s, ``dns.config.WORKER_POLLING``)."""
from . import server


class DnsFaults:
    """Needs :class:`localcloud.service_faults.ServiceFaults` (its ``_fault_*`` mechanism)."""

    def dns_pid(self) -> int | None:
        return self._fault_pid(server.service(self.paths))

    def dns_stop(self) -> int | None:
        """Stop named (its session, by PID file); returns the PID it had (None if it was not running)."""
        return self._fault_stop(server.service(self.paths))

    def dns_start(self, timeout: float = 30) -> int:
        """Start named as `up` does (no-op when it runs) and wait until it listens; returns its PID."""
        return self._fault_start(server.service(self.paths), timeout, poll=0.05)

    def dns_down(self):
        """``with faults.dns_down():`` named is stopped inside the block and started again after it."""
        return self._fault_down(server.service(self.paths), timeout=30, poll=0.05)

    def clear_dns(self) -> None:
        """named runs again if a fault stopped it."""
        self._fault_clear(server.service(self.paths), timeout=30, poll=0.05)

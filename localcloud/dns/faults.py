"""The DNS server down: named stopped (clients get no answer; Designate's worker cannot add, change or poll zones) and
started again as `up` starts it. Mixed into :class:`localcloud.faults.Faults` (``dns-stop`` / ``dns-start`` in
``localcloud/fault``; ``clear`` starts a named a fault stopped). Standard library only.

named keeps the zones Designate added in ``lib/named`` and checks each one against designate-mdns when it starts, so
a change made while it was down is answered once it is back (and turns ACTIVE if the worker was still polling: it
polls up to 30 s, ``dns.config.WORKER_POLLING``)."""
import contextlib
import time

from .. import procs
from . import server


class DnsFaults:
    """Needs ``paths`` and ``_control_lock`` (:class:`localcloud.service_faults.ServiceFaults`)."""

    def _dns_stopped_marker(self):
        return self.paths.run / f'{server.NAME}.stopped-by-fault'

    def dns_pid(self) -> int | None:
        return procs.alive(self.paths.pidfile(server.NAME), server.service(self.paths).marker)

    def dns_stop(self) -> int | None:
        """Stop named (its session, by PID file); returns the PID it had (None if it was not running)."""
        with self._control_lock():
            pid = self.dns_pid()
            if pid is not None:
                self._dns_stopped_marker().write_text(f'{time.time():.3f}\n')
                procs.stop(self.paths.pidfile(server.NAME), server.service(self.paths).marker, timeout=10)
            return pid

    def dns_start(self, timeout: float = 30) -> int:
        """Start named as `up` does (no-op when it runs) and wait until it listens; returns its PID."""
        from .. import services
        svc = server.service(self.paths)
        with self._control_lock():
            pid = self.dns_pid() or procs.start(server.NAME, svc.argv, self.paths.pidfile(server.NAME),
                                                self.paths.log(server.NAME), svc.env, cwd=self.paths.root)
            deadline = time.monotonic() + timeout
            while not services.ready(svc):
                if time.monotonic() > deadline or not self.dns_pid():
                    raise RuntimeError(f'named does not listen {timeout:.0f}s after its start; see '
                                       f'{self.paths.log(server.NAME)}')
                time.sleep(0.05)
            self._dns_stopped_marker().unlink(missing_ok=True)
            return pid

    @contextlib.contextmanager
    def dns_down(self):
        """``with faults.dns_down():`` named is stopped inside the block and started again after it."""
        self.dns_stop()
        try:
            yield self
        finally:
            self.dns_start()

    def clear_dns(self) -> None:
        """named runs again if a fault stopped it."""
        if self._dns_stopped_marker().exists():
            self.dns_start()

"""Object storage down: Swift's proxy stopped (every Swift and S3 request is refused: Pulumi's state cannot be read or
written) and started again as `up` starts it. Mixed into :class:`localcloud.faults.Faults` (``swift-proxy-stop`` /
``swift-proxy-start`` in ``localcloud/fault``; ``clear`` starts a proxy a fault stopped). Standard library only.

The account, container and object servers keep running: the objects stay on disk, and the proxy serves them again
once it is back."""
import contextlib
import time

from .. import procs
from .server import PROXY, services


class SwiftFaults:
    """Needs ``paths`` and ``_control_lock`` (:class:`localcloud.service_faults.ServiceFaults`)."""

    def _swift_proxy(self):
        return next(svc for svc in services(self.paths) if svc.name == PROXY)

    def _swift_proxy_stopped_marker(self):
        return self.paths.run / f'{PROXY}.stopped-by-fault'

    def swift_proxy_pid(self) -> int | None:
        return procs.alive(self.paths.pidfile(PROXY), self._swift_proxy().marker)

    def swift_proxy_stop(self) -> int | None:
        """Stop Swift's proxy (its session, by PID file); returns the PID it had (None if it was not running)."""
        with self._control_lock():
            pid = self.swift_proxy_pid()
            if pid is not None:
                self._swift_proxy_stopped_marker().write_text(f'{time.time():.3f}\n')
                procs.stop(self.paths.pidfile(PROXY), self._swift_proxy().marker, timeout=10)
            return pid

    def swift_proxy_start(self, timeout: float = 60) -> int:
        """Start Swift's proxy as `up` does (no-op when it runs) and wait until it answers; returns its PID."""
        from .. import services as all_services
        svc = self._swift_proxy()
        with self._control_lock():
            pid = self.swift_proxy_pid() or procs.start(PROXY, svc.argv, self.paths.pidfile(PROXY),
                                                        self.paths.log(PROXY), svc.env, cwd=self.paths.root)
            deadline = time.monotonic() + timeout
            while not all_services.ready(svc):
                if time.monotonic() > deadline or not self.swift_proxy_pid():
                    raise RuntimeError(f'{PROXY} does not answer {timeout:.0f}s after its start; see '
                                       f'{self.paths.log(PROXY)}')
                time.sleep(0.1)
            self._swift_proxy_stopped_marker().unlink(missing_ok=True)
            return pid

    @contextlib.contextmanager
    def swift_proxy_down(self):
        """``with faults.swift_proxy_down():`` the proxy is stopped inside the block and started again after it."""
        self.swift_proxy_stop()
        try:
            yield self
        finally:
            self.swift_proxy_start()

    def clear_swift(self) -> None:
        """The proxy runs again if a fault stopped it."""
        if self._swift_proxy_stopped_marker().exists():
            self.swift_proxy_start()

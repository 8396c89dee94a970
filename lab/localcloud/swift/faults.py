"""Object storage down: Swift's proxy stopped (every Swift and S3 request is refused: Pulumi's state cannot be read or
written) and started again as `up` starts it. Mixed into :class:`localcloud.faults.Faults` (``swift-proxy-stop`` /
``swift-proxy-start`` in ``lab/localcloud/fault``; ``clear`` starts a proxy a fault stopped). Standard library only.

The account, container and object servers keep running: the objects stay on disk, and the proxy serves them again
once it is back."""
from .server import PROXY, services


class SwiftFaults:
    """Needs :class:`localcloud.service_faults.ServiceFaults` (its ``_fault_*`` mechanism)."""

    def _swift_proxy(self):
        return next(svc for svc in services(self.paths) if svc.name == PROXY)

    def swift_proxy_pid(self) -> int | None:
        return self._fault_pid(self._swift_proxy())

    def swift_proxy_stop(self) -> int | None:
        """Stop Swift's proxy (its session, by PID file); returns the PID it had (None if it was not running)."""
        return self._fault_stop(self._swift_proxy())

    def swift_proxy_start(self, timeout: float = 60) -> int:
        """Start Swift's proxy as `up` does (no-op when it runs) and wait until it answers; returns its PID."""
        return self._fault_start(self._swift_proxy(), timeout, poll=0.1)

    def swift_proxy_down(self):
        """``with faults.swift_proxy_down():`` the proxy is stopped inside the block and started again after it."""
        return self._fault_down(self._swift_proxy(), timeout=60, poll=0.1)

    def clear_swift(self) -> None:
        """The proxy runs again if a fault stopped it."""
        self._fault_clear(self._swift_proxy(), timeout=60, poll=0.1)

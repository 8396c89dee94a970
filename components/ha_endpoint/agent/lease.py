"""Leader election on a ``coordination.k8s.io/v1`` Lease: of the agent's replicas one leads (writes members and
Machines), the others wait and take over when the leader stops renewing.

As client-go's leader election: a replica that is not the holder takes the Lease when the record has not changed
for ``duration`` seconds by its own clock (no trust in another machine's clock), and a write is optimistic (the
Lease's resourceVersion: of two replicas taking it at once, one gets 409). The leader counts as leading only until
``renew_deadline`` after its last successful renewal, shorter than ``duration``: it stops writing before another
replica may start.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, replace
from typing import Any, Callable, Optional, Protocol

from ..core.errors import HaEndpointError


@dataclass(frozen=True)
class LeaseRecord:
    holder: Optional[str]
    duration_seconds: int
    renew_time: str
    transitions: int = 0
    resource_version: str = ""


class Conflict(HaEndpointError):
    """Somebody else wrote the Lease first (409)."""


class LeaseApi(Protocol):
    def read(self) -> Optional[LeaseRecord]:
        """The Lease, or None when it does not exist."""

    def create(self, record: LeaseRecord) -> LeaseRecord: ...

    def replace(self, record: LeaseRecord) -> LeaseRecord:
        """Write ``record`` if the Lease is still at its resourceVersion, else :class:`Conflict`."""


class LeaseElector:
    def __init__(self, api: LeaseApi, identity: str, duration: float, clock: Callable[[], float],
                 log: Callable[[str], None] = print) -> None:
        self.api, self.identity, self.duration, self.clock, self.log = api, identity, duration, clock, log
        self.renew_deadline = duration * 2 / 3
        self._observed: Optional[LeaseRecord] = None
        self._observed_at = 0.0
        self._renewed_at: Optional[float] = None

    def leading(self) -> bool:
        """Whether this replica may write now."""
        return self._renewed_at is not None and self.clock() - self._renewed_at < self.renew_deadline

    def try_acquire_or_renew(self) -> bool:
        """One round: take or renew the Lease. False (and not leading once the deadline passes) when another
        holds it, on a conflict, or when the API does not answer."""
        now = self.clock()
        stamp = datetime.datetime.fromtimestamp(now, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        try:
            current = self.api.read()
            if current is None:
                self._took(self.api.create(LeaseRecord(self.identity, int(self.duration), stamp)), now, None)
                return True
            if current != self._observed:
                self._observed, self._observed_at = current, now
            if current.holder not in (None, "", self.identity) and now - self._observed_at < self.duration:
                return self._lost(now)
            new = replace(current, holder=self.identity, duration_seconds=int(self.duration), renew_time=stamp,
                          transitions=current.transitions + (current.holder != self.identity))
            self._took(self.api.replace(new), now, current.holder)
            return True
        except Conflict:
            return self._lost(now)
        except Exception as error:  # the API unreachable: keep leading only until the deadline
            self.log(f"lease: {type(error).__name__}: {str(error)[:200]}")
            return self.leading()

    def release(self) -> None:
        """Hand the Lease over at once (a stopping leader): the other replica need not wait ``duration``."""
        if not self.leading() or self._observed is None:
            return
        self._renewed_at = None
        try:
            self.api.replace(replace(self._observed, holder=None))
            self.log(f"lease: {self.identity} released it")
        except Exception as error:  # the other replica takes it after the duration anyway
            self.log(f"lease: could not release it ({type(error).__name__}); it expires")

    def _took(self, record: LeaseRecord, now: float, previous: Optional[str]) -> None:
        if not self.leading():
            self.log(f"lease: {self.identity} leads" + (f" (took over from {previous})" if previous and
                                                          previous != self.identity else ""))
        self._observed, self._observed_at, self._renewed_at = record, now, now

    def _lost(self, now: float) -> bool:
        if self._renewed_at is not None:
            self.log(f"lease: {self.identity} no longer leads")
        self._renewed_at = None
        return False


class KubernetesLease:
    """:class:`LeaseApi` over the official client's ``CoordinationV1Api`` (the kubeconfig already loaded)."""

    def __init__(self, name: str, namespace: str) -> None:
        from kubernetes import client

        self.name, self.namespace, self.client = name, namespace, client
        self.api = client.CoordinationV1Api()

    def _record(self, lease: Any) -> LeaseRecord:
        spec = lease.spec
        renew = spec.renew_time.isoformat() if spec.renew_time else ""
        return LeaseRecord(spec.holder_identity, spec.lease_duration_seconds or 0, renew,
                           spec.lease_transitions or 0, lease.metadata.resource_version or "")

    def _body(self, record: LeaseRecord) -> Any:
        c = self.client
        renew = datetime.datetime.fromisoformat(record.renew_time.replace("Z", "+00:00"))
        return c.V1Lease(metadata=c.V1ObjectMeta(name=self.name, namespace=self.namespace,
                                                 resource_version=record.resource_version or None),
                         spec=c.V1LeaseSpec(holder_identity=record.holder, lease_duration_seconds=record.duration_seconds,
                                            renew_time=renew, acquire_time=renew, lease_transitions=record.transitions))

    def read(self) -> Optional[LeaseRecord]:
        from kubernetes.client.rest import ApiException
        try:
            return self._record(self.api.read_namespaced_lease(self.name, self.namespace))
        except ApiException as error:
            if error.status == 404:
                return None
            raise

    def create(self, record: LeaseRecord) -> LeaseRecord:
        return self._write(lambda: self.api.create_namespaced_lease(self.namespace, self._body(record)))

    def replace(self, record: LeaseRecord) -> LeaseRecord:
        return self._write(lambda: self.api.replace_namespaced_lease(self.name, self.namespace, self._body(record)))

    def _write(self, call: Callable[[], Any]) -> LeaseRecord:
        from kubernetes.client.rest import ApiException
        try:
            return self._record(call())
        except ApiException as error:
            if error.status == 409:
                raise Conflict(str(error)[:200]) from None
            raise

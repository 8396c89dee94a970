"""The agent's Kubernetes side: the Machines of one namespace through the official client (list, the library's
watch, annotation patches, Events), and :class:`MachineCache`, which keeps the selected Machines as the watch
reports them and says whether that view is current (``synced``): the reconciler writes nothing from a view that is
not (the management API unreachable: members stay as they are).
"""

from __future__ import annotations

import datetime
import threading
from typing import Any, Callable, Iterator, Optional, Protocol

from ..core.errors import HaEndpointError

GROUP = "cluster.x-k8s.io"
VERSION = "v1beta2"
"""The Machine version read (Cluster API v1.14 serves v1beta2 and v1beta1; the fields read are the same in both)."""
PLURAL = "machines"
EVENT_SOURCE = "ha-endpoint-agent"


class MachineApi(Protocol):
    """What the agent asks of the management cluster about Machines."""

    def list(self) -> tuple[list[dict[str, Any]], str]:
        """The selected Machines and the list's resourceVersion."""

    def watch(self, resource_version: str) -> Iterator[dict[str, Any]]:
        """Watch events (``{"type", "object"}``) from ``resource_version`` until the server ends the stream."""

    def annotate(self, name: str, annotations: dict[str, Optional[str]]) -> dict[str, Any]:
        """Merge-patch the Machine's annotations (None removes one); the Machine as patched."""

    def event(self, machine: dict[str, Any], reason: str, message: str, warning: bool = False) -> None:
        """A Kubernetes Event on the Machine."""


class Expired(HaEndpointError):
    """The watch's resourceVersion is too old (410 Gone): list again."""


class KubernetesMachines:
    """:class:`MachineApi` over the official ``kubernetes`` client (in-cluster config, else a kubeconfig)."""

    def __init__(self, namespace: str, label_selector: str, kubeconfig: Optional[str] = None,
                 watch_seconds: int = 300) -> None:
        from kubernetes import client, config, watch  # the agent's own dependency (ha-endpoint[agent])

        if kubeconfig:
            config.load_kube_config(config_file=kubeconfig)
        else:
            try:
                config.load_incluster_config()
            except config.ConfigException:
                config.load_kube_config()
        self.namespace, self.selector, self.watch_seconds = namespace, label_selector, watch_seconds
        self.custom, self.core, self._watch = client.CustomObjectsApi(), client.CoreV1Api(), watch
        self._client = client

    def list(self) -> tuple[list[dict[str, Any]], str]:
        found = self.custom.list_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL,
                                                          label_selector=self.selector)
        return list(found.get("items") or []), str((found.get("metadata") or {}).get("resourceVersion") or "")

    def watch(self, resource_version: str) -> Iterator[dict[str, Any]]:
        stream = self._watch.Watch().stream(
            self.custom.list_namespaced_custom_object, GROUP, VERSION, self.namespace, PLURAL,
            label_selector=self.selector, resource_version=resource_version, timeout_seconds=self.watch_seconds,
            allow_watch_bookmarks=True)
        try:
            yield from self._events(stream)
        except self._client.rest.ApiException as error:  # the library's own 410 after its one retry
            if error.status == 410:
                raise Expired("watch expired (410)") from None
            raise

    def _events(self, stream: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for event in stream:
            if event.get("type") == "ERROR":
                code = (event.get("raw_object") or event.get("object") or {}).get("code")
                if code == 410:
                    raise Expired("watch expired (410)")
                raise RuntimeError(f"watch error: {event.get('raw_object') or event.get('object')}")
            yield event

    def annotate(self, name: str, annotations: dict[str, Optional[str]]) -> dict[str, Any]:
        return self.custom.patch_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL, name,
                                                          {"metadata": {"annotations": annotations}})

    def event(self, machine: dict[str, Any], reason: str, message: str, warning: bool = False) -> None:
        c = self._client
        meta = machine.get("metadata") or {}
        now = datetime.datetime.now(datetime.timezone.utc)
        body = c.CoreV1Event(
            metadata=c.V1ObjectMeta(generate_name=f"{meta.get('name', 'machine')}.", namespace=self.namespace),
            involved_object=c.V1ObjectReference(api_version=machine.get("apiVersion", f"{GROUP}/{VERSION}"),
                                                kind="Machine", name=meta.get("name"), namespace=self.namespace,
                                                uid=meta.get("uid")),
            reason=reason, message=message[:1024], type="Warning" if warning else "Normal", count=1,
            first_timestamp=now, last_timestamp=now, source=c.V1EventSource(component=EVENT_SOURCE),
            reporting_component=EVENT_SOURCE, reporting_instance=EVENT_SOURCE)
        self.core.create_namespaced_event(self.namespace, body)


class MachineCache:
    """The selected Machines by name, as the last list and the watch since report them.

    ``synced`` is true after a list succeeded and while its watch runs; false from the first failure until the
    next list succeeds (a Machine missing from a view that is not synced proves nothing)."""

    def __init__(self, api: MachineApi, log: Callable[[str], None] = print) -> None:
        self.api, self.log = api, log
        self.machines: dict[str, dict[str, Any]] = {}
        self.synced = False
        self.changed = threading.Event()
        self._lock = threading.Lock()

    def relist(self) -> str:
        items, version = self.api.list()
        with self._lock:
            self.machines = {m["metadata"]["name"]: m for m in items
                             if isinstance(m, dict) and isinstance(m.get("metadata"), dict)
                             and isinstance(m["metadata"].get("name"), str)}
            self.synced = True
        self.changed.set()
        return version

    def apply(self, event: dict[str, Any]) -> None:
        """One watch event: ADDED/MODIFIED store the Machine, DELETED drops it, BOOKMARK changes nothing."""
        kind, machine = event.get("type"), event.get("object")
        name = ((machine or {}).get("metadata") or {}).get("name") if isinstance(machine, dict) else None
        if not isinstance(name, str):
            return
        with self._lock:
            if kind in ("ADDED", "MODIFIED"):
                self.machines[name] = machine
            elif kind == "DELETED":
                self.machines.pop(name, None)
            else:
                return
        self.changed.set()

    def store(self, machine: dict[str, Any]) -> None:
        """A Machine as the agent's own patch returned it (newer than what the watch has shown yet)."""
        self.apply({"type": "MODIFIED", "object": machine})

    def unsynced(self, why: str) -> None:
        with self._lock:
            was, self.synced = self.synced, False
        if was:
            self.log(f"management API: {why}; nothing is written until the Machines are listed again")
        self.changed.set()

    def snapshot(self) -> tuple[list[dict[str, Any]], bool]:
        with self._lock:
            return list(self.machines.values()), self.synced

    def run(self, stop: threading.Event, retry_seconds: float = 5.0) -> None:
        """List, then follow the library's watch; list again when it ends or fails."""
        while not stop.is_set():
            try:
                version = self.relist()
                for event in self.api.watch(version):
                    self.apply(event)
                    if stop.is_set():
                        return
            except Expired:
                continue
            except Exception as error:  # the management API unreachable, a 403, a broken stream
                self.unsynced(f"{type(error).__name__}: {str(error)[:200]}")
                stop.wait(retry_seconds)

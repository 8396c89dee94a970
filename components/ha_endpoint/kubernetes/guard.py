"""ControlPlaneEndpointGuard: refuses, at preview, to change the control-plane endpoint of a Cluster API cluster
that this stack already created.

Cluster API never lets ``controlPlaneEndpoint`` change once it is set: the Cluster and OpenStackCluster webhooks
refuse the update, and the API server's serving certificate and every kubeconfig and kubelet name that host and
port. Applied anyway, the change would fail half-way through an update, after the endpoint's DNS records had moved.
So the guard (a Pulumi dynamic resource, created with the Cluster API objects, which depend on it) records the host
and port it was created with, and its ``check`` fails when a later program asks for another host or port for the
same cluster: ``pulumi preview`` (and the preview ``pulumi up`` runs first) stops there, before anything changes.
A different cluster (another namespace/name) is a new guard (the old one and the old cluster are replaced).

Stateless and picklable like the readiness providers: the provider class holds no attributes, so the state records a
reference to ``ha_endpoint.kubernetes.guard.ControlPlaneEndpointGuardProvider``; it makes no API call.
"""

from __future__ import annotations

import uuid
from typing import Any, Mapping, Optional

import pulumi
from pulumi.dynamic import CheckFailure, CheckResult, CreateResult, DiffResult, ReadResult, ResourceProvider
from pulumi.dynamic import UpdateResult

from ..core.errors import HaEndpointError
from ..gates.provider import UNKNOWN as UNKNOWN_WIRE, contains_unknown

GUARD_TYPE_NAME = "ControlPlaneEndpointGuard"
GUARD_TYPE = f"pulumi-python:dynamic/haendpoint:{GUARD_TYPE_NAME}"
PROVIDER_KEY = "__provider"
DEFAULT_SETTINGS = "the endpoint's DNS name and API port"


class EndpointChangeRefused(HaEndpointError):
    """Raised by ``diff`` if a changed endpoint ever got past ``check`` (defence in depth)."""


def refusal(cluster: str, old: tuple[str, int], new: tuple[str, int], settings: str = DEFAULT_SETTINGS) -> str:
    """Why the change from ``old`` to ``new`` (host, port) is refused, and what to do instead."""
    return (f"the Cluster API cluster {cluster} was created with controlPlaneEndpoint {old[0]}:{old[1]}; this "
            f"update would change it to {new[0]}:{new[1]}. Cluster API never lets controlPlaneEndpoint change once "
            "it is set (its webhooks refuse the update, and the API server's certificate, every kubeconfig and every "
            f"kubelet name that host and port), so nothing was changed. Keep {settings} as they were "
            f"({old[0]}:{old[1]}). To serve the cluster under another name, create a new cluster under a new "
            "clusterApi name and move the workloads; renaming this one makes the stack delete the old Cluster and "
            "its machines")


def endpoint_of(props: Mapping[str, Any]) -> Optional[tuple[str, int]]:
    """``(host, port)`` of a property bag, or None if it has none (a create) or holds unknowns (a preview)."""
    host, port = props.get("host"), props.get("port")
    if host is None or port is None or contains_unknown(host) or contains_unknown(port):
        return None
    return str(host), int(float(port))


def input_failures(news: Mapping[str, Any]) -> list[CheckFailure]:
    """Malformed inputs (a programming error in the caller, reported at preview)."""
    failures = []
    host, port, cluster = news.get("host"), news.get("port"), news.get("cluster")
    if not contains_unknown(host) and (not isinstance(host, str) or not host or host.endswith(".")):
        failures.append(CheckFailure("host", f"must be a DNS name without a trailing dot, got {host!r}"))
    if not contains_unknown(port):
        try:
            number = float(port)
            valid = number == int(number) and 1 <= number <= 65535
        except (TypeError, ValueError):
            valid = False
        if not valid:
            failures.append(CheckFailure("port", f"must be a port number 1..65535, got {port!r}"))
    if not contains_unknown(cluster) and (not isinstance(cluster, str) or "/" not in cluster):
        failures.append(CheckFailure("cluster", f"must be '<namespace>/<name>', got {cluster!r}"))
    return failures


def changed_endpoint(olds: Mapping[str, Any], news: Mapping[str, Any]) -> Optional[str]:
    """The refusal message when ``news`` asks the same cluster as ``olds`` for another endpoint, else None."""
    old, new = endpoint_of(olds), endpoint_of(news)
    if old is None or new is None or contains_unknown(news.get("cluster")) or olds.get("cluster") != news.get("cluster"):
        return None
    if old == new:
        return None
    settings = news.get("settings") if isinstance(news.get("settings"), str) else DEFAULT_SETTINGS
    return refusal(str(news["cluster"]), old, new, settings)


def _record(props: Mapping[str, Any]) -> dict[str, Any]:
    outs = {key: value for key, value in props.items() if key != PROVIDER_KEY}
    if outs.get("port") is not None:
        outs["port"] = int(float(outs["port"]))
    return outs


class ControlPlaneEndpointGuardProvider(ResourceProvider):
    """The CRUD of :class:`ControlPlaneEndpointGuard`. Makes no API call; keeps nothing."""

    serialize_as_secret_always = False

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        failures = input_failures(news)
        message = changed_endpoint(olds or {}, news)
        if message is not None:
            old, new = endpoint_of(olds), endpoint_of(news)
            failures.append(CheckFailure("host" if old[0] != new[0] else "port", message))
        return CheckResult(news, failures)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        message = changed_endpoint(olds, news)
        if message is not None:
            raise EndpointChangeRefused(message)
        keys = ("cluster", "host", "port", "settings")
        changed = [key for key in keys if _record(olds).get(key) != _record(news).get(key)]
        replaces = ["cluster"] if "cluster" in changed else []
        return DiffResult(changes=bool(changed), replaces=replaces, delete_before_replace=False)

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(f"guard-{uuid.uuid4().hex}", _record(props))

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(_record(news))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        return ReadResult(id_, _record(props))

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        return None


class ControlPlaneEndpointGuard(pulumi.dynamic.Resource, module="haendpoint", name=GUARD_TYPE_NAME):
    """Records a Cluster API cluster's control-plane endpoint and refuses to change it (see the module doc).

    ``cluster`` is ``<namespace>/<name>``; ``host`` the DNS name without the trailing dot; ``port`` the API port;
    ``settings`` names, for the refusal message, the settings that define host and port."""

    cluster: pulumi.Output[str]
    host: pulumi.Output[str]
    port: pulumi.Output[int]

    def __init__(self, name: str, *, cluster: pulumi.Input[str], host: pulumi.Input[str], port: pulumi.Input[int],
                 settings: str = DEFAULT_SETTINGS, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__(ControlPlaneEndpointGuardProvider(), name,
                         {"cluster": cluster, "host": host, "port": port, "settings": settings}, opts)

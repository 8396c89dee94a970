"""Cluster API control-plane Machines as endpoint members: pure, no I/O.

One function, :func:`members_from_machines`, turns Machine objects (dicts, as the Kubernetes API returns them) into
typed :class:`MachineMember` values, and reports every Machine it cannot serve as a :class:`~ha_endpoint.core.errors.Problem`
(the Machine's name and field, and what to do), never guessing an address or a zone. The member agent
(``python -m ha_endpoint.agent``) and the component's ``clusterApi`` member source both read Machines through it, so a
Machine means the same member to both.

Machines are untrusted input: their labels and annotations are written by people and by other controllers. A value
of the wrong type or beyond the bounds below is refused with the reason, and the Machine is left out (reported).

Facts from Cluster API v1.14 (``api/core/v1beta2``): control-plane Machines carry the labels
``cluster.x-k8s.io/cluster-name: <cluster>`` and ``cluster.x-k8s.io/control-plane: ""`` (KubeadmControlPlane sets
both); ``status.addresses`` is a list of ``{type, address}`` with type one of Hostname, ExternalIP, InternalIP,
ExternalDNS, InternalDNS; ``spec.failureDomain`` is the failure domain (CAPO's are the availability zones); a Machine
being deleted has ``metadata.deletionTimestamp``; KubeadmControlPlane sets the condition ``APIServerPodHealthy`` in
each of its Machines' ``status.conditions`` (``{type, status: "True"|"False"|"Unknown", reason, message}``; read in
``api/controlplane/kubeadm/v1beta2/kubeadm_control_plane_types.go``,
``KubeadmControlPlaneMachineAPIServerPodHealthyCondition``; the v1beta1 Machines' ``status.conditions`` carry the same
type), True once the Machine's kube-apiserver pod runs and is ready.
"""

from __future__ import annotations

import enum
import ipaddress
import re
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..core.errors import Problem

CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"
"""The label Cluster API sets on every Machine of a cluster (value: the Cluster's name)."""
CONTROL_PLANE_LABEL = "cluster.x-k8s.io/control-plane"
"""The label Cluster API sets (empty value) on control-plane Machines."""
MAINTENANCE_ANNOTATION = "ha-endpoint.io/maintenance"
"""Ours: while a served Machine carries it (any value but ``"false"``; the value is the reason, shown in the
Machine's status annotation), its member is taken out (admin down); removing it puts the member back."""

API_SERVER_HEALTHY = "APIServerPodHealthy"
"""The condition KubeadmControlPlane sets on each of its Machines about the Machine's API server: the default of
:attr:`MachineSource.ready_condition`."""
MAX_CONDITIONS = 64
"""More conditions than this on one Machine is not a Machine's status; refused (read as absent)."""

MAX_NAME = 253
"""A Kubernetes object name (a DNS subdomain) is at most 253 characters."""
MAX_ANNOTATION = 256
"""The longest maintenance reason taken (a reason, not a document)."""
MAX_ADDRESSES = 32
"""More addresses than this on one Machine is not a Machine's status; refused."""
_AZ = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,254}$")
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")


class AddressType(str, enum.Enum):
    """Which of a Machine's ``status.addresses`` is its member's address (an IP type: Octavia needs an IP)."""

    INTERNAL_IP = "InternalIP"
    EXTERNAL_IP = "ExternalIP"


class MachineSource(BaseModel):
    """Which Machines serve the endpoint: the control-plane Machines of one Cluster API cluster."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    cluster: str = Field(min_length=1, max_length=63, pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
    """The Cluster's name (``metadata.name`` of the Cluster API ``Cluster``)."""
    namespace: str = Field("default", min_length=1, max_length=63, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    """The namespace of the Cluster and its Machines."""
    selector: Optional[dict[str, str]] = None
    """Labels a served Machine carries (equality; an empty value means "carries the label, any value"). Default:
    ``{cluster.x-k8s.io/cluster-name: <cluster>, cluster.x-k8s.io/control-plane: ""}``, the control-plane Machines
    of ``cluster``."""
    address_type: AddressType = Field(AddressType.INTERNAL_IP, alias="addressType")
    """Which address of ``status.addresses`` is the member's (default InternalIP)."""
    ready_condition: Optional[str] = Field(API_SERVER_HEALTHY, alias="readyCondition", min_length=1, max_length=316,
                                           pattern=r"^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$")
    """The Machine condition that says its API server is ready (default ``APIServerPodHealthy``, which
    KubeadmControlPlane sets); a member is put in service only once it is True. None: a member serves as soon as
    its Machine has an address (Machines that carry no such condition, when nothing else says it)."""

    @field_validator("selector")
    @classmethod
    def _selector_not_empty(cls, value: Optional[dict[str, str]]) -> Optional[dict[str, str]]:
        if value is not None and not value:
            raise ValueError("an empty selector would serve every Machine of the namespace; leave selector out for "
                             "the cluster's control-plane Machines, or give the labels they carry")
        return value

    @property
    def labels(self) -> dict[str, str]:
        """The labels a served Machine carries (the selector, or its default)."""
        if self.selector is not None:
            return dict(self.selector)
        return {CLUSTER_NAME_LABEL: self.cluster, CONTROL_PLANE_LABEL: ""}

    @property
    def label_selector(self) -> str:
        """The selector as the Kubernetes API takes it (``labelSelector=``): ``key=value``, or ``key`` for an
        empty value."""
        return ",".join(key if value == "" else f"{key}={value}" for key, value in sorted(self.labels.items()))

    def selects(self, machine: dict[str, Any]) -> bool:
        """Whether ``machine`` carries the selector's labels."""
        labels = (machine.get("metadata") or {}).get("labels") or {}
        if not isinstance(labels, dict):
            return False
        return all(key in labels and (value == "" or labels[key] == value) for key, value in self.labels.items())


class MachineMember(BaseModel):
    """One served Machine as an endpoint member."""

    model_config = ConfigDict(frozen=True)

    name: str
    """The Machine's name (unique in its namespace): the member's name."""
    az: str
    """Its availability zone: the Machine's ``spec.failureDomain``."""
    address: str
    """Its address: the first ``status.addresses`` entry of the configured type, canonical."""
    enabled: bool
    """False while the Machine carries :data:`MAINTENANCE_ANNOTATION` (the member is then taken out)."""
    maintenance_reason: Optional[str] = None
    """The maintenance annotation's value, when there is one."""
    deleting: bool
    """True once the Machine has a ``deletionTimestamp``: its member is to be drained and removed."""
    uid: str = ""
    """The Machine's uid (a new Machine with an old one's name is another Machine)."""
    ready: Optional[bool] = True
    """The source's ready condition: True, False, or None (absent, Unknown, or not readable); True when the source
    names no condition."""
    ready_detail: str = ""
    """What the condition says when it is not True (``APIServerPodHealthy is absent``, ``... False (reason)``)."""


def _text(value: Any, limit: int) -> Optional[str]:
    return value if isinstance(value, str) and 0 < len(value) <= limit else None


def _member(machine: Any, source: MachineSource) -> tuple[Optional[MachineMember], Optional[Problem]]:
    if not isinstance(machine, dict) or not isinstance(machine.get("metadata"), dict):
        return None, Problem("machines[]", f"not a Machine object (got {type(machine).__name__}); give the items of "
                             "a Machine list")
    metadata = machine["metadata"]
    name = _text(metadata.get("name"), MAX_NAME)
    if name is None or not _NAME.match(name):
        return None, Problem("machines[].metadata.name", "missing, not a string, or not a Kubernetes object name "
                             f"(at most {MAX_NAME} lowercase letters, digits, '-', '.'); the Machine is not served")
    where = f"Machine {source.namespace}/{name}"
    spec = machine.get("spec") if isinstance(machine.get("spec"), dict) else {}
    status = machine.get("status") if isinstance(machine.get("status"), dict) else {}
    annotations = metadata.get("annotations") or {}
    if not isinstance(annotations, dict):
        return None, Problem(f"{where}: metadata.annotations", "not a map; the Machine is not served until it is")
    uid = metadata.get("uid") if isinstance(metadata.get("uid"), str) and len(metadata["uid"]) <= 64 else ""
    az = spec.get("failureDomain")
    if az is None or az == "":
        return None, Problem(f"{where}: spec.failureDomain", "no failure domain yet: its zone is not guessed; the "
                             "Machine joins once Cluster API sets it (give the cluster's failure domains, CAPO's "
                             "are the availability zones)")
    if not isinstance(az, str) or not _AZ.match(az):
        return None, Problem(f"{where}: spec.failureDomain", f"{_shown(az)} is not an availability zone name "
                             "(letters, digits, '_', '.', ':', '-', at most 255); the Machine is not served")
    address, problem = _address(status.get("addresses"), source.address_type.value, where)
    if problem:
        return None, problem
    reason = annotations.get(MAINTENANCE_ANNOTATION)
    if reason is not None and (not isinstance(reason, str) or len(reason) > MAX_ANNOTATION):
        return None, Problem(f"{where}: metadata.annotations[{MAINTENANCE_ANNOTATION}]", f"{_shown(reason)} is "
                             f"not a reason of at most {MAX_ANNOTATION} characters; shorten it (the member is left "
                             "as it is until then)")
    in_maintenance = reason is not None and reason.strip().lower() != "false"
    ready, ready_detail = _condition(status.get("conditions"), source.ready_condition)
    return MachineMember(name=name, az=az, address=address, enabled=not in_maintenance,
                         maintenance_reason=reason if in_maintenance else None,
                         deleting=bool(metadata.get("deletionTimestamp")), uid=uid, ready=ready,
                         ready_detail=ready_detail), None


def _condition(conditions: Any, wanted: Optional[str]) -> tuple[Optional[bool], str]:
    """The status of condition ``wanted`` in ``status.conditions``: True, False, or None (absent, Unknown, or a
    value that is not a condition list), and what it says when not True."""
    if wanted is None:
        return True, ""
    if conditions is not None and (not isinstance(conditions, list) or len(conditions) > MAX_CONDITIONS):
        return None, f"{wanted} not readable (status.conditions is not a list of at most {MAX_CONDITIONS})"
    for entry in conditions or []:
        if isinstance(entry, dict) and entry.get("type") == wanted:
            status = entry.get("status")
            reason = entry.get("reason") if isinstance(entry.get("reason"), str) else ""
            said = f" ({reason[:64]})" if reason else ""
            if status == "True":
                return True, ""
            if status == "False":
                return False, f"{wanted} is False{said}"
            return None, f"{wanted} is {str(status)[:16] or 'Unknown'}{said}"
    return None, f"{wanted} is absent"


def _address(addresses: Any, wanted: str, where: str) -> tuple[str, Optional[Problem]]:
    if addresses is None or addresses == []:
        return "", Problem(f"{where}: status.addresses", f"no {wanted} address yet: the Machine joins once its "
                           "infrastructure provider reports one")
    if not isinstance(addresses, list) or len(addresses) > MAX_ADDRESSES:
        return "", Problem(f"{where}: status.addresses", f"not a list of at most {MAX_ADDRESSES} addresses "
                           f"({_shown(addresses)}); the Machine is not served")
    for entry in addresses:
        if isinstance(entry, dict) and entry.get("type") == wanted:
            value = entry.get("address")
            try:
                return ipaddress.ip_address(value if isinstance(value, str) else "").compressed, None
            except ValueError:
                return "", Problem(f"{where}: status.addresses[type={wanted}]", f"{_shown(value)} is not an IP "
                                   "address; the Machine is not served")
    kinds = sorted({str(entry.get("type"))[:20] for entry in addresses if isinstance(entry, dict)})
    return "", Problem(f"{where}: status.addresses", f"no {wanted} address (has: {', '.join(kinds) or 'none'}); "
                       "the Machine joins once it has one, or set addressType to the type it has")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}... ({len(text)} characters)"


def members_from_machines(machines: list[dict[str, Any]],
                          source: MachineSource) -> tuple[list[MachineMember], list[Problem]]:
    """The members of the Machines ``source`` selects (sorted by name), and a problem for each selected Machine
    that cannot be served (no address of the configured type, no failure domain, a refused value). Machines the
    selector does not select are skipped silently; a Machine named twice is refused."""
    members: dict[str, MachineMember] = {}
    problems: list[Problem] = []
    for machine in machines:
        if isinstance(machine, dict) and isinstance(machine.get("metadata"), dict) and not source.selects(machine):
            continue
        member, problem = _member(machine, source)
        if problem:
            problems.append(problem)
        elif member is not None and member.name in members:
            problems.append(Problem(f"Machine {source.namespace}/{member.name}", "listed twice; neither is served"))
        elif member is not None:
            members[member.name] = member
    duplicated = {p.path.rpartition("/")[2] for p in problems if p.message.startswith("listed twice")}
    return [members[name] for name in sorted(members) if name not in duplicated], problems

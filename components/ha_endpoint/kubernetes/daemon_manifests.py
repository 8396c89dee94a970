"""What the DNS watcher's and the member agent's Deployments share (pure: plain values in, dicts out): the Secret of
the two files a daemon reads at start, mounted read-only, the environment that points openstacksdk at it, the pod's
security context and volumes, what every daemon's spec names (:class:`DaemonSpec`) and the checks of its image and
cloud.

Each daemon's own module (:mod:`.watcher_manifests`, :mod:`.agent_manifests`) adds its command line, its replicas and
strategy, and what only it needs (the agent's probes, ports and service account).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..core.errors import Problem

MOUNT_DIR = "/etc/ha-endpoint"
CLOUDS_FILE = "clouds.yaml"
OUTPUTS_FILE = "outputs.json"
OUTPUTS_PATH = f"{MOUNT_DIR}/{OUTPUTS_FILE}"
"""Where a daemon reads the endpoint's outputs (its ``--outputs``)."""
RUN_AS = 65532
PART_OF = "app.kubernetes.io/part-of"


@dataclass(frozen=True, kw_only=True)
class DaemonSpec:
    """What every daemon's Deployment is made of (plain values); each daemon's spec adds its own
    (:class:`~.watcher_manifests.WatcherSpec`, :class:`~.agent_manifests.AgentSpec`)."""

    name: str
    """The Deployment's name (and its pods' ``app.kubernetes.io/instance`` label)."""
    image: str
    """An image with Python (3.11 or later) on its PATH and this package installed: there is no published one."""
    cloud: str
    """The clouds.yaml entry the daemon uses (``OS_CLOUD``)."""
    resources: Mapping[str, Mapping[str, str]]
    """The container's requests and limits (each daemon's module has its defaults, ``DEFAULT_RESOURCES``)."""


def option_text(value: Any) -> str:
    """A value as the command line gives it: ``2.0`` as ``2``, as the user wrote it in the stack's YAML."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def image_and_cloud_problems(spec: DaemonSpec, root: str, install: str, daemon: str) -> list[Problem]:
    """An empty image in ``spec`` (there is no published one: ``install`` says what to install in it) or cloud
    entry."""
    problems = []
    if not (spec.image or "").strip():
        problems.append(Problem(f"{root}.image", "is empty; give an image with Python and this package installed "
                                                 f"({install}): there is no published image"))
    if not (spec.cloud or "").strip():
        problems.append(Problem(f"{root}.cloud", f"is empty; give the clouds.yaml entry the {daemon} uses"))
    return problems


def config_secret(metadata: Mapping[str, Any], clouds_yaml: Any, outputs_json: Any) -> dict[str, Any]:
    """The ``Secret`` of the two files (either may be an Input), unnamed unless ``metadata`` names it."""
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": dict(metadata),
            "stringData": {CLOUDS_FILE: clouds_yaml, OUTPUTS_FILE: outputs_json}}


def selector(labels: Mapping[str, str]) -> dict[str, str]:
    """The Deployment's selector: its pods' labels but ``part-of``."""
    return {key: value for key, value in labels.items() if key != PART_OF}


def config_env(cloud: str) -> list[dict[str, Any]]:
    """openstacksdk pointed at the mounted clouds.yaml and its entry ``cloud``; HOME on /tmp (the root filesystem is
    read-only; /tmp is an emptyDir)."""
    return [{"name": "OS_CLIENT_CONFIG_FILE", "value": f"{MOUNT_DIR}/{CLOUDS_FILE}"},
            {"name": "OS_CLOUD", "value": cloud},
            {"name": "HOME", "value": "/tmp"},
            {"name": "PYTHONDONTWRITEBYTECODE", "value": "1"}]


def config_mounts() -> list[dict[str, Any]]:
    """The Secret read-only at :data:`MOUNT_DIR`, and /tmp."""
    return [{"name": "config", "mountPath": MOUNT_DIR, "readOnly": True}, {"name": "tmp", "mountPath": "/tmp"}]


def config_volumes(secret_name: Any) -> list[dict[str, Any]]:
    """The Secret ``secret_name`` (may be an Input), readable by the pod's group only, and a small /tmp."""
    return [{"name": "config", "secret": {"secretName": secret_name, "defaultMode": 0o440}},
            {"name": "tmp", "emptyDir": {"sizeLimit": "16Mi"}}]


def pod_security() -> dict[str, Any]:
    """The pod runs as :data:`RUN_AS`, not root, with the runtime's default seccomp profile."""
    return {"runAsNonRoot": True, "runAsUser": RUN_AS, "runAsGroup": RUN_AS, "fsGroup": RUN_AS,
            "seccompProfile": {"type": "RuntimeDefault"}}


def resources(spec_resources: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    """The container's requests and limits, as plain dicts."""
    return {kind: dict(values) for kind, values in spec_resources.items()}

"""The member agent's Kubernetes objects, as manifests (pure: plain values in, dicts out), beside a Cluster API
management cluster (docs/agent.md):

- a ``ServiceAccount`` and a namespaced ``Role`` + ``RoleBinding`` granting exactly: Machines
  (``cluster.x-k8s.io``) get, list, watch, patch; its Lease (``coordination.k8s.io``) get and update by name, and
  create; Events create -- in the cluster's namespace only;
- a ``Secret`` with ``clouds.yaml`` and ``outputs.json`` (the endpoint's zones, pools and record), mounted read-only;
- a ``Deployment`` of two replicas (one leads through the Lease, the other takes over), spread over nodes, running
  ``python -m ha_endpoint.agent`` as a non-root user on a read-only root filesystem without privilege escalation,
  with liveness (``/healthz``) and readiness (``/readyz``) probes and the metrics port.

The command line is built from the agent's own option names (:mod:`ha_endpoint.agent.inputs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ..agent import inputs as agent_inputs
from ..agent.machines import MachineSource
from ..core.errors import Problem
from .daemon_manifests import (OUTPUTS_PATH, DaemonSpec, config_env, config_mounts, config_secret, config_volumes,
                               image_and_cloud_problems, option_text, pod_security, resources, selector)
from .manifests import not_a_k8s_name

COMMAND = ["python", "-m", "ha_endpoint.agent"]
CONTAINER = "agent"
METRICS_PORT = 9464
REPLICAS = 2
GRACE_SECONDS = 90
"""SIGTERM stops the agent between two passes; a pass's Octavia calls retry for up to 60 s."""
DEFAULT_RESOURCES: Mapping[str, Mapping[str, str]] = {
    "requests": {"cpu": "20m", "memory": "160Mi"},
    "limits": {"cpu": "500m", "memory": "320Mi"},
}


@dataclass(frozen=True)
class AgentOptions:
    """The agent's tuning, named as its command line names it; None keeps the agent's default."""

    drain: Optional[float] = None
    hook_warn_after: Optional[float] = None
    interval: Optional[float] = None
    lease_seconds: Optional[float] = None
    ready_condition: Optional[str] = None
    """The Machine condition that puts a member in service (``none``: at once); default APIServerPodHealthy."""
    member_subnet: tuple[tuple[str, str], ...] = ()
    member_port: tuple[tuple[int, int], ...] = ()
    region: Optional[str] = None


@dataclass(frozen=True, kw_only=True)
class AgentSpec(DaemonSpec):
    """The agent's Deployment: a daemon's (its ``name`` also names the ServiceAccount, Role, RoleBinding and the
    Lease), the cluster it serves and its tuning."""

    source: MachineSource
    """The cluster whose control-plane Machines are served; its namespace is where everything goes."""
    options: AgentOptions = AgentOptions()


def spec_problems(spec: AgentSpec, root: str) -> list[Problem]:
    problems = [Problem(f"{root}.name", why) for why in [not_a_k8s_name(spec.name or "")] if why]
    problems += image_and_cloud_problems(spec, root, "pip install 'ha-endpoint[agent]'", "agent")
    for option, value in _option_words(spec.options):
        why = agent_inputs.refusal(option, value)
        if why is not None:
            problems.append(Problem(f"{root}.options.{option[2:].replace('-', '_')}", why))
    return problems


def _option_words(options: AgentOptions) -> list[tuple[str, str]]:
    words = []
    for option in ("drain", "hook_warn_after", "interval", "lease_seconds", "ready_condition", "region"):
        value = getattr(options, option)
        if value is not None:
            words.append((agent_inputs.flag(option), option_text(value)))
    words += [("--member-subnet", f"{az}={subnet}") for az, subnet in options.member_subnet]
    words += [("--member-port", f"{listener}={member}") for listener, member in options.member_port]
    return words


def agent_args(spec: AgentSpec) -> list[str]:
    source = spec.source
    args = ["--outputs", OUTPUTS_PATH, "--cluster", source.cluster, "--namespace", source.namespace,
            "--address-type", source.address_type.value, "--lease", spec.name, "--identity", "$(POD_NAME)",
            "--listen", "0.0.0.0", "--port", str(METRICS_PORT)]
    for option, value in _option_words(spec.options):
        args += [option, value]
    return args


def labels(name: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": "ha-endpoint-agent", "app.kubernetes.io/instance": name,
            "app.kubernetes.io/part-of": "ha-endpoint"}


def _meta(spec: AgentSpec, name: Optional[str] = None) -> dict[str, Any]:
    return {**({"name": name} if name else {}), "namespace": spec.source.namespace, "labels": labels(spec.name)}


def service_account_manifest(spec: AgentSpec) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(spec, spec.name)}


def role_manifest(spec: AgentSpec) -> dict[str, Any]:
    """Exactly what the agent calls, in its namespace."""
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": _meta(spec, spec.name),
            "rules": [
                {"apiGroups": ["cluster.x-k8s.io"], "resources": ["machines"],
                 "verbs": ["get", "list", "watch", "patch"]},
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": [spec.name],
                 "verbs": ["get", "update"]},
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
                {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]},
            ]}


def role_binding_manifest(spec: AgentSpec) -> dict[str, Any]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": _meta(spec, spec.name),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": spec.name},
            "subjects": [{"kind": "ServiceAccount", "name": spec.name, "namespace": spec.source.namespace}]}


def secret_manifest(spec: AgentSpec, clouds_yaml: Any, outputs_json: Any) -> dict[str, Any]:
    """The ``Secret`` (unnamed: the program names it, so that new files make a new Secret and a rollout)."""
    return config_secret(_meta(spec), clouds_yaml, outputs_json)


def deployment_manifest(spec: AgentSpec, secret_name: Any) -> dict[str, Any]:
    matching = selector(labels(spec.name))
    probe = {"httpGet": {"path": "/healthz", "port": "metrics"}, "periodSeconds": 10, "failureThreshold": 6,
             "timeoutSeconds": 3}
    container = {
        "name": CONTAINER, "image": spec.image, "command": list(COMMAND), "args": agent_args(spec),
        "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                *config_env(spec.cloud)],
        "ports": [{"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"}],
        "livenessProbe": probe,
        "readinessProbe": {**probe, "httpGet": {"path": "/readyz", "port": "metrics"}, "failureThreshold": 2},
        "volumeMounts": config_mounts(),
        "resources": resources(spec.resources),
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "privileged": False,
                            "runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}},
    }
    pod = {
        "serviceAccountName": spec.name, "automountServiceAccountToken": True,
        "terminationGracePeriodSeconds": GRACE_SECONDS,
        "securityContext": pod_security(),
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": matching},
                                                "topologyKey": "kubernetes.io/hostname"}}]}},
        "containers": [container],
        "volumes": config_volumes(secret_name),
    }
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(spec, spec.name),
            "spec": {"replicas": REPLICAS, "strategy": {"type": "RollingUpdate",
                                                        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
                     "selector": {"matchLabels": matching},
                     "template": {"metadata": {"labels": labels(spec.name)}, "spec": pod}}}


def manifests(spec: AgentSpec, secret_name: str, clouds_yaml: Any, outputs_json: Any) -> list[dict[str, Any]]:
    """Every object, in the order to apply them (``kubectl apply -f``)."""
    secret = secret_manifest(spec, clouds_yaml, outputs_json)
    secret["metadata"]["name"] = secret_name
    return [service_account_manifest(spec), role_manifest(spec), role_binding_manifest(spec), secret,
            deployment_manifest(spec, secret_name)]

"""The DNS watcher's Kubernetes objects, as manifests (pure: plain values in, dicts out), and the checks of what they
are made of.

- a ``Secret`` holding the two files the watcher reads at start: ``clouds.yaml`` (its OpenStack credentials) and
  ``outputs.json`` (the endpoint's ``fqdn`` and zones), mounted read-only at ``/etc/ha-endpoint``;
- a ``Deployment`` of one pod, strategy ``Recreate``, running ``python -m ha_endpoint.watch --outputs
  /etc/ha-endpoint/outputs.json --stack <project>/<stack> ...`` with ``OS_CLIENT_CONFIG_FILE`` and ``OS_CLOUD``,
  as a non-root user on a read-only root filesystem, without a service account token (it never calls the
  Kubernetes API).

The command line is built from the watcher's own option names and checked with its own rules
(:mod:`ha_endpoint.watch.inputs`): a value the watcher would refuse is a :class:`~ha_endpoint.core.errors.Problem`
here, naming the key, before anything is deployed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Callable, Mapping, Optional

import yaml

from ..core.errors import Problem
from ..watch import inputs as watch_inputs
from .daemon_manifests import (OUTPUTS_PATH, DaemonSpec, config_env, config_mounts, config_secret, config_volumes,
                               image_and_cloud_problems, option_text, pod_security, resources, selector)
from .manifests import not_a_k8s_name

COMMAND = ["python", "-m", "ha_endpoint.watch"]
CONTAINER = "watcher"
"""The pod's user and group (the customary unprivileged ``nonroot`` id); the image needs no user of its own."""
DEFAULT_RESOURCES: Mapping[str, Mapping[str, str]] = {
    "requests": {"cpu": "20m", "memory": "128Mi"},  # Python with openstacksdk loaded: about 85 MB
    "limits": {"cpu": "500m", "memory": "256Mi"},
}
API_GRACE_SECONDS = 20
"""Of the termination grace: the Octavia and Designate calls of the poll under way when SIGTERM arrives."""
CONNECTS_IN_GRACE = 6
"""Of the termination grace: connects that may each take the whole connect timeout (3 zones x 2 ports)."""


@dataclass(frozen=True)
class WatchOptions:
    """The watcher's tuning, named as its command line names it (``interval`` -> ``--interval``); None leaves the
    watcher's default (``python -m ha_endpoint.watch --help``)."""

    interval: Optional[float] = None
    """Seconds between polls (default 5)."""
    unhealthy_polls: Optional[int] = None
    """Unhealthy polls in a row before a zone leaves DNS (default 3)."""
    healthy_polls: Optional[int] = None
    """Healthy polls in a row before it comes back (default 3)."""
    connect_timeout: Optional[float] = None
    """Seconds a connect to a zone's address may take (default 2)."""
    no_reach: bool = False
    """Judge by Octavia only: for a cluster whose pods do not reach the endpoint's addresses."""
    dry_run: bool = False
    """Log what would change, write nothing."""
    region: Optional[str] = None
    """The OpenStack region, overriding the clouds.yaml entry's."""


@dataclass(frozen=True, kw_only=True)
class WatcherSpec(DaemonSpec):
    """The watcher's Deployment: a daemon's, where it goes, the stack it watches and its tuning."""

    namespace: str
    """The namespace of the Deployment and its Secret."""
    stack: str
    """``<project>/<stack>`` of the endpoint."""
    options: WatchOptions = WatchOptions()


def project_stack(name: str) -> str:
    """``<project>/<stack>`` from a stack's name as a StackReference takes it (``<org>/<project>/<stack>``) or as the
    watcher takes it (``<project>/<stack>``); other shapes are returned as they are (and refused by the check)."""
    parts = name.split("/")
    return "/".join(parts[1:]) if len(parts) == 3 else name


def option_problems(options: WatchOptions, root: str, key: Callable[[str], str] = str) -> list[Problem]:
    """Every option value the watcher would refuse, at ``<root>.<key(option)>``, in the watcher's words."""
    problems = []
    for option in fields(WatchOptions):
        value = getattr(options, option.name)
        if value is None or value is False:
            continue
        why = watch_inputs.refusal(option.name, value if value is True else option_text(value))
        if why is not None:
            problems.append(Problem(f"{root}.{key(option.name)}", why))
    return problems


def spec_problems(spec: WatcherSpec, root: str, key: Callable[[str], str] = str) -> list[Problem]:
    """Every problem of ``spec`` but its stack (:func:`stack_problems`): names, image, cloud, options."""
    problems = [Problem(f"{root}.{key(item)}", why) for item, value in (("name", spec.name),
                                                                        ("namespace", spec.namespace))
                if (why := not_a_k8s_name(value or "")) is not None]
    problems += image_and_cloud_problems(spec, root, "pip install ha-endpoint", "watcher")
    return problems + option_problems(spec.options, root, key)


def stack_problems(stack: str, path: str) -> list[Problem]:
    """Whether the watcher takes ``stack`` (``<project>/<stack>``)."""
    why = watch_inputs.refusal("stack", stack)
    return [] if why is None else [Problem(path, f"{why}: the endpoint's project and stack, or the "
                                                 "<org>/<project>/<stack> its StackReference reads")]


def clouds_problems(text: str, cloud: str, path: str) -> list[Problem]:
    """Whether ``text`` is a clouds.yaml with the entry ``cloud`` (the message never quotes the file)."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        return [Problem(path, f"is not YAML{where}; give the content of a clouds.yaml file")]
    clouds = document.get("clouds") if isinstance(document, dict) else None
    if not isinstance(clouds, dict):
        return [Problem(path, "has no clouds mapping; give the content of a clouds.yaml file (clouds: {<name>: "
                              "{auth: ..., region_name: ...}})")]
    if cloud not in clouds:
        return [Problem(path, f"has no entry {cloud!r} (it has {', '.join(map(repr, sorted(clouds, key=str)))}); "
                              "give the cloud that is in it, or add that entry")]
    return []


def watcher_args(stack: str, options: WatchOptions) -> list[str]:
    """The watcher's arguments: the outputs file, the stack, and every option set in ``options``."""
    args = ["--outputs", OUTPUTS_PATH, "--stack", stack]
    for option in fields(WatchOptions):
        value = getattr(options, option.name)
        if value is True:
            args.append(watch_inputs.flag(option.name))
        elif value is not None and value is not False:
            args += [watch_inputs.flag(option.name), option_text(value)]
    return args


def grace_seconds(options: WatchOptions) -> int:
    """The pod's termination grace. SIGTERM stops the watcher between two polls: at once while it waits, else once
    the poll under way ends (its Octavia calls, then, unless ``no_reach``, a connect per zone and port that may take
    the connect timeout). After that the kubelet kills it, which is harmless: the watcher holds no state, and it
    writes the record in one call."""
    timeout = options.connect_timeout or watch_inputs.default("connect_timeout")
    return API_GRACE_SECONDS + (0 if options.no_reach else math.ceil(CONNECTS_IN_GRACE * timeout))


def labels(name: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": "ha-endpoint-watcher", "app.kubernetes.io/instance": name,
            "app.kubernetes.io/part-of": "ha-endpoint"}


def secret_manifest(spec: WatcherSpec, clouds_yaml: Any, outputs_json: Any) -> dict[str, Any]:
    """The ``Secret`` (``clouds_yaml`` and ``outputs_json`` may be Inputs). It has no name: the program names it
    (``<resource name>-<suffix>``), so that a change of either file makes a new Secret and the Deployment, which
    names it, restarts its pod on the new files."""
    return config_secret({"namespace": spec.namespace, "labels": labels(spec.name)}, clouds_yaml, outputs_json)


def deployment_manifest(spec: WatcherSpec, secret_name: Any) -> dict[str, Any]:
    """The ``Deployment``: one replica, ``Recreate`` (the old pod is gone before the new one starts: two watchers
    must never write the record at once), the Secret ``secret_name`` (may be an Input) mounted read-only."""
    matching = selector(labels(spec.name))
    container = {
        "name": CONTAINER,
        "image": spec.image,
        "command": list(COMMAND),
        "args": watcher_args(spec.stack, spec.options),
        "env": config_env(spec.cloud),
        "volumeMounts": config_mounts(),
        "resources": resources(spec.resources),
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "capabilities": {"drop": ["ALL"]}},
    }
    pod = {
        "automountServiceAccountToken": False,
        "terminationGracePeriodSeconds": grace_seconds(spec.options),
        "securityContext": pod_security(),
        "containers": [container],
        "volumes": config_volumes(secret_name),
    }
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": spec.name, "namespace": spec.namespace, "labels": labels(spec.name)},
            "spec": {"replicas": 1, "strategy": {"type": "Recreate"}, "selector": {"matchLabels": matching},
                     "template": {"metadata": {"labels": labels(spec.name)}, "spec": pod}}}

"""The stack program's Kubernetes part: ``ha-endpoint:kubernetes`` -> kubeconfig export (and Cluster API objects, and
the DNS watcher's Deployment).

A stack program beside ``stacks/endpoint_stack.py``, which calls it only when the key is set, so that stacks without it
never import pulumi-kubernetes. :func:`load` runs before the endpoint registers anything (bad input creates nothing);
:func:`build` after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import pulumi
from pulumi.runtime.config import is_config_secret

from ha_endpoint.kubernetes.access import ClusterAccess, Credentials
from ha_endpoint.kubernetes.cluster_api import ClusterApi
from ha_endpoint.kubernetes.endpoint_ref import EndpointRef
from ha_endpoint.kubernetes.settings import DEFAULT_ROOT, KubernetesSettings, load_kubernetes_settings
from ha_endpoint.kubernetes.watcher_deployment import WatcherDeployment

KUBECONFIG_OUTPUT = "kubeconfig"
CONTROL_PLANE_ENDPOINT_OUTPUT = "controlPlaneEndpoint"


@dataclass
class KubernetesParts:
    """What :func:`build` made."""

    access: ClusterAccess
    cluster_api: Optional[ClusterApi]
    watcher: Optional[WatcherDeployment] = None


def load(raw: Any, endpoint_args: Any, root: str = DEFAULT_ROOT, endpoint_root: str = "ha-endpoint:endpoint"
         ) -> KubernetesSettings:
    """The settings, checked against the endpoint's arguments; a private key or token stored in plain text in the
    stack's file is refused (the key must be a secret)."""
    return load_kubernetes_settings(raw, endpoint_args, root, endpoint_root, encrypted=is_config_secret(root))


def build(settings: KubernetesSettings, endpoint: Any, root: str = DEFAULT_ROOT,
          endpoint_root: str = "ha-endpoint:endpoint") -> KubernetesParts:
    """The kubeconfig (exported as ``kubeconfig``, a secret), with ``clusterApi`` the Cluster API objects (their
    endpoint exported as ``controlPlaneEndpoint``), with ``watcher`` the DNS watcher's Deployment (both in the
    default Kubernetes provider's cluster)."""
    ref = EndpointRef.of(endpoint, root)
    name = endpoint.plan.name
    credentials = settings.credentials
    access = ClusterAccess(name, ref, Credentials(credentials.ca_certificate, credentials.client_certificate,
                                                  credentials.client_key, credentials.token),
                           api_port=settings.api_port, cluster_name=settings.cluster_name, user=settings.user)
    pulumi.export(KUBECONFIG_OUTPUT, access.kubeconfig)
    cluster_api = None
    if settings.cluster_api is not None:
        cluster_api = ClusterApi(name, ref, settings.cluster_api.model_copy(
            update={"name": settings.cluster_api.name or access.cluster_name}), api_port=settings.api_port, root=root,
            settings_naming_the_endpoint=f"{endpoint_root}.dns (dnsZone, record) and {root}.apiPort (or the listener "
                                         "port it defaults to)")
        pulumi.export(CONTROL_PLANE_ENDPOINT_OUTPUT, cluster_api.control_plane_endpoint)
    watcher = None
    if settings.watcher is not None:
        spec = settings.watcher.spec(name, ref.stack)
        clouds_yaml = settings.watcher.clouds_yaml
        watcher = WatcherDeployment(spec.name, ref, None if clouds_yaml is None else pulumi.Output.secret(clouds_yaml),
                                    spec.cloud, spec.image, namespace=spec.namespace, options=spec.options,
                                    resources=spec.resources, root=f"{root}.watcher",
                                    credential=settings.watcher.credential)
    return KubernetesParts(access, cluster_api, watcher)

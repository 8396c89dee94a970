"""The Kubernetes side of the endpoint (optional; ``pip install 'ha-endpoint[kubernetes]'``).

    from ha_endpoint.kubernetes import ClusterAccess, ClusterApi, Credentials, EndpointRef, WatcherDeployment

- :class:`ClusterAccess`: a kubeconfig (secret Output) whose server is the endpoint's DNS name and API port, and a
  ``pulumi_kubernetes.Provider`` built from it; both wait for the endpoint's DNS records.
- :class:`ClusterApi`: a Cluster API ``Cluster`` (v1beta2) and ``OpenStackCluster`` (v1beta1) with the endpoint as their
  ``controlPlaneEndpoint``, CAPO's own API load balancer and floating IP disabled, guarded against a later change of
  that endpoint (:class:`ControlPlaneEndpointGuard`).
- :class:`WatcherDeployment`: the DNS watcher (``python -m ha_endpoint.watch``) as a Deployment of one pod and a
  Secret with its OpenStack credentials and the endpoint's outputs, in the cluster of the provider it inherits;
  its thresholds are :class:`WatchOptions`.
- :class:`AgentDeployment`: the member agent (``python -m ha_endpoint.agent``: members that follow a Cluster API
  cluster's control-plane Machines) as a Deployment of two replicas with its RBAC; its tuning is
  :class:`AgentOptions` (docs/agent.md).
- :class:`EndpointRef`: the endpoint as these read it, from an ``HaEndpoint`` or a ``StackReference``.

Not here, on purpose: discovering the endpoint's members from Kubernetes ``Node`` objects. Nodes exist only once the
API answers through this endpoint, which needs members first (the bootstrap circularity that ``dns.publish:
bootstrap`` resolves). Cluster API ``Machine`` objects, in the management cluster, have their addresses and failure
domains before the API answers: ``memberSources.clusterApi`` reads members from them (:mod:`ha_endpoint.members`).

This package imports pulumi-kubernetes; ``import ha_endpoint`` and every other module of it never do.
"""

from ..core.errors import MissingKubernetesSdk

try:
    import pulumi_kubernetes  # noqa: F401
except ImportError as _missing:  # pragma: no cover - exercised by a subprocess test
    raise MissingKubernetesSdk(
        "ha_endpoint.kubernetes needs pulumi-kubernetes, which is not installed in this program's environment: "
        "pip install 'ha-endpoint[kubernetes]' (or remove ha-endpoint:kubernetes from the stack's configuration)"
    ) from _missing

from .agent_deployment import AgentDeployment
from .agent_manifests import AgentOptions
from .access import ClusterAccess, Credentials, KubeconfigError
from .cluster_api import ClusterApi
from .credential import CredentialSettings
from .endpoint_ref import EndpointRef, NodeSubnet, NotPublished
from .guard import ControlPlaneEndpointGuard
from .kubeconfig import render_kubeconfig, server_url
from .settings import (ClusterApiSettings, ControlPlaneRefSettings, CredentialsSettings, IdentityRefSettings,
                       KubernetesSettings, WatcherSettings, load_kubernetes_settings)
from .watcher_deployment import WatcherDeployment
from .watcher_manifests import WatchOptions

__all__ = [
    "AgentDeployment", "AgentOptions", "ClusterAccess", "ClusterApi", "ClusterApiSettings", "ControlPlaneEndpointGuard", "ControlPlaneRefSettings",
    "CredentialSettings", "Credentials", "CredentialsSettings", "EndpointRef", "IdentityRefSettings", "KubeconfigError",
    "KubernetesSettings", "NodeSubnet", "NotPublished", "WatchOptions", "WatcherDeployment", "WatcherSettings",
    "load_kubernetes_settings", "render_kubeconfig", "server_url",
]

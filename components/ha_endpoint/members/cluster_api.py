"""The ``clusterApi`` member source: the control-plane Machines of one Cluster API cluster, read from its management
cluster with the official Kubernetes client, at preview and up.

Which Machines, and what a Machine means as a member (its address from ``status.addresses`` of the configured type,
its zone from ``spec.failureDomain``, taken out while it carries the maintenance annotation, a problem naming it when
it has no address or failure domain), is :func:`ha_endpoint.agent.machines.members_from_machines`'s: the member
agent reads Machines through the same function, so a Machine is the same member to both. A Machine being deleted is
left out (its member is drained by the agent, or leaves at this update). A member's subnet is ``subnets[<zone>]``
when given, else its zone's VIP subnet.

The management cluster is reached with ``kubeconfig`` (a file), else ``KUBECONFIG`` or ``~/.kube/config``, else the
in-cluster service account. A failed read (unreachable, refused, no Machine resource) fails the preview with what the
API said and the fix; it is never taken for "no Machines".
"""

from __future__ import annotations

import os
from typing import Any

from ..agent.inputs import AGENT_TAG_PREFIX, agent_tag
from ..agent.machines import MachineSource, members_from_machines
from ..core.args import ClusterApiSourceArgs, EndpointArgs, MemberArgs
from ..core.errors import ConfigError, Problem

KEY = "memberSources.clusterApi"
GROUP = "cluster.x-k8s.io"
VERSIONS = ("v1beta2", "v1beta1")
"""The Machine versions read, newest first (v1beta2 is served from Cluster API v1.11; v1beta1 until v1.16)."""


class ClusterApiSource:
    """``memberSources.clusterApi``: the Machines of ``settings``' cluster."""

    key = KEY

    def __init__(self, settings: ClusterApiSourceArgs):
        self.settings = settings
        self.machines = MachineSource(cluster=settings.cluster, namespace=settings.namespace,
                                      selector=settings.selector, addressType=str(settings.address_type))

    def read(self, args: EndpointArgs) -> tuple[list[MemberArgs], list[Problem]]:
        subnets = self.settings.subnets or {}
        unknown = sorted(set(subnets) - set(args.zones))
        if unknown:
            raise ConfigError([Problem(f"{KEY}.subnets.{az}", f"'{az}' is not a zone of the endpoint (it has "
                                       f"{', '.join(sorted(args.zones))}); key subnets by the zones whose Machines "
                                       "are not on the zone's VIP subnet") for az in unknown])
        found, problems = members_from_machines(self.list_machines(), self.machines)
        members = []
        for machine in found:
            if machine.deleting:
                continue
            member = MemberArgs(name=machine.name, az=machine.az, address=machine.address, enabled=machine.enabled,
                                subnet=subnets.get(machine.az))
            member._source = "clusterApi"
            member._origin = f"{KEY}[Machine {self.machines.namespace}/{machine.name}]"
            member._agent_tag = agent_tag(self.machines)  # up leaves such members alone (docs/members.md)
            members.append(member)
        return members, [Problem(f"{KEY}: {problem.path}", problem.message) for problem in problems]

    def list_machines(self) -> list[dict[str, Any]]:
        """The Machines the selector selects, as the API returns them (dicts)."""
        try:
            from kubernetes import client, config
            from kubernetes.client.rest import ApiException
        except ImportError:
            raise ConfigError([Problem(KEY, "reading Machines needs the Kubernetes client, which is not installed in "
                                       "this program's environment: pip install 'ha-endpoint[kubernetes]', or "
                                       "remove memberSources.clusterApi")]) from None
        api = client.CustomObjectsApi(self._api_client(config))
        where = f"Machines of cluster {self.machines.cluster} in namespace {self.machines.namespace}"
        for version in VERSIONS:
            try:
                listed = api.list_namespaced_custom_object(GROUP, version, self.machines.namespace, "machines",
                                                           label_selector=self.machines.label_selector,
                                                           _request_timeout=30)
            except ApiException as error:
                if error.status == 404 and version != VERSIONS[-1]:
                    continue  # an older Cluster API: the next version
                raise ConfigError([Problem(KEY, f"the management cluster refused to list the {where} ({version}): "
                                           f"{error.status} {error.reason}; {_fix(error.status)}")]) from None
            except Exception as error:  # urllib3's connection errors, timeouts, TLS failures
                raise ConfigError([Problem(KEY, f"the management cluster could not be reached to list the {where}: "
                                           f"{type(error).__name__}: {_last_line(error)}; check kubeconfig (its "
                                           "server, credentials and CA) and that the API server answers")]) from None
            return list(listed.get("items") or [])
        return []  # pragma: no cover - the loop returns or raises

    def _api_client(self, config: Any) -> Any:
        path = self.settings.kubeconfig
        if path is None and not os.environ.get("KUBECONFIG") and \
                not os.path.exists(os.path.expanduser("~/.kube/config")) and \
                os.environ.get("KUBERNETES_SERVICE_HOST"):
            config.load_incluster_config()
            from kubernetes import client
            return client.ApiClient()
        try:
            return config.new_client_from_config(config_file=os.path.expanduser(path) if path else None)
        except Exception as error:  # a missing or unreadable file, a kubeconfig without a current context
            raise ConfigError([Problem(f"{KEY}.kubeconfig", f"the kubeconfig of the management cluster could not be "
                                       f"loaded ({_last_line(error)}); give the path of a kubeconfig file that "
                                       "reaches it, or set KUBECONFIG")]) from None


def _fix(status: int) -> str:
    if status in (401, 403):
        return ("give credentials that may list machines.cluster.x-k8s.io in that namespace (a Role with get and list "
                "on machines)")
    if status == 404:
        return "install Cluster API in the management cluster, or check namespace and kubeconfig"
    return "retry once the management cluster answers; nothing was changed"


def _last_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[-1] if text else type(error).__name__

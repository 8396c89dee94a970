"""Access to the cluster behind the endpoint for downstream programs: a kubeconfig (a secret Output) and a
``pulumi_kubernetes.Provider`` built from it.

    access = ClusterAccess("k8s", endpoint, Credentials(ca_certificate=ca, client_certificate=crt, client_key=key))
    pulumi.export("kubeconfig", access.kubeconfig)
    app = k8s.core.v1.Namespace("app", opts=pulumi.ResourceOptions(provider=access.provider()))

The kubeconfig resolves only after the endpoint's DNS records exist (see :mod:`.endpoint_ref`), and a resource given
the Provider depends on the records through it: nothing talks to the API before its name is published.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Union

import pulumi
import pulumi_kubernetes as k8s

from ..core.errors import UserError
from .endpoint_ref import EndpointRef
from .kubeconfig import KubeconfigUser, api_host, pick_api_port, render_kubeconfig, server_url

PROVIDER_SUFFIX = "-k8s"
"""The Provider's resource name is the access name with this suffix (``k8s`` -> ``k8s-k8s``)."""


@dataclass(frozen=True)
class Credentials:
    """The cluster's CA certificate and how to authenticate: a client certificate and key, or a token. Each may be
    an Output (e.g. read from another stack or a secret store); all are treated as secrets."""

    ca_certificate: pulumi.Input[str]
    """PEM text of the cluster CA (or its base64, as in a kubeconfig's certificate-authority-data)."""
    client_certificate: Optional[pulumi.Input[str]] = None
    """PEM client certificate (or its base64), with client_key."""
    client_key: Optional[pulumi.Input[str]] = None
    """PEM private key of the client certificate (or its base64)."""
    token: Optional[pulumi.Input[str]] = None
    """A bearer token, instead of the client certificate and key."""


class KubeconfigError(UserError):
    """The kubeconfig cannot be written from what was given (the message names the field, never its value)."""


class ClusterAccess:
    """The kubeconfig of the cluster behind ``endpoint`` and a Provider built from it.

    ``endpoint`` is an :class:`~ha_endpoint.HaEndpoint` of this program or an :class:`EndpointRef` (e.g.
    ``EndpointRef.from_stack_reference(ref)``). ``api_port`` is the endpoint port serving the API (default: 6443 if
    the endpoint listens on it, else its only port); ``cluster_name`` names the kubeconfig's cluster and context
    (default: ``name``); ``user`` its user (default: ``<cluster_name>-admin``).
    """

    def __init__(self, name: str, endpoint: Union[EndpointRef, Any], credentials: Credentials,
                 api_port: Optional[int] = None, cluster_name: Optional[str] = None, user: Optional[str] = None):
        self.name = name
        self.endpoint = endpoint if isinstance(endpoint, EndpointRef) else EndpointRef.of(endpoint)
        self.cluster_name = cluster_name or name
        self.user = user or f"{self.cluster_name}-admin"
        ports = self.endpoint.ports
        self.api_port: pulumi.Output[int] = (  # checked at once when the ports are known (a same-program endpoint)
            pulumi.Output.from_input(_port(ports, api_port)) if isinstance(ports, list)
            else pulumi.Output.from_input(ports).apply(lambda known: _port(known, api_port)))
        """The endpoint port that serves the API."""
        self.host: pulumi.Output[str] = pulumi.Output.from_input(self.endpoint.fqdn).apply(api_host)
        """The API server's host name: the endpoint's DNS name without the trailing dot."""
        self.server: pulumi.Output[str] = pulumi.Output.all(self.endpoint.fqdn, self.api_port).apply(
            lambda values: server_url(values[0], values[1]))
        """``https://<host>:<port>``."""
        secrets = pulumi.Output.secret(pulumi.Output.all(
            credentials.ca_certificate, credentials.client_certificate, credentials.client_key, credentials.token))
        self.kubeconfig: pulumi.Output[str] = pulumi.Output.secret(pulumi.Output.all(
            self.server, self.endpoint.published, secrets).apply(lambda values: self._render(values[0], *values[2])))
        """The kubeconfig (YAML), a secret; resolves once the endpoint's DNS records exist."""
        self._provider: Optional[k8s.Provider] = None

    def _render(self, server: str, ca: Optional[str], certificate: Optional[str], key: Optional[str],
                token: Optional[str]) -> str:
        if not ca:
            raise KubeconfigError(f"{self.name}: the cluster CA certificate is empty; give its PEM text")
        try:
            return render_kubeconfig(server, self.cluster_name, self.user, ca,
                                     KubeconfigUser(certificate or None, key or None, token or None))
        except ValueError as error:
            raise KubeconfigError(f"{self.name}: {error}") from None

    def provider(self, opts: Optional[pulumi.ResourceOptions] = None, **provider_args: Any) -> k8s.Provider:
        """The ``pulumi_kubernetes.Provider`` of the cluster (created on first call, named ``<name>-k8s``), with the
        kubeconfig and its context; ``provider_args`` go to the Provider as they are (e.g. ``namespace``)."""
        if self._provider is None:
            self._provider = k8s.Provider(f"{self.name}{PROVIDER_SUFFIX}", kubeconfig=self.kubeconfig,
                                          context=self.cluster_name, opts=opts, **provider_args)
        return self._provider


def _port(ports: list, wanted: Optional[int]) -> int:
    try:
        return pick_api_port([int(port) for port in ports or []], wanted)
    except ValueError as error:
        raise KubeconfigError(f"apiPort: {error}") from None

"""The ``ha-endpoint:kubernetes`` configuration: access to the cluster behind the endpoint and, optionally, its
Cluster API objects. Parsed with pydantic like ``ha-endpoint:endpoint``, with the same messages (one line per problem,
the key path and the fix, no traceback): :class:`~ha_endpoint.core.errors.ConfigError` of
:class:`~ha_endpoint.core.errors.Problem`.

Pure: nothing here talks to a cloud or a cluster, and nothing imports pulumi-kubernetes.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Iterable, Mapping, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.alias_generators import to_camel

from ..core.errors import ConfigError, Problem
from ..core.messages import problems_from_pydantic  # the one pydantic -> Problem translation
from .credential import CredentialSettings, credential_problems
from .kubeconfig import CERTIFICATE_LABELS, KEY_LABELS, CredentialError, pem_data, pick_api_port
from .manifests import CONTROL_PLANE_GROUP, not_a_k8s_name
from .watcher_manifests import DEFAULT_RESOURCES, WatcherSpec, WatchOptions, clouds_problems, spec_problems

DEFAULT_ROOT = "ha-endpoint:kubernetes"
SECRET_FIELDS = ("clientKey", "token")


class _Settings(BaseModel):
    """camelCase keys (snake_case accepted), unknown keys refused, immutable, docstrings as descriptions."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True,
                              str_strip_whitespace=True, use_attribute_docstrings=True)


def _k8s_name(value: Optional[str]) -> Optional[str]:
    if value is not None and (why := not_a_k8s_name(value)) is not None:
        raise ValueError(why)
    return value


class CredentialsSettings(_Settings):
    """How clients authenticate to the cluster. Store these encrypted: ``pulumi config set --secret --path
    'ha-endpoint:kubernetes.credentials.clientKey' -- "$(cat admin.key)"``."""

    ca_certificate: str
    """The cluster CA certificate: PEM text (or its base64, as in a kubeconfig's certificate-authority-data)."""
    client_certificate: Optional[str] = None
    """A client certificate (PEM or its base64), with clientKey."""
    client_key: Optional[str] = None
    """The client certificate's private key (PEM or its base64)."""
    token: Optional[str] = None
    """A bearer token, instead of clientCertificate and clientKey."""

    @field_validator("ca_certificate", "client_certificate")
    @classmethod
    def _certificate(cls, value: Optional[str]) -> Optional[str]:
        if value is not None:
            _pem(value, "a certificate", CERTIFICATE_LABELS)
        return value

    @field_validator("client_key")
    @classmethod
    def _key(cls, value: Optional[str]) -> Optional[str]:
        if value is not None:
            _pem(value, "a private key", KEY_LABELS)
        return value


def _pem(value: str, what: str, labels: tuple[str, ...]) -> None:
    try:
        pem_data(value, what, labels)
    except CredentialError as error:
        raise ValueError(str(error)) from None


class IdentityRefSettings(_Settings):
    """The OpenStack credentials CAPO uses for this cluster: a Secret with a clouds.yaml, in the cluster's
    namespace."""

    name: str = Field(min_length=1)
    """The Secret's name (its clouds.yaml key holds CAPO's clouds.yaml)."""
    cloud_name: str = Field(min_length=1)
    """The clouds.yaml entry to use."""
    region: Optional[str] = None
    """The OpenStack region, overriding the clouds.yaml entry's."""


class ControlPlaneRefSettings(_Settings):
    """The cluster's control plane object (e.g. a KubeadmControlPlane you declare), referenced by the Cluster."""

    name: str
    """Its name, in the cluster's namespace."""
    kind: str = "KubeadmControlPlane"
    """Its kind."""
    api_group: str = CONTROL_PLANE_GROUP
    """Its API group (Cluster v1beta2 references name a group; the version is the one its contract serves)."""

    _name = field_validator("name")(classmethod(lambda cls, value: _k8s_name(value)))

    @model_validator(mode="before")
    @classmethod
    def _no_api_version(cls, value: Any) -> Any:
        if isinstance(value, Mapping) and ("apiVersion" in value or "api_version" in value):
            given = value.get("apiVersion", value.get("api_version"))
            group = str(given).split("/")[0] if given else CONTROL_PLANE_GROUP
            raise ValueError(f"apiVersion is gone: the Cluster is Cluster API v1beta2, whose references name an API "
                             f"group, not a version; replace apiVersion: {given} by apiGroup: {group}")
        return value


class ClusterApiSettings(_Settings):
    """A Cluster API ``Cluster`` and ``OpenStackCluster`` whose controlPlaneEndpoint is the endpoint (created in the
    management cluster of the default Kubernetes provider: ``kubernetes:kubeconfig`` / ``kubernetes:context``)."""

    identity_ref: IdentityRefSettings
    """CAPO's OpenStack credentials (OpenStackCluster.spec.identityRef)."""
    name: Optional[str] = None
    """The Cluster's and OpenStackCluster's name; defaults to clusterName."""
    namespace: str = "default"
    """Their namespace in the management cluster."""
    control_plane_ref: Optional[ControlPlaneRefSettings] = None
    """The cluster's control plane object, if any."""
    pods: list[str] = []
    """Pod CIDR blocks (Cluster.spec.clusterNetwork.pods)."""
    services: list[str] = []
    """Service CIDR blocks (Cluster.spec.clusterNetwork.services)."""
    service_domain: Optional[str] = None
    """The services' DNS domain (Cluster.spec.clusterNetwork.serviceDomain)."""
    network: Optional[str] = None
    """The control-plane nodes' network (id or name); defaults to the endpoint members' network."""
    subnets: Optional[list[str]] = Field(None, max_length=2)
    """Subnets (ids or names) of CAPO's cluster network, at most one IPv4 and one IPv6; defaults to the members'
    subnets when they fit that shape; [] lets CAPO use every subnet of the network."""
    managed_security_groups: bool = True
    """Let CAPO create its control-plane and worker security groups (OpenStackCluster.spec.managedSecurityGroups)."""
    allow_all_in_cluster_traffic: bool = False
    """With managed security groups: allow all traffic between the cluster's nodes."""
    tags: list[str] = []
    """Tags CAPO puts on what it creates."""

    _names = field_validator("name", "namespace")(classmethod(lambda cls, value: _k8s_name(value)))


class WatcherSettings(_Settings):
    """The DNS watcher (``python -m ha_endpoint.watch``) as a Deployment of one pod and a Secret, in the cluster of
    the default Kubernetes provider (``kubernetes:kubeconfig`` / ``kubernetes:context``), like clusterApi. The
    thresholds are the watcher's options; unset ones keep its defaults."""

    image: str
    """The container image: Python 3.11 or later on its PATH, with this package installed (pip install
    ha-endpoint); there is no published image."""
    credential: Optional[CredentialSettings] = None
    """The watcher's own application credential, made by the stack and allowed only the watcher's calls on this
    endpoint (docs/security.md); instead of cloudsYaml."""
    clouds_yaml: Optional[str] = None
    """The watcher's OpenStack credentials made elsewhere: the content of a clouds.yaml (store it encrypted); instead
    of credential."""
    cloud: str
    """The clouds.yaml entry to use (OS_CLOUD); with credential, the name of the entry written."""
    region: Optional[str] = None
    """The OpenStack region, overriding the entry's."""
    name: Optional[str] = None
    """The Deployment's name; defaults to <the endpoint's name>-watcher."""
    namespace: str = "default"
    """The namespace of the Deployment and its Secret (it must exist)."""
    interval: Optional[float] = None
    """Seconds between polls (the watcher's default: 5)."""
    unhealthy_polls: Optional[int] = Field(None, strict=True)
    """Unhealthy polls in a row before a zone leaves DNS (default 3)."""
    healthy_polls: Optional[int] = Field(None, strict=True)
    """Healthy polls in a row before it comes back (default 3)."""
    connect_timeout: Optional[float] = None
    """Seconds a connect to a zone's address may take (default 2)."""
    no_reach: bool = False
    """Judge by Octavia only (for a cluster whose pods do not reach the endpoint's addresses)."""
    dry_run: bool = False
    """Log what would change, write nothing."""
    resources: dict[str, dict[str, str]] = Field(default_factory=lambda: {
        kind: dict(values) for kind, values in DEFAULT_RESOURCES.items()})
    """The container's requests and limits."""

    def options(self) -> WatchOptions:
        """The watcher's options."""
        return WatchOptions(**{option.name: getattr(self, option.name) for option in fields(WatchOptions)})

    def spec(self, endpoint_name: str, stack: str) -> WatcherSpec:
        """What the Deployment is made of, for the endpoint ``endpoint_name`` of ``stack``."""
        return WatcherSpec(name=self.name or f"{endpoint_name}-watcher", image=self.image, cloud=self.cloud,
                           resources=self.resources, namespace=self.namespace, stack=stack, options=self.options())


class KubernetesSettings(_Settings):
    """``ha-endpoint:kubernetes``: the cluster served behind the endpoint."""

    credentials: CredentialsSettings
    """The cluster CA and the client's credentials (secrets)."""
    api_port: Optional[int] = Field(None, ge=1, le=65535, strict=True)
    """The endpoint port serving the Kubernetes API; defaults to 6443 if the endpoint listens on it, else its only
    port."""
    cluster_name: Optional[str] = None
    """The kubeconfig's cluster and context name; defaults to the endpoint's name."""
    user: Optional[str] = None
    """The kubeconfig's user name; defaults to <clusterName>-admin."""
    cluster_api: Optional[ClusterApiSettings] = None
    """Also create the cluster's Cluster API objects (optional)."""
    watcher: Optional[WatcherSettings] = None
    """Also deploy the DNS watcher beside the cluster (optional)."""

    _cluster_name = field_validator("cluster_name")(classmethod(lambda cls, value: _k8s_name(value)))


def load_kubernetes_settings(raw: Any, endpoint: Any, root: str = DEFAULT_ROOT,
                             endpoint_root: str = "ha-endpoint:endpoint", encrypted: bool = True
                             ) -> KubernetesSettings:
    """Parse ``raw`` and check it against ``endpoint`` (its :class:`~ha_endpoint.EndpointArgs`); raise
    :class:`ConfigError` listing every problem. ``encrypted`` says whether the stack stores the key as a secret
    (a private key or token in plain text is refused)."""
    if isinstance(raw, KubernetesSettings):
        settings = raw
    else:
        if not isinstance(raw, Mapping):
            raise ConfigError([Problem(root, f"must be a mapping of settings, got {type(raw).__name__}; see "
                                             "README.md 'Kubernetes' for an example")])
        try:
            settings = KubernetesSettings.model_validate(dict(raw))
        except ValidationError as error:
            raise ConfigError(problems_from_pydantic(error, root, KubernetesSettings)) from None
    problems = check_kubernetes_settings(settings, endpoint, root, endpoint_root, encrypted)
    if problems:
        raise ConfigError(problems)
    return settings


def check_kubernetes_settings(settings: KubernetesSettings, endpoint: Any, root: str = DEFAULT_ROOT,
                              endpoint_root: str = "ha-endpoint:endpoint", encrypted: bool = True
                              ) -> list[Problem]:
    """Every problem that relates fields to each other or to the endpoint's settings."""
    return [*_check_endpoint(settings, endpoint, root, endpoint_root),
            *_check_credentials(settings.credentials, f"{root}.credentials", encrypted),
            *(_check_watcher(settings.watcher, endpoint, f"{root}.watcher", encrypted) if settings.watcher else [])]


def _check_endpoint(settings: KubernetesSettings, endpoint: Any, root: str, endpoint_root: str
                    ) -> Iterable[Problem]:
    if endpoint.dns is None:
        yield Problem(root, f"the cluster is reached by the endpoint's DNS name, and {endpoint_root} has no dns; add "
                            "dns (dnsZone, record) to it, or remove this key")
    ports = [listener.port for listener in endpoint.listeners]
    try:
        pick_api_port(ports, settings.api_port)
    except ValueError as error:
        yield Problem(f"{root}.apiPort", str(error))


def _check_credentials(credentials: CredentialsSettings, path: str, encrypted: bool) -> Iterable[Problem]:
    pair = (credentials.client_certificate, credentials.client_key)
    if credentials.token and any(pair):
        yield Problem(f"{path}.token", "give either a token or clientCertificate and clientKey, not both")
    elif not credentials.token and not all(pair):
        missing = "clientKey" if pair[0] else "clientCertificate"
        yield Problem(f"{path}.{missing}" if any(pair) else path,
                      f"{missing} is missing; give clientCertificate and clientKey together"
                      if any(pair) else "no client credentials; give clientCertificate and clientKey, or token")
    if not encrypted:
        for key in SECRET_FIELDS:
            if getattr(credentials, "client_key" if key == "clientKey" else key):
                yield _plain_text(f"{path}.{key}", "<file>")


def _plain_text(path: str, file: str) -> Problem:
    return Problem(path, f"is stored in plain text in the stack's file; store it encrypted: pulumi config set "
                         f"--secret --path '{path}' -- \"$(cat {file})\"")


def _check_watcher(watcher: WatcherSettings, endpoint: Any, path: str, encrypted: bool) -> list[Problem]:
    problems = spec_problems(watcher.spec(endpoint.name, "<this stack>"), path, to_camel)
    problems += credential_problems(watcher.clouds_yaml, watcher.credential, path, snake=False)[1]
    if watcher.clouds_yaml is None:
        return problems
    problems += clouds_problems(watcher.clouds_yaml, watcher.cloud, f"{path}.cloudsYaml")
    if not encrypted:
        problems.append(_plain_text(f"{path}.cloudsYaml", "clouds.yaml"))
    return problems

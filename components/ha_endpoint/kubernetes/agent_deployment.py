"""AgentDeployment: the member agent (``python -m ha_endpoint.agent``) beside a Cluster API management cluster.

    agent = AgentDeployment("member-agent", endpoint, cluster="prod", namespace="capi-prod",
                            clouds_yaml=config.require_secret("cloudsYaml"), cloud="openstack",
                            image="registry.example/ha-endpoint:0.1.0",
                            opts=pulumi.ResourceOptions(provider=management))

A component (``haendpoint:kubernetes:AgentDeployment``) whose children are the agent's ServiceAccount, Role and
RoleBinding (exactly what it calls, in the cluster's namespace), a Secret (clouds.yaml and the endpoint's zones,
pools and record) and a Deployment of two replicas electing a leader on a Lease (manifests: :mod:`.agent_manifests`). Deploy it
to the management cluster, which does not depend on this endpoint; docs/agent.md says how and why.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional, Union

import pulumi
import pulumi_kubernetes as k8s
from pydantic import ValidationError

from ..agent.machines import MachineSource
from ..backends import REGISTRY
from ..core import contract
from ..core.args import DEFAULT_BACKEND
from ..core.errors import ConfigError, Problem
from .agent_manifests import (DEFAULT_RESOURCES, AgentOptions, AgentSpec, deployment_manifest, role_binding_manifest,
                              role_manifest, secret_manifest, service_account_manifest, spec_problems)
from .credential import AGENT_ROLES, ScopedCredential, credential_problems
from .endpoint_ref import EndpointRef
from .watcher_manifests import clouds_problems

AGENT_DEPLOYMENT_TYPE = "haendpoint:kubernetes:AgentDeployment"


def agent_outputs(zones: Mapping[str, Any], fqdn: Optional[str] = None) -> dict[str, Any]:
    """What the agent reads of the endpoint's outputs: per zone its load balancer and pools and, with the endpoint's
    ``fqdn``, the zone's address in its A record (the agent takes a zone out of it before its only member leaves)."""
    keys = ("loadbalancerId", "poolIds", *(contract.PUBLISHED_ADDRESS_KEYS if fqdn else ()))
    return {**({"fqdn": fqdn} if fqdn else {}),
            "zones": {az: {key: (out or {}).get(key) for key in keys} for az, out in sorted((zones or {}).items())}}


class AgentDeployment(pulumi.ComponentResource):
    """The member agent of ``endpoint`` (an HaEndpoint or an :class:`EndpointRef`) for the control-plane Machines of
    Cluster API cluster ``cluster`` in ``namespace``. Bad input raises :class:`~ha_endpoint.ConfigError` naming the
    argument before anything is registered.

    Its OpenStack credentials: ``credential`` (:class:`~ha_endpoint.kubernetes.CredentialSettings`, or a mapping of
    its keys) makes the agent its own application credential, allowed exactly the agent's calls on this endpoint's
    pools (docs/security.md); or ``clouds_yaml`` (a secret Input, a clouds.yaml) gives it credentials made
    elsewhere. One of the two."""

    def __init__(self, name: str, endpoint: Union[EndpointRef, Any], cluster: str,
                 clouds_yaml: Optional[pulumi.Input[str]], cloud: str, image: str, namespace: str = "default",
                 address_type: str = "InternalIP", options: Optional[AgentOptions] = None,
                 resources: Optional[Mapping[str, Mapping[str, str]]] = None,
                 opts: Optional[pulumi.ResourceOptions] = None, root: Optional[str] = None,
                 credential: Optional[Any] = None):
        root = root or f"AgentDeployment({name!r})"
        ref = endpoint if isinstance(endpoint, EndpointRef) else EndpointRef.of(endpoint, root)
        problems: list[Problem] = []
        try:
            source = MachineSource(cluster=cluster, namespace=namespace, addressType=address_type)
        except ValidationError as error:
            raise ConfigError([Problem(f"{root}.{'address_type' if e['loc'][0] == 'addressType' else e['loc'][0]}",
                                       f"{e['input']!r}: {e['msg']}") for e in error.errors()]) from None
        spec = AgentSpec(name=name, image=image, cloud=cloud, resources=dict(resources or DEFAULT_RESOURCES),
                         source=source, options=options or AgentOptions())
        problems += spec_problems(spec, root)
        if ref.zones is None:
            problems.append(Problem(root, "the endpoint gives no zones; use EndpointRef.of(<HaEndpoint>) or "
                                          "EndpointRef.from_stack_reference(<StackReference>)"))
        settings, found = credential_problems(clouds_yaml, credential, root)
        problems += found
        if isinstance(clouds_yaml, str):
            problems += clouds_problems(clouds_yaml, cloud, f"{root}.clouds_yaml")
        if problems:
            raise ConfigError(problems)
        super().__init__(AGENT_DEPLOYMENT_TYPE, name, {"namespace": namespace, "cluster": cluster}, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.service_account = k8s.core.v1.ServiceAccount(
            f"{name}-sa", metadata=service_account_manifest(spec)["metadata"], opts=child)
        role = role_manifest(spec)
        self.role = k8s.rbac.v1.Role(f"{name}-role", metadata=role["metadata"], rules=role["rules"], opts=child)
        binding = role_binding_manifest(spec)
        self.role_binding = k8s.rbac.v1.RoleBinding(f"{name}-rolebinding", metadata=binding["metadata"],
                                                    role_ref=binding["roleRef"], subjects=binding["subjects"],
                                                    opts=child)
        outputs_json = pulumi.Output.all(ref.zones, ref.fqdn).apply(
            lambda values: json.dumps(agent_outputs(*values), indent=2, sort_keys=True))
        self.credential: Optional[ScopedCredential] = None
        if settings is not None:
            subnets = [subnet for _, subnet in spec.options.member_subnet]
            agent = REGISTRY[DEFAULT_BACKEND].agent  # the agent's own default (its --backend)
            calls = pulumi.Output.all(ref.zones, ref.record_id).apply(
                lambda values: agent.calls(values[0] or {}, subnets, values[1]))
            self.credential = ScopedCredential(
                f"{name}-credential", f"{ref.stack or 'ha-endpoint'}-{name}".replace("/", "-"), cloud, settings,
                AGENT_ROLES, calls, self, f"ha-endpoint member agent {namespace}/{name}: its pools' members and its record")
            clouds_yaml = self.credential.clouds_yaml
        secret = secret_manifest(spec, pulumi.Output.secret(clouds_yaml), outputs_json)
        self.secret = k8s.core.v1.Secret(f"{name}-config", metadata=secret["metadata"], type=secret["type"],
                                         string_data=secret["stringData"], opts=child)
        deployment = deployment_manifest(spec, self.secret.metadata.name)
        self.deployment = k8s.apps.v1.Deployment(
            f"{name}-deployment", metadata=deployment["metadata"], spec=deployment["spec"],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.role_binding]))
        self.register_outputs({"deployment": f"{namespace}/{name}", "cluster": cluster})

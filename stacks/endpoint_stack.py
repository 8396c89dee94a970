"""The ha-endpoint stack program: ``ha-endpoint:endpoint`` -> :class:`ha_endpoint.HaEndpoint` -> stack outputs.

Outputs (for ``pulumi stack output`` and other stacks' ``StackReference``): ``fqdn``, ``ports``, ``addresses`` (the
addresses published in DNS), ``membersSecurityGroupId``, ``vipSecurityGroupId`` and ``zones`` (per availability
zone: loadbalancerId, vipAddress, vipPortId, floatingIp, poolIds, memberIds, ready, published, gate).
"""

from __future__ import annotations

import pulumi

from ha_endpoint import HaEndpoint, load_endpoint_args
from ha_endpoint.backends import REGISTRY as BACKENDS

CONFIG_KEY = "endpoint"
KUBERNETES_KEY = "kubernetes"  # optional: a kubeconfig export (and Cluster API objects), ha_endpoint.kubernetes


def main() -> HaEndpoint:
    """Build the endpoint from the stack's configuration and export its outputs."""
    config = pulumi.Config()
    root = f"{config.name}:{CONFIG_KEY}"
    try:
        raw = config.require_object(CONFIG_KEY)
    except pulumi.config.ConfigTypeError:  # text that is not JSON: refused like any other value that is no mapping
        raw = config.require(CONFIG_KEY)
    args = load_endpoint_args(raw, root, BACKENDS)
    kubernetes_root, raw_kubernetes = f"{config.name}:{KUBERNETES_KEY}", config.get_object(KUBERNETES_KEY)
    if raw_kubernetes is not None:  # only stacks that set it import pulumi-kubernetes; checked before anything exists
        from . import kubernetes_stack as kubernetes

        kubernetes_settings = kubernetes.load(raw_kubernetes, args, kubernetes_root, root)
    provider = pulumi.Config("openstack")  # the default provider's cloud: the readiness gates poll the same one
    endpoint = HaEndpoint(args.name, args, root=root, cloud=provider.get("cloud"), region=provider.get("region"))
    pulumi.export("fqdn", endpoint.fqdn)
    pulumi.export("ports", endpoint.ports)
    pulumi.export("addresses", endpoint.addresses)
    pulumi.export("membersSecurityGroupId", endpoint.members_security_group_id)
    pulumi.export("vipSecurityGroupId", endpoint.vip_security_group_id)
    pulumi.export("zones", endpoint.zones)
    if raw_kubernetes is not None:
        kubernetes.build(kubernetes_settings, endpoint, kubernetes_root, root)  # exports kubeconfig (a secret)
    return endpoint

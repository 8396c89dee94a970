"""What the Kubernetes side needs from an endpoint, read from an :class:`~ha_endpoint.HaEndpoint` of the same program
or from the endpoint stack's outputs through a ``StackReference``.

``published`` is the dependency on DNS: an Output that resolves only once the endpoint's records exist (so, under
``dns.publish: when-ready``, once its zones are ready; under ``bootstrap`` as soon as the records exist) and carries
the records as resource dependencies. Everything built from it (the kubeconfig, the Provider) waits for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi

from ..core.errors import ConfigError, Problem, UserError


@dataclass(frozen=True)
class NodeSubnet:
    """A subnet the control-plane nodes (the endpoint's members) live on."""

    id: pulumi.Input[str]
    network_id: pulumi.Input[str]
    ip_version: int = 4
    name: str = ""


class NotPublished(UserError):
    """The endpoint publishes no address yet, so its name does not resolve and no client can reach the API."""


@dataclass(frozen=True)
class EndpointRef:
    """The endpoint as the Kubernetes side sees it. Build it with :meth:`of` or :meth:`from_stack_reference`."""

    fqdn: pulumi.Input[str]
    """The endpoint's DNS name (a trailing dot is allowed)."""
    ports: pulumi.Input[list]
    """The ports the endpoint listens on."""
    published: pulumi.Input[Any]
    """Resolves (to the published addresses) once the DNS records exist; carries their dependency."""
    azs: pulumi.Input[list]
    """The availability zones of the endpoint (the control plane's AZs)."""
    member_ports: dict[int, int] = field(default_factory=dict)
    """Listener port -> the port the members (the API servers) listen on, when known."""
    node_subnets: Optional[dict[str, tuple[NodeSubnet, ...]]] = None
    """Per AZ, the subnets of the members (control-plane nodes) there; None when unknown (a StackReference)."""
    floating_network_id: Optional[pulumi.Input[str]] = None
    """The external network of the endpoint's floating IPs; None for an internal endpoint or when unknown."""
    internal: Optional[bool] = None
    """True for an endpoint without floating IPs, False with them, None when unknown."""
    zones: Optional[pulumi.Input[dict]] = None
    """The endpoint's ``zones`` output (per AZ: loadbalancerId, poolIds, floatingIp, vipAddress, ...): what the DNS
    watcher polls; None when unknown."""
    record_id: Optional[pulumi.Input[str]] = None
    """The id of the endpoint's A record, ``<DNS zone id>/<recordset id>`` (what the DNS watcher writes; its scoped
    credential is pinned to it); None when unknown (a StackReference)."""
    stack: Optional[str] = None
    """``<project>/<stack>`` of the endpoint (the identity its objects carry); None when unknown (a StackReference
    does not say it as a plain value)."""

    @classmethod
    def of(cls, endpoint: Any, root: str = "ha-endpoint:kubernetes",
           endpoint_root: str = "ha-endpoint:endpoint") -> "EndpointRef":
        """From an :class:`~ha_endpoint.HaEndpoint` of this program (its plan, ``records`` and ``zone_records``)."""
        plan = endpoint.plan
        if plan.dns is None or endpoint.records is None:
            raise ConfigError([Problem(root, f"the cluster is reached by the endpoint's DNS name, and "
                                             f"{endpoint_root} has no dns; add dns (dnsZone, record) to it")])
        records = [endpoint.records, *endpoint.zone_records.values()]
        published = pulumi.Output.all(*[record.id for record in records], endpoint.records.records).apply(
            lambda values: _published(values[-1], plan.dns.fqdn))
        listeners = plan.zones[0].listeners
        subnets: dict[str, list[NodeSubnet]] = {zone.az: [] for zone in plan.zones}
        for member in plan.members:
            subnet = NodeSubnet(member.subnet.id, member.subnet.network_id, member.subnet.ip_version,
                                member.subnet.name)
            if subnet not in subnets.setdefault(member.az, []):
                subnets[member.az].append(subnet)
        return cls(
            fqdn=plan.dns.fqdn,
            ports=sorted(listener.port for listener in listeners),
            published=published,
            azs=[zone.az for zone in plan.zones],
            member_ports={listener.port: listener.member_port for listener in listeners},
            node_subnets={az: tuple(found) for az, found in subnets.items()},
            floating_network_id=plan.floating_network_id,
            internal=plan.floating_network_id is None,
            zones=endpoint.zones,
            record_id=endpoint.records.id,
            stack=f"{plan.identity.project}/{plan.identity.stack}",
        )

    @classmethod
    def from_stack_reference(cls, ref: pulumi.StackReference) -> "EndpointRef":
        """From the endpoint stack's outputs (``fqdn``, ``ports``, ``addresses``, ``zones``): the name, the ports,
        the published addresses (the records exist once the stack has them), the AZs and the zones' objects."""
        fqdn = ref.require_output("fqdn")
        published = pulumi.Output.all(fqdn, ref.require_output("addresses")).apply(
            lambda values: _published(values[1], values[0]))
        zones = ref.require_output("zones")
        return cls(fqdn=fqdn, ports=ref.require_output("ports"), published=published,
                   azs=zones.apply(lambda found: sorted(found or {})), zones=zones)


def _published(addresses: Optional[list], fqdn: str) -> list:
    if not addresses:
        raise NotPublished(f"{fqdn} publishes no address yet, so the cluster cannot be reached through it; see the "
                           "endpoint's readiness errors, or use dns.publish: bootstrap for the first control-plane "
                           "node")
    return list(addresses)

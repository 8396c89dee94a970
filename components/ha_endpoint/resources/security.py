"""Security groups of the endpoint, from :class:`ha_endpoint.core.plan.SecurityPlan`.

* The VIP group admits ``allowedCidrs`` on every listener port; each zone attaches it to its load balancer's VIP
  port (``PortSecGroupAssociate`` with ``enforce=False``, so the groups Octavia put there stay).
* The members' group admits the zones' VIP subnet CIDRs (and the member subnets, which amphorae plug into) on every
  member port and monitor port; under the ovn provider also ``allowedCidrs`` on every member port, since OVN
  forwards the clients' packets unproxied (a member sees the client's address; the health checks come from the
  provider's port on the member's subnet, admitted above). Its id is an output so users attach it to their servers' ports; the ports given as
  ``members[].port`` get it here.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_openstack as openstack

from ..core.plan import RulePlan, SecurityPlan
from ..backends.plugin import after_checks


@dataclass
class SecurityGroups:
    """The two groups and their rules, as created (children of the endpoint)."""

    vip_group: openstack.networking.SecGroup
    members_group: openstack.networking.SecGroup
    rules: list[openstack.networking.SecGroupRule]


def create_security_groups(plan: SecurityPlan, parent: pulumi.Resource, tags: tuple[str, ...]) -> SecurityGroups:
    """Create the VIP and members' groups with their ingress rules, parented to ``parent``. The groups carry ``tags``
    (with the stack's identity tag); the rules are proven the stack's through their group (Neutron rules are
    immutable: a new description would replace every rule, and the replacement collides with the old one)."""
    opts = pulumi.ResourceOptions(parent=parent)
    vip = openstack.networking.SecGroup(
        plan.vip_group_name, name=plan.vip_group_name, tags=list(tags),
        description="HA endpoint VIP: admits the allowed client CIDRs on the listener ports", opts=opts)
    members = openstack.networking.SecGroup(
        plan.members_group_name, name=plan.members_group_name, tags=list(tags),
        description="HA endpoint members: admits the endpoint's load balancers on the member and monitor ports",
        opts=opts)
    rules = [_rule(rule, vip, "client -> listener", opts) for rule in plan.vip_rules]
    rules += [_rule(rule, members, "load balancer -> member", opts) for rule in plan.members_rules]
    return SecurityGroups(vip, members, rules)


def attach_member_ports(plan: SecurityPlan, groups: SecurityGroups,
                        parent: pulumi.Resource) -> dict[str, openstack.networking.PortSecGroupAssociate]:
    """Attach the members' group to each member port given in the configuration or found on a member's server
    (other groups stay), once every input checked out (:func:`ha_endpoint.pipeline.plan_endpoint`); by member name."""
    return {port.member: openstack.networking.PortSecGroupAssociate(
        port.name, port_id=after_checks(plan.preflight, port.port_id), security_group_ids=[groups.members_group.id],
        enforce=False, opts=pulumi.ResourceOptions(parent=parent)) for port in plan.member_ports}


def _rule(rule: RulePlan, group: openstack.networking.SecGroup, what: str,
          opts: pulumi.ResourceOptions) -> openstack.networking.SecGroupRule:
    ports = {} if rule.port is None else {"port_range_min": rule.port, "port_range_max": rule.port}
    return openstack.networking.SecGroupRule(
        rule.name, security_group_id=group.id, direction="ingress", ethertype=rule.ethertype,
        protocol=rule.protocol, remote_ip_prefix=rule.remote_ip_prefix, description=what, opts=opts, **ports)

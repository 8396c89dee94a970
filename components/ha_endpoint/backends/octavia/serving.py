"""How the Octavia backend serves one availability zone: an Octavia load balancer (see
:mod:`ha_endpoint.backends.plugin`).

Children of the zone: the load balancer (``availability_zone`` = the AZ, none under ovn; VIP on the zone's subnet); per listener a
listener, a pool, a health monitor and the members the plan placed there; the VIP security-group association; the
floating IP (allocated from the floating network, or the user's own one, which is associated only: no
``FloatingIp`` resource is ever declared for it, so it is never created or deleted); the zone's ``MemberReadiness``
(waits until every member of every pool is ready as ``readiness.require`` says; ``provisioned`` under bootstrap
publication) and one ``MemberDrain`` per member (a no-op at ``readiness.drainSeconds`` 0: the drains always exist so
that changing drainSeconds is an in-place update of theirs, never a deletion that drains members still in service).
Members are written one resource each, the one write path (issue 47: docs/decisions/issue-47-one-write-path.md).
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Mapping, Optional, TypeVar

import pulumi
import pulumi_openstack as openstack

from ...core import predicates
from ...core.cloud_facts import AdoptedListener, AdoptedMember
from ...core.plan import ListenerPlan, ZonePlan
from ...gates.drain import MemberDrain
from ...gates.inputs import DrainInputs, PoolInputs, ReadinessInputs
from ...gates.provider import MemberReadiness
from ...gates.put_back import PutBack
from ..floating_ip import floating_ip as floating_ip_of
from ..plugin import ZoneServing, after_checks, poll_inputs
from .checks import NAME
from .zone import octavia_zone


T = TypeVar("T", bound=pulumi.Resource)
OPENSTACK_SDK_MAJOR = 5


def require_openstack_sdk(installed: str) -> None:
    """Refuse a pulumi-openstack older than 5.x: its pools and members take no tags (the component tags every object
    it creates with its stack's identity) and its provider plugin is not the one this project is tested with."""
    if int(installed.split(".")[0]) < OPENSTACK_SDK_MAJOR:
        raise ImportError(
            f"ha_endpoint needs pulumi-openstack {OPENSTACK_SDK_MAJOR}.x (installed: {installed}): its load balancer "
            f"pools and members take tags since 5.0. Fix: pip install 'pulumi-openstack>=5.5,<6' in the program's "
            f"virtualenv (ha-endpoint is tested with 5.5.3).")


require_openstack_sdk(version("pulumi-openstack"))


def serve(zone: ZonePlan, vip_group_id: pulumi.Input[str], parent: pulumi.Resource,
          member_ports: Mapping[str, pulumi.Resource]) -> ZoneServing:
    """A zone's Octavia load balancer with its listeners, pools, monitors, members, floating IP and waits
    (:data:`ha_endpoint.backends.plugin.Serve`)."""
    return _OctaviaZone(zone, vip_group_id, parent, member_ports).serving


class _OctaviaZone:
    """The resources of one zone (kept on the instance for tests and readers)."""

    def __init__(self, zone: ZonePlan, vip_group_id: pulumi.Input[str], parent: pulumi.Resource,
                 member_ports: Mapping[str, pulumi.Resource]):
        self.member_ports = member_ports
        # Make-before-break for every Octavia object: the provider bridge marks a replacement of a resource whose
        # `name` is given delete-before-replace, so moving a VIP to another subnet deleted the serving load balancer
        # with its listeners, pools and members before creating its successor, while DNS still published the zone
        # (tests/e2e/test_engine_lifecycle.py step 8). Octavia takes two objects of one name, so the successor is
        # created first; the floating IP association moves to it in place, then the old objects are deleted.
        child = pulumi.ResourceOptions(parent=parent, delete_before_replace=False)
        self.pools: dict[int, openstack.loadbalancer.Pool] = {}
        self.pool_ids: dict[int, pulumi.Output[str]] = {}
        self.monitors: dict[int, openstack.loadbalancer.Monitor] = {}
        self.members: dict[int, dict[str, openstack.loadbalancer.Member]] = {}
        self.member_ids: dict[int, pulumi.Output[dict]] = {}
        self._last_write: Optional[pulumi.Resource] = None
        self._put_back_record: Optional[PutBack] = None
        self.adopted_members: dict[int, set[str]] = {}
        # An adopted tree (zones.<az>.adopt) is imported: each object it has becomes the stack's with its identity
        # (tags, description) written by the update that follows the import, keeps its name (the tool that made it
        # finds it by name: CAPO would build a second tree beside a renamed one) and is retained (never deleted)
        # when the zone or the stack goes (docs/decisions/issue-50-adoption.md).
        self.octavia = octavia = octavia_zone(zone)
        self.adopted = octavia.adopted_tree
        self.loadbalancer = lb = openstack.loadbalancer.LoadBalancer(
            octavia.lb_name, name=self.adopted.name or octavia.lb_name if self.adopted else octavia.lb_name,
            availability_zone=octavia.availability_zone,
            vip_subnet_id=after_checks(zone.preflight, zone.vip_subnet.id),
            loadbalancer_provider=octavia.provider, tags=list(zone.tags),
            description=zone.identity.describe(f"HA endpoint {zone.endpoint}: load balancer of zone {zone.az}",
                                               octavia.lb_name),
            opts=adopting(child, self.adopted.id if self.adopted else None))
        for listener in zone.listeners:
            self._listener(listener, zone, child)
        self.vip_association = openstack.networking.PortSecGroupAssociate(
            zone.vip_secgroup_association_name, port_id=lb.vip_port_id, security_group_ids=[vip_group_id],
            enforce=False, opts=child)
        where = poll_inputs(zone.readiness.target, parent)
        gate = ReadinessInputs.declare(
            loadbalancer_id=lb.id, pools={
                listener.pool_name: self._gate_pool(listener, zone, octavia.provider) for listener in zone.listeners},
            **zone.readiness.gate_waits(zone.publish), cloud=where.cloud, region=where.region,
            cloud_source=where.cloud_source, backend=NAME)
        self.readiness = MemberReadiness(zone.readiness_name, gate, opts=pulumi.ResourceOptions(
            parent=parent, depends_on=list(self.monitors.values()) or None))
        self.drains = [
            MemberDrain(member.drain_name, DrainInputs.declare(
                pool_id=self.pool_ids[listener.port], member_id=self.members[listener.port][member.member].id,
                drain_seconds=zone.readiness.configured.drain_seconds,
                admin_down=predicates.drains_admin_down(octavia.provider), taken_out=not member.in_service,
                cloud=where.cloud, region=where.region, cloud_source=where.cloud_source, backend=NAME),
                        opts=pulumi.ResourceOptions(parent=parent, aliases=[
                            pulumi.Alias(name=member.legacy_name + "-drain")] if member.legacy_name else None,
                            # an adopted member is left serving when the zone goes: never drained
                            retain_on_delete=True if member.member in self.adopted_members.get(listener.port, ())
                            else None))
            for listener in zone.listeners if listener.port in self.members for member in listener.members]
        # The floating IP is associated once the zone is ready, never before: under the ovn provider the association
        # is programmed by the provider's driver agent, which rewrites the OVN load balancer's VIP list from its own
        # copy while octavia-api rewrites it from another; associated while members were still being written, a
        # zone's floating IP lost that race and stayed dark after `up` (a CI run: az3's floating IP never answered).
        # And when a zone's load balancer is replaced, its floating IP moves to the successor only once it serves.
        adopted_floating = zone.adopted.floating_ip if zone.adopted is not None else None
        self.floating_ip_resource, floating_ip = floating_ip_of(
            zone, self.loadbalancer.vip_port_id, child, adopting(pulumi.ResourceOptions(depends_on=[self.readiness]),
                                                                 adopted_floating.id if adopted_floating else None))
        self.serving = ZoneServing(
            published_address=floating_ip if zone.floating.mode != "none" else lb.vip_address,
            exists=lb, exists_label="load balancer ACTIVE", readiness=self.readiness, ready=self.readiness.ready,
            requirement=f"members {gate.require}", not_ready_reason=self.readiness.not_ready_reason,
            outputs={
                "loadbalancer_id": lb.id, "vip_address": lb.vip_address, "vip_port_id": lb.vip_port_id,
                "floating_ip": floating_ip,
                "pool_ids": pulumi.Output.all(**{str(port): pool_id for port, pool_id in self.pool_ids.items()}),
                "member_ids": pulumi.Output.all(**{str(port): ids for port, ids in self.member_ids.items()}),
                "member_statuses": pulumi.Output.all(**{
                    str(port): self._member_statuses(port) for port in self.member_ids}),
            })

    def _gate_pool(self, listener: ListenerPlan, zone: ZonePlan, provider: str) -> PoolInputs:
        """What the zone's gate waits for in the pool of ``listener``: the members in service (a member the
        configuration takes out is administratively down: never ONLINE, and no capacity), and how long it holds a
        member's ONLINE before it counts (:func:`predicates.online_hold_seconds`) and how often the pool's monitor
        checks it meanwhile (its delay: the gate's polls during the hold)."""
        serving = {member.member for member in listener.members if member.in_service}
        monitor = listener.monitor
        hold = 0 if monitor is None else predicates.online_hold_seconds(provider, monitor.delay, monitor.timeout,
                                                                        monitor.max_retries_down)
        return PoolInputs.declare(
            pool_id=self.pool_ids[listener.port], monitored=monitor is not None, hold_seconds=hold,
            check_seconds=monitor.delay if hold else 0,
            member_ids=[member.id for name, member in self.members.get(listener.port, {}).items() if name in serving])

    def _member_statuses(self, port: int) -> pulumi.Output[dict]:
        """Member name -> its statuses as last seen by the gate (``ACTIVE/ONLINE``)."""
        return pulumi.Output.all(self.member_ids[port], self.readiness.statuses).apply(
            lambda both: {name: (both[1] or {}).get(member_id) for name, member_id in (both[0] or {}).items()})

    def _put_back(self, zone: ZonePlan, child: pulumi.ResourceOptions) -> Optional[PutBack]:
        """The zone's record of the members it puts back (re-created delete-first), registered once, before any of
        them: see :mod:`ha_endpoint.gates.put_back` for the engine's failure it prevents."""
        names = sorted({member.member for listener in zone.listeners for member in listener.members
                        if member.put_back})
        if names and self._put_back_record is None:
            self._put_back_record = PutBack(f"{self.octavia.lb_name}-put-back", members=names, opts=child)
        return self._put_back_record

    def _after_previous_write(self, child: pulumi.ResourceOptions) -> pulumi.ResourceOptions:
        """``child`` with a dependency on the zone's previous Octavia object (see :meth:`_written`)."""
        return pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(
            depends_on=[self._last_write] if self._last_write is not None else None))

    def _written(self, resource: T) -> T:
        """Record ``resource`` as the zone's last Octavia write. Octavia refuses (409) every write to a load balancer
        while another is in progress, and terraform-provider-openstack retries a refused write with a backoff growing
        to 10 s: the listeners, pools, monitors and members of one load balancer created at once cost up to 37 s each
        where one after another they take 1-3 s. So each one depends on the one before: the engine creates them one
        after another, and deletes them in the reverse order."""
        self._last_write = resource
        return resource

    def _listener(self, listener: ListenerPlan, zone: ZonePlan, child: pulumi.ResourceOptions) -> None:
        cidrs = {"allowed_cidrs": list(listener.allowed_cidrs)} if listener.allowed_cidrs else {}
        tls = {"default_tls_container_ref": listener.certificate_ref} if listener.certificate_ref is not None else {}
        found = self.adopted.listener(listener.port) if self.adopted is not None else None
        resource = self._written(openstack.loadbalancer.Listener(
            listener.listener_name, name=found.name or listener.listener_name if found else listener.listener_name,
            loadbalancer_id=self.loadbalancer.id,
            protocol=listener.protocol, protocol_port=listener.port, tags=list(zone.tags),
            description=zone.identity.describe(f"HA endpoint {zone.endpoint}: port {listener.port}",
                                               listener.listener_name),
            opts=adopting(self._after_previous_write(child), found.id if found else None),
            **cidrs, **tls, **dict(listener.timeouts)))
        pool = self._written(openstack.loadbalancer.Pool(
            listener.pool_name, name=found.pool_name or listener.pool_name if found and found.pool_id
            else listener.pool_name, listener_id=resource.id, protocol=listener.pool_protocol,
            lb_method=listener.lb_method, tags=list(zone.tags),
            description=zone.identity.describe(f"HA endpoint {zone.endpoint}: members of port {listener.port}",
                                               listener.pool_name),
            opts=adopting(self._after_previous_write(child), found.pool_id if found else None)))
        self.pools[listener.port] = pool
        self.pool_ids[listener.port] = pool.id
        if listener.monitor is not None:
            spec = listener.monitor
            http = {"url_path": spec.url_path, "expected_codes": spec.expected_codes} if spec.url_path else {}
            self.monitors[listener.port] = self._written(openstack.loadbalancer.Monitor(
                spec.name, name=found.monitor_name or spec.name if found and found.monitor_id else spec.name,
                pool_id=pool.id, type=spec.type, delay=spec.delay, timeout=spec.timeout,
                max_retries=spec.max_retries, max_retries_down=spec.max_retries_down,
                opts=adopting(self._after_previous_write(child), found.monitor_id if found else None), **http))
        members = self.members[listener.port] = {}
        put_back = self._put_back(zone, child)
        # Under ovn a member is written in place only for its admin state: an update that leaves the admin state out
        # (a new weight, name or tags) makes the provider report the member NO_MONITOR until its health next changes
        # (ovn-octavia-provider 3.1.2, OvnProviderHelper.member_update), so the gates, the agent and the watcher read
        # a serving member as not serving: measured, `weight: 2` on the dev stack's cp-0 and the watcher took az1 out
        # of DNS. The provider ignores weights (and names and tags serve nobody), so they are written at create only
        # (checks.ovn_weights says so of a weight other than 0 or 1).
        written_once = pulumi.ResourceOptions(ignore_changes=["name", "tags", "weight"]) \
            if predicates.is_ovn(self.octavia.provider) else None
        for member in listener.members:
            aliases = pulumi.ResourceOptions(aliases=[pulumi.Alias(name=member.legacy_name)] if member.legacy_name
                                             else None)
            existing = adopted_member(found, member.address, member.protocol_port)
            if existing is not None:
                self.adopted_members.setdefault(listener.port, set()).add(member.member)
                # taken as it is, never updated for its name or tags: an update that does not set the admin state
                # makes the ovn provider report the member NO_MONITOR until its health next changes
                # (ovn-octavia-provider 3.1.2, OvnProviderHelper.member_update), so the gate waited out its timeout
                # on an adopted member that served all along (a CI run of tests/e2e/test_adoption_engine.py)
                aliases = pulumi.ResourceOptions.merge(adopting(aliases, f"{found.pool_id}/{existing.id}"),
                                                       pulumi.ResourceOptions(ignore_changes=["name", "tags"]))
            elif written_once is not None:
                aliases = pulumi.ResourceOptions.merge(aliases, written_once)
            members[member.member] = self._written(openstack.loadbalancer.Member(
                member.resource_name, name=existing.name or member.member if existing else member.member,
                pool_id=pool.id, address=member.address,
                protocol_port=member.protocol_port, subnet_id=member.subnet.id, weight=member.weight,
                # a member is registered once its port admits the load balancer and deregistered before its port
                # stops admitting it: a rotation otherwise detached the old ports' group while OVN still sent them
                # clients (timeouts measured in tests/e2e/test_ovn_engine.py)
                # taken out (enabled: false, or weight 0): administratively down on every provider (the ovn provider
                # ignores the weight); given only then, so a member in service has no change (the default is up)
                **({"admin_state_up": False} if not member.in_service else {}),
                # put back under the ovn provider (its pool lists it admin down now): re-created, deleted first (it
                # serves nothing, and Octavia refuses a second member at its address and port); set admin up, the
                # provider would keep it out of the OVN backends for good (ovn-octavia-provider 3.1.2,
                # OvnProviderHelper.member_update: with a health monitor a member it holds OFFLINE stays OFFLINE)
                **({"admin_state_up": True} if member.put_back else {}),
                tags=list(zone.tags), opts=pulumi.ResourceOptions.merge(pulumi.ResourceOptions.merge(
                    pulumi.ResourceOptions.merge(self._after_previous_write(child), aliases),
                    pulumi.ResourceOptions(depends_on=([self.member_ports[member.member]]
                                            if member.member in self.member_ports else [])
                                           + ([put_back] if member.put_back else []) or None)),
                    pulumi.ResourceOptions(replace_on_changes=["adminStateUp"], delete_before_replace=True)
                    if member.put_back else None),
                **({"monitor_port": member.monitor_port} if member.monitor_port else {})))
        self.member_ids[listener.port] = pulumi.Output.all(
            **{name: resource.id for name, resource in members.items()})


def adopting(opts: pulumi.ResourceOptions, import_id: Optional[str]) -> pulumi.ResourceOptions:
    """``opts``, taking over the existing object ``import_id`` when given: Pulumi's ``import`` (the engine reads
    it, then updates it to the program's inputs: names, tags, descriptions, monitor settings) and
    ``retain_on_delete`` (removing the zone or the stack leaves it as it is: the stack did not create it)."""
    if import_id is None:
        return opts
    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(import_=import_id, retain_on_delete=True))


def adopted_member(found: Optional[AdoptedListener], address: object, port: int) -> Optional[AdoptedMember]:
    """The member of the adopted listener's pool at ``address``:``port`` (an address not known yet matches none)."""
    if found is None or found.pool_id is None or not isinstance(address, str):
        return None
    return next((member for member in found.members if member.address == address and member.protocol_port == port),
                None)


"""What Octavia refuses that only the cloud can tell, asked at preview: its availability zones and the certificates.

A load balancer pinned to an availability zone Octavia does not know (or has disabled) is refused when it is created,
and so is a TERMINATED_HTTPS listener whose certificate Octavia cannot load from the key manager (Barbican). The
OpenStack provider this project runs (pulumi-openstack 5.5.3, terraform-provider-openstack v3.4.0) has no data source
for either: nothing answers "which AZs does Octavia have" through a provider invoke, and its Barbican data sources find
containers by name, not by the reference a listener takes. So these two questions are asked with openstacksdk, at
preview, through the preview's catalog (:mod:`ha_endpoint.cloud.catalog`: the same cloud and region the readiness
gates poll, the same seam tests replace).

A cloud that cannot be asked gets a warning that says what could not be checked, and Octavia judges at ``up``; a name
the cloud answers it does not have is refused at once. :func:`check_octavia` is the Octavia backend's preview
(:attr:`ha_endpoint.backends.plugin.Backend.preview`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Protocol

import openstack.exceptions as os_exc
import pulumi

from ...cloud.catalog import CatalogUnavailable, OpenStackCatalog, current_catalog, unavailable_on_cloud_failure
from ...cloud.connection import describe
from ...cloud.errors import CloudError
from ...core import predicates
from ...core.args import EndpointArgs
from ...core.errors import Problem
from ...core.plan import PollTarget


class NoLoadBalancerService(CloudError):
    """The cloud's catalog has no load-balancer service (Octavia): the endpoint's load balancers cannot be created
    there, which the preview refuses."""


@dataclass(frozen=True)
class OctaviaAz:
    """An availability zone as Octavia knows it."""

    name: str
    enabled: bool = True


class OctaviaCatalog(Protocol):
    """What the checks ask the cloud (the fake cloud's catalog answers them too, in tests)."""

    def octavia_azs(self, target: PollTarget) -> list[OctaviaAz]:
        """Octavia's availability zones; :class:`CatalogUnavailable` when the cloud cannot be asked."""
        ...

    def certificate(self, target: PollTarget, ref: str) -> Optional[bool]:
        """Whether the key manager holds ``ref`` (None: the cloud has no key manager); :class:`CatalogUnavailable`
        when it cannot be asked."""
        ...


class OpenStackOctaviaCatalog(OpenStackCatalog):
    """The real cloud's answers, through the preview catalog's connection."""

    def octavia_azs(self, target: PollTarget) -> list[OctaviaAz]:
        with unavailable_on_cloud_failure():
            conn = self.connection(target)
            try:
                azs = list(conn.load_balancer.availability_zones())
            except (os_exc.EndpointNotFound, os_exc.ServiceDisabledException) as error:
                raise NoLoadBalancerService(describe(error)) from None
            return [OctaviaAz(az.name, bool(az.is_enabled if az.is_enabled is not None else True))
                    for az in azs]

    def certificate(self, target: PollTarget, ref: str) -> Optional[bool]:
        object_id = ref.rstrip("/").rsplit("/", 1)[-1]
        kinds = ["secret"] if "/secrets/" in ref else ["container"] if "/containers/" in ref else \
            ["container", "secret"]
        with unavailable_on_cloud_failure():
            conn = self.connection(target)
            try:
                for kind in kinds:
                    try:
                        getattr(conn.key_manager, f"get_{kind}")(object_id)
                        return True
                    except os_exc.NotFoundException:
                        continue
                return False
            except (os_exc.EndpointNotFound, os_exc.ServiceDisabledException):  # no key manager in the catalog
                return None


_OPENSTACK = OpenStackOctaviaCatalog()


def check_octavia(args: EndpointArgs, target: PollTarget, root: str) -> list[Problem]:
    """Every zone's availability zone and every TERMINATED_HTTPS listener's certificate, as the cloud answers; what
    could not be asked is warned about (Octavia then judges at ``up``)."""
    catalog: OctaviaCatalog = current_catalog(_OPENSTACK)
    problems: list[Problem] = []
    try:
        # under ovn no load balancer is pinned to an Octavia AZ (ZonePlan.octavia_az): nothing to ask
        known = None if not predicates.pins_availability_zone(args.load_balancer_provider) else \
            {az.name: az for az in catalog.octavia_azs(target)}
    except NoLoadBalancerService as reason:
        return [Problem(f"{root}.zones", f"the cloud has no load-balancer service (Octavia) in its catalog ({reason}), "
                                         "and each zone's load balancer is an Octavia load balancer; use a cloud with "
                                         "Octavia (openstack catalog list: load-balancer)")]
    except CatalogUnavailable as reason:
        pulumi.log.warn(f"{root}.zones: Octavia's availability zones could not be checked at preview ({reason}); "
                        "Octavia refuses an unknown one when the load balancers are created")
        known = None
    if known is not None:
        names = ", ".join(sorted(known)) or "none"
        for az in sorted(args.zones):
            if az not in known:
                fix = (f"use one of Octavia's ({names}), or ask the cloud's operator to create it (openstack "
                       "loadbalancer availabilityzone create)") if known else \
                    ("ask the cloud's operator to define them (openstack loadbalancer availabilityzone create) or "
                     "use a cloud that has them")
                problems.append(Problem(f"{root}.zones.{az}", f"Octavia has no availability zone '{az}' (openstack "
                                        f"loadbalancer availabilityzone list: {names}), so it refuses a load balancer "
                                        f"there; {fix}"))
            elif not known[az].enabled:
                problems.append(Problem(f"{root}.zones.{az}", f"availability zone '{az}' is disabled in Octavia, so "
                                        "it refuses new load balancers there; ask the cloud's operator to enable it, "
                                        "or use another zone"))
    for index, listener in enumerate(args.listeners):
        ref = listener.certificate_ref
        if not isinstance(ref, str) or str(listener.protocol) != "TERMINATED_HTTPS":
            continue  # an Output: checked once known; on other protocols validation refuses it already
        path = f"{root}.listeners[{index}].certificateRef"
        try:
            found = catalog.certificate(target, ref)
        except CatalogUnavailable as reason:
            pulumi.log.warn(f"{path}: the certificate could not be checked at preview ({reason}); Octavia refuses "
                            "the listener if it cannot load it")
            continue
        if found is None:
            problems.append(Problem(path, "the cloud has no key manager (Barbican) in its catalog, and Octavia loads "
                                          "a TERMINATED_HTTPS listener's certificate from it; use protocol HTTPS to "
                                          "pass TLS through to the members, or a cloud with a key manager"))
        elif not found:
            problems.append(Problem(path, f"the key manager has no certificate container or secret {ref}, so Octavia "
                                          "cannot load it and refuses the listener; give the reference of an existing "
                                          "container (openstack secret container list)"))
    return problems

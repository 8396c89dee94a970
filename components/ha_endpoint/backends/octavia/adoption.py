"""What a zone's ``adopt`` key takes over, asked at preview: the existing load balancer's tree and floating IP.

``zones.<az>.adopt: {loadBalancer: <name or id>}`` makes the zone take over a load balancer another tool made (CAPO's
``<cluster>-kubeapi``, one made by hand or by Terraform) instead of creating one. The ids Pulumi's ``import`` resource
option needs must be known when the program runs, so they are asked here, once, with openstacksdk through the
preview's catalog (the seam tests replace): the load balancer (by id, or by a name that must match exactly one), each
listener with its default pool, that pool's monitor and members, and the floating IP on the VIP port. With a DNS
name, also the record set that publishes it now when that record set holds the adopted addresses only (the
endpoint's record then takes it over rather than being refused as another owner's).

Nothing is written here; :func:`.checks.adoption_problems` judges what was found (a difference Octavia cannot change in
place is refused unless ``allowReplacement``) and :mod:`.serving` imports it (docs/decisions/issue-50-adoption.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional

from ...cloud.retry import READ_RETRY_SECONDS
from ...cloud.catalog import NoCloudToAsk
from ...cloud.errors import CallFailed
from ...cloud.retry import CredentialsRefused, RetriesExhausted, call_with_retries
from ...core.cloud_facts import AdoptedLoadBalancer, AdoptedRecord
from ...core.errors import Problem
from .adopted_tree import NotAdoptable


@dataclass(frozen=True)
class Adoption:
    """What the zones adopt (AZ -> load balancer), the record set the endpoint's name takes over, and what could not
    be asked or found (the preview fails)."""

    adopted: dict[str, AdoptedLoadBalancer] = field(default_factory=dict)
    record: Optional[AdoptedRecord] = None
    problems: list[Problem] = field(default_factory=list)


def adopted_from(wanted: Mapping[str, str], fqdn: Optional[str],
                 load_balancer: Callable[[str], AdoptedLoadBalancer],
                 recordset: Callable[[str], Optional[AdoptedRecord]], root: str,
                 clock: Optional[Callable[[], float]] = None, sleep: Optional[Callable[[float], None]] = None,
                 timeout_seconds: Optional[float] = None) -> Adoption:
    """What the zones adopt: ``wanted`` (AZ -> the load balancer's name or id its ``adopt`` key gives) each found by
    ``load_balancer`` (the preview catalog's ``adoptable``), a failed call retried as the DNS records' are; a load
    balancer not found, several of one name, or a cloud that cannot be asked is a problem at
    ``zones.<az>.adopt.loadBalancer`` (nothing is adopted blind). With ``fqdn`` (the endpoint's name, where it and its
    DNS zone are known), also the record set there, found by ``recordset``."""
    if not wanted:
        return Adoption()
    retry = dict(timeout_seconds=READ_RETRY_SECONDS if timeout_seconds is None else timeout_seconds,
                 clock=clock or time.monotonic, sleep=sleep or time.sleep)
    adopted: dict[str, AdoptedLoadBalancer] = {}
    problems: list[Problem] = []
    for az, ref in sorted(wanted.items()):
        path = f"{root}.zones.{az}.adopt.loadBalancer"
        try:
            adopted[az] = call_with_retries(lambda ref=ref: load_balancer(ref), **retry)
        except NotAdoptable as error:
            problems.append(Problem(path, str(error)))
        except NoCloudToAsk as reason:
            problems.append(Problem(path, f"load balancer '{ref}' could not be looked up at preview ({reason}); "
                                          "a load balancer is adopted only once its tree is known"))
        except (CallFailed, RetriesExhausted, CredentialsRefused) as error:
            problems.append(Problem(path, f"load balancer '{ref}' could not be read at preview ({error}); run the "
                                          "preview again once the load-balancer service (Octavia) answers"))
    record = None
    if adopted and fqdn is not None:
        try:
            record = call_with_retries(lambda: recordset(fqdn), **retry)
        except (NoCloudToAsk, CallFailed, RetriesExhausted, CredentialsRefused) as error:
            problems.append(Problem(f"{root}.dns.record", f"the record set {fqdn} could not be read at preview "
                                                          f"({error}); run the preview again once DNS answers"))
    return Adoption(adopted, record, problems)

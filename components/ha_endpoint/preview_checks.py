"""What the cloud is asked before anything is planned, for plain arguments and for arguments resolved from Outputs
alike: Octavia's own answers (its availability zones, the key manager's certificates: :mod:`ha_endpoint.octavia_checks`)
and the lookups of every name and id (:mod:`ha_endpoint.lookups`), every problem of both listed at once; then the A
records the DNS zone holds already (how the endpoint's records are replaced depends on them).

Both flows of :class:`ha_endpoint.HaEndpoint` call :func:`ask_the_cloud`: at once for plain inputs, and inside the
checked plan's Output once the values are known (:func:`ha_endpoint.deferred.checked_plan`), so an input refused as
a plain value is refused the same way when it is given as an Output.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import pulumi

from .args import EndpointArgs
from .errors import CloudLookupError
from .identity import StackIdentity
from .lookups import CloudFacts, lookup_cloud_facts
from .octavia_checks import check_octavia, published_records
from .plan import PollTarget

OCTAVIA = "octavia"
"""The backend whose load balancers Octavia creates (and so whose AZs and certificates Octavia is asked about)."""


def ask_the_cloud(args: EndpointArgs, root: str, invoke_opts: Optional[pulumi.InvokeOptions],
                  identity: StackIdentity, target: PollTarget, backend: str) -> CloudFacts:
    """The cloud facts of ``args``; a :class:`ha_endpoint.CloudLookupError` listing Octavia's problems first, then
    the lookups' (an unknown AZ is named before the network-hint problem it causes)."""
    octavia = check_octavia(args, target, root) if backend == OCTAVIA else []
    try:
        facts = lookup_cloud_facts(args, root, invoke_opts, identity)
    except CloudLookupError as error:
        raise CloudLookupError(octavia + error.problems) from None
    if octavia:
        raise CloudLookupError(octavia)
    if args.dns is None:
        return facts
    return replace(facts, published=published_records(target, facts.dns_zone_id))

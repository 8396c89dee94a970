"""Where the readiness gates and drains run: Pulumi's Python dynamic-provider plugin, or the component package's
provider host.

An endpoint built from Python registers :class:`~.provider.MemberReadiness` and :class:`~.drain.MemberDrain` as
dynamic resources. The CLI serves those with its ``pulumi-python`` plugin, started with the *program's* runtime
options, so it imports this package from the program's virtualenv. An endpoint built by a YAML or TypeScript program
runs in the package's provider host (``components/__main__.py``, :mod:`ha_endpoint.hosting`); the CLI would still
start ``pulumi-python`` with that program's options, i.e. ``python3`` from PATH, without this package or Pulumi
(``No module named 'pulumi'``; pulumi/pulumi#5455: dynamic providers in multi-language components). So there, with
:data:`HOSTED` set by the host, they are resources of the package itself (:data:`HOSTED_TYPES`, and each backend's own:
``Backend.hosted_types``), with the same inputs and outputs minus the pickled provider, and the host serves their
check/diff/create/update/read/delete with the same provider classes, in its own virtualenv.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

import pulumi
import pulumi.dynamic

from ..core import contract

PACKAGE = contract.PACKAGE
HOSTED = False
"""True inside the package's provider host (set by :func:`ha_endpoint.hosting.serve`)."""
hosted_type = contract.hosted_type

HOSTED_TYPES = {hosted_type("MemberReadiness"): "ha_endpoint.gates.provider:MemberReadinessProvider",
                hosted_type("MemberDrain"): "ha_endpoint.gates.drain:MemberDrainProvider",
                hosted_type("PutBack"): "ha_endpoint.gates.put_back:PutBackProvider"}
"""Token -> the provider class that serves it (``module:class``), in the host: the gates' own (the backends' are
theirs, :func:`ha_endpoint.hosting.hosted_types`)."""


def register(resource: pulumi.dynamic.Resource, provider: pulumi.dynamic.ResourceProvider, type_name: str,
             name: str, props: Mapping[str, Any], opts: Optional[pulumi.ResourceOptions]) -> None:
    """Register ``resource``: a dynamic resource served by ``provider``, or, in the provider host, a resource of the
    package (``provider``'s class serves it there)."""
    if HOSTED:
        props = dict(props)
        if props.get("cloud_source") == "stack" and props.get("cloud") is None:
            # The host's provider configuration holds only this package's keys: name the stack's cloud and region
            # (the default OpenStack provider's) now, from the stack configuration the construct request carries.
            openstack = pulumi.Config("openstack")
            props["cloud"], props["region"] = openstack.get("cloud"), props.get("region") or openstack.get("region")
        pulumi.CustomResource.__init__(resource, hosted_type(type_name), name, props, opts)
    else:
        pulumi.dynamic.Resource.__init__(resource, provider, name, dict(props), opts)

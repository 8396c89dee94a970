"""What the agent is given: its command line (options, defaults and rules, said once here) and, from the endpoint
stack's outputs, the pools of each zone. Pure: nothing here talks to a cloud or to Kubernetes.

The agent's Deployment (:mod:`ha_endpoint.kubernetes.agent_manifests`) builds its command line from these option
names, so the two cannot drift.
"""

from __future__ import annotations

import argparse
from typing import Any, Mapping, Optional, Sequence

from ..core.args import DEFAULT_BACKEND
from ..core.errors import HaEndpointError
from ..core.outputs import ZoneOutputs
from ..watch.inputs import daemon_parser, flag, refused, seconds  # noqa: F401  (flag: the agent's flags too)
from .machines import API_SERVER_HEALTHY, MachineSource

PROG = "python -m ha_endpoint.agent"
DESCRIPTION = "Keep an endpoint's members following a Cluster API cluster's control-plane Machines."
HOOK_NAME = "ha-endpoint"
"""The name part of our deletion hook annotation (see :data:`HOOK_ANNOTATION`)."""
HOOK_ANNOTATION = f"pre-drain.delete.hook.machine.cluster.x-k8s.io/{HOOK_NAME}"
"""The Cluster API deletion hook the agent puts on each served Machine: a pre-drain hook, so that the member is out
of its pools before anything of the Machine's deletion runs (docs/agent.md says why not pre-terminate)."""
HOOK_OWNER = "ha-endpoint-agent"
"""The hook annotation's value: who owns it (Cluster API's convention)."""
STATUS_ANNOTATION = "ha-endpoint.io/member"
"""The agent's report on each served Machine: ``<state>: <detail>`` (joining, serving, maintenance, draining,
removed, problem)."""
DRAINING_SINCE_ANNOTATION = "ha-endpoint.io/draining-since"
"""When the drain time of a deleting Machine started (seconds since the epoch): kept on the Machine so that a
replica taking over goes on from there."""
AGENT_TAG_PREFIX = "ha-endpoint:agent="
"""The tag on every member the agent creates (``ha-endpoint:agent=<namespace>/<cluster>``): the agent writes and
deletes only members carrying its tag; the component's members (its stack's tag) are never touched."""


def agent_tag(source: MachineSource) -> str:
    return f"{AGENT_TAG_PREFIX}{source.namespace}/{source.cluster}"


def port(text: str) -> int:
    """A TCP port, 1-65535 (0 for "do not serve")."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a TCP port 0-65535 (0: none), e.g. 9464 (got {text})")
    return value


def subnet(text: str) -> tuple[str, str]:
    """``<az>=<subnet id>``: the subnet of the members of one zone."""
    az, _, subnet_id = text.partition("=")
    if not az or not subnet_id:
        raise argparse.ArgumentTypeError(f"must be <az>=<subnet id>, e.g. az1=3f1b2c4d-... (got {text!r})")
    return az, subnet_id


def condition(text: str) -> Optional[str]:
    """A condition type (``APIServerPodHealthy``), or ``none``."""
    if text == "none":
        return None
    try:
        MachineSource(cluster="x", readyCondition=text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a condition type such as {API_SERVER_HEALTHY} (letters, digits, "
                                         f"'-', '_', '.', '/'), or none (got {text!r})") from None
    return text


def member_port(text: str) -> tuple[int, int]:
    """``<listener port>=<member port>``."""
    listener, _, member = text.partition("=")
    try:
        pair = int(listener), int(member)
    except ValueError:
        pair = (0, 0)
    if not all(0 < value <= 65535 for value in pair):
        raise argparse.ArgumentTypeError(f"must be <listener port>=<member port>, e.g. 443=6443 (got {text!r})")
    return pair


def refusal(option: str, value: str) -> Optional[str]:
    """Why the agent would refuse ``value`` for ``option`` (a flag such as ``--drain``), in its words; None when it
    takes it. The Deployment's checks ask this before anything is deployed."""
    return refused(parser(exits=False), ["--outputs", "-", "--cluster", "x", option, value])


def parser(exits: bool = True) -> argparse.ArgumentParser:
    found = daemon_parser(PROG, DESCRIPTION, exits, "reconciles without a change", reads="zones: poolIds")
    found.add_argument("--cluster", required=True, help="the Cluster API Cluster's name")
    found.add_argument("--namespace", default="default", help="the Cluster's namespace (default: default)")
    found.add_argument("--address-type", default="InternalIP", choices=["InternalIP", "ExternalIP"],
                       help="which Machine address is the member's (default InternalIP)")
    found.add_argument("--ready-condition", type=condition, default=API_SERVER_HEALTHY, metavar="TYPE",
                       help="the Machine condition (status.conditions[].type) that says its API server is ready: a "
                       "member is put in service only once it is True, and taken out again while it is False "
                       f"(default {API_SERVER_HEALTHY}, which KubeadmControlPlane sets; none: in service as soon as "
                       "the Machine has an address)")
    found.add_argument("--member-subnet", type=subnet, action="append", default=[], metavar="AZ=SUBNET",
                       help="the subnet of a zone's members (repeat per zone; default: the load balancer's VIP "
                       "subnet)")
    found.add_argument("--member-port", type=member_port, action="append", default=[], metavar="LISTENER=PORT",
                       help="the members' port behind a listener port, when it differs (the endpoint's "
                       "listeners[].memberPort; repeat per listener; default: the listener's port)")
    found.add_argument("--drain", type=seconds, default=30.0, help="seconds a deleting Machine's member stays drained "
                       "(admin down) before it is deleted (default 30)")
    found.add_argument("--hook-warn-after", type=seconds, default=600.0, help="seconds a Machine may be held by our "
                       "hook before an Event and the held-too-long metric say so (default 600; the hook is never "
                       "released early)")
    found.add_argument("--lease", default="ha-endpoint-agent", help="the coordination.k8s.io Lease the replicas "
                       "elect their leader with (default ha-endpoint-agent)")
    found.add_argument("--lease-seconds", type=seconds, default=15.0, help="lease duration (default 15)")
    found.add_argument("--identity", help="this replica's name in the Lease (default: the host name)")
    found.add_argument("--listen", default="127.0.0.1", help="address of the metrics and probes server (default "
                       "127.0.0.1; 0.0.0.0 in a pod)")
    found.add_argument("--port", type=port, default=9464, help="port of /metrics, /healthz, /readyz (default 9464)")
    found.add_argument("--kubeconfig", help="kubeconfig of the management cluster (default: in-cluster, then "
                       "KUBECONFIG)")
    found.add_argument("--backend", default=DEFAULT_BACKEND, help="the endpoint's backend (its `backend` key), whose "
                       f"pools the members are written into through its member client (default {DEFAULT_BACKEND})")
    return found


def parse(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    return parser().parse_args(argv)



def served_zones(zones: Mapping[str, ZoneOutputs], served_by: str, backend: str) -> dict[str, ZoneOutputs]:
    """The endpoint's zones (:func:`ha_endpoint.backends.watching.zones_of`, its ``zones`` output, served by
    ``served_by``) by AZ, once ``served_by`` is ``backend`` (``--backend``): the agent writes members into their pools
    through that backend's member client."""
    if served_by != backend:
        raise HaEndpointError(f"--backend {backend}: the outputs' zones ({', '.join(sorted(zones))}) are the "
                              f"{served_by} backend's; give the endpoint's backend (its `backend` key)")
    return dict(sorted(zones.items()))


def member_subnets(zones: Mapping[str, ZoneOutputs], subnets: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
    """``--member-subnet`` by AZ, each naming a zone of the endpoint."""
    subnet_of = dict(subnets)
    unknown = sorted(set(subnet_of) - set(zones))
    if unknown:
        raise HaEndpointError(f"--member-subnet names zones the endpoint does not have ({', '.join(unknown)}); it "
                              f"has {', '.join(sorted(zones))}")
    return subnet_of


def published_addresses(outputs: dict[str, Any], zones: Mapping[str, ZoneOutputs]) -> dict[str, str]:
    """Each zone's address in the endpoint's A record (``floatingIp``, else ``vipAddress``), as the watcher reads it;
    empty for an endpoint without DNS (no ``fqdn``): then no zone is taken out of a record before its member leaves."""
    if not outputs.get("fqdn"):
        return {}
    return {az: zone.address for az, zone in sorted(zones.items()) if zone.address}

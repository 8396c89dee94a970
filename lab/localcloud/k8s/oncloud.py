"""The cluster on the local cloud's data plane: one node per AZ, each a Nova server (k8s-0/k8s-1/k8s-2 in az1/az2/az3
at 10.10.10.11-13 on k8s-subnet, localcloud.dataplane.nodes.KUBERNETES) whose network namespace runs
the node's etcd member and kube-apiserver on the customary ports (2379/2380, 6443): what an endpoint in front of a
real control plane spread over three AZs sees (the `k8s` stack, Pulumi.k8s.yaml).

The data plane plugs every Nova server into its AZ's chassis and runs a member server there; a node of this cluster
is *handed over* first (``<run>/members/<port>.hosted``: the reconciler stops the member server and leaves the
namespace's ports to the cluster) and handed back when the cluster stops. Etcd's peers and the API servers' etcd
clients cross the AZs on one logical switch (Geneve between the chassis), admitted by the `k8s-nodes` group's rule.

The state (certificates, etcd data, logs, PID files) lives in the cloud instance's state directory
(``<state>/k8s/<name>``): the cluster belongs to the cloud it runs on, and `lab/localcloud/down` stops it first.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

from localcloud import procs
from localcloud.dataplane import members, nodes
from localcloud.dataplane.config import DPPaths
from localcloud.settings import AZS, PROJECT, USER, Paths, load_secrets

from . import layout as layouts
from .layout import Layout

NAME = "kube"
"""The cloud's cluster: its nodes are kube-1..kube-3 (etcd member names, certificate names)."""
HAND_OVER_SECONDS = 10.0


def state_dir(cloud: Paths, name: str = NAME) -> Path:
    return cloud.root / "k8s" / name


def ensure_servers(cloud: Paths, timeout: float = 180.0) -> dict[str, str]:
    """The KUBERNETES node set's servers (created where missing, ACTIVE): name -> server id."""
    from localcloud.rest import Client

    seeded = json.loads(cloud.seeded.read_text())
    user = Client(USER, load_secrets(cloud)["user"], PROJECT).login()
    return nodes.ensure(user, {az: seeded[f"{az}_subnet_id"] for az in AZS},
                        {az: seeded[f"{az}_network_id"] for az in AZS}, seeded["image_id"], seeded["flavor"],
                        timeout=timeout, nodeset=nodes.KUBERNETES)


def plugged(cloud: Paths, servers: dict[str, str], timeout: float = 60.0) -> list[dict]:
    """The data plane's record of each server (namespace, address, AZ, port), in the node set's order, once each is
    plugged (a second or two after ACTIVE)."""
    deadline = time.monotonic() + timeout
    while True:
        by_server = {m["server_id"]: m for m in members.recorded(cloud).values() if m}
        found = [by_server.get(servers[name]) for name, _, _ in nodes.KUBERNETES.nodes]
        if all(found):
            return found
        if time.monotonic() > deadline:
            missing = [name for (name, _, _), m in zip(nodes.KUBERNETES.nodes, found) if not m]
            raise TimeoutError(f"the data plane has not plugged {', '.join(missing)} after {timeout:.0f} s: is "
                               f"dataplane-members running (lab/localcloud/status)?")
        time.sleep(0.5)


def hand_over(cloud: Paths, member: dict, plan: Layout, node: str) -> None:
    """Make the member's namespace the cluster's: the hosted marker (which cluster and node serve there: what
    `lab/localcloud/fault member-down <server>` stops), then its member server stopped (and seen to stay stopped: the
    reconciler might have been starting it at that moment)."""
    d = DPPaths(cloud)
    members.hosted_marker(d, member["port"]).write_text(json.dumps(
        {"by": f"localcloud.k8s cluster {plan.name}", "cluster": plan.name, "state": str(plan.state), "node": node}))
    quiet_since = None
    deadline = time.monotonic() + HAND_OVER_SECONDS
    while time.monotonic() < deadline:
        if procs.stop(members.pidfile(d, member["port"]), members.SERVER_MARKER, timeout=3):
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since > 1.5:     # three reconciler ticks without a member server
            return
        time.sleep(0.25)
    raise TimeoutError(f"the member server of {member['name']} keeps running after its hand-over")


def hand_back(cloud: Paths, state: Path) -> list[str]:
    """Remove the hosted markers of this cluster's nodes (the reconciler restarts their member servers)."""
    d = DPPaths(cloud)
    back = []
    for marker in sorted(d.members.glob("*.hosted")) if d.members.is_dir() else []:
        if hosted_by(marker).get("state") == str(state):
            marker.unlink()
            back.append(marker.stem)
    return back


def hosted_by(marker: Path) -> dict:
    """What a hosted marker says ({} when it is unreadable)."""
    try:
        return json.loads(marker.read_text())
    except (OSError, ValueError):
        return {}


def layout_for(name: str, state: Path, plugged_members: list[dict], sans: tuple[str, ...] = ()) -> Layout:
    """One node per member: its address, its namespace (``ip netns exec``), the customary ports."""
    plan = layouts.spread(name, state, [m["ip"] for m in plugged_members],
                          [("ip", "netns", "exec", m["namespace"]) for m in plugged_members])
    return plan.with_sans(*sans)


def prepare(cloud: Paths, sans: tuple[str, ...] = (), name: str = NAME) -> Layout:
    """Servers ensured and plugged, each handed over, the layout saved (SANs added to what it had): what ``cluster.up``
    then starts."""
    state = state_dir(cloud, name)
    plugged_members = plugged(cloud, ensure_servers(cloud))
    old = layouts.load(state) if (state / "layout.json").exists() else None
    plan = layout_for(name, state, plugged_members, (*(old.sans if old else ()), *sans))
    if old and [n.address for n in old.nodes] != [n.address for n in plan.nodes]:
        forget(old)   # new nodes: a new etcd cluster (its members' data names the old peer addresses)
    layouts.save(plan)
    for member, node in zip(plugged_members, plan.nodes):
        hand_over(cloud, member, plan, node.name)
    return plan


def add_sans(cloud: Paths, sans: tuple[str, ...], name: str = NAME) -> Layout:
    """More names and addresses in the running cluster's certificates, reissued on disk (each API server reloads its
    serving certificate; kube-apiserver watches the files): nothing else is asked of the cloud."""
    from . import cluster

    plan = layouts.load(state_dir(cloud, name)).with_sans(*sans)
    layouts.save(plan)
    cluster.certificates(plan)
    return plan


def node_down(marker: Path) -> dict:
    """Stop the API server of the node a hosted marker names (etcd keeps running: a member's failure, as the
    endpoint sees it); what was stopped."""
    from . import cluster

    plan, node = _node(marker)
    return {"node": node.name, "stopped": cluster.stop_process(plan, node, "kube-apiserver")}


def node_up(marker: Path) -> dict:
    """Start that API server again; seconds until it is ready."""
    from . import cluster

    plan, node = _node(marker)
    return {"node": node.name, "ready_after": round(cluster.node_up(plan, node, cluster.binaries()), 1)}


def _node(marker: Path):
    hosted = hosted_by(marker)
    plan = layouts.load(Path(hosted["state"]))
    return plan, next(node for node in plan.nodes if node.name == hosted["node"])


def forget(old: Layout) -> None:
    """Stop a cluster whose nodes have moved and remove its etcd data (under its own state directory)."""
    import shutil

    from . import cluster

    cluster.down(old)
    for node in old.nodes:
        shutil.rmtree(old.etcd_data(node), ignore_errors=True)


def stop(cloud: Paths, name: str = NAME) -> list[str]:
    """The cluster's processes stopped (by PID file) and its nodes handed back; what was stopped. Nothing when this
    cloud never ran one."""
    from . import cluster

    state = state_dir(cloud, name)
    if not (state / "layout.json").exists():
        return []
    plan = layouts.load(state)
    stopped = cluster.down(plan)
    layouts.save(replace(plan, sans=()))   # the endpoints' names and addresses go with them: the next start adds its own
    hand_back(cloud, state)
    return [f"k8s {item}" for item in stopped]

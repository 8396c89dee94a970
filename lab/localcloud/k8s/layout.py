"""Where the local cluster's processes listen and keep their files (pure: no process, no certificate).

A cluster is three nodes; each runs one etcd member (client and peer port) and one kube-apiserver (secure port). All
three share 127.0.0.1 today, so each node has ports of its own. The later step runs each node in a data-plane network
namespace: a node then has its own ``address`` (bind and advertise), may keep the customary ports, and its processes
start under ``wrap`` (``("ip", "netns", "exec", <namespace>)``); nothing else changes.

Ports: never one the local cloud could take. Its ports (``localcloud.settings.BASE_PORTS``) move by a
``LOCALCLOUD_PORT_OFFSET`` that is a multiple of 1000 (lab/localcloud/ports.py), so a port whose remainder modulo 1000
is none of theirs clashes with no instance at any offset. The first base (from ``BASES``) whose nine ports are free
is taken; all stay below Linux's ephemeral range (32768), so no outgoing connection holds one by chance.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable, Optional

from localcloud.settings import BASE_PORTS

NODES = 3
API_OFFSET, ETCD_CLIENT_OFFSET, ETCD_PEER_OFFSET = 0, 10, 20
"""Node i's ports are base + offset + i."""
BASES = tuple(range(16440, 32000, 1000))
"""Candidate bases: remainders 440-462 modulo 1000, none of the local cloud's (checked by ``cloud_clash``)."""
CUSTOMARY = {"api": 6443, "etcd_client": 2379, "etcd_peer": 2380}
"""The ports a node with an address of its own (a network namespace) listens on."""


@dataclass(frozen=True)
class Node:
    """One control-plane node: an etcd member and a kube-apiserver on one address."""

    name: str
    address: str
    api_port: int
    etcd_client_port: int
    etcd_peer_port: int
    wrap: tuple[str, ...] = ()
    """A command prefix every process of the node starts under (e.g. ``ip netns exec <ns>``); empty: none."""

    @property
    def etcd_client_url(self) -> str:
        return f"https://{_host(self.address)}:{self.etcd_client_port}"

    @property
    def etcd_peer_url(self) -> str:
        return f"https://{_host(self.address)}:{self.etcd_peer_port}"

    @property
    def api_url(self) -> str:
        return f"https://{_host(self.address)}:{self.api_port}"

    def ports(self) -> tuple[int, int, int]:
        return self.api_port, self.etcd_client_port, self.etcd_peer_port


@dataclass(frozen=True)
class Layout:
    """A cluster: its name, its state directory and its nodes; ``sans``: names and addresses every API server's
    certificate also carries (the endpoint's DNS name and floating IPs, later)."""

    name: str
    state: Path
    nodes: tuple[Node, ...]
    sans: tuple[str, ...] = field(default=())

    @property
    def pki(self) -> Path:
        return self.state / "pki"

    def node_dir(self, node: Node) -> Path:
        return self.state / node.name

    def pidfile(self, node: Node, program: str) -> Path:
        return self.node_dir(node) / f"{program}.pid"

    def log(self, node: Node, program: str) -> Path:
        return self.node_dir(node) / f"{program}.log"

    def etcd_data(self, node: Node) -> Path:
        return self.node_dir(node) / "etcd-data"

    @property
    def kubeconfig(self) -> Path:
        """The admin kubeconfig, for the first node's API server."""
        return self.state / "admin.kubeconfig"

    def with_sans(self, *sans: str) -> "Layout":
        return replace(self, sans=tuple(dict.fromkeys((*self.sans, *sans))))


def _host(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def node_names(name: str) -> list[str]:
    return [f"{name}-{index + 1}" for index in range(NODES)]


def local(name: str, state: Path, base: int, address: str = "127.0.0.1") -> Layout:
    """Three nodes on one address, node i on ports base + offset + i."""
    nodes = tuple(Node(node, address, base + API_OFFSET + index, base + ETCD_CLIENT_OFFSET + index,
                       base + ETCD_PEER_OFFSET + index) for index, node in enumerate(node_names(name)))
    return Layout(name, Path(state), nodes)


def spread(name: str, state: Path, addresses: list[str], wraps: Optional[list[tuple[str, ...]]] = None) -> Layout:
    """One node per address (each in a namespace of its own, under ``wraps``), on the customary ports."""
    wraps = wraps or [()] * len(addresses)
    nodes = tuple(Node(node, address, CUSTOMARY["api"], CUSTOMARY["etcd_client"], CUSTOMARY["etcd_peer"], wrap)
                  for node, address, wrap in zip(node_names(name), addresses, wraps))
    return Layout(name, Path(state), nodes)


def cloud_clash(ports: Iterable[int]) -> list[int]:
    """The ports among ``ports`` a local cloud could listen on at some offset (a multiple of 1000)."""
    residues = {port % 1000 for port in BASE_PORTS.values()}
    return [port for port in ports if port % 1000 in residues]


def free_base(listening: Callable[[list[int]], set[int]], bases: Iterable[int] = BASES) -> int:
    """The first base whose nine ports clash with no local cloud and none of which ``listening`` reports taken."""
    for base in bases:
        ports = [base + offset + index for offset in (API_OFFSET, ETCD_CLIENT_OFFSET, ETCD_PEER_OFFSET)
                 for index in range(NODES)]
        if not cloud_clash(ports) and not listening(ports):
            return base
    raise RuntimeError(f"no free port base among {list(bases)}: every one has a port in use (ss -ltnp shows whose)")


def save(layout: Layout) -> Path:
    """``<state>/layout.json``: what ``load`` needs to find the cluster's processes again (``down``, ``status``)."""
    layout.state.mkdir(parents=True, exist_ok=True)
    path = layout.state / "layout.json"
    path.write_text(json.dumps({"name": layout.name, "sans": list(layout.sans),
                                "nodes": [asdict(node) for node in layout.nodes]}, indent=1) + "\n")
    return path


def load(state: Path) -> Layout:
    data = json.loads((Path(state) / "layout.json").read_text())
    nodes = tuple(Node(**{**node, "wrap": tuple(node["wrap"])}) for node in data["nodes"])
    return Layout(data["name"], Path(state), nodes, tuple(data["sans"]))

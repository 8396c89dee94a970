"""The `k8s` stack: this project's endpoint in front of the cluster on the local cloud's data plane (oncloud.py).

Its configuration is made here, not committed: the endpoint (the dev stack's shape, its members the three nodes
k8s-0..k8s-2 at 10.10.10.11-13 on k8s-subnet serving kube-apiserver on 6443, name ``kube-api``, record ``kube``) and the Kubernetes part
(``ha-endpoint:kubernetes``: the cluster's CA and admin credentials, secrets), so that the kubeconfig the component
hands out (output ``kubeconfig``) is the cluster's. Octavia's ovn provider has no HTTP monitors (TCP, UDP-CONNECT,
SCTP): the listener's monitor is TCP; the amphora provider would take an HTTPS ``/readyz`` one.

    .venv/bin/python -m localcloud.k8s.stack prepare --stack k8s   # cluster up, Pulumi.k8s.yaml (scripts/stack.sh)
    .venv/bin/python -m localcloud.k8s.stack after-up --stack k8s  # FIPs into the certificates, the kubectl line

``prepare`` starts (or keeps) the cluster with the endpoint's name in every API server's certificate, writes the
stack file when it has none and sets the three credentials as secrets (the stack's passphrase in the environment).
``after-up`` adds the floating IPs to the certificates (the API servers reload them), writes the kubeconfig output to
``<cluster state>/endpoint.kubeconfig`` and prints a kubectl line that resolves the name at the cloud's DNS server (in
a client namespace: lab/localcloud/kubectl, lab/localcloud/client).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from localcloud.settings import AZS, REPO, Paths

from . import layout as layouts
from . import oncloud

ENDPOINT, RECORD, ZONE = "kube-api", "kube", "example.test."
API_PORT = 6443


def endpoint_config(name: str = ENDPOINT, record: str = RECORD) -> dict:
    """``ha-endpoint:endpoint`` for the cluster's nodes: the dev stack's shape (ovn provider, TCP monitor, own-zone
    members, DNS published when ready)."""
    from localcloud.dataplane.nodes import KUBERNETES

    return {
        "name": name,
        "loadBalancerProvider": "ovn",
        "floatingNetwork": "public",
        "allowedCidrs": ["0.0.0.0/0"],
        "zones": {az: {"subnet": f"cp-{az}"} for az in AZS},
        "listeners": [{"port": API_PORT, "monitor": {"type": "TCP", "delay": 3, "timeout": 2, "maxRetries": 2,
                                                     "maxRetriesDown": 3}}],
        "members": [{"name": server, "address": address, "az": az, "subnet": KUBERNETES.network[1]}
                    for server, az, address in KUBERNETES.nodes],
        "memberPlacement": "own-zone",
        "dns": {"dnsZone": ZONE, "record": record, "ttl": 30, "publish": "when-ready"},
        "readiness": {"timeoutSeconds": 600, "require": "online"},
    }


def fqdn(config: dict) -> str:
    return f"{config['dns']['record']}.{config['dns']['dnsZone']}".rstrip(".")


def credentials(state: Path) -> dict[str, str]:
    """``ha-endpoint:kubernetes.credentials`` (PEM): the cluster CA and the admin's certificate and key."""
    pki = state / "pki"
    return {"caCertificate": (pki / "ca.crt").read_text(), "clientCertificate": (pki / "admin.crt").read_text(),
            "clientKey": (pki / "admin.key").read_text()}


def start_cluster(cloud: Paths, sans: tuple[str, ...]) -> layouts.Layout:
    """The cloud's cluster running, with ``sans`` in its API servers' certificates (reissued when they change: the
    API servers reload their serving certificate from disk)."""
    from . import cluster

    plan = oncloud.prepare(cloud, sans)
    cluster.up(plan, cluster.binaries())
    return plan


def add_addresses(cloud: Paths, outputs: dict) -> layouts.Layout:
    """The endpoint's floating IPs (its ``zones`` output) added to the API servers' certificates (oncloud.add_sans)."""
    addresses = [zone["floatingIp"] for zone in outputs.get("zones", {}).values() if zone.get("floatingIp")]
    return oncloud.add_sans(cloud, tuple(addresses))


def pulumi(*args: str) -> str:
    done = subprocess.run(["pulumi", *args], cwd=REPO, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"pulumi {' '.join(args[:4])} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return done.stdout


def prepare(stack: str) -> None:
    import yaml

    cloud = Paths()
    stack_file = REPO / f"Pulumi.{stack}.yaml"
    document = (yaml.safe_load(stack_file.read_text()) if stack_file.exists() else None) or {}
    if "ha-endpoint:endpoint" not in (document.get("config") or {}):   # `pulumi stack init` wrote only a salt
        document["config"] = {"openstack:cloud": "localcloud", "ha-endpoint:endpoint": endpoint_config(),
                              "ha-endpoint:kubernetes": {"clusterName": oncloud.NAME}, **(document.get("config") or {})}
        stack_file.write_text(
            "# Made by `python -m localcloud.k8s.stack prepare` (not committed): the endpoint in front of the local\n"
            "# cloud's Kubernetes cluster (lab/localcloud/k8s/oncloud.py); its credentials are this stack's secrets.\n"
            + yaml.safe_dump(document, sort_keys=False))
    config = yaml.safe_load(stack_file.read_text())["config"]["ha-endpoint:endpoint"]
    plan = start_cluster(cloud, (fqdn(config),))
    print(f"k8s: cluster {plan.name} ready on k8s-0..k8s-2 ({', '.join(n.address for n in plan.nodes)}), "
          f"its certificates name {', '.join(plan.sans)}")
    for key, value in credentials(plan.state).items():
        pulumi("config", "set", "--secret", "--path", f"ha-endpoint:kubernetes.credentials.{key}", "--stack", stack,
               "--", value)


def after_up(stack: str) -> None:
    """Floating IPs into the certificates, the kubeconfig written, the kubectl line printed."""
    from . import cluster

    outputs = json.loads(pulumi("stack", "output", "--json", "--show-secrets", "--stack", stack))
    plan = add_addresses(Paths(), outputs)
    kubeconfig = plan.state / "endpoint.kubeconfig"
    from .pki import write_private
    write_private(kubeconfig, outputs["kubeconfig"].encode())
    bins = cluster.binaries()
    print(f"k8s: the API servers' certificates name {', '.join(plan.sans)}; the endpoint's kubeconfig: {kubeconfig}")
    print("reach the cluster through the endpoint's name (kubectl resolves it at the local cloud's DNS server, in a "
          "client namespace on the public network):")
    print("  lab/localcloud/kubectl get --raw /readyz")
    print(f"  (that is: lab/localcloud/client {bins.kubectl} --kubeconfig {kubeconfig} get --raw /readyz)")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m localcloud.k8s.stack", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("prepare", "after-up"))
    parser.add_argument("--stack", default="k8s")
    args = parser.parse_args(argv)
    started = time.monotonic()
    (prepare if args.command == "prepare" else after_up)(args.stack)
    print(f"k8s: {args.command} took {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

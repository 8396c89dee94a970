"""A management cluster's Cluster API objects as the agent's e2e tests drive them: the Machine CRD of Cluster API
v1.14.2 (from its Go module), a Cluster handle that adds, marks healthy and deletes Machines with Cluster API's hook
semantics (kubectl on the local Kubernetes control plane), and the waits and member listings the tests share
(tests/e2e/test_k8s_member_agent.py, tests/e2e/test_k8s_rollout.py through tests/e2e/rollout.py, and
lab/bench/rollout_figures.py)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import yaml

CAPI = "sigs.k8s.io/cluster-api@v1.14.2"
HOOK = "pre-drain.delete.hook.machine.cluster.x-k8s.io/"
TAG = "ha-endpoint:agent=default/prod"


def machines_crd() -> dict:
    """Cluster API v1.14.2's Machine CRD, from its Go module (`go mod download`; the checksum database verifies it)."""
    found = subprocess.run(["go", "mod", "download", "-json", CAPI], capture_output=True, text=True, timeout=600,
                           env={**os.environ, "GOFLAGS": "", "GOTOOLCHAIN": "local"}, cwd="/tmp")
    assert found.returncode == 0, found.stdout + found.stderr
    directory = Path(json.loads(found.stdout)["Dir"])
    return yaml.safe_load((directory / "core/config/crd/bases/cluster.x-k8s.io_machines.yaml").read_text())


class Cluster:
    def __init__(self, plan, bins):
        self.plan, self.bins = plan, bins

    def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        done = subprocess.run([str(self.bins.kubectl), "--kubeconfig", str(self.plan.kubeconfig),
                               "--request-timeout=20s", *args], input=stdin, capture_output=True, text=True,
                              timeout=90)
        assert done.returncode == 0 or not check, f"kubectl {' '.join(args)}: {done.stderr[-2000:]}"
        return done.stdout

    def install_machines(self) -> None:
        """Cluster API's Machine CRD applied and :func:`established` (seen failing with `kubectl wait` on a quiet
        machine, 2026-12-03)."""
        self.kubectl("apply", "--server-side", "-f", "-", stdin=json.dumps(machines_crd()))

        wait_for(lambda: established(self.kubectl("get", "crd/machines.cluster.x-k8s.io", "-o", "json")),
                 "Cluster API's Machine CRD Established", 60)

    def machine(self, name: str) -> dict | None:
        out = self.kubectl("get", "machines.cluster.x-k8s.io", name, "-o", "json", check=False)
        return json.loads(out) if out.strip() else None

    def add_machine(self, name: str, az: str, address: str, api_server_healthy: bool = True) -> None:
        """A control-plane Machine with its address; ``api_server_healthy``: KubeadmControlPlane's
        APIServerPodHealthy condition True on it (else absent: its API server is not ready yet)."""
        self.kubectl("apply", "-f", "-", stdin=json.dumps({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
            "metadata": {"name": name, "namespace": "default", "finalizers": ["machine.cluster.x-k8s.io"],
                         "labels": {"cluster.x-k8s.io/cluster-name": "prod", "cluster.x-k8s.io/control-plane": ""}},
            "spec": {"clusterName": "prod", "failureDomain": az, "bootstrap": {"dataSecretName": f"{name}-data"},
                     "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackMachine",
                                           "name": name}}}))
        self.kubectl("patch", "machines.cluster.x-k8s.io", name, "--subresource=status", "--type=merge", "-p",
                     json.dumps({"status": {"addresses": [{"type": "InternalIP", "address": address}]}}))
        if api_server_healthy:
            self.api_server_healthy(name)

    def api_server_healthy(self, name: str, healthy: bool = True) -> None:
        """What KubeadmControlPlane does once the Machine's kube-apiserver pod is ready: its APIServerPodHealthy
        condition True (Cluster API v1beta2 Machine status.conditions); ``healthy=False``: what it does when it sees
        the pod not running, the condition False."""
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.kubectl("patch", "machines.cluster.x-k8s.io", name, "--subresource=status", "--type=merge", "-p",
                     json.dumps({"status": {"conditions": [{
                         "type": "APIServerPodHealthy", "status": "True" if healthy else "False",
                         "reason": "Running" if healthy else "PodFailed", "message": "" if healthy else
                         "the kube-apiserver pod is not running", "lastTransitionTime": now}]}}))

    def delete_as_cluster_api(self, name: str, timeout: float) -> float:
        """Delete the Machine and play Cluster API's Machine controller: the finalizer stays while a pre-drain hook
        is on it. Returns when the hook was seen released (seconds after the deletion)."""
        self.kubectl("delete", "machines.cluster.x-k8s.io", name, "--wait=false")
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            machine = self.machine(name)
            annotations = (machine or {}).get("metadata", {}).get("annotations") or {}
            if machine and not any(key.startswith(HOOK) for key in annotations):
                released = time.monotonic() - started
                self.kubectl("patch", "machines.cluster.x-k8s.io", name, "--type=json", "-p",
                             '[{"op": "remove", "path": "/metadata/finalizers"}]')
                return released
            time.sleep(0.2)
        raise AssertionError(f"Machine {name} still held by a hook after {timeout} s: {annotations}")



def established(crd_json: str) -> bool:
    """Whether a CRD (``kubectl get crd/<name> -o json``) says it is Established. Read from its status: `kubectl wait
    --for=condition=Established` right after the apply fails instead of waiting while the new CRD has no conditions
    yet (".status.conditions accessor error: <nil>")."""
    crd = json.loads(crd_json)
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in (crd.get("status") or {}).get("conditions") or [])


def wait_for(check, what: str, timeout: float, step: float = 0.3):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(step)
    raise AssertionError(f"{what}: not within {timeout} s")


def agent_members(conn, pool_id: str) -> dict[str, object]:
    return {m.name: m for m in conn.load_balancer.members(pool_id) if TAG in (m.tags or [])}

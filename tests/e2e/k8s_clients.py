"""The Kubernetes clients of the failover loop (tests/e2e/failover.py): what they need and how each is started.

Each GETs ``path``: ``/readyz`` unless told (anonymous: the failover tests' kubeconfigs carry no credential; the
rollout asks what a controller asks, an object: tests/e2e/rollout.py ``REQUEST``).

- ``kubectl``: ``kubectl --kubeconfig K get --raw PATH``, a new process per request, started with
  ``ip netns exec <client namespace>`` (localcloud.dataplane.client_ns) so that it resolves the endpoint's name as
  resolv.conf says there: at the local cloud's named, through the namespace's DNS forwarder. kubectl's own defaults
  (v1.34.4; cli-runtime, client-go, apimachinery v0.34.4): ``--request-timeout=0`` (no timeout for a request), a
  30 s dial timeout shared by the name's addresses in turn, a 10 s TLS handshake timeout, HTTP/2 health checks (a
  ping after 30 s without a frame, the connection dropped after 15 s more without an answer; only matter to a
  connection kept open, which a new process per request never has).
- ``client-go``: lab/bench/failover/clientgo, one clientset for the whole loop (connection reuse: what a controller
  does) with client-go's transport and the same defaults, resolving at the DNS server given (-dns).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
K8S_CLIENTS = ("kubectl", "client-go")
CLIENT_GO_SOURCE = REPO / "lab" / "bench" / "failover" / "clientgo"


@dataclass(frozen=True)
class K8sClients:
    """What the Kubernetes rows need: the kubeconfig (its server: the loop's URL), the client namespace kubectl runs
    in, the two programs, and the path each request GETs."""

    kubeconfig: Path
    namespace: str
    kubectl: Path
    client_go: Path
    path: str = "/readyz"

    def kubectl_command(self) -> list[str]:
        """One request: no ``--request-timeout`` (kubectl's default, none)."""
        return ["ip", "netns", "exec", self.namespace, str(self.kubectl), "--kubeconfig", str(self.kubeconfig),
                "get", "--raw", self.path]

    def client_go_command(self, server: tuple[str, int], duration: float, interval: float) -> list[str]:
        return [str(self.client_go), "-kubeconfig", str(self.kubeconfig), "-dns", f"{server[0]}:{server[1]}",
                "-duration", f"{duration}s", "-interval", f"{interval}s", "-path", self.path]


def engine_goflags() -> str:
    """The engine's GOFLAGS (lab/engine/build-flags.env): the client-go packages the kube part compiled are then reused
    from Go's build cache."""
    for line in (REPO / "lab" / "engine" / "build-flags.env").read_text().splitlines():
        if line.startswith("ENGINE_GOFLAGS="):
            return line.split("=", 1)[1].strip().strip('"')
    raise RuntimeError("lab/engine/build-flags.env sets no ENGINE_GOFLAGS")


def build_client_go(cache: Path) -> Path:
    """lab/bench/failover/clientgo built into the cache (``$HA_ENDPOINT_CACHE/bin``) with the engine's GOFLAGS; modules
    from the Go module proxy, checked against go.sum."""
    from tests.e2e.failover import build_go_program
    return build_go_program(CLIENT_GO_SOURCE, cache / "bin" / "hafailover-clientgo", engine_goflags())


ANONYMOUS = "anonymous"


def insecure_kubeconfig(url: str, path: Path) -> Path:
    """A kubeconfig for ``url`` that skips TLS verification and carries no credential: enough for ``/readyz``
    (anonymous) against a server with a self-signed certificate, e.g. the data plane's member servers.

    It names a user (``username: anonymous``, no password): kubectl 1.34 loads its configuration interactively (it
    still has the deprecated ``--password`` flag) and, over TLS with nothing that identifies a user, prompts
    "Please enter Username:" on stdin, failing with ``error: EOF`` when there is none. A username alone stops the
    prompt; it makes client-go send ``Authorization: Basic`` with an empty password, which no authenticator of a
    kube-apiserver since 1.19 reads (basic auth was removed), so the request stays anonymous there too."""
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "endpoint",
              "clusters": [{"name": "endpoint", "cluster": {"server": url.rstrip("/"),
                                                            "insecure-skip-tls-verify": True}}],
              "contexts": [{"name": "endpoint", "context": {"cluster": "endpoint", "user": ANONYMOUS}}],
              "users": [{"name": ANONYMOUS, "user": {"username": ANONYMOUS}}]}
    path.write_text(json.dumps(config, indent=1) + "\n")
    path.chmod(0o600)
    return path

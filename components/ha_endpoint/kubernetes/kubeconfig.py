"""A kubeconfig for the cluster behind the endpoint (pure: text in, text out; no Pulumi resources here).

The server is ``https://<the endpoint's DNS name without its trailing dot>:<API port>``: clients resolve the name to
every published zone's address and fail over between them (client-go tries each A record in turn). Credentials are
PEM text or its base64 (what a kubeconfig's ``*-data`` fields hold); they end up base64-encoded in the
``*-data`` fields, never in a file path, so the kubeconfig is self-contained.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Optional

import yaml

from ..core.errors import HaEndpointError

DEFAULT_API_PORT = 6443
"""The Kubernetes API server's customary port: the API port when the endpoint listens on it."""

PEM_BEGIN = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----")
CERTIFICATE_LABELS = ("CERTIFICATE",)
KEY_LABELS = ("PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY")


class CredentialError(HaEndpointError, ValueError):
    """A credential is not what its field needs (the message never contains the credential itself)."""


def pem_data(value: str, what: str, labels: tuple[str, ...]) -> str:
    """``value`` (PEM text, or the base64 of PEM text) as a kubeconfig ``*-data`` value: base64 of the PEM, one
    line. ``what`` names the field in messages; ``labels`` are the PEM block types it accepts."""
    text = value.strip()
    if not text.startswith("-----BEGIN"):
        try:
            text = base64.b64decode("".join(text.split()), validate=True).decode("ascii").strip()
        except (binascii.Error, UnicodeDecodeError, ValueError):
            raise CredentialError(f"{what} is neither PEM text (-----BEGIN {labels[0]}-----...) nor the base64 of "
                                  "PEM text; give the file's content (e.g. the content of ca.crt)") from None
    found = PEM_BEGIN.match(text)
    if found is None:
        raise CredentialError(f"{what} is not PEM text: it must start with -----BEGIN {labels[0]}-----")
    if found.group(1) not in labels:
        raise CredentialError(f"{what} holds a PEM {found.group(1)}, not a {' or '.join(labels)}; check that the "
                              "right file was given")
    if f"-----END {found.group(1)}-----" not in text:
        raise CredentialError(f"{what} is cut short: its -----END {found.group(1)}----- line is missing")
    return base64.b64encode((text + "\n").encode("ascii")).decode("ascii")


def api_host(fqdn: str) -> str:
    """The endpoint's DNS name as clients write it in a URL: without the trailing dot of the DNS record."""
    return fqdn[:-1] if fqdn.endswith(".") else fqdn


def server_url(fqdn: str, port: int) -> str:
    """``https://<host>:<port>``, the kubeconfig's ``server``."""
    return f"https://{api_host(fqdn)}:{port}"


def pick_api_port(ports: list[int], wanted: Optional[int]) -> int:
    """The endpoint port that serves the Kubernetes API: ``wanted`` if given (it must be a listener port), else
    6443 when the endpoint listens on it, else the only port. Raises ValueError with the fix."""
    listed = ", ".join(str(port) for port in sorted(ports)) or "none"
    if wanted is not None:
        if wanted not in ports:
            raise ValueError(f"port {wanted} is not a listener port of the endpoint ({listed}); use one of them, or "
                             "add a listener for it")
        return wanted
    if DEFAULT_API_PORT in ports:
        return DEFAULT_API_PORT
    if len(ports) == 1:
        return ports[0]
    raise ValueError(f"the endpoint listens on {listed} and none is 6443; say which one serves the Kubernetes API "
                     "(apiPort)")


@dataclass(frozen=True)
class KubeconfigUser:
    """How the kubeconfig authenticates: a client certificate and key, or a bearer token (exactly one of them)."""

    client_certificate: Optional[str] = None
    client_key: Optional[str] = None
    token: Optional[str] = None

    def entry(self) -> dict[str, str]:
        """The ``user`` mapping of the kubeconfig."""
        if self.token:
            if self.client_certificate or self.client_key:
                raise CredentialError("give either a token or a client certificate and key, not both")
            return {"token": self.token.strip()}
        if not (self.client_certificate and self.client_key):
            raise CredentialError("a client certificate needs its key (and a key its certificate); or give a token")
        return {"client-certificate-data": pem_data(self.client_certificate, "the client certificate",
                                                    CERTIFICATE_LABELS),
                "client-key-data": pem_data(self.client_key, "the client key", KEY_LABELS)}


def render_kubeconfig(server: str, cluster_name: str, user_name: str, ca_certificate: str,
                      user: KubeconfigUser) -> str:
    """The kubeconfig (YAML) with one cluster, one user and one context named ``cluster_name``, which is current."""
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": {
            "server": server,
            "certificate-authority-data": pem_data(ca_certificate, "the cluster CA certificate", CERTIFICATE_LABELS),
        }}],
        "users": [{"name": user_name, "user": user.entry()}],
        "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": user_name}}],
        "current-context": cluster_name,
        "preferences": {},
    }
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=False)

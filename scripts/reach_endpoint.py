"""After `make up`: how to reach the endpoint. Reads the stack's outputs (`pulumi stack output --json`) on stdin and
prints its name, the local cloud's DNS server to ask, and a curl line to paste that resolves the name there and asks
the API through it. Says nothing of the local cloud when the stack targets another cloud (OS_CLIENT_CONFIG_FILE is not
the local cloud's clouds.yaml): that cloud's own resolvers answer there.

    pulumi stack output --json | .venv/bin/python scripts/reach_endpoint.py
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def lines(outputs: dict, local_dns: tuple[str, int] | None) -> list[str]:
    fqdn, ports = outputs.get("fqdn"), outputs.get("ports") or []
    if not fqdn or not ports:
        return []
    name, port = fqdn.rstrip("."), int(ports[0])
    published = ", ".join(outputs.get("addresses") or []) or "none yet"
    out = [f"endpoint: {name} port {port} (published in DNS: {published})"]
    if local_dns is None:
        return out
    host, dns_port = local_dns
    ask = f"dig @{host} -p {dns_port} +short {name}"
    scheme = "https" if port in (443, 6443) else "http"
    out += [f"DNS server: {host} port {dns_port}      {ask}",
            "reach the API through the name (curl resolves it at the local cloud's DNS server):",
            f"  curl -sk --resolve {name}:{port}:$({ask} | head -n1) {scheme}://{name}:{port}/"]
    return out


def local_dns() -> tuple[str, int] | None:
    from localcloud.settings import HOST, PORTS, Paths
    config = os.environ.get("OS_CLIENT_CONFIG_FILE")
    if not config or Path(config).resolve() != Paths().clouds_yaml.resolve():
        return None
    return HOST, PORTS["named"]


if __name__ == "__main__":
    print("\n".join(lines(json.load(sys.stdin), local_dns())))

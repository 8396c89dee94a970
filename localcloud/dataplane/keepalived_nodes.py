"""Debian's keepalived in the local cloud's member namespaces, configured from a keepalived stack's outputs.

    .venv/bin/python -m localcloud.dataplane.keepalived_nodes start < outputs.json   # pulumi stack output --json
    .venv/bin/python -m localcloud.dataplane.keepalived_nodes peers      # a second node per zone (cp-3..cp-5)
    .venv/bin/python -m localcloud.dataplane.keepalived_nodes holders                # who holds which address
    .venv/bin/python -m localcloud.dataplane.keepalived_nodes stop

``start`` takes each zone's ``keepalived`` output (per member: the configuration the component rendered), finds the
member's namespace by its address (``lc<offset>-m-*``, the data plane's member namespaces), replaces the output's
interface (``eth0``) with the namespace's own, writes it under ``<state>/keepalived/`` and starts ``keepalived
--dont-fork --vrrp`` inside the namespace in a session of its own (PID file beside it). ``stop`` ends exactly those
processes, by their PID files. Needs root (``ip netns exec``) and Debian's keepalived (``apt-get install keepalived``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..settings import Paths
from . import config as dp_config
from . import netns


def _dir() -> Path:
    path = Paths().root / "keepalived"
    path.mkdir(parents=True, exist_ok=True)
    return path


def member_namespaces() -> dict[str, tuple[str, str]]:
    """Member address -> (namespace, interface), for every member namespace of this instance."""
    found: dict[str, tuple[str, str]] = {}
    for ns in netns.namespaces():
        if not ns.startswith(f"{dp_config.TAG}-m-"):
            continue
        for line in netns.sh("ip", "-4", "-o", "addr", "show", ns=ns, check=False).splitlines():
            parts = line.split()
            if len(parts) > 3 and parts[1] != "lo":
                found.setdefault(parts[3].split("/")[0], (ns, parts[1]))
    return found


def start(outputs: dict) -> list[str]:
    """Start keepalived for every member in the outputs' zones; the lines it reports."""
    where = member_namespaces()
    lines = []
    for az, zone in sorted((outputs.get("zones") or {}).items()):
        for member, rendered in sorted((zone.get("keepalived") or {}).items()):
            text = rendered["config"]
            source = next(line.split()[1] for line in text.splitlines() if line.strip().startswith("unicast_src_ip"))
            if source not in where:
                lines.append(f"{az} {member}: no member namespace holds {source}")
                continue
            ns, interface = where[source]
            conf = _dir() / f"{member}.conf"
            conf.write_text(text.replace(" eth0", f" {interface}"))
            pidfile, log = _dir() / f"{member}.pid", _dir() / f"{member}.log"
            stop_one(member)
            process = subprocess.Popen(
                ["ip", "netns", "exec", ns, "keepalived", "--dont-fork", "--vrrp", "--log-console", "--log-detail",
                 "-f", str(conf), "-p", str(_dir() / f"{member}.main.pid"), "-r", str(_dir() / f"{member}.vrrp.pid")],
                stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)
            pidfile.write_text(str(process.pid))
            lines.append(f"{az} {member}: keepalived pid {process.pid} in {ns} ({interface}), VIP {zone['vipAddress']}")
    return lines


def stop_one(member: str) -> bool:
    pidfile = _dir() / f"{member}.pid"
    if not pidfile.exists():
        return False
    pid = int(pidfile.read_text())
    try:
        os.kill(pid, signal.SIGTERM)
        for _ in range(100):  # until it is gone: a new keepalived refuses to start beside it ("already running")
            time.sleep(0.1)
            os.kill(pid, 0)
    except ProcessLookupError:
        pass
    pidfile.unlink()
    return True


def stop() -> list[str]:
    return [f"stopped {path.stem}" for path in sorted(_dir().glob("*.pid"))
            if not path.stem.endswith((".main", ".vrrp")) and stop_one(path.stem)]


def holders() -> dict[str, list[str]]:
    """Namespace -> its addresses (the VIPs show beside the member's own)."""
    result = {}
    for ns in netns.namespaces():
        if ns.startswith(f"{dp_config.TAG}-m-"):
            addrs = [line.split()[3] for line in netns.sh("ip", "-4", "-o", "addr", "show", ns=ns, check=False)
                     .splitlines() if len(line.split()) > 3 and line.split()[1] != "lo"]
            result[ns] = addrs
    return result


def peers() -> dict[str, str]:
    """The second node of each zone (:data:`nodes.KEEPALIVED_PEERS`), created where missing and ACTIVE."""
    from ..rest import Client
    from ..settings import AZS, PROJECT, USER
    from . import nodes

    paths = Paths()
    secrets, seed = (json.loads((paths.root / name).read_text()) for name in ("secrets.json", "seed.json"))
    user = Client(USER, secrets["user"], PROJECT).login()
    return nodes.ensure(user, {az: seed[f"{az}_subnet_id"] for az in AZS},
                        {az: seed[f"{az}_network_id"] for az in AZS}, seed["image_id"], seed["flavor"],
                        nodeset=nodes.KEEPALIVED_PEERS)


def main(argv: list[str]) -> int:
    action = argv[1] if len(argv) > 1 else ""
    if action == "start":
        print("\n".join(start(json.load(sys.stdin))))
    elif action == "stop":
        print("\n".join(stop()))
    elif action == "peers":
        print(json.dumps(peers()))
    elif action == "holders":
        print(json.dumps(holders(), indent=1))
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""Debian's keepalived in the local cloud's member namespaces, configured from a keepalived stack's outputs.

    .venv/bin/python -m localcloud.dataplane.keepalived_nodes start < outputs.json   # pulumi stack output --json
    .venv/bin/python -m localcloud.dataplane.keepalived_nodes follow Pulumi.keepalived.yaml  # while `up` runs
    .venv/bin/python -m localcloud.dataplane.keepalived_nodes peers      # a second node per zone (cp-3..cp-5)
    .venv/bin/python -m localcloud.dataplane.keepalived_nodes holders                # who holds which address
    .venv/bin/python -m localcloud.dataplane.keepalived_nodes stop

``start`` takes each zone's ``keepalived`` output (per member: the configuration the component rendered), finds the
member's namespace by its address (``lc<offset>-m-*``, the data plane's member namespaces), replaces the output's
interface (``eth0``) with the namespace's own, writes it under ``<state>/keepalived/`` and starts ``keepalived
--dont-fork --vrrp`` inside the namespace in a session of its own (PID file beside it); a member whose keepalived runs
with that configuration already is left alone (no VIP flap on a second ``up``). ``stop`` ends exactly those processes,
by their PID files.

``follow`` is what cloud-init does on a real node while ``up`` runs: the zone's configuration needs the VIP address,
which Neutron allocates during ``up``, and the zone's readiness gate waits, during ``up``, for a member to hold that
VIP and answer on it. So ``follow`` reads the stack's file (the members, the listener), polls the cloud for each zone's
VIP port (``<endpoint>-<az>-vip``) and, once it has an address, renders the zone's configuration with the component's
own renderer (:func:`ha_endpoint.backends.keepalived.config.member_files`) and starts it. After ``up``, ``start`` with
the real outputs checks it: a member whose configuration differs from the output's is restarted with the output's
(``scripts/stack.sh up`` does both). Needs root (``ip netns exec``) and Debian's keepalived (``apt-get install keepalived``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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


def running(member: str) -> bool:
    """Whether this member's keepalived (by its PID file) is alive."""
    pidfile = _dir() / f"{member}.pid"
    try:
        os.kill(int(pidfile.read_text()), 0)
        return True
    except (FileNotFoundError, ValueError, ProcessLookupError):
        return False


def start(outputs: dict) -> list[str]:
    """Start keepalived for every member in the outputs' zones (restarted where its configuration changed); the lines
    it reports."""
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
            conf, text = _dir() / f"{member}.conf", text.replace(" eth0", f" {interface}")
            if running(member) and conf.exists() and conf.read_text() == text:
                lines.append(f"{az} {member}: keepalived runs with this configuration already (in {ns})")
                continue
            conf.write_text(text)
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


def stack_args(stack_file: Path) -> Any:
    """The endpoint's arguments in a stack's file (``<project>:endpoint``), validated as the stack program does."""
    import yaml

    from ha_endpoint import load_endpoint_args
    from ha_endpoint.backends import REGISTRY

    project = yaml.safe_load((stack_file.parent / "Pulumi.yaml").read_text())["name"]
    raw = (yaml.safe_load(stack_file.read_text()).get("config") or {}).get(f"{project}:endpoint")
    if raw is None:
        raise SystemExit(f"{stack_file}: no {project}:endpoint key")
    return load_endpoint_args(raw, f"{project}:endpoint", REGISTRY)


def zone_outputs(args: Any, az: str, vip: str) -> dict:
    """The zone's ``vipAddress`` and ``keepalived`` as the component outputs them, from the stack's arguments (the
    members given by address) and the VIP Neutron allocated."""
    from ha_endpoint.backends.keepalived import config
    from ha_endpoint.core.args import placed_zones
    from ha_endpoint.core.predicates import member_in_service

    members = [(member.name, member.address) for member in args.members
               if az in placed_zones(args.zones, args.member_placement, member.az)
               and member_in_service(member.enabled, member.weight)]
    for name, address in members:
        if not isinstance(address, str):
            raise SystemExit(f"member {name}: follow needs members given by address in the stack's file")
    listener = args.listeners[0]
    zone = config.zone_vrrp(args.name, az, vip, members, listener.protocol, listener.member_port or listener.port)
    return {"vipAddress": vip, "keepalived": config.member_files(zone)}


def vip_addresses(conn: Any, endpoint: str, azs: list[str]) -> dict[str, str]:
    """Zone -> the address of its VIP port (``<endpoint>-<az>-vip``), for the zones whose port exists (one only)."""
    found = {}
    for az in azs:
        ports = list(conn.network.ports(name=f"{endpoint}-{az}-vip"))
        if len(ports) == 1 and ports[0].fixed_ips:
            found[az] = ports[0].fixed_ips[0]["ip_address"]
    return found


def follow(stack_file: Path, timeout: float = 900.0, interval: float = 1.0) -> None:
    """Start each zone's keepalived as soon as its VIP port has an address, until every zone's runs (or
    ``timeout``); prints what it starts."""
    import openstack

    if shutil.which("keepalived") is None:  # else the zones' gates would wait their whole timeout for nothing
        raise SystemExit("follow: keepalived is not installed on this machine: run lab/localcloud/install.sh (it installs "
                         "Debian's keepalived), then `up` again")
    args = stack_args(stack_file)
    conn = openstack.connect(cloud=os.environ.get("OS_CLOUD", "localcloud"))
    waiting, deadline = sorted(args.zones), time.monotonic() + timeout
    while waiting and time.monotonic() < deadline:
        try:
            vips = vip_addresses(conn, args.name, waiting)
        except openstack.exceptions.SDKException as error:  # the cloud busy or restarting: asked again next poll
            print(f"follow: reading the VIP ports failed ({error}); again in {interval} s", flush=True)
            vips = {}
        for az, vip in sorted(vips.items()):
            print("\n".join(f"follow: {line}" for line in start({"zones": {az: zone_outputs(args, az, vip)}})),
                  flush=True)
            waiting.remove(az)
        time.sleep(interval)
    if waiting:
        print(f"follow: no VIP port for {', '.join(waiting)} after {timeout:.0f} s", flush=True)


def main(argv: list[str]) -> int:
    action = argv[1] if len(argv) > 1 else ""
    if action == "start":
        print("\n".join(start(json.load(sys.stdin))))
    elif action == "follow" and len(argv) > 2:
        follow(Path(argv[2]))
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

"""Member hosts: every Nova server with a port bound to an AZ's compute host is a network namespace plugged into
that AZ's chassis, running localcloud.dataplane.member_server (system python, root, PyMySQL).

A member of port P (server S on cmp-azN): namespace lc<offset>-m-<P[:8]>; a veth whose member end carries P's MAC
and fixed IP (default route via the subnet's gateway, MTU the network's) and whose other end sits on azN's br-int with
external_ids:iface-id=P (ovn-controller then claims the logical switch port: Neutron sets the port ACTIVE); the
member server answering "S azN". The reconciler (`python3 -m localcloud.dataplane.members --state <dir>`, the
`dataplane-members` service) polls the Neutron and Nova databases every 0.5 s: it plugs new members, unplugs those
whose port is gone or unbound (a deleted server), and restarts a member server that is not running unless a fault
holds it down (`<run>/members/<P>.down`, written by localcloud.dataplane.faults) or another program serves there
(`<run>/members/<P>.hosted`, written by localcloud.k8s: the member server is stopped and not started). Every fourth tick
(2 s) it also gives the provider's new OVN load balancers ``options:reject=true`` when the NB database's file changed
since its last pass (at least every 60 s: localcloud.dataplane.lb_reject, a reset, not silence, from a load balancer
with no live member), and starts again a chassis whose daemons died on their own (ovn.revive).
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from .. import procs
from ..settings import AZS, COMPUTE_HOSTS, DB_ADMIN, LAB, SYSTEM_PYTHON, Paths
from . import config, lb_reject, netns, ovn
from .config import DPPaths

INTERVAL = float(os.environ.get('LOCALCLOUD_MEMBERS_INTERVAL', '0.5'))
AZ_OF_HOST = {host: az for az, host in COMPUTE_HOSTS.items()}
LB_REJECT_EVERY = 4   # ticks between two passes of lb_reject (2 s at the default interval)
NB_RECHECK_EVERY = 120   # ticks between two passes of lb_reject even with the NB database unchanged (60 s)

QUERY = """
SELECT p.id, p.mac_address, p.device_id, pb.host, ia.ip_address, sn.cidr, sn.gateway_ip,
       COALESCE(i.display_name, p.device_id), n.mtu
FROM neutron.ports p
JOIN neutron.networks n ON n.id = p.network_id
JOIN neutron.ml2_port_bindings pb ON pb.port_id = p.id AND pb.status = 'ACTIVE'
     AND pb.vif_type NOT IN ('binding_failed', 'unbound')
JOIN neutron.ipallocations ia ON ia.port_id = p.id
JOIN neutron.subnets sn ON sn.id = ia.subnet_id AND sn.ip_version = 4
LEFT JOIN nova.instances i ON i.uuid = p.device_id AND i.deleted = 0
WHERE p.device_owner LIKE 'compute:%%' AND pb.host IN ({hosts})
"""


def wanted(cur) -> dict:
    """port id -> the member it should be (one IPv4 address per port: the first)."""
    hosts = list(AZ_OF_HOST)
    cur.execute(QUERY.format(hosts=','.join(['%s'] * len(hosts))), hosts)
    out = {}
    for pid, mac, device, host, ip, cidr, gw, name, mtu in cur.fetchall():
        out.setdefault(pid, {'port': pid, 'mac': mac, 'server_id': device, 'host': host, 'az': AZ_OF_HOST[host],
                             'ip': ip, 'prefix': int(cidr.split('/')[1]), 'gateway': gw, 'name': name,
                             'namespace': config.member_ns(pid), 'mtu': mtu})
    return out


def record(d: DPPaths, port: str) -> Path:
    return d.members / f'{port}.json'


def down_marker(d: DPPaths, port: str) -> Path:
    return d.members / f'{port}.down'


def hosted_marker(d: DPPaths, port: str) -> Path:
    """Present while another program serves in the member's namespace (localcloud.k8s's etcd and API server): the
    member server is not run there; the file says who."""
    return d.members / f'{port}.hosted'


def pidfile(d: DPPaths, port: str) -> Path:
    return d.members / f'{port}.pid'


def log(p: Paths, port: str) -> Path:
    return p.logs / f'member-{port[:8]}.log'


SERVER_MARKER = 'localcloud.dataplane.member_server'


def cert(p: Paths) -> tuple[Path, Path]:
    """One self-signed certificate for every member of this instance (CN localcloud-member)."""
    d = DPPaths(p)
    crt, key = d.lib / 'member.crt', d.lib / 'member.key'
    if not (crt.exists() and key.exists()):
        d.lib.mkdir(parents=True, exist_ok=True)
        subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '3650',
                        '-subj', '/CN=localcloud-member', '-keyout', str(key), '-out', str(crt)],
                       check=True, capture_output=True)
    return crt, key


def plug(p: Paths, m: dict) -> None:
    """The member's namespace and veth, its address and route, its port on the chassis' br-int (idempotent)."""
    from .ovn import vsctl
    ns, chassis = m['namespace'], config.chassis_ns(m['az'])
    inner, outer = config.member_if(m['port'])
    netns.ensure_ns(ns)
    if netns.veth(inner, ns, outer, chassis, mac=m['mac']):   # a new device: a port of the old one's name is stale
        vsctl(p, m['az'], '--if-exists', 'del-port', 'br-int', outer, check=False)
    if m.get('mtu'):   # the network's MTU, as DHCP gives it to a VM: a Geneve network's 1442 leaves room for the
        # tunnel's 58 bytes on the 1500-byte underlay; with 1500 here, full-size packets between AZs were dropped
        netns.sh('ip', 'link', 'set', inner, 'mtu', str(m['mtu']), ns=ns)
    # Neighbour entries re-checked within seconds, not ~40 s. The provider's health checks come from its
    # ovn-lb-hm-<subnet> port, which it makes with the subnet's first monitor and deletes with its last: the next one
    # gets the same address (the subnet's first free) and a new MAC, and sends no ARP (ovn-controller addresses its
    # probes to the member's MAC). The member kept answering the old MAC until its entry went stale and failed
    # (Linux defaults: reachable 15-45 s, then 5 s delay, then 3 unicast probes): after an `up` that followed a
    # destroy by less than a minute, two of the dev shape's three members stayed ERROR for 37-41 s and the `up` took
    # 82-103 s instead of 39 (2026-12-05, lab/bench/fleet_figures.py run back to back), its readiness gate polling
    # Octavia all the while. Reachable 1-3 s, a 1 s delay and one unicast probe: a stale MAC is found out in ~3 s.
    dev = f'net.ipv4.neigh.{inner}'
    netns.sh('sysctl', '-q', '-w', f'{dev}.base_reachable_time_ms=2000', f'{dev}.delay_first_probe_time=1',
             f'{dev}.ucast_solicit=1', ns=ns)
    addrs = netns.sh('ip', '-4', '-o', 'addr', 'show', 'dev', inner, ns=ns)
    if f' {m["ip"]}/' not in addrs:
        netns.sh('ip', 'addr', 'add', f'{m["ip"]}/{m["prefix"]}', 'dev', inner, ns=ns)
    if m['gateway'] and 'default' not in netns.sh('ip', 'route', 'show', 'default', ns=ns):
        netns.sh('ip', 'route', 'add', 'default', 'via', m['gateway'], ns=ns)
    vsctl(p, m['az'], '--may-exist', 'add-port', 'br-int', outer, '--', 'set', 'Interface', outer,
          f'external_ids:iface-id={m["port"]}', 'external_ids:iface-status=active',
          f'external_ids:attached-mac={m["mac"]}', f'external_ids:vm-uuid={m["server_id"]}')


def serve(p: Paths, m: dict) -> int | None:
    """Start the member server unless it runs, a fault holds it down or another program serves there; its PID when
    started."""
    d = DPPaths(p)
    if hosted_marker(d, m['port']).exists():
        procs.stop(pidfile(d, m['port']), SERVER_MARKER, timeout=3)   # handed over: it must not hold the ports
        return None
    if down_marker(d, m['port']).exists() or procs.alive(pidfile(d, m['port']), SERVER_MARKER):
        return None
    crt, key = cert(p)
    return procs.start(f'member {m["name"]}', ['ip', 'netns', 'exec', m['namespace'], SYSTEM_PYTHON, '-m',
                                               SERVER_MARKER, '--name', m['name'], '--az', m['az'],
                                               '--cert', str(crt), '--key', str(key)],
                       pidfile(d, m['port']), log(p, m['port']), {'PYTHONPATH': str(LAB)}, cwd=p.root)


def unplug(p: Paths, port: str, m: dict | None) -> None:
    """Stop the member's server, remove its port from the chassis and delete its namespace."""
    from .ovn import vsctl
    d = DPPaths(p)
    procs.stop(pidfile(d, port), SERVER_MARKER, timeout=3)
    if m:
        outer = config.member_if(port)[1]
        vsctl(p, m['az'], '--if-exists', 'del-port', 'br-int', outer, check=False)
        netns.sh('ip', 'link', 'del', outer, ns=config.chassis_ns(m['az']), check=False)  # not left to the kernel's
        netns.sh('ip', 'netns', 'del', m['namespace'], check=False)                     # asynchronous clean-up
    for f in (record(d, port), down_marker(d, port), hosted_marker(d, port)):
        f.unlink(missing_ok=True)


def plug_zone(p: Paths, az: str) -> None:
    """Every recorded member of ``az`` plugged again (after its chassis started again: az-up, or a crash revived)."""
    for m in recorded(p).values():
        if m and m['az'] == az:
            plug(p, m)


def recorded(p: Paths) -> dict:
    d = DPPaths(p)
    out = {}
    for f in sorted(d.members.glob('*.json')) if d.members.is_dir() else []:
        try:
            out[f.stem] = json.loads(f.read_text())
        except (OSError, ValueError):
            out[f.stem] = None
    return out


def reconcile(p: Paths, cur, say=print) -> None:
    d = DPPaths(p)
    d.members.mkdir(parents=True, exist_ok=True)
    want, have = wanted(cur), recorded(p)
    for port in sorted(set(have) - set(want)):
        unplug(p, port, have[port])
        say(f'unplugged {port} ({(have[port] or {}).get("name")})')
    for port, m in want.items():
        try:
            if have.get(port) != m:
                if have.get(port):
                    unplug(p, port, have[port])
                plug(p, m)
                record(d, port).write_text(json.dumps(m, indent=1) + '\n')
                say(f'plugged {m["name"]} ({m["ip"]} on {m["az"]}, port {port})')
            pid = serve(p, m)
            if pid:
                say(f'member server of {m["name"]} started (pid {pid})')
        except netns.CommandError as exc:   # e.g. its AZ's chassis is down: retried next tick
            say(f'{m["name"]}: {exc}')


def unplug_all(p: Paths) -> list[str]:
    gone = []
    for port, m in recorded(p).items():
        unplug(p, port, m)
        gone.append(port)
    return gone


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog='localcloud.dataplane.members')
    ap.add_argument('--state', required=True)
    args = ap.parse_args(argv)
    import pymysql
    p = Paths(Path(args.state))
    last_error = None

    def say(msg):
        print(f'{time.strftime("%F %T")} {msg}', flush=True)
    tick = 0
    # One database connection kept open (autocommit: every SELECT sees the latest commit), not one per tick: a
    # connection's set-up cost this loop and MariaDB more than its query (two a second, for the cloud's whole life).
    # Dropped on any error (the database restarting) and made again at the next tick.
    conn = None
    nb_seen = None
    while True:
        tick += 1
        try:
            if conn is None:
                conn = pymysql.connect(unix_socket=str(p.mysql_sock), user=DB_ADMIN, autocommit=True)
            with conn.cursor() as cur:
                reconcile(p, cur, say)
            if tick % LB_REJECT_EVERY == 0:     # an ovn-nbctl process each time: not every tick
                # ... and only when the NB database changed since a pass found nothing to do: ovsdb-server appends
                # every committed transaction to its file at once (a new provider row is one), and writes nothing
                # while nobody changes it; so an idle cloud runs no ovn-nbctl, a changed one runs it at the next pass
                # as before. Every NB_RECHECK_EVERY ticks it runs anyway.
                stamp = nb_stamp(p)
                if stamp != nb_seen or tick % NB_RECHECK_EVERY == 0:
                    for uuid in lb_reject.ensure(p):
                        say(f'load balancer {uuid}: options:reject=true')
                    nb_seen = stamp   # read before the pass: a change during it makes the next pass run
                for az in ovn.revive(p, say):    # a chassis whose daemons died on their own: its members again
                    plug_zone(p, az)
            last_error = None
        except Exception as exc:  # the database restarting, a chassis gone: report once, retry
            if conn is not None:
                try:
                    conn.close()
                except Exception:
                    pass
                conn = None
            if str(exc) != last_error:
                say(f'reconcile failed: {exc!r}')
                last_error = str(exc)
        time.sleep(INTERVAL)


def nb_stamp(p: Paths) -> tuple | None:
    """The NB database file's (inode, size, mtime): it changes with every transaction ovsdb-server commits (and
    with its compaction, which writes a new file)."""
    try:
        st = DPPaths(p).nb_db.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


if __name__ == '__main__':
    sys.exit(main())

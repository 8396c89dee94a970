"""OVN for the local cloud: the central part (NB and SB ovsdb-server, ovn-northd) in the root namespace on loopback
and unix sockets, and one chassis per AZ (its own ovsdb-server, an ovs-vswitchd with the userspace datapath, an
ovn-controller) inside the AZ's network namespace. ovs-vswitchd is Open vSwitch 3.5 (config.ovs_dir(), built by
lab/localcloud/ovs-build.sh); the rest is Debian 12's OVS 3.1 and OVN 23.03.

How az2's chassis starts (Chassis.start): its namespace and veths (netns.chassis_wires); a fresh conf.db whose
Open_vSwitch row names the chassis (system-id lc<offset>-az2, hostname cmp-az2 = Nova's compute host of az2, so
Neutron binds that host's ports here), announces `ovn-cms-options=enable-chassis-as-gw,availability-zones=az2`,
the geneve tunnel endpoint 10.255.0.12 and the bridge mapping public:br-ex; ovsdb-server; ovs-vswitchd inside
the namespace; br-phy (the tunnel endpoint's bridge: userspace tunnels route through an OVS bridge) holding the
underlay veth, br-ex holding the public veth; ovn-controller inside the namespace (it creates br-int, netdev).
The chassis reach the SB database over its unix socket (a namespace has its own loopback).
"""
import json
import re
import subprocess
import time
from pathlib import Path

from .. import procs
from ..procs import alive
from ..settings import AZS, HOST, PORTS, Paths
from . import config, netns
from .config import DPPaths

NB_SCHEMA = '/usr/share/ovn/ovn-nb.ovsschema'
SB_SCHEMA = '/usr/share/ovn/ovn-sb.ovsschema'


def _db(path, schema) -> None:
    if not path.exists():
        netns.sh('ovsdb-tool', 'create', path, schema)
    else:
        needs = subprocess.run(['ovsdb-tool', 'needs-conversion', str(path), schema], capture_output=True,
                               text=True).stdout.strip()
        if needs == 'yes':
            netns.sh('ovsdb-tool', 'convert', path, schema)


def specs(p: Paths) -> list[dict]:
    """Every daemon of the data plane: name, argv, marker (a string of its command line), env, kind."""
    d = DPPaths(p)
    out = [
        {'name': 'ovn-nb', 'argv': ['ovsdb-server', str(d.nb_db), f'--remote=punix:{d.nb_sock}',
                                    '--remote=db:OVN_Northbound,NB_Global,connections', f'--unixctl={d.run}/nb.ctl',
                                    '-vconsole:info'],
         'marker': str(d.nb_db), 'ports': [('tcp', PORTS['ovn-nb'])]},
        {'name': 'ovn-sb', 'argv': ['ovsdb-server', str(d.sb_db), f'--remote=punix:{d.sb_sock}',
                                    '--remote=db:OVN_Southbound,SB_Global,connections', f'--unixctl={d.run}/sb.ctl',
                                    '-vconsole:info'],
         'marker': str(d.sb_db), 'ports': [('tcp', PORTS['ovn-sb'])]},
        {'name': 'ovn-northd', 'argv': ['ovn-northd', f'--ovnnb-db=unix:{d.nb_sock}', f'--ovnsb-db=unix:{d.sb_sock}',
                                        f'--unixctl={d.run}/northd.ctl', '-vconsole:info'],
         'marker': f'{d.run}/northd.ctl', 'ports': []},
    ]
    vswitchd = str(config.ovs_dir() / 'bin' / 'ovs-vswitchd')
    for az in AZS:
        ns, cdir = config.chassis_ns(az), d.chassis_dir(az)
        env = {'OVS_RUNDIR': str(cdir), 'OVN_RUNDIR': str(cdir), 'OVS_DBDIR': str(cdir), 'OVS_LOGDIR': str(p.logs)}
        out += [
            {'name': f'ovsdb-{az}', 'argv': ['ovsdb-server', str(d.conf_db(az)), f'--remote=punix:{d.db_sock(az)}',
                                             f'--unixctl={cdir}/ovsdb-server.ctl', '-vconsole:info'],
             'marker': str(d.conf_db(az)), 'env': env, 'ports': [], 'az': az},
            {'name': f'ovs-vswitchd-{az}', 'argv': ['ip', 'netns', 'exec', ns, vswitchd,
                                                   f'unix:{d.db_sock(az)}', f'--unixctl={d.vswitchd_ctl(az)}',
                                                   '-vconsole:info'],
             'marker': str(d.vswitchd_ctl(az)), 'env': env, 'ports': [], 'az': az},
            {'name': f'ovn-controller-{az}', 'argv': ['ip', 'netns', 'exec', ns, 'ovn-controller',
                                                     f'unix:{d.db_sock(az)}', '-vconsole:info'],
             'marker': f'unix:{d.db_sock(az)} ', 'env': env, 'ports': [], 'az': az},
        ]
    return out


def _spec(p: Paths, name: str) -> dict:
    return next(s for s in specs(p) if s['name'] == name)


def _ensure(p: Paths, name: str, say) -> bool:
    s = _spec(p, name)
    if alive(p.pidfile(name), s['marker']):
        return False
    pid = procs.start(name, s['argv'], p.pidfile(name), p.log(name), s.get('env'), cwd=p.root)
    say(f'started {name} (pid {pid})')
    return True


def _wait(what: str, check, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f'data plane: {what} not ready after {timeout:.0f}s')
        time.sleep(0.05)


def vsctl(p: Paths, az: str, *args, check: bool = True) -> str:
    return netns.sh('ovs-vsctl', f'--db=unix:{DPPaths(p).db_sock(az)}', '--timeout=10', *args, check=check)


def nbctl(p: Paths, *args, check: bool = True) -> str:
    return netns.sh('ovn-nbctl', f'--db=unix:{DPPaths(p).nb_sock}', '--timeout=10', *args, check=check)


def sbctl(p: Paths, *args, check: bool = True, timeout: int = 10) -> str:
    return netns.sh('ovn-sbctl', f'--db=unix:{DPPaths(p).sb_sock}', f'--timeout={timeout}', *args, check=check)


def start_central(p: Paths, say) -> list[str]:
    d = DPPaths(p)
    d.makedirs()
    _db(d.nb_db, NB_SCHEMA)
    _db(d.sb_db, SB_SCHEMA)
    started = [n for n in ('ovn-nb', 'ovn-sb') if _ensure(p, n, say)]
    _wait('OVN NB/SB sockets', lambda: d.nb_sock.exists() and d.sb_sock.exists())
    listen_without_probes(p)
    if _ensure(p, 'ovn-northd', say):
        started.append('ovn-northd')
    return started


def listen_without_probes(p: Paths) -> None:
    """The NB and SB databases' TCP listeners (Neutron's and Octavia's OVN provider connect there) as Connection
    rows with inactivity_probe=0. On a `--remote=ptcp:` listener ovsdb-server probes every client after 5 s idle and
    drops it when no answer comes within 5 s more: a CPU-starved neutron-server (eventlet) missed it under the full
    suite ("no response to inactivity probe after 5 seconds, disconnecting" in ovn-nb.log, at 18:13 and 18:36 on
    12-03, 00:03 and 00:05 on 12-04), its in-flight transactions timed out while it resynchronised, and the API
    answered 409 and 500 ("PgAclDelCommand ... exceeded timeout 30 seconds"): a stack's destroy stopped half-way in
    stop 59's CI. The clients already send no probes (ovsdb_probe_interval=0); on loopback neither side needs them.
    Idempotent: set-connection replaces the row each start."""
    for ctl, port in ((nbctl, PORTS['ovn-nb']), (sbctl, PORTS['ovn-sb'])):
        ctl(p, 'init')
        ctl(p, 'set-connection', f'ptcp:{port}:{HOST}', '--', 'set', 'connection', '.', 'inactivity_probe=0')


def start_chassis(p: Paths, az: str, say) -> list[str]:
    """az's chassis (see the module docstring); idempotent: starts only what does not run."""
    d = DPPaths(p)
    d.chassis_dir(az).mkdir(parents=True, exist_ok=True)
    netns.chassis_wires(az)
    started = []
    if not alive(p.pidfile(f'ovsdb-{az}'), _spec(p, f'ovsdb-{az}')['marker']):
        d.conf_db(az).unlink(missing_ok=True)   # a fresh switch database each start: ovn-controller rebuilds br-int
        _db(d.conf_db(az), str(config.ovs_dir() / 'share' / 'vswitch.ovsschema'))
        _ensure(p, f'ovsdb-{az}', say)
        started.append(f'ovsdb-{az}')
        _wait(f'{az} ovsdb socket', d.db_sock(az).exists)
        vsctl(p, az, '--no-wait', 'init')
        cms = f'enable-chassis-as-gw,availability-zones={az}'
        vsctl(p, az, '--no-wait', 'set', 'Open_vSwitch', '.',
              f'external_ids:system-id={config.chassis_id(az)}',
              f'external_ids:hostname={config.chassis_hostname(az)}',
              f'external_ids:ovn-remote=unix:{d.sb_sock}',
              'external_ids:ovn-encap-type=geneve',
              f'external_ids:ovn-encap-ip={config.chassis_ip(az)}',
              f'external_ids:ovn-bridge-mappings={config.PUBLIC_PHYSNET}:br-ex',
              'external_ids:ovn-bridge-datapath-type=netdev',
              f'external_ids:ovn-cms-options="{cms}"',
              'external_ids:ovn-remote-probe-interval=0',
              'external_ids:ovn-openflow-probe-interval=0')
    if _ensure(p, f'ovs-vswitchd-{az}', say):
        started.append(f'ovs-vswitchd-{az}')
    ns = config.chassis_ns(az)
    underlay, public = config.underlay_if(az)[0], config.public_if(az)[0]
    vsctl(p, az, '--may-exist', 'add-br', 'br-phy', '--', 'set', 'Bridge', 'br-phy', 'datapath_type=netdev',
          '--', '--may-exist', 'add-port', 'br-phy', underlay,
          '--', '--may-exist', 'add-br', 'br-ex', '--', 'set', 'Bridge', 'br-ex', 'datapath_type=netdev',
          '--', '--may-exist', 'add-port', 'br-ex', public)
    _wait(f'{az} br-phy', lambda: netns.link_exists('br-phy', ns))
    netns.offload_off('br-phy', ns)
    if f'{config.chassis_ip(az)}/' not in netns.sh('ip', '-4', '-o', 'addr', 'show', 'dev', 'br-phy', ns=ns):
        netns.sh('ip', 'addr', 'add', f'{config.chassis_ip(az)}/24', 'dev', 'br-phy', ns=ns)
    netns.sh('ip', 'link', 'set', 'br-phy', 'up', ns=ns)
    if _ensure(p, f'ovn-controller-{az}', say):
        started.append(f'ovn-controller-{az}')
    _wait(f'{az} chassis registered in the SB database', lambda: registered(p, az), timeout=30)
    mirror_for_neutron(p, az)
    return started


NEUTRON_READS = ('ovn-cms-options', 'ovn-bridge-mappings', 'datapath-type', 'iface-types')


def registered(p: Paths, az: str) -> bool:
    return bool(sbctl(p, '--bare', '--columns=name', 'find', 'Chassis', f'name={config.chassis_id(az)}',
                      check=False).strip())


def mirror_for_neutron(p: Paths, az: str) -> None:
    """Copy the chassis' settings Neutron reads into its SB row's external_ids: OVN >= 22.09 (Debian 12 has 23.03)
    writes them to other_config only, while Neutron Zed (21.0.0) still reads external_ids; without this Neutron sees
    no gateway chassis and no AZ (routers with AZ hints fail with AvailabilityZoneNotFound)."""
    name = config.chassis_id(az)
    other = json.loads(sbctl(p, '--format=json', '--columns=other_config', 'list', 'Chassis', name))
    values = dict(other['data'][0][0][1]) if other['data'] else {}
    pairs = [f'external_ids:{k}={json.dumps(values[k])}' for k in NEUTRON_READS if k in values]
    if pairs:
        sbctl(p, 'set', 'Chassis', name, *pairs)


def start(p: Paths, say) -> list[str]:
    """Central, the wires, every chassis; waits until every chassis is in the SB database."""
    t = time.monotonic()
    started = start_central(p, say)
    netns.wires()
    for az in AZS:
        started += start_chassis(p, az, say)
    say(f'data plane (OVN, chassis {", ".join(AZS)}) ready in {time.monotonic() - t:.1f}s')
    return started


def held_down(p: Paths, az: str) -> Path:
    """Present while a fault (az-down) holds the chassis down: ``revive`` leaves it alone."""
    return DPPaths(p).chassis_dir(az) / 'held-down'


def revive(p: Paths, say) -> list[str]:
    """Start again the daemons of a chassis that died on its own (not held down, its switch database running): what
    a host's service manager does after a crash (Debian 12's ovs-vswitchd 3.1.0 aborted in its conntrack under
    NAT'd traffic, `conn->conn_type == CT_CONN_TYPE_DEFAULT`: one crash cut an AZ off until someone noticed; 3.5.0,
    which the chassis run now, has not). The AZs it started again."""
    revived = []
    for az in AZS:
        if held_down(p, az).exists() or not alive(p.pidfile(f'ovsdb-{az}'), _spec(p, f'ovsdb-{az}')['marker']):
            continue
        dead = [name for name in (f'ovs-vswitchd-{az}', f'ovn-controller-{az}')
                if not alive(p.pidfile(name), _spec(p, name)['marker'])]
        if dead:
            say(f'{", ".join(dead)} not running (see the data plane\'s crash lines in lab/localcloud/status): '
                f'starting the chassis of {az} again')
            start_chassis(p, az, say)
            revived.append(az)
    return revived


def stop_chassis(p: Paths, az: str, keep_db: bool = False) -> list[str]:
    """ovn-controller (SIGTERM: its Chassis row stays, as when a host dies), ovs-vswitchd (exit --cleanup: no tap
    left behind), and the switch database unless keep_db (az-down keeps it: the members' ports come back with
    az-up)."""
    stopped = []
    name = f'ovn-controller-{az}'
    if procs.stop(p.pidfile(name), _spec(p, name)['marker'], timeout=5):
        stopped.append(name)
    name = f'ovs-vswitchd-{az}'
    if alive(p.pidfile(name), _spec(p, name)['marker']):
        subprocess.run(['ovs-appctl', '-t', str(DPPaths(p).vswitchd_ctl(az)), '--timeout=5', 'exit', '--cleanup'],
                       capture_output=True)
    if procs.stop(p.pidfile(name), _spec(p, name)['marker'], timeout=5):
        stopped.append(name)
    name = f'ovsdb-{az}'
    if not keep_db and procs.stop(p.pidfile(name), _spec(p, name)['marker'], timeout=5):
        stopped.append(name)
    return stopped


def stop_all(p: Paths) -> list[str]:
    stopped = []
    for az in AZS:
        stopped += stop_chassis(p, az)
    for name in ('ovn-northd', 'ovn-sb', 'ovn-nb'):
        if procs.stop(p.pidfile(name), _spec(p, name)['marker'], timeout=5):
            stopped.append(name)
    return stopped


def running(p: Paths, name: str) -> int | None:
    return alive(p.pidfile(name), _spec(p, name)['marker'])


def chassis_status(p: Paths) -> dict:
    """Per AZ: up (its daemons run and it is in the SB database), the daemons' PIDs, registered, hostname,
    encap IP and the ovn-cms-options it announces."""
    rows = {}
    if DPPaths(p).sb_sock.exists():
        try:
            out = json.loads(sbctl(p, '--format=json', '--columns=name,hostname,other_config,external_ids',
                                   'list', 'Chassis', timeout=2))
            for r in out['data']:
                cols = dict(zip(out['headings'], r))
                other = dict(cols['other_config'][1]) | dict(cols['external_ids'][1])
                rows[cols['name']] = {'hostname': cols['hostname'], 'cms': other.get('ovn-cms-options', '')}
        except (netns.CommandError, ValueError, KeyError):
            pass
    result = {}
    for az in AZS:
        pids = {n: running(p, f'{n}-{az}') for n in ('ovsdb', 'ovs-vswitchd', 'ovn-controller')}
        row = rows.get(config.chassis_id(az))
        result[az] = {'up': all(pids.values()) and row is not None, 'registered': row is not None,
                      'chassis': config.chassis_id(az), 'namespace': config.chassis_ns(az),
                      'hostname': row['hostname'] if row else None, 'ovn_cms_options': row['cms'] if row else None,
                      'encap_ip': config.chassis_ip(az), 'pids': pids}
    return result


# An assertion, an emergency, a backtrace or a fatal signal other than a stop (SIGTERM 15, SIGINT 2: `down`, az-down).
CRASH = re.compile(r'assertion|backtrace|\|EMER\||terminating with signal (?!(?:15|2) )\d+', re.IGNORECASE)


def crash_lines(p: Paths, limit: int = 20) -> list[str]:
    """Crash or assertion lines found in the ovs-vswitchd and ovn-controller logs (e.g. the userspace conntrack's
    `conn->conn_type == CT_CONN_TYPE_DEFAULT` assertion)."""
    found = []
    for az in AZS:
        for name in (f'ovs-vswitchd-{az}', f'ovn-controller-{az}'):
            try:
                text = p.log(name).read_text(errors='replace')
            except OSError:
                continue
            found += [f'{name}: {line}' for line in text.splitlines() if CRASH.search(line)]
    return found[-limit:]


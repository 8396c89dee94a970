"""localcloud control: up / down / status / reset / restart (runs on the system python, /usr/bin/python3)."""
import argparse
import json
import os
import shutil
import sys
import threading
import time

from . import procs, services
from .dataplane import config as dataplane, ovn
from .dns import server as dns_server
from .swift import server as swift_server
from .settings import PORT_OFFSET, Paths
from .startup import T0, Up, parallel, say


# -- commands ------------------------------------------------------------------------------------
def cmd_up(p: Paths, args) -> int:
    import os
    os.environ['HA_ENDPOINT_STATE'] = str(p.root)  # the heartbeat daemon and setup commands inherit it
    say(f'state directory {p.root}' + (f' (ports +{PORT_OFFSET})' if PORT_OFFSET else ''))
    try:
        if not data_plane_matches(p, args):
            return 2
    except ValueError as exc:
        say(f'FAILED: {exc}')
        return 2
    stale_wsgi_services(p)
    stale_ports(p)
    up = Up(p)
    try:
        up.all()
    except Exception as exc:
        say(f'FAILED: {exc}')
        return 1
    say(f'started this time: {", ".join(up.started) or "nothing (all running)"}')
    say('ready')
    # for `make up`'s cold-run summary (scripts/cold_summary.py): how long this start took
    (p.run / 'last-up.json').write_text(json.dumps({'seconds': round(time.monotonic() - T0, 1),
                                                    'started': len(up.started), 'finished': time.time()}) + '\n')
    print(f'clouds.yaml: {p.clouds_yaml}')
    print(f'  export OS_CLIENT_CONFIG_FILE={p.clouds_yaml} OS_CLOUD=localcloud   # or: . {p.root}/env.sh')
    return 0


INFRA = ('rabbitmq', 'mariadb', 'epmd')


def data_plane_matches(p: Paths, args) -> bool:
    """Whether the state directory's cloud can run in the wanted data plane mode: its tenant networks and Neutron
    database were made for the mode it was seeded with. A state directory an older checkout seeded without the data
    plane (its default then) is wiped and seeded anew with it; any other switch is refused with the fix."""
    wanted, had = dataplane.mode(p), dataplane.seeded_mode(p)
    if not had or had == wanted:
        return True
    if dataplane.chosen():
        say(f'FAILED: {p.root} was seeded with data plane {had!r}; LOCALCLOUD_DATAPLANE={wanted} needs a state '
            f'directory of its own (HA_ENDPOINT_STATE=<dir> with LOCALCLOUD_PORT_OFFSET=<n>000), or `lab/localcloud/reset` '
            f'first (it deletes every object of this cloud)')
        return False
    say(f'{p.root} was seeded without the data plane (the default of older checkouts); the local cloud has one now: '
        f'wiping the state directory and seeding it anew (LOCALCLOUD_DATAPLANE=none keeps the control plane alone). '
        f'Stacks deployed on the old cloud: `pulumi stack rm --force <stack>` (their objects are gone with it)')
    cmd_reset(p, args)
    return True


def stale_wsgi_services(p: Paths) -> None:
    """A running uwsgi service (octavia-api, keystone, placement-api) not behind this checkout's
    lab/localcloud/fault_wsgi.py (a cloud left running by an older checkout) is stopped, so that `up` starts it behind
    this one: tests rely on the switch's newer narrowing keys, and every service on its native logging locks."""
    from .faults import Faults
    faults = Faults(p.root)
    for name, svc in services.table(p).items():
        if str(services.FAULT_WSGI) not in svc.argv:
            continue
        if procs.alive(p.pidfile(name), svc.marker) and not faults.wsgi_file_current(name):
            say(f'{name} runs an older lab/localcloud/fault_wsgi.py, or none: restarting it')
            procs.stop(p.pidfile(name), svc.marker, timeout=8)


def stale_ports(p: Paths) -> None:
    """A running service that does not listen on a TCP port this checkout gives it (left running by an older checkout
    whose ports differed: RabbitMQ's distribution port moved from 25672 to 15673) is stopped, so that `up` starts it
    where `status` and the other services look. `up` holds the state's lock: a service running now was started by an
    earlier `up`, never one still starting."""
    from .ports import descends, listening_pids, parent_pid
    for name, svc in services.table(p).items():
        wanted = [port for proto, port in svc.ports if proto == 'tcp']
        pid = procs.alive(p.pidfile(name), svc.marker) if wanted else None
        if not pid:
            continue
        held = listening_pids(wanted)
        missing = [port for port in wanted if not any(descends(h, {pid}, parent_pid) for h in held.get(port, ()))]
        if missing:
            say(f'{name} runs without listening on {", ".join(map(str, missing))} (an older configuration): '
                f'restarting it')
            procs.stop(p.pidfile(name), svc.marker, timeout=15)


def cmd_down(p: Paths, args) -> int:
    """Stop exactly what up started (by PID file): OpenStack services together, then the infrastructure."""
    svcs = services.table(p)
    stopped = []

    markers = {**services.RETIRED, **{name: svc.marker for name, svc in svcs.items()}}

    def stopper(name, timeout):
        def run():
            t = time.monotonic()
            if procs.stop(p.pidfile(name), markers[name], timeout=timeout):
                stopped.append(f'{name} ({time.monotonic() - t:.1f}s)')
        return threading.Thread(target=run)
    parallel([stopper(n, 5) for n in markers if n not in INFRA])
    stopped += data_plane_down(p)
    parallel([stopper('rabbitmq', 20), stopper('mariadb', 60)])
    parallel([stopper('epmd', 5)])
    print(f'stopped: {", ".join(stopped) or "nothing was running"}')
    return 0


def data_plane_down(p: Paths) -> list[str]:
    """The cluster on the data plane's nodes, members, client namespaces (their DNS forwarders and /etc/netns dirs),
    chassis and OVN stopped, then every namespace, veth and tap of this instance and the public network's route
    removed (whatever the state directory's data plane mode says: nothing may be left behind)."""
    from .dataplane import client_ns, members, netns, ovn
    from .k8s import oncloud
    out = oncloud.stop(p)          # the cluster first: its processes live in the members' namespaces
    out += [f'member {port[:8]}' for port in members.unplug_all(p)]
    out += client_ns.stop_all(p)
    out += ovn.stop_all(p)
    out += netns.teardown()
    return out


def cmd_restart(p: Paths, args) -> int:
    """Stop the named services (all if none), then up: rewrites configuration, starts what is missing."""
    svcs = services.table(p)
    for name in args.services or list(svcs):
        if name not in svcs:
            print(f'unknown service {name}; one of: {", ".join(svcs)}')
            return 2
    if args.services:
        for name in args.services:
            procs.stop(p.pidfile(name), svcs[name].marker, timeout=8)
    else:
        cmd_down(p, args)
    return cmd_up(p, args)


def status_rows(p: Paths) -> list:
    rows = []
    table = [(name, svc.marker, svc.ports) for name, svc in services.table(p).items()]
    if dataplane.enabled(p):
        table += [(s['name'], s['marker'], s['ports']) for s in ovn.specs(p)]
    for name, marker, ports in table:
        pid = procs.alive(p.pidfile(name), marker)
        pids = procs.group_pids(pid) if pid else []
        rss = procs.rss_bytes(pids)
        pss = procs.pss_bytes(pids)
        ports_text = ','.join(f'{port}/{proto}' for proto, port in ports) or '-'
        state = 'running' if pid else 'stopped'
        if pid and ports and not all(services.port_open(pr, po) for pr, po in ports):
            state = 'starting'
        rows.append({'service': name, 'state': state, 'pid': pid, 'procs': len(pids), 'ports': ports_text,
                     'rss': rss, 'pss': pss})
    return rows


# The sections of `status --json` beside "services", each computed from the state directory: a part of the local
# cloud with something to tell adds one line here.
STATUS_SECTIONS = {
    'dns': dns_server.status,   # where clients ask: {"host": "127.0.0.1", "port": N}
    'dataplane': dataplane.mode,
    'object_storage': swift_server.status,   # the S3 API, the state bucket, state-backend.env
}


def status_document(p: Paths, rows: list | None = None) -> dict:
    """`status --json` without the chassis: {"services": [one row per daemon], "dns": {...}, "dataplane": ...}."""
    return {'services': status_rows(p) if rows is None else rows,
            **{name: section(p) for name, section in STATUS_SECTIONS.items()}}


def cmd_status(p: Paths, args) -> int:
    rows = status_rows(p)
    chassis = ovn.chassis_status(p) if dataplane.enabled(p) else {}
    crashes = ovn.crash_lines(p) if dataplane.enabled(p) else []
    if args.json:
        import json
        print(json.dumps({**status_document(p, rows), 'chassis': chassis, 'dataplane_crashes': crashes},
                         indent=1))
    else:
        print(f'{"service":24} {"state":8} {"pid":>7} {"procs":>5} {"ports (127.0.0.1)":27} {"RSS MiB":>8} '
              f'{"PSS MiB":>8}')
        for r in rows:
            print(f'{r["service"]:24} {r["state"]:8} {r["pid"] or "-":>7} {r["procs"]:>5} {r["ports"]:27} '
                  f'{r["rss"] / 2**20:8.0f} {r["pss"] / 2**20:8.0f}')
        rss, pss = sum(r['rss'] for r in rows), sum(r['pss'] for r in rows)
        print(f'{"total":24} {"":8} {"":>7} {sum(r["procs"] for r in rows):>5} {"":27} {rss / 2**20:8.0f} '
              f'{pss / 2**20:8.0f}')
        print('(RSS counts pages shared by forked workers once per process; PSS splits them: the real total)')
        for az, c in chassis.items():
            print(f'chassis {az}: {"up" if c["up"] else "DOWN"} ({c["chassis"]}, netns {c["namespace"]}, '
                  f'hostname {c["hostname"]}, {c["ovn_cms_options"]})')
        for line in crashes:
            print(f'CRASH in the data plane: {line}')
        print(f'state: {p.root}  clouds.yaml: {p.clouds_yaml}  data plane: {dataplane.mode(p)}')
        dns = STATUS_SECTIONS['dns'](p)
        print(f'DNS: dig @{dns["host"]} -p {dns["port"]} api.example.test')
    running = [r for r in rows if r['state'] == 'running']
    return 0 if len(running) == len(rows) and all(c['up'] for c in chassis.values()) else 3


def cmd_reset(p: Paths, args) -> int:
    ours = any((p.root / f).exists() for f in ('secrets.json', 'port-offset', 'etc/my.cnf'))
    if p.root.exists() and any(p.root.iterdir()) and not ours:
        print(f'localcloud: {p.root} does not look like a localcloud state directory; not wiping it')
        return 2
    cmd_down(p, args)
    if p.root.exists():
        shutil.rmtree(p.root)
    print(f'wiped {p.root}')
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog='localcloud')
    ap.add_argument('command', choices=('up', 'down', 'status', 'reset', 'restart'))
    ap.add_argument('services', nargs='*', help='restart: the services to restart (default: all)')
    ap.add_argument('--json', action='store_true', help='status as JSON')
    args = ap.parse_args(argv)
    p = Paths()
    cmds = {'up': cmd_up, 'down': cmd_down, 'status': cmd_status, 'reset': cmd_reset, 'restart': cmd_restart}
    if args.command == 'status':
        return cmd_status(p, args)
    # One of up/down/reset/restart at a time per state directory (two test sessions may both call up).
    import fcntl
    lockfile = p.root.parent / f'.{p.root.name}.lock'
    lockfile.parent.mkdir(parents=True, exist_ok=True)
    with open(lockfile, 'w') as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f'localcloud: another up/down/reset holds {lockfile}; waiting', flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        return cmds[args.command](p, args)


if __name__ == '__main__':
    sys.exit(main())

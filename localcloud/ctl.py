"""localcloud control: up / down / status / reset (runs on the system python, /usr/bin/python3)."""
import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from . import configs, procs, seed, services
from .settings import DB_ADMIN, HOST, PORT_OFFSET, PORTS, RPC_QUEUES, AZS, Paths, load_secrets

T0 = time.monotonic()
SCHEMA_CACHE = Path(os.environ.get('HA_ENDPOINT_CACHE') or Path.home() / '.cache' / 'ha-endpoint') / 'localcloud-schema'
_SAY = threading.Lock()


def say(msg: str) -> None:
    with _SAY:
        print(f'[{time.monotonic() - T0:6.1f}s] {msg}', flush=True)


class Up:
    def __init__(self, p: Paths):
        self.p = p
        self.s = load_secrets(p, create=True)
        configs.write_all(p, self.s)
        self.svcs = services.table(p)
        self.started: list[str] = []

    # -- processes -------------------------------------------------------------------------------
    def ensure(self, name: str) -> None:
        svc = self.svcs[name]
        pid = procs.alive(self.p.pidfile(name), svc.marker)
        if pid:
            return
        pid = procs.start(name, svc.argv, self.p.pidfile(name), self.p.log(name), svc.env, cwd=self.p.root)
        self.started.append(name)
        say(f'started {name} (pid {pid})')

    def wait_ready(self, name: str, timeout: float = 120) -> None:
        svc = self.svcs[name]
        deadline = time.monotonic() + timeout
        dead = 0
        while not services.ready(svc):
            dead = 0 if procs.alive(self.p.pidfile(name), svc.marker) else dead + 1
            if dead >= 4:
                raise RuntimeError(f'{name} exited; see {self.p.log(name)}:\n{tail(self.p.log(name))}')
            if time.monotonic() > deadline:
                raise RuntimeError(f'{name} not ready after {timeout:.0f}s; see {self.p.log(name)}')
            time.sleep(0.25)

    def run(self, name: str, argv: list, env: dict | None = None) -> None:
        """A one-shot setup command, logged to logs/setup-<name>.log."""
        log = self.p.log(f'setup-{name}')
        with open(log, 'ab') as f:
            f.write(f'\n=== {time.strftime("%F %T")} {argv}\n'.encode())
            f.flush()
            rc = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=self.p.root, env=env).returncode
        if rc != 0:
            raise RuntimeError(f'{" ".join(map(str, argv[:3]))} failed ({rc}); see {log}:\n{tail(log)}')

    def once(self, name: str, fn) -> None:
        marker = self.p.lib / f'done-{name}'
        if marker.exists():
            return
        t = time.monotonic()
        fn()
        marker.write_text(time.strftime('%F %T\n'))
        say(f'{name} done in {time.monotonic() - t:.1f}s')

    # -- infrastructure --------------------------------------------------------------------------
    def mariadb(self) -> None:
        if not (self.p.mysql_data / 'mysql').exists():
            shutil.rmtree(self.p.mysql_data, ignore_errors=True)
            self.run('mariadb-install-db', ['/usr/bin/mariadb-install-db', f'--defaults-file={self.p.conf("my.cnf")}',
                                            '--skip-test-db', '--auth-root-authentication-method=socket',
                                            f'--user={DB_ADMIN}'])
        self.ensure('mariadb')
        self.wait_ready('mariadb')

        def create():
            pw = self.s['db']
            sql = ''.join(f'CREATE DATABASE IF NOT EXISTS {db} CHARACTER SET utf8mb3;'
                          for db in ('keystone', 'neutron', 'octavia', 'designate'))
            for host in ('127.0.0.1', 'localhost'):
                sql += (f"CREATE USER IF NOT EXISTS 'localcloud'@'{host}' IDENTIFIED BY '{pw}';"
                        f"GRANT ALL PRIVILEGES ON *.* TO 'localcloud'@'{host}';")
            self.sql(sql)
        self.once('databases', create)

    # -- the schema cache: dumps of freshly migrated (still empty) databases, outside the state directory
    # (like apt's .deb cache), keyed by package version; ~50 s of migrations become ~2 s of loading.
    def cache_file(self, kind: str, package: str, extra: str = '') -> Path | None:
        if os.environ.get('LOCALCLOUD_SCHEMA_CACHE', '1') == '0':
            return None
        version = subprocess.run(['dpkg-query', '-W', '-f=${Version}', package], capture_output=True,
                                 text=True).stdout.strip() or 'unknown'
        return SCHEMA_CACHE / (re.sub(r'[^A-Za-z0-9.+-]', '_', f'{kind}-{version}{extra}') + '.sql')

    def load(self, db: str, cached: Path | None) -> bool:
        if not cached or not cached.exists():
            return False
        with open(cached, 'rb') as f:
            subprocess.run(['/usr/bin/mariadb', f'--defaults-file={self.p.conf("my.cnf")}', f'-u{DB_ADMIN}', db],
                           stdin=f, check=True, capture_output=True)
        say(f'{db}: loaded {cached.name} from the schema cache')
        return True

    def dump(self, db: str, cached: Path | None) -> None:
        if not cached:
            return
        SCHEMA_CACHE.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_name(cached.name + f'.{os.getpid()}.tmp')
        with open(tmp, 'wb') as f:
            subprocess.run(['/usr/bin/mariadb-dump', f'--defaults-file={self.p.conf("my.cnf")}', f'-u{DB_ADMIN}',
                            '--single-transaction', '--skip-dump-date', '--skip-comments', db], stdout=f, check=True)
        os.chmod(tmp, 0o600)
        tmp.rename(cached)

    def schema(self, db: str, package: str, sync) -> None:
        """The migrated, still empty schema of db: from the cache, else migrated (and cached)."""
        cached = self.cache_file(f'schema-{db}', package)
        if not self.load(db, cached):
            sync()
            self.dump(db, cached)

    def sql(self, statement: str, db: str = '') -> str:
        argv = ['/usr/bin/mariadb', f'--defaults-file={self.p.conf("my.cnf")}', f'-u{DB_ADMIN}', '-N', '-B',
                '-e', statement] + ([db] if db else [])
        return subprocess.run(argv, check=True, capture_output=True, text=True).stdout

    def rabbitmq(self) -> None:
        self.ensure('epmd')
        self.wait_ready('epmd')
        self.ensure('rabbitmq')
        deadline = time.monotonic() + 120
        while not amqp_ok(self.s):
            if not procs.alive(self.p.pidfile('rabbitmq'), 'rabbit'):
                raise RuntimeError(f'rabbitmq exited; see {self.p.log("rabbitmq")}')
            if time.monotonic() > deadline:
                raise RuntimeError('rabbitmq does not accept AMQP connections after 120s')
            time.sleep(0.3)
        say('rabbitmq ready')

    # -- OpenStack services ----------------------------------------------------------------------
    def keystone(self) -> None:
        conf = ['--config-file', str(self.p.conf('keystone.conf'))]
        km = ['/usr/bin/keystone-manage', *conf]

        # Bootstrapped keystone (admin, roles, region, identity endpoints) is cached too, per port; the
        # admin password hash is then replaced by this state directory's own.
        boot_cache = self.cache_file('keystone-bootstrapped', 'python3-keystone', f'-port{PORTS["keystone"]}')

        def schema():
            if self.load('keystone', boot_cache):
                import bcrypt
                pw_hash = bcrypt.hashpw(self.s['admin'].encode(), bcrypt.gensalt(4)).decode()
                self.sql(f"UPDATE password p JOIN local_user lu ON p.local_user_id = lu.id "
                         f"SET p.password_hash = '{pw_hash}' WHERE lu.name = 'admin' AND lu.domain_id = 'default'",
                         'keystone')
                return
            self.schema('keystone', 'python3-keystone', lambda: self.run('keystone', km + ['db_sync']))
            self.run('keystone', km + ['bootstrap', '--bootstrap-password', self.s['admin'],
                                       '--bootstrap-admin-url', f'http://{HOST}:{PORTS["keystone"]}/v3',
                                       '--bootstrap-internal-url', f'http://{HOST}:{PORTS["keystone"]}/v3',
                                       '--bootstrap-public-url', f'http://{HOST}:{PORTS["keystone"]}/v3',
                                       '--bootstrap-region-id', 'RegionOne'])
            self.dump('keystone', boot_cache)
        self.once('schema-keystone', schema)
        self.ensure('keystone')
        self.wait_ready('keystone')
        self.once('seed-identity', lambda: seed.identity(self.s))
        say('keystone ready')

    def neutron(self) -> None:
        self.once('schema-neutron', lambda: self.schema('neutron', 'python3-neutron', lambda: self.run('neutron', [
            '/usr/bin/neutron-db-manage', '--config-file', str(self.p.conf('neutron.conf')),
            '--config-file', str(self.p.conf('ml2.ini')), 'upgrade', 'heads'])))
        self.once('neutron-az-agents', self.neutron_agents)
        self.ensure('neutron-server')
        self.wait_ready('neutron-server')
        self.wait_queues(['q-plugin'])
        say('neutron ready')

    def neutron_agents(self) -> None:
        """Neutron accepts availability_zone_hints only for AZs that some (here: fake) agent reports."""
        rows = []
        for az in AZS:
            for atype, binary, topic in (('DHCP agent', 'neutron-dhcp-agent', 'dhcp_agent'),
                                         ('L3 agent', 'neutron-l3-agent', 'l3_agent')):
                rows.append(f"('{uuid.uuid4()}','{atype}','{binary}','{topic}','localcloud-{az}',1,"
                            f"'2000-01-01','2000-01-01','2000-01-01','localcloud fake agent','{{}}',0,'{az}',1)")
        self.sql('INSERT IGNORE INTO agents (id, agent_type, `binary`, topic, host, admin_state_up, created_at, '
                 'started_at, heartbeat_timestamp, description, configurations, `load`, availability_zone, '
                 'resources_synced) VALUES ' + ','.join(rows), 'neutron')

    def octavia(self) -> None:
        self.once('schema-octavia', lambda: self.schema('octavia', 'python3-octavia', lambda: self.run('octavia', [
            '/usr/bin/octavia-db-manage', '--config-file', str(self.p.conf('octavia.conf')), 'upgrade', 'head'])))
        for name in ('octavia-api', 'octavia-worker', 'octavia-health-manager', 'octavia-housekeeping'):
            self.ensure(name)
        self.wait_ready('octavia-api')
        self.wait_ready('octavia-health-manager')
        self.wait_queues(['octavia_provisioning_v2'])
        say('octavia ready')

    def designate(self) -> None:
        dconf = ['--config-file', str(self.p.conf('designate.conf'))]
        pools = self.p.conf('pools.yaml')
        # The schema with the pool already in it is cached too (per pools.yaml): no pool update then.
        pooled = self.cache_file('designate-pooled', 'python3-designate',
                                 '-' + hashlib.sha1(pools.read_bytes()).hexdigest()[:12])

        def schema():
            if self.load('designate', pooled):
                (self.p.lib / 'done-designate-pools').write_text('from the schema cache\n')
            else:
                self.schema('designate', 'python3-designate', lambda: self.run(
                    'designate', ['/usr/bin/designate-manage', *dconf, 'database', 'sync']))
        self.once('schema-designate', schema)
        for name in ('designate-central', 'designate-api', 'designate-mdns', 'designate-producer'):
            self.ensure(name)
        self.wait_queues(['central'])

        def pool_update():
            self.run('designate', ['/usr/bin/designate-manage', *dconf, 'pool', 'update', '--file', str(pools)])
            self.dump('designate', pooled)
        self.once('designate-pools', pool_update)
        self.ensure('designate-worker')
        self.wait_ready('designate-api')
        self.wait_ready('designate-mdns')
        self.wait_queues(['central', 'worker', 'producer'])
        say('designate ready')

    def wait_queues(self, names: list, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while True:
            missing = missing_queues(self.s, names)
            if not missing:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f'RPC queues {missing} still missing after {timeout:.0f}s')
            time.sleep(0.3)

    def all(self) -> None:
        self.p.makedirs()
        infra = [threading.Thread(target=f) for f in (self.mariadb, self.rabbitmq)]
        errors = parallel(infra)
        if errors:
            raise errors[0]
        errors = parallel([threading.Thread(target=f) for f in
                           (self.keystone, self.neutron, self.octavia, self.designate)])
        if errors:
            raise errors[0]
        missing = missing_queues(self.s, list(RPC_QUEUES))
        if missing:
            raise RuntimeError(f'RPC queues missing: {missing}')
        self.ensure('heartbeat')
        t = time.monotonic()
        out = seed.cloud(self.p, self.s)
        say(f'seeded in {time.monotonic() - t:.1f}s (project {out["project_id"]})')


def parallel(threads: list) -> list:
    errors = []

    def wrap(fn):
        def run():
            try:
                fn()
            except BaseException as exc:  # reported by the caller
                errors.append(exc)
        return run
    for t in threads:
        t._target = wrap(t._target)
        t.start()
    for t in threads:
        t.join()
    return errors


def amqp_ok(s: dict) -> bool:
    import amqp
    try:
        conn = amqp.Connection(host=f'{HOST}:{PORTS["rabbitmq"]}', userid='localcloud', password=s['rabbit'],
                               connect_timeout=2)
        conn.connect()
        conn.close()
        return True
    except Exception:
        return False


def missing_queues(s: dict, names: list) -> list:
    import amqp
    missing = []
    try:
        conn = amqp.Connection(host=f'{HOST}:{PORTS["rabbitmq"]}', userid='localcloud', password=s['rabbit'],
                               connect_timeout=2)
        conn.connect()
    except Exception:
        return list(names)
    try:
        for name in names:
            ch = conn.channel()
            try:
                ch.queue_declare(name, passive=True)
                ch.close()
            except amqp.exceptions.NotFound:
                missing.append(name)
    finally:
        try:
            conn.close()
        except Exception:
            pass
    return missing


def tail(path, n: int = 15) -> str:
    try:
        return '\n'.join(path.read_text(errors='replace').splitlines()[-n:])
    except OSError:
        return ''


# -- commands ------------------------------------------------------------------------------------
def cmd_up(p: Paths, args) -> int:
    import os
    os.environ['HA_ENDPOINT_STATE'] = str(p.root)  # the heartbeat daemon and setup commands inherit it
    say(f'state directory {p.root}' + (f' (ports +{PORT_OFFSET})' if PORT_OFFSET else ''))
    up = Up(p)
    try:
        up.all()
    except Exception as exc:
        say(f'FAILED: {exc}')
        return 1
    say(f'started this time: {", ".join(up.started) or "nothing (all running)"}')
    say('ready')
    print(f'clouds.yaml: {p.clouds_yaml}')
    print(f'  export OS_CLIENT_CONFIG_FILE={p.clouds_yaml} OS_CLOUD=localcloud   # or: . {p.root}/env.sh')
    return 0


INFRA = ('rabbitmq', 'mariadb', 'epmd')


def cmd_down(p: Paths, args) -> int:
    """Stop exactly what up started (by PID file): OpenStack services together, then the infrastructure."""
    svcs = services.table(p)
    stopped = []

    def stopper(name, timeout):
        def run():
            if procs.stop(p.pidfile(name), svcs[name].marker, timeout=timeout):
                stopped.append(name)
        return threading.Thread(target=run)
    parallel([stopper(n, 8) for n in svcs if n not in INFRA])
    parallel([stopper('rabbitmq', 20), stopper('mariadb', 60)])
    parallel([stopper('epmd', 5)])
    print(f'stopped: {", ".join(stopped) or "nothing was running"}')
    return 0


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
    for name, svc in services.table(p).items():
        pid = procs.alive(p.pidfile(name), svc.marker)
        pids = procs.group_pids(pid) if pid else []
        rss = procs.rss_bytes(pids)
        pss = procs.pss_bytes(pids)
        ports = ','.join(f'{port}/{proto}' for proto, port in svc.ports) or '-'
        state = 'running' if pid else 'stopped'
        if pid and svc.ports and not all(services.port_open(pr, po) for pr, po in svc.ports):
            state = 'starting'
        rows.append({'service': name, 'state': state, 'pid': pid, 'procs': len(pids), 'ports': ports,
                     'rss': rss, 'pss': pss})
    return rows


def cmd_status(p: Paths, args) -> int:
    rows = status_rows(p)
    if args.json:
        import json
        print(json.dumps(rows, indent=1))
    else:
        print(f'{"service":24} {"state":8} {"pid":>7} {"procs":>5} {"ports (127.0.0.1)":22} {"RSS MiB":>8} '
              f'{"PSS MiB":>8}')
        for r in rows:
            print(f'{r["service"]:24} {r["state"]:8} {r["pid"] or "-":>7} {r["procs"]:>5} {r["ports"]:22} '
                  f'{r["rss"] / 2**20:8.0f} {r["pss"] / 2**20:8.0f}')
        rss, pss = sum(r['rss'] for r in rows), sum(r['pss'] for r in rows)
        print(f'{"total":24} {"":8} {"":>7} {sum(r["procs"] for r in rows):>5} {"":22} {rss / 2**20:8.0f} '
              f'{pss / 2**20:8.0f}')
        print('(RSS counts pages shared by forked workers once per process; PSS splits them: the real total)')
        print(f'state: {p.root}  clouds.yaml: {p.clouds_yaml}')
    running = [r for r in rows if r['state'] == 'running']
    return 0 if len(running) == len(rows) else 3


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

"""Bring the local cloud up: databases (with the schema cache), RabbitMQ, every service, readiness, seed.

Runs on the system python (/usr/bin/python3) next to the Debian packages; used by localcloud.ctl.
"""
import hashlib
import os
import re
import shutil
import subprocess
import threading
import time
import uuid
from pathlib import Path

from . import configs, ports, procs, seed, services
from .dataplane import config as dataplane, ovn
from .rest import Client
from .swift import config as swift_config, server as swift_server
from .settings import (ADMIN_USER, AZS, COMPUTE_HOSTS, DB_ADMIN, HOST, LAB, PORTS, RPC_QUEUES, SYSTEM_PYTHON, Paths,
                       cache_dir, load_secrets, scrub_logs)

T0 = time.monotonic()
SCHEMA_CACHE = cache_dir() / 'localcloud-schema'
_SAY = threading.Lock()


def say(msg: str) -> None:
    with _SAY:
        print(f'[{time.monotonic() - T0:6.1f}s] {msg}', flush=True)


class Up:
    def __init__(self, p: Paths):
        self.p = p
        self.s = load_secrets(p, create=True)
        p.makedirs()
        for log in scrub_logs(p, self.s):
            say(f'removed a secret from logs/{log} (written by an older version)')
        configs.write_all(p, self.s)
        self.svcs = services.table(p)
        self.started: list[str] = []
        self.keystone_done = threading.Event()   # set when keystone() returns or fails
        self.keystone_ok = False

    # -- processes -------------------------------------------------------------------------------
    def ensure(self, name: str) -> None:
        """Start service name unless it runs; one that runs with a configuration file changed since it started (a
        newer checkout's configuration, e.g. issue 52's service_type for access rules) is stopped and started."""
        svc = self.svcs[name]
        pid = procs.alive(self.p.pidfile(name), svc.marker)
        try:
            started = procs.started_at(pid) if pid else None
        except OSError:
            started = None  # it exited since: started below
        if started is not None:
            changed = services.changed_since(svc, self.p, started)
            if not changed:
                return
            procs.stop(self.p.pidfile(name), svc.marker, timeout=10)
            say(f'stopped {name}: {", ".join(sorted(changed))} changed since it started')
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
        with open(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), 'ab') as f:
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
        """Run SQL as the DB admin; the statement (it may set a password) goes on stdin, never on the command line."""
        argv = ['/usr/bin/mariadb', f'--defaults-file={self.p.conf("my.cnf")}', f'-u{DB_ADMIN}', '-N', '-B'] + \
            ([db] if db else [])
        return subprocess.run(argv, check=True, capture_output=True, text=True, input=statement).stdout

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
        try:
            self._keystone()
            self.keystone_ok = True
        finally:
            self.keystone_done.set()

    def wait_keystone(self) -> None:
        self.keystone_done.wait()
        if not self.keystone_ok:
            raise RuntimeError('keystone failed to start (see above)')

    def _keystone(self) -> None:
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
            # The password goes by environment (keystone-manage reads OS_BOOTSTRAP_PASSWORD), never on the command
            # line, which any user can read in /proc and which run() logs.
            self.run('keystone', km + ['bootstrap',
                                       '--bootstrap-admin-url', f'http://{HOST}:{PORTS["keystone"]}/v3',
                                       '--bootstrap-internal-url', f'http://{HOST}:{PORTS["keystone"]}/v3',
                                       '--bootstrap-public-url', f'http://{HOST}:{PORTS["keystone"]}/v3',
                                       '--bootstrap-region-id', 'RegionOne'],
                     env={**os.environ, 'OS_BOOTSTRAP_PASSWORD': self.s['admin']})
            self.dump('keystone', boot_cache)
        self.once('schema-keystone', schema)
        self.ensure('keystone')
        self.wait_ready('keystone')
        # re-run (idempotent) whenever the catalog grows: the name changes with it
        self.once('seed-identity-' + seed.catalog_key(), lambda: seed.identity(self.s))
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
        for name in ('octavia-api', 'octavia-worker', 'octavia-health-manager', 'octavia-housekeeping',
                     *(['octavia-driver-agent'] if dataplane.enabled(self.p) else [])):
            self.ensure(name)
        self.wait_ready('octavia-api')
        self.wait_ready('octavia-health-manager')
        self.wait_queues(['octavia_provisioning_v2'])
        say('octavia ready')

    def designate(self) -> None:
        dconf = ['--config-file', str(self.p.conf('designate.conf'))]
        pools = self.p.conf('pools.yaml')
        # The schema with the pool already in it is cached too (per pools.yaml): no pool update then.
        digest = hashlib.sha1(pools.read_bytes()).hexdigest()[:12]
        pooled = self.cache_file('designate-pooled', 'python3-designate', '-' + digest)

        def schema():
            if self.load('designate', pooled):
                (self.p.lib / f'done-designate-pools-{digest}').write_text('from the schema cache\n')
            else:
                self.schema('designate', 'python3-designate', lambda: self.run(
                    'designate', ['/usr/bin/designate-manage', *dconf, 'database', 'sync']))
        self.once('schema-designate', schema)
        for name in ('designate-central', 'designate-api', 'designate-mdns', 'designate-producer', 'named'):
            self.ensure(name)
        self.wait_queues(['central'])
        self.wait_ready('named')

        def pool_update():
            # A running worker knows the old pool (e.g. the fake backend of an older localcloud) and would take the
            # zone updates the pool update sends: stopped first, they wait in its queue for the new one.
            if procs.stop(self.p.pidfile('designate-worker'), self.svcs['designate-worker'].marker, timeout=8):
                say('stopped designate-worker: the pool changes')
            self.run('designate', ['/usr/bin/designate-manage', *dconf, 'pool', 'update', '--file', str(pools)])
            if self.sql('SELECT COUNT(*) FROM zones', 'designate').strip() == '0':  # the cache holds no one's zones
                self.dump('designate', pooled)
        # once per pools.yaml: a changed pool (a new backend, other ports) is loaded again
        self.once(f'designate-pools-{digest}', pool_update)
        self.ensure('designate-worker')
        self.wait_ready('designate-api')
        self.wait_ready('designate-mdns')
        self.wait_queues(['central', 'worker', 'producer'])
        say('designate ready')

    def compute(self) -> None:
        """Placement, Glance, Nova (cells v2: cell0 + cell1; api, conductor, scheduler) and one nova-compute with the
        fake virt driver per AZ, each host mapped to cell1."""
        self.once('databases-compute', lambda: self.sql(''.join(
            f'CREATE DATABASE IF NOT EXISTS {db} CHARACTER SET utf8mb3;'
            for db in ('placement', 'glance', 'nova_api', 'nova', 'nova_cell0'))))
        errors = parallel([threading.Thread(target=f) for f in
                           (self.placement_schema, self.glance_schema, self.nova_schema)])
        if errors:
            raise errors[0]
        gate = configs.nova_compute_gate(self.p)
        if not procs.alive(self.p.pidfile('nova'), self.svcs['nova'].marker):
            gate.unlink(missing_ok=True)
        for name in ('placement-api', 'glance-api'):
            self.ensure(name)
        # nova-conductor authenticates as the service user at start and exits on a 401: on a loaded machine Keystone
        # (schema, bootstrap, then the seeded service user) can come after Nova's import, so Nova waits for it.
        self.wait_keystone()
        self.ensure('nova')
        # `nova` forks the scheduler and the compute services once the gate file exists: the scheduler exits at
        # start without Placement in the catalog; a compute service reports its resources to Placement once at start
        # (then every minute) and pings the conductor by RPC (a ping sent before the conductor's queue exists is
        # lost: 10 s).
        self.wait_keystone()
        self.wait_ready('placement-api')
        self.wait_queues(['conductor'])
        gate.write_text(time.strftime('%F %T\n'))
        self.wait_ready('glance-api')
        self.wait_ready('nova')
        self.wait_queues(['scheduler', *(f'compute.{h}' for h in COMPUTE_HOSTS.values())])
        self.map_compute_hosts()
        say('compute ready')

    def placement_schema(self) -> None:
        self.once('schema-placement', lambda: self.schema('placement', 'python3-placement', lambda: self.run(
            'placement', ['/usr/bin/placement-manage', '--config-file', str(self.p.conf('placement.conf')),
                          'db', 'sync'])))

    def glance_schema(self) -> None:
        self.once('schema-glance', lambda: self.schema('glance', 'python3-glance', lambda: self.run(
            'glance', ['/usr/bin/glance-manage', '--config-file', str(self.p.conf('glance-api.conf')), 'db_sync'])))

    def nova_schema(self) -> None:
        nm = self.nova_manage()

        def api():
            # nova_api with cell0 and cell1 mapped by templates (configs.CELL*): no secret, no port in the cache
            cached = self.cache_file('schema-nova_api-cells', 'python3-nova')
            if self.load('nova_api', cached):
                return
            self.run('nova', nm + ['api_db', 'sync'])
            self.run('nova', nm + ['cell_v2', 'map_cell0', '--database_connection', configs.CELL0_DB])
            self.run('nova', nm + ['cell_v2', 'create_cell', '--name', 'cell1', '--database_connection',
                                   configs.CELL1_DB, '--transport-url', configs.CELL_TRANSPORT])
            self.dump('nova_api', cached)

        def cells():
            # cell0 and cell1 have the same schema: one dump loaded into both
            cached = self.cache_file('schema-nova', 'python3-nova')
            if self.load('nova', cached):
                self.load('nova_cell0', cached)
                return
            self.run('nova', nm + ['db', 'sync'])  # cell1 and cell0
            self.dump('nova', cached)
        self.once('schema-nova-api', api)
        self.once('schema-nova-cells', cells)

    def nova_manage(self) -> list:
        return ['/usr/bin/nova-manage', '--config-file', str(self.p.conf('nova.conf')),
                '--config-file', str(self.p.conf('nova-db.conf'))]

    def map_compute_hosts(self, timeout: float = 120) -> None:
        """Wait until every compute host has its compute node (cell1) and resource provider (Placement), then map
        the unmapped ones to cell1 (nova-manage cell_v2 discover_hosts; the scheduler only places on mapped hosts)."""
        hosts = set(COMPUTE_HOSTS.values())
        admin = Client(ADMIN_USER, self.s['admin'], 'admin').login()
        deadline = time.monotonic() + timeout
        while True:
            nodes = set(self.sql('SELECT host FROM compute_nodes WHERE deleted = 0', 'nova').split())
            providers = {rp['name'] for rp in admin.get('placement', '/resource_providers')['resource_providers']}
            missing = sorted((hosts - nodes) | (hosts - providers))
            if not missing:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f'compute hosts {missing} have no compute node or resource provider after '
                                   f'{timeout:.0f}s; see {self.p.logs}/nova*.log')
            time.sleep(0.3)
        mapped = set(self.sql('SELECT host FROM host_mappings', 'nova_api').split())
        if hosts - mapped:
            t = time.monotonic()
            self.run('nova', self.nova_manage() + ['cell_v2', 'discover_hosts'])
            say(f'mapped compute hosts {sorted(hosts - mapped)} to cell1 in {time.monotonic() - t:.1f}s')

    def object_storage(self) -> None:
        """Swift: the rings (built again when the servers' ports change), the account, container and object servers,
        then the proxy (it authenticates through Keystone only per request)."""
        self.once(f'swift-rings-{swift_config.ring_key()}', lambda: self.run('swift-rings', [
            SYSTEM_PYTHON, '-m', 'localcloud.swift.config'], env={**os.environ, 'PYTHONPATH': str(LAB)}))
        for name in swift_server.SERVICES:
            self.ensure(name)
        for name in swift_server.SERVICES:
            self.wait_ready(name)
        say('object storage ready')

    def wait_queues(self, names: list, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while True:
            missing = missing_queues(self.s, names)
            if not missing:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f'RPC queues {missing} still missing after {timeout:.0f}s')
            time.sleep(0.3)

    def retire(self) -> None:
        for name, marker in services.RETIRED.items():
            if procs.stop(self.p.pidfile(name), marker, timeout=8):
                say(f'stopped {name}: an earlier version ran it apart (now a child of nova)')

    def all(self) -> None:
        self.p.makedirs()
        self.retire()
        ports.check_free(self.p)  # another cloud on these ports: refused before anything starts
        infra = [threading.Thread(target=f) for f in (self.mariadb, self.rabbitmq, self.data_plane)]
        errors = parallel(infra)
        if errors:
            raise errors[0]
        errors = parallel([threading.Thread(target=f) for f in
                           (self.keystone, self.neutron, self.octavia, self.designate, self.compute,
                            self.object_storage)])
        if errors:
            raise errors[0]
        missing = missing_queues(self.s, list(RPC_QUEUES))
        if missing:
            raise RuntimeError(f'RPC queues missing: {missing}')
        self.ensure('heartbeat')
        t = time.monotonic()
        out = seed.cloud(self.p, self.s)
        say(f'seeded in {time.monotonic() - t:.1f}s (project {out["project_id"]})')
        swift_server.ensure_bucket(self.p, self.s)
        say(f'state bucket {swift_config.BUCKET} ready: {swift_server.backend_env(self.p)}')
        if dataplane.enabled(self.p):
            self.ensure('dataplane-members')

    def data_plane(self) -> None:
        """OVN and a chassis per AZ (lab/localcloud/dataplane), before Neutron connects to it; nothing without it."""
        if not dataplane.enabled(self.p):
            return
        dataplane.check_offset()
        self.started += ovn.start(self.p, say)


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

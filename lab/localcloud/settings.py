"""Where the local cloud lives and how to reach it: paths, ports, names, generated secrets.

Standard library only: imported by the control scripts (system python) and by tests (venv).
"""
import getpass
import json
import os
import secrets
from pathlib import Path

HOST = '127.0.0.1'
REGION = 'RegionOne'

BASE_PORTS = {
    'mariadb': 3306,
    'rabbitmq': 5672,
    'rabbitmq-dist': 15673,  # not RabbitMQ's 25672: +10000 (a third cloud) put it in Linux's ephemeral range
    'epmd': 4369,
    'keystone': 5000,
    'neutron': 9696,
    'octavia': 9876,
    'designate': 9001,
    'designate-mdns': 5354,
    'octavia-health': 5555,  # UDP
    'nova': 8774,
    'placement': 8778,
    'glance': 9292,
    'ovn-nb': 6641,   # the data plane (LOCALCLOUD_DATAPLANE=ovn): OVN northbound / southbound ovsdb
    'ovn-sb': 6642,
    'named': 5300,        # the DNS server clients ask (tcp+udp): lab/localcloud/dns
    'named-rndc': 5301,   # named's control channel (rndc), for Designate's worker
    'swift-proxy': 8080,      # object storage: Swift's proxy with the S3 API (lab/localcloud/swift)
    'swift-object': 6200,
    'swift-container': 6201,
    'swift-account': 6202,
}

PROJECT = 'ha-endpoint'
USER = 'ha-endpoint'
ADMIN_USER = 'admin'
SERVICE_PROJECT = 'service'
SERVICE_USER = 'localcloud-service'
AZS = ('az1', 'az2', 'az3')
# One nova-compute service (fake virt driver) per AZ, in a host aggregate named after the AZ.
COMPUTE_HOSTS = {az: f'cmp-{az}' for az in AZS}
DNS_ZONE = 'example.test.'
CLOUD = 'localcloud'
ADMIN_CLOUD = 'localcloud-admin'

# RPC consumer queues that must exist before the cloud is declared ready.
RPC_QUEUES = ('central', 'worker', 'producer', 'octavia_provisioning_v2', 'q-plugin', 'conductor', 'scheduler',
              *(f'compute.{host}' for host in COMPUTE_HOSTS.values()))

# The lab folder (it holds the package `localcloud`: what the cloud's own Python processes get as PYTHONPATH) and the
# repository around it (the stacks, the engine's build script under lab/engine).
LAB = Path(__file__).resolve().parents[1]
REPO = LAB.parent
PKG = Path(__file__).resolve().parent
SYSTEM_PYTHON = '/usr/bin/python3'
# MariaDB's admin account: the OS user running localcloud, over the unix socket (root when run as root).
DB_ADMIN = getpass.getuser()


def cache_dir() -> Path:
    """The project's cache of built and downloaded parts: $HA_ENDPOINT_CACHE, by default ~/.cache/ha-endpoint."""
    return Path(os.environ.get('HA_ENDPOINT_CACHE') or Path(os.path.expanduser('~')) / '.cache' / 'ha-endpoint')


def state_dir() -> Path:
    return Path(os.environ.get('HA_ENDPOINT_STATE') or cache_dir() / 'localcloud')


def port_offset(root: Path | None = None) -> int:
    """0 for the default instance. A second instance (e.g. the benchmark's) runs with
    LOCALCLOUD_PORT_OFFSET=N; its state directory remembers N, so HA_ENDPOINT_STATE alone finds it."""
    if os.environ.get('LOCALCLOUD_PORT_OFFSET'):
        return int(os.environ['LOCALCLOUD_PORT_OFFSET'])
    try:
        return int(((root or state_dir()) / 'port-offset').read_text())
    except (OSError, ValueError):
        return 0


PORT_OFFSET = port_offset()
PORTS = {name: port + PORT_OFFSET for name, port in BASE_PORTS.items()}


class Paths:
    """Every file of the local cloud, under one state directory."""

    def __init__(self, root: Path | None = None):
        self.root = Path(root or state_dir())
        self.etc = self.root / 'etc'
        self.logs = self.root / 'logs'
        self.run = self.root / 'run'
        self.lib = self.root / 'lib'
        self.mysql_data = self.lib / 'mysql'
        self.mysql_sock = self.run / 'mysqld.sock'
        self.rabbit_home = self.lib / 'rabbitmq'
        self.secrets = self.root / 'secrets.json'
        self.clouds_yaml = self.root / 'clouds.yaml'
        self.faults = self.root / 'faults.json'
        self.seeded = self.root / 'seed.json'

    def pidfile(self, name: str) -> Path:
        return self.run / f'{name}.pid'

    def fault_switch(self, name: str) -> Path:
        """The fault file a service behind lab/localcloud/fault_wsgi.py reads (see localcloud.faults)."""
        return self.run / f'{name}.fault.json'

    def log(self, name: str) -> Path:
        return self.logs / f'{name}.log'

    def conf(self, name: str) -> Path:
        return self.etc / name

    def makedirs(self) -> None:
        for d in (self.root, self.etc, self.logs, self.run, self.lib):
            d.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o700)
        os.chmod(self.logs, 0o700)  # logs may quote configuration; never readable by other users


def scrub_logs(paths: 'Paths', values: dict) -> list[str]:
    """Remove every secret value from the log files (written by older versions that logged a password on a command
    line) and make each log readable by its owner only; the names of the logs that held a secret."""
    scrubbed = []
    for log in sorted(paths.logs.glob('*.log')) if paths.logs.is_dir() else []:
        os.chmod(log, 0o600)
        text = log.read_bytes()
        clean = text
        for value in values.values():
            if isinstance(value, str) and len(value) >= 8:
                clean = clean.replace(value.encode(), b'***')
        if clean != text:
            log.write_bytes(clean)
            scrubbed.append(log.name)
    return scrubbed


_SECRET_NAMES = ('db', 'rabbit', 'admin', 'user', 'service', 'heartbeat',
                 'ca_passphrase', 'server_certs_key')


def load_secrets(paths: Paths, create: bool = False) -> dict:
    """Generated once per state directory, then stable."""
    if paths.secrets.exists():
        return json.loads(paths.secrets.read_text())
    if not create:
        raise FileNotFoundError(f'{paths.secrets} does not exist: run lab/localcloud/up first')
    values = {n: secrets.token_hex(16) for n in _SECRET_NAMES}  # 32 hex chars each
    paths.makedirs()
    tmp = paths.secrets.with_suffix('.tmp')
    tmp.write_text(json.dumps(values, indent=1))
    os.chmod(tmp, 0o600)
    tmp.rename(paths.secrets)
    return values


def url(service: str, path: str = '') -> str:
    return f'http://{HOST}:{PORTS[service]}{path}'

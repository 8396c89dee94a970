"""The daemons of the local cloud: how each is started, what it listens on, how it is checked."""
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path

from . import configs, rest
from .dataplane import config as dataplane
from .dns import server as dns_server
from .swift import server as swift_server
from .settings import HOST, LAB, PKG, PORTS, SYSTEM_PYTHON, Paths, url

OCTAVIA_PLUGIN = PKG / 'octavia_plugin'
NEUTRON_PLUGIN = PKG / 'neutron_plugin'
FAULT_WSGI = PKG / 'fault_wsgi.py'
# Octavia's threaded daemons run their console script through this (logging's locks kept native, see the module);
# their PYTHONPATH holds OCTAVIA_PLUGIN
NATIVE_LOGGING = [SYSTEM_PYTHON, '-m', 'localcloud_native_logging']


@dataclass
class Service:
    name: str
    argv: list
    marker: str                       # a string in /proc/<pid>/cmdline that identifies it
    ports: list = field(default_factory=list)   # [(proto, port)]
    health_url: str | None = None     # answers HTTP when ready
    env: dict = field(default_factory=dict)
    reads: list = field(default_factory=list)  # configuration files it reads that its command line does not name


def _uwsgi(name: str, wsgi_file: str, port: int, p: Paths, env: dict | None = None,
           pyargv: str | None = None, pythonpath: list | None = None) -> list:
    """uwsgi serving `wsgi_file` (the service's own script) on one worker of eight threads, through
    lab/localcloud/fault_wsgi.py: it keeps logging's locks native under those threads (the deadlock
    octavia_plugin/localcloud_native_logging.py describes), and puts the fault switch in front when `env` names a
    fault file."""
    argv = ['/usr/bin/uwsgi', '--plugin', 'python3', '--http-socket', f'{HOST}:{port}',
            '--wsgi-file', str(FAULT_WSGI), '--master', '--processes', '1', '--threads', '8',
            '--enable-threads', '--die-on-term', '--need-app', '--buffer-size', '65535',
            '--add-header', 'Connection: close', '--disable-logging']
    if pyargv:
        argv += ['--pyargv', pyargv]
    for directory in pythonpath or []:
        argv += ['--pythonpath', directory]
    for k, v in {'LOCALCLOUD_WSGI_FILE': wsgi_file, **(env or {})}.items():
        argv += ['--env', f'{k}={v}']
    return argv


def ovn_provider_path(p: Paths) -> list:
    """PYTHONPATH of octavia-api and the driver agent with the data plane: ovn-octavia-provider (installed apart by
    install.sh) and localcloud_driver_sockets."""
    return [str(OCTAVIA_PLUGIN)] + ([str(dataplane.ovn_provider_dir())] if dataplane.enabled(p) else [])


def table(p: Paths) -> dict:
    c = p.conf
    ocfg = ['--config-file', str(c('octavia.conf'))]
    dcfg = ['--config-file', str(c('designate.conf'))]
    plugin_env = {'PYTHONPATH': str(OCTAVIA_PLUGIN)}
    services = [
        Service('mariadb', ['/usr/sbin/mariadbd', f'--defaults-file={c("my.cnf")}'], 'mariadbd',
                [('tcp', PORTS['mariadb'])]),
        Service('epmd', ['/usr/bin/epmd', '-address', HOST, '-port', str(PORTS['epmd'])], 'epmd',
                [('tcp', PORTS['epmd'])]),
        Service('rabbitmq', ['/usr/lib/rabbitmq/bin/rabbitmq-server'], 'rabbit',
                [('tcp', PORTS['rabbitmq']), ('tcp', PORTS['rabbitmq-dist'])],
                env=configs.rabbitmq_env(p)),
        Service('keystone', _uwsgi('keystone', '/usr/bin/keystone-wsgi-public', PORTS['keystone'], p,
                                   env={'OS_KEYSTONE_CONFIG_FILES': str(c('keystone.conf'))}),
                'keystone-wsgi-public', [('tcp', PORTS['keystone'])], url('keystone', '/v3')),
        Service('neutron-server', ['/usr/bin/neutron-server', '--config-file', str(c('neutron.conf')),
                                   '--config-file', str(c('ml2.ini'))],
                'neutron-server', [('tcp', PORTS['neutron'])], url('neutron', '/'),
                env={'PYTHONPATH': str(NEUTRON_PLUGIN)}),
        # behind the fault switch (lab/localcloud/fault_wsgi.py: `lab/localcloud/fault octavia-api-unavailable`)
        Service('octavia-api', _uwsgi('octavia-api', '/usr/bin/octavia-wsgi', PORTS['octavia'], p,
                                      env={'LOCALCLOUD_FAULT_FILE': str(p.fault_switch('octavia-api')),
                                           'LOCALCLOUD_DRIVER_SOCKETS': str(p.run / 'octavia')},
                                      pyargv=f'--config-file {c("octavia.conf")} '
                                             f'--config-file {c("octavia-api.conf")}',
                                      pythonpath=ovn_provider_path(p)),
                'octavia-wsgi', [('tcp', PORTS['octavia'])], url('octavia', '/')),
        Service('octavia-worker', [*NATIVE_LOGGING, '/usr/bin/octavia-worker', *ocfg,
                                   '--config-file', str(c('octavia-worker.conf'))],
                'octavia-worker', env=plugin_env),
        Service('octavia-health-manager', [*NATIVE_LOGGING, '/usr/bin/octavia-health-manager', *ocfg,
                                           '--config-file', str(c('octavia-health-manager.conf'))],
                'octavia-health-manager', [('udp', PORTS['octavia-health'])], env=plugin_env),
        Service('octavia-housekeeping', [*NATIVE_LOGGING, '/usr/bin/octavia-housekeeping', *ocfg,
                                         '--config-file', str(c('octavia-housekeeping.conf'))],
                'octavia-housekeeping', env=plugin_env),
        Service('designate-central', ['/usr/bin/designate-central', *dcfg,
                                      '--config-file', str(c('designate-central.conf'))],
                'designate-central'),
        Service('designate-api', ['/usr/bin/designate-api', *dcfg,
                                  '--config-file', str(c('designate-api.conf'))],
                'designate-api', [('tcp', PORTS['designate'])], url('designate', '/')),
        Service('designate-mdns', ['/usr/bin/designate-mdns', *dcfg,
                                   '--config-file', str(c('designate-mdns.conf'))],
                'designate-mdns', [('tcp', PORTS['designate-mdns']), ('udp', PORTS['designate-mdns'])]),
        Service('designate-producer', ['/usr/bin/designate-producer', *dcfg,
                                       '--config-file', str(c('designate-producer.conf'))],
                'designate-producer'),
        Service('designate-worker', ['/usr/bin/designate-worker', *dcfg,
                                     '--config-file', str(c('designate-worker.conf'))],
                'designate-worker'),
        dns_server.service(p),  # named, Designate's backend: lab/localcloud/dns
        Service('placement-api', _uwsgi('placement-api', '/usr/bin/placement-api', PORTS['placement'], p,
                                        env={'OS_PLACEMENT_CONFIG_DIR': str(p.etc)}),
                'placement-api', [('tcp', PORTS['placement'])], url('placement', '/'),
                reads=[c('placement.conf')]),   # from OS_PLACEMENT_CONFIG_DIR
        Service('glance-api', ['/usr/bin/glance-api', '--config-file', str(c('glance-api.conf'))],
                'glance-api', [('tcp', PORTS['glance'])], url('glance', '/')),
        # nova-api, nova-conductor, nova-scheduler and one nova-compute (fake virt driver) per AZ host, forked from
        # one parent that imported Nova once: lab/localcloud/nova_services.py, children listed in etc/nova-services.json
        Service('nova', [SYSTEM_PYTHON, '-m', 'localcloud.nova_services', str(c('nova-services.json'))],
                'localcloud.nova_services', [('tcp', PORTS['nova'])], url('nova', '/'), env={'PYTHONPATH': str(LAB)}),
        # object storage (Swift and its S3 API): lab/localcloud/swift
        *swift_server.services(p),
        Service('heartbeat', [SYSTEM_PYTHON, '-m', 'localcloud.heartbeat', '--state', str(p.root)],
                'localcloud.heartbeat', env={'PYTHONPATH': str(LAB)}),
    ]
    if dataplane.enabled(p):
        # Nova's servers as network namespaces on their AZ's chassis (lab/localcloud/dataplane/members.py); the OVN
        # daemons themselves are started by localcloud.dataplane.ovn (they need their namespaces first).
        services.append(Service('dataplane-members', [SYSTEM_PYTHON, '-m', 'localcloud.dataplane.members',
                                                      '--state', str(p.root)],
                                'localcloud.dataplane.members', env={'PYTHONPATH': str(LAB)}))
        # Octavia's OVN provider agent: OVN health-check results (SB Service_Monitor) -> member operating status
        services.append(Service('octavia-driver-agent', [SYSTEM_PYTHON, '-m', 'localcloud_driver_sockets',
                                                         str(p.run / 'octavia'), *ocfg,
                                                         '--config-file', str(c('octavia-driver-agent.conf'))],
                                'localcloud_driver_sockets', env={'PYTHONPATH': ':'.join(ovn_provider_path(p))}))
    return {s.name: s for s in services}


# Services an earlier version started under other names (name -> marker): `up` stops them by their PID files
# before it starts their successors (now children of `nova`), which would otherwise find their port taken.
RETIRED = {'nova-api': 'nova-api', 'nova-conductor': 'nova-conductor', 'nova-scheduler': 'nova-scheduler',
           'nova-compute': 'localcloud.nova_compute'}


def config_files(svc: Service, p: Paths) -> set[Path]:
    """The configuration files of the state directory that svc reads: those its command line or environment names,
    and those these name in turn (a paste file, a key, an included file)."""
    pattern = re.compile(re.escape(str(p.etc)) + r'/[^\s\'",;]+')

    def named_in(text: str) -> set[Path]:
        return {Path(m) for m in pattern.findall(text) if Path(m).is_file()}
    found = named_in(' '.join(map(str, [*svc.argv, *svc.env.values(), *svc.reads])))
    for path in list(found):
        try:
            found |= named_in(path.read_text(errors='replace'))
        except OSError:
            pass
    return found


def changed_since(svc: Service, p: Paths, started: float) -> set[str]:
    """The names of svc's configuration files written after ``started`` (epoch seconds); configs write a file only
    when its content changes."""
    return {f.name for f in config_files(svc, p) if f.stat().st_mtime > started}


def port_open(proto: str, port: int) -> bool:
    if proto == 'tcp':
        try:
            with socket.create_connection((HOST, port), timeout=1):
                return True
        except OSError:
            return False
    return udp_bound(port)


def udp_bound(port: int) -> bool:
    want = f':{port:04X}'
    for f in ('/proc/net/udp', '/proc/net/udp6'):
        try:
            for line in Path(f).read_text().splitlines()[1:]:
                if line.split()[1].endswith(want):
                    return True
        except OSError:
            pass
    return False


def ready(s: Service) -> bool:
    if not all(port_open(proto, port) for proto, port in s.ports):
        return False
    return rest.http_answers(s.health_url) if s.health_url else True

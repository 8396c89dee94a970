"""Swift's configuration under the state directory: ``etc/swift/`` (swift.conf, one file per server, the rings) and
``lib/swift/devices/d1`` (the one device, a plain directory). Standard library only (system python)."""
import hashlib
from pathlib import Path

from ..configs import _authtoken, _ini, _write
from ..settings import DB_ADMIN, HOST, PORTS, REGION, Paths, url

DEVICE = 'd1'
# ring -> the server (and its port) that holds it
RINGS = {'account': 'swift-account', 'container': 'swift-container', 'object': 'swift-object'}
SERVERS = ('account-server', 'container-server', 'object-server', 'proxy-server')
RESELLER_PREFIX = 'AUTH_'
# The bucket of Pulumi's shared state (STATE=swift) in the project, and the region the S3 API answers for (its
# `location`: a SigV4 request signed for another region is refused with AuthorizationHeaderMalformed).
BUCKET = 'pulumi-state'
S3_REGION = REGION


def swift_dir(p: Paths) -> Path:
    return p.etc / 'swift'


def devices(p: Paths) -> Path:
    return p.lib / 'swift' / 'devices'


def conf(p: Paths, server: str) -> Path:
    return swift_dir(p) / f'{server}.conf'


def ring_key() -> str:
    """Changes whenever the servers' ports do: the rings name each server's port, so they are built again."""
    return '-'.join(str(PORTS[svc]) for svc in RINGS.values())


def _hash_path(s: dict) -> str:
    """swift.conf's hash path prefix and suffix: fixed for the state directory (objects are placed by them), derived
    from a secret generated with it."""
    return hashlib.sha256(b'localcloud swift hash path:' + s['service'].encode()).hexdigest()[:32]


def _server_defaults(p: Paths, service: str) -> dict:
    """One process (workers 0), run as the user running the cloud (Swift switches to `user` at start)."""
    storage = {'devices': devices(p), 'mount_check': False} if service != 'swift-proxy' else {}
    return {'bind_ip': HOST, 'bind_port': PORTS[service], 'workers': 0, 'swift_dir': swift_dir(p), **storage,
            'user': DB_ADMIN, 'log_name': service, 'log_level': 'INFO'}


def write(p: Paths, s: dict) -> None:
    (devices(p) / DEVICE).mkdir(parents=True, exist_ok=True)
    _write(swift_dir(p) / 'swift.conf', _ini({
        'swift-hash': {'swift_hash_path_prefix': _hash_path(s), 'swift_hash_path_suffix': _hash_path(s)},
        'storage-policy:0': {'name': 'Policy-0', 'default': 'yes'},
    }))
    for ring, service in RINGS.items():
        _write(conf(p, f'{ring}-server'), _ini({
            'DEFAULT': _server_defaults(p, service),
            'pipeline:main': {'pipeline': f'healthcheck {ring}-server'},
            f'app:{ring}-server': {'use': f'egg:swift#{ring}'},
            'filter:healthcheck': {'use': 'egg:swift#healthcheck'},
        }))
    _write(conf(p, 'proxy-server'), _ini({
        'DEFAULT': _server_defaults(p, 'swift-proxy'),
        # Keystone's own pipeline of the s3api documentation: authtoken lets an S3 request (no token) pass to s3api,
        # s3token has Keystone check its EC2 signature, keystoneauth admits the project's members.
        'pipeline:main': {'pipeline': 'catch_errors gatekeeper healthcheck proxy-logging listing_formats authtoken '
                                      's3api s3token keystoneauth copy slo dlo proxy-logging proxy-server'},
        'app:proxy-server': {'use': 'egg:swift#proxy', 'account_autocreate': True},
        'filter:catch_errors': {'use': 'egg:swift#catch_errors'},
        'filter:gatekeeper': {'use': 'egg:swift#gatekeeper'},
        'filter:healthcheck': {'use': 'egg:swift#healthcheck'},
        'filter:proxy-logging': {'use': 'egg:swift#proxy_logging'},
        'filter:listing_formats': {'use': 'egg:swift#listing_formats'},
        'filter:copy': {'use': 'egg:swift#copy'},
        'filter:slo': {'use': 'egg:swift#slo'},
        'filter:dlo': {'use': 'egg:swift#dlo'},
        'filter:authtoken': {'paste.filter_factory': 'keystonemiddleware.auth_token:filter_factory',
                             **_authtoken(s), 'delay_auth_decision': True},
        'filter:s3api': {'use': 'egg:swift#s3api', 'location': S3_REGION, 'dns_compliant_bucket_names': True},
        # Keystone (Debian 12's security update of OSSA-2025-002) checks EC2 signatures for service users only:
        # s3token calls it as the cloud's service user
        'filter:s3token': {'use': 'egg:swift#s3token', 'auth_uri': url('keystone', '/v3'),
                           'reseller_prefix': RESELLER_PREFIX, 'delay_auth_decision': False, 'http_timeout': 10,
                           **{k: v for k, v in _authtoken(s).items()
                              if k in ('auth_type', 'auth_url', 'username', 'password', 'project_name',
                                       'user_domain_name', 'project_domain_name')}},
        'filter:keystoneauth': {'use': 'egg:swift#keystoneauth', 'reseller_prefix': RESELLER_PREFIX,
                                'operator_roles': 'admin, member'},
    }))


def build_rings(p: Paths) -> None:
    """The three rings (``<ring>.ring.gz`` and its builder): 2^6 partitions, one replica, one device on this
    server's port. Swift's own RingBuilder, in a process of its own (``python3 -m localcloud.swift.config``):
    swift-ring-builder's nine runs took minutes on a loaded machine, most of it importing Swift each time, and Swift
    imported into `up`'s threads (eventlet) left its main thread waiting forever on a lock."""
    from swift.common.ring import RingBuilder
    for ring, service in RINGS.items():
        builder = RingBuilder(6, 1, 1)
        builder.add_dev({'region': 1, 'zone': 1, 'ip': HOST, 'port': PORTS[service], 'device': DEVICE,
                         'weight': 100})
        builder.rebalance()
        builder.get_ring().save(str(swift_dir(p) / f'{ring}.ring.gz'))
        builder.save(str(swift_dir(p) / f'{ring}.builder'))


if __name__ == '__main__':
    build_rings(Paths())

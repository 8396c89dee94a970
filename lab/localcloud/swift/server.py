"""Swift's daemons as services of the local cloud, its rings, and the state bucket: the project user's EC2 credential
(its S3 access key and secret), the bucket, and ``state-backend.env``, which scripts/env.sh reads for STATE=swift
(system python, standard library only)."""
import os
import shlex
import urllib.error
import urllib.request
from pathlib import Path

from ..rest import Client
from ..settings import LAB, PORTS, PROJECT, SYSTEM_PYTHON, USER, Paths, url
from . import config

# service name -> the section of its configuration file Swift's run_wsgi serves
SERVICES = {'swift-account': 'account-server', 'swift-container': 'container-server',
            'swift-object': 'object-server', 'swift-proxy': 'proxy-server'}
PROXY = 'swift-proxy'


def services(p: Paths) -> list:
    """The four daemons (one process each), each told apart by its configuration file's path."""
    from ..services import Service
    return [Service(name, [SYSTEM_PYTHON, '-m', 'localcloud.swift.serve', section, str(config.conf(p, section))],
                    str(config.conf(p, section)), [('tcp', PORTS[name])], url(name, '/healthcheck'),
                    env={'PYTHONPATH': str(LAB)})
            for name, section in SERVICES.items()]


def backend_env(p: Paths) -> Path:
    """What scripts/env.sh sources for STATE=swift when the S3 variables are not set: the local cloud's S3 endpoint,
    bucket, region and the project user's EC2 credential."""
    return p.root / 'state-backend.env'


def ensure_bucket(p: Paths, s: dict) -> dict:
    """The project user's EC2 credential for its project (made once, then reused) and the bucket (a Swift container
    of the project), written to ``state-backend.env`` (mode 0600); returns its variables."""
    user = Client(USER, s['user'], PROJECT).login()
    base = f'/v3/users/{user.user_id}/credentials/OS-EC2'
    mine = [c for c in user.get('keystone', base)['credentials'] if c.get('tenant_id') == user.project_id]
    cred = mine[0] if mine else user.post('keystone', base, {'tenant_id': user.project_id})['credential']
    target = url(PROXY, f'/v1/{config.RESELLER_PREFIX}{user.project_id}/{config.BUCKET}')
    request = urllib.request.Request(target, method='PUT', headers={'X-Auth-Token': user.token})
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            resp.read()
    except urllib.error.HTTPError as exc:
        raise RuntimeError(f'PUT {target} -> {exc.code}: {exc.read()[:300]!r}; see logs/swift-proxy.log') from None
    values = {'HA_ENDPOINT_S3_ENDPOINT': url(PROXY), 'HA_ENDPOINT_S3_BUCKET': config.BUCKET,
              'HA_ENDPOINT_S3_REGION': config.S3_REGION,
              'AWS_ACCESS_KEY_ID': cred['access'], 'AWS_SECRET_ACCESS_KEY': cred['secret']}
    text = ('# Written by lab/localcloud/up: the S3 API of the local cloud\'s object storage (Swift) and the project '
            'user\'s EC2\n# credential, read by scripts/env.sh when STATE=swift (docs/team-state.md)\n'
            + ''.join(f'{k}={shlex.quote(v)}\n' for k, v in values.items()))
    tmp = backend_env(p).with_suffix('.tmp')
    tmp.write_text(text)
    os.chmod(tmp, 0o600)
    tmp.rename(backend_env(p))
    return values


def status(p: Paths) -> dict:
    """The ``object_storage`` section of ``lab/localcloud/status --json``: where the S3 API answers and the bucket."""
    return {'s3_endpoint': url(PROXY), 'bucket': config.BUCKET, 'region': config.S3_REGION,
            'credentials': str(backend_env(p))}


def read_env(p: Paths) -> dict:
    """``state-backend.env`` as a dict (for tests and status); {} before the first ``up``."""
    try:
        lines = backend_env(p).read_text().splitlines()
    except OSError:
        return {}
    return {k: shlex.split(v)[0] if v else '' for k, _, v in (line.partition('=') for line in lines
                                                               if line and not line.startswith('#'))}


"""The OS_* environment of terraform-provider-openstack's acceptance tests for one local cloud (lab/engine/peer/run.sh).

    /usr/bin/python3 lab/engine/peer/cloud_env.py <state dir>          prints `export NAME=value` lines
    OS_PASSWORD=<demo's> /usr/bin/python3 lab/engine/peer/cloud_env.py <state dir> --count
                                                     prints what project `demo` holds (leak check)

Reads <state dir>/clouds.yaml (entry `localcloud-admin`) and seed.json. Almost every selected test calls
testAccPreCheckNonAdminOnly, which skips unless OS_USERNAME is `demo` (devstack's non-admin user, which upstream's CI
runs as), so this ensures, as admin: project `demo`, user `demo` (a new random password on every call, no secret
stored), roles `member` and `load-balancer_member` on `demo` (what the cloud's own user `ha-endpoint` has). The
variables the prechecks read (provider_test.go) are set from the seed: OS_POOL_NAME (the external network `public`),
OS_EXTGW_ID (its id), OS_NETWORK_ID (the same id: no selected test reads it, the precheck only wants it set),
OS_IMAGE_ID (`cirros`), OS_FLAVOR_ID (`m1.tiny`), OS_LB_ENVIRONMENT=1, OS_DNS_ENVIRONMENT=1, OS_LB_FLAVOR_NAME (the
LB precheck wants it set; only the flavor data-source tests, not selected, read it). Standard library + PyYAML (the
system python the local cloud itself runs on).
"""
import json
import os
import secrets
import shlex
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

PROJECT = USER = 'demo'
ROLES = ('member', 'load-balancer_member')


class Keystone:
    def __init__(self, auth: dict):
        self.url = auth['auth_url'].rstrip('/')
        body = {'auth': {'identity': {'methods': ['password'], 'password': {'user': {
            'name': auth['username'], 'password': auth['password'],
            'domain': {'name': auth.get('user_domain_name', 'Default')}}}},
            'scope': {'project': {'name': auth['project_name'],
                                  'domain': {'name': auth.get('project_domain_name', 'Default')}}}}}
        headers, self.catalog = self.call('POST', '/auth/tokens', body)
        self.token = headers['X-Subject-Token']

    def call(self, method, path, body=None, base=None):
        req = urllib.request.Request((base or self.url) + path, method=method,
                                     data=None if body is None else json.dumps(body).encode())
        req.add_header('Accept', 'application/json')
        req.add_header('Content-Type', 'application/json')
        if getattr(self, 'token', None):
            req.add_header('X-Auth-Token', self.token)
        with urllib.request.urlopen(req, timeout=60) as resp:
            raw = resp.read()
            return dict(resp.headers), (json.loads(raw) if raw.strip() else None)

    def get(self, path, base=None):
        return self.call('GET', path, base=base)[1]

    def endpoint(self, service_type):
        for svc in self.catalog['token']['catalog']:
            if svc['type'] == service_type:
                return next(e['url'] for e in svc['endpoints'] if e['interface'] == 'public').rstrip('/')
        raise KeyError(service_type)

    def ensure(self, collection, name, body):
        found = self.get(f'/{collection}?name={name}')[collection]
        if found:
            return found[0]
        return self.call('POST', f'/{collection}', {collection[:-1]: body})[1][collection[:-1]]


def main(state: Path, count: bool) -> None:
    cloud = yaml.safe_load((state / 'clouds.yaml').read_text())['clouds']['localcloud-admin']
    seed = json.loads((state / 'seed.json').read_text())
    if count:
        demo = Keystone({**cloud['auth'], 'username': USER, 'password': os.environ['OS_PASSWORD'],
                         'project_name': PROJECT})
        project = demo.catalog['token']['project']
        net, lb, dns = demo.endpoint('network'), demo.endpoint('load-balancer'), demo.endpoint('dns')
        held = {
            'load balancers': len(demo.get('/v2/lbaas/loadbalancers', lb)['loadbalancers']),
            'DNS zones': len(demo.get('/v2/zones', dns)['zones']),
            'floating IPs': len(demo.get('/v2.0/floatingips', net)['floatingips']),
            'routers': len(demo.get('/v2.0/routers', net)['routers']),
            'networks': len([n for n in demo.get('/v2.0/networks', net)['networks']
                             if n['project_id'] == project['id']]),
            'ports': len(demo.get(f'/v2.0/ports?project_id={project["id"]}', net)['ports']),
            'security groups (not default)': len([g for g in demo.get('/v2.0/security-groups', net)
                                                  ['security_groups'] if g['name'] != 'default']),
        }
        print(', '.join(f'{k}: {v}' for k, v in held.items()))
        return
    admin = Keystone(cloud['auth'])
    project = admin.ensure('projects', PROJECT, {'name': PROJECT, 'domain_id': 'default',
                                                 'description': 'lab/engine/peer: the acceptance tests\' user'})
    password = secrets.token_urlsafe(18)
    user = admin.ensure('users', USER, {'name': USER, 'domain_id': 'default', 'password': password})
    admin.call('PATCH', f'/users/{user["id"]}', {'user': {'password': password, 'enabled': True}})
    for role in ROLES:
        role_id = admin.get(f'/roles?name={role}')['roles'][0]['id']
        admin.call('PUT', f'/projects/{project["id"]}/users/{user["id"]}/roles/{role_id}')
    # A password change revokes the user's tokens issued up to that second (Fernet: one-second resolution), so a
    # token taken at once may be refused (401): wait until a new one is accepted.
    for attempt in range(20):
        try:
            Keystone({**cloud['auth'], 'username': USER, 'password': password,
                      'project_name': PROJECT}).get('/auth/projects')
            break
        except urllib.error.HTTPError as exc:
            if exc.code != 401 or attempt == 19:
                raise
            time.sleep(0.5)
    env = {
        'OS_AUTH_URL': cloud['auth']['auth_url'],
        'OS_USERNAME': USER, 'OS_PASSWORD': password,
        'OS_PROJECT_NAME': PROJECT, 'OS_USER_DOMAIN_NAME': 'Default', 'OS_PROJECT_DOMAIN_NAME': 'Default',
        'OS_REGION_NAME': cloud.get('region_name', 'RegionOne'),
        'OS_POOL_NAME': 'public', 'OS_EXTGW_ID': seed['public_network_id'],
        'OS_NETWORK_ID': seed['public_network_id'],
        'OS_IMAGE_ID': seed['image_id'], 'OS_FLAVOR_ID': '1',
        'OS_LB_ENVIRONMENT': '1', 'OS_LB_FLAVOR_NAME': 'unused-by-the-selected-tests',
        'OS_DNS_ENVIRONMENT': '1',
    }
    for name, value in env.items():
        print(f'export {name}={shlex.quote(value)}')


if __name__ == '__main__':
    main(Path(sys.argv[1]), '--count' in sys.argv[2:])

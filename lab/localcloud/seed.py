"""Seed the local cloud (idempotent): identity and catalog, networks, AZs, DNS zone, compute (flavors, image, host
aggregates per AZ), with the data plane the dev stack's control-plane nodes (dataplane/nodes.py), clouds.yaml."""
import hashlib
import json

# The public network: 172.24.4.0/24 for the default instance, 172.24.<4 + offset/1000>.0/24 for one with shifted
# ports, so two instances' public networks (routed from the machine with the data plane) never overlap.
from .dataplane import config as dataplane, nodes
from .dataplane.config import PUBLIC_CIDR, PUBLIC_GATEWAY, PUBLIC_POOL
from .dns import server as dns_server
from .rest import Client, HttpError
from .settings import (ADMIN_CLOUD, ADMIN_USER, AZS, CLOUD, COMPUTE_HOSTS, DNS_ZONE, PROJECT, REGION,
                       SERVICE_PROJECT, SERVICE_USER, USER, Paths, url)

ROUTER = 'cp-router'
# (service name, type, port name, path of the endpoint URL)
CATALOG = (('neutron', 'network', 'neutron', ''), ('octavia', 'load-balancer', 'octavia', ''),
           ('designate', 'dns', 'designate', ''), ('nova', 'compute', 'nova', '/v2.1'),
           ('placement', 'placement', 'placement', ''), ('glance', 'image', 'glance', ''),
           ('swift', 'object-store', 'swift-proxy', '/v1/AUTH_%(project_id)s'))
# Public flavors: (name, id, vCPUs, RAM MiB, disk GiB). The fake virt driver runs nothing; these only size claims.
FLAVORS = (('m1.tiny', '1', 1, 512, 1), ('m1.small', '2', 1, 2048, 20))
# A public raw image of a few KiB: Nova checks that it exists, the fake driver never boots it.
IMAGE = 'cirros'
IMAGE_BYTES = b'localcloud placeholder image: the fake virt driver boots nothing\n'.ljust(4096, b'\0')


def catalog_key() -> str:
    """Changes whenever CATALOG does (so that existing state directories register new services)."""
    return hashlib.sha1(repr(CATALOG).encode()).hexdigest()[:8]


def _find(c: Client, service: str, path: str, key: str, **query):
    qs = '&'.join(f'{k}={v}' for k, v in query.items())
    items = c.get(service, f'{path}?{qs}')[key]
    return items[0] if items else None


def identity(s: dict) -> None:
    """Service project/user, catalog, the project user with Octavia member roles."""
    admin = Client(ADMIN_USER, s['admin'], 'admin').login()

    def ensure(path, key, name, body, **q):
        found = _find(admin, 'keystone', path, key, name=name, **q)
        return found or admin.post('keystone', path, {key[:-1]: body})[key[:-1]]

    roles = {r: ensure('/v3/roles', 'roles', r, {'name': r})['id']
             for r in ('admin', 'member', 'reader', 'load-balancer_member')}
    svc_project = ensure('/v3/projects', 'projects', SERVICE_PROJECT,
                         {'name': SERVICE_PROJECT, 'domain_id': 'default'})
    project = ensure('/v3/projects', 'projects', PROJECT,
                     {'name': PROJECT, 'domain_id': 'default', 'description': 'ha-endpoint dev project'})
    svc_user = ensure('/v3/users', 'users', SERVICE_USER,
                      {'name': SERVICE_USER, 'domain_id': 'default', 'password': s['service']})
    user = ensure('/v3/users', 'users', USER, {'name': USER, 'domain_id': 'default', 'password': s['user']})
    admin.put('keystone', f'/v3/projects/{svc_project["id"]}/users/{svc_user["id"]}/roles/{roles["admin"]}')
    for role in ('member', 'load-balancer_member'):
        admin.put('keystone', f'/v3/projects/{project["id"]}/users/{user["id"]}/roles/{roles[role]}')
    for name, stype, port_name, path in CATALOG:
        svc = _find(admin, 'keystone', '/v3/services', 'services', type=stype)
        if not svc:
            svc = admin.post('keystone', '/v3/services', {'service': {'name': name, 'type': stype}})['service']
        have = {e['interface'] for e in admin.get('keystone', f'/v3/endpoints?service_id={svc["id"]}')['endpoints']}
        for iface in ('public', 'internal', 'admin'):
            if iface not in have:
                admin.post('keystone', '/v3/endpoints', {'endpoint': {
                    'service_id': svc['id'], 'interface': iface, 'region_id': REGION,
                    'url': url(port_name, path)}})


CP_FIXED = range(240, 255)
"""Host numbers of each cp-az<n> subnet that Neutron never hands out by itself (outside its allocation pool, .2-.239):
addresses a test names (a keepalived zone's ``vipAddress``) while other tests' ports and load balancers come and go
on the same shared subnet. Neutron's IPAM picks a free address at random from the pool, so a fixed address inside it
was taken now and then by another test's Octavia VIP (a CI rehearsal, 2026-12-03)."""


def cp_pool(n: int) -> list[dict]:
    return [{'start': f'10.10.{n}.2', 'end': f'10.10.{n}.{CP_FIXED.start - 1}'}]


def cloud(p: Paths, s: dict) -> dict:
    admin = Client(ADMIN_USER, s['admin'], 'admin').login()
    user = Client(USER, s['user'], PROJECT).login()
    out = {}

    public = _find(admin, 'neutron', '/v2.0/networks', 'networks', name='public')
    if not public:
        public = admin.post('neutron', '/v2.0/networks', {'network': {
            'name': 'public', 'router:external': True, 'provider:network_type': 'flat',
            'provider:physical_network': 'public', 'shared': False}})['network']
    out['public_network_id'] = public['id']
    if not _find(admin, 'neutron', '/v2.0/subnets', 'subnets', network_id=public['id']):
        admin.post('neutron', '/v2.0/subnets', {'subnet': {
            'name': 'public-subnet', 'network_id': public['id'], 'ip_version': 4, 'cidr': PUBLIC_CIDR,
            'gateway_ip': PUBLIC_GATEWAY, 'enable_dhcp': False,
            'allocation_pools': [{'start': PUBLIC_POOL[0], 'end': PUBLIC_POOL[1]}]}})

    subnets = {}
    for n, az in enumerate(AZS, start=1):
        net = _find(user, 'neutron', '/v2.0/networks', 'networks', name=f'cp-{az}-net')
        if not net:
            net = user.post('neutron', '/v2.0/networks', {'network': {
                'name': f'cp-{az}-net', 'availability_zone_hints': [az]}})['network']
        sub = _find(user, 'neutron', '/v2.0/subnets', 'subnets', name=f'cp-{az}')
        pool = cp_pool(n)
        if not sub:
            sub = user.post('neutron', '/v2.0/subnets', {'subnet': {
                'name': f'cp-{az}', 'network_id': net['id'], 'ip_version': 4,
                'cidr': f'10.10.{n}.0/24', 'gateway_ip': f'10.10.{n}.1', 'allocation_pools': pool}})['subnet']
        elif sub.get('allocation_pools') != pool:   # a cloud seeded before the pool was narrowed
            user.put('neutron', f'/v2.0/subnets/{sub["id"]}', {'subnet': {'allocation_pools': pool}})
        subnets[az] = sub['id']
        out[f'{az}_network_id'], out[f'{az}_subnet_id'] = net['id'], sub['id']

    router = _find(user, 'neutron', '/v2.0/routers', 'routers', name=ROUTER)
    if not router:
        router = user.post('neutron', '/v2.0/routers', {'router': {
            'name': ROUTER, 'availability_zone_hints': list(AZS),
            'external_gateway_info': {'network_id': public['id']}}})['router']
    out['router_id'] = router['id']
    ports = user.get('neutron', f'/v2.0/ports?device_id={router["id"]}')['ports']
    attached = {ip['subnet_id'] for port in ports for ip in port.get('fixed_ips', [])}
    for az, sub_id in subnets.items():
        if sub_id not in attached:
            user.put('neutron', f'/v2.0/routers/{router["id"]}/add_router_interface', {'subnet_id': sub_id})

    for az in AZS:
        prof = _find(admin, 'octavia', '/v2/lbaas/availabilityzoneprofiles', 'availability_zone_profiles',
                     name=f'{az}-profile')
        if not prof:
            prof = admin.post('octavia', '/v2/lbaas/availabilityzoneprofiles', {'availability_zone_profile': {
                'name': f'{az}-profile', 'provider_name': 'amphora',
                'availability_zone_data': json.dumps({'compute_zone': az})}})['availability_zone_profile']
        try:
            admin.get('octavia', f'/v2/lbaas/availabilityzones/{az}')
        except HttpError as exc:
            if exc.status != 404:
                raise
            admin.post('octavia', '/v2/lbaas/availabilityzones', {'availability_zone': {
                'name': az, 'availability_zone_profile_id': prof['id'],
                'description': f'localcloud zone {az}', 'enabled': True}})

    out.update(compute(admin))
    if dataplane.enabled(p):   # the dev stack's members: a serving server per AZ at the addresses it names
        out['nodes'] = nodes.ensure(user, subnets, {az: out[f'{az}_network_id'] for az in AZS},
                                    out['image_id'], out['flavor'])

    zones = user.get('designate', f'/v2/zones?name={DNS_ZONE}')['zones']
    zone = zones[0] if zones else user.post('designate', '/v2/zones', {
        'name': DNS_ZONE, 'email': 'hostmaster@example.test', 'ttl': 60})
    served_in = dns_server.ensure_served(user, zone['id'])
    if served_in > 2:
        print(f'DNS zone {DNS_ZONE} served by named after {served_in:.1f}s', flush=True)
    out['dns_zone_id'] = zone['id']
    out['dns_zone'] = DNS_ZONE
    out['project_id'] = user.project_id
    write_clouds_yaml(p, s)
    p.seeded.write_text(json.dumps(out, indent=1) + '\n')
    return out


def compute(admin: Client) -> dict:
    """Flavors, the image, and one host aggregate per AZ (availability_zone azN, host cmp-azN); Nova mirrors
    each aggregate into Placement, where the scheduler's AZ filter looks."""
    have = {f['name'] for f in admin.get('nova', '/v2.1/flavors?is_public=None')['flavors']}
    for name, fid, vcpus, ram, disk in FLAVORS:
        if name not in have:
            admin.post('nova', '/v2.1/flavors', {'flavor': {
                'name': name, 'id': fid, 'vcpus': vcpus, 'ram': ram, 'disk': disk, 'os-flavor-access:is_public': True}})

    images = admin.get('glance', f'/v2/images?name={IMAGE}')['images']
    image = next((i for i in images if i['status'] == 'active'), None)
    for stale in (i for i in images if i['status'] != 'active'):  # an upload interrupted earlier
        admin.delete('glance', f'/v2/images/{stale["id"]}')
    if not image:
        image = admin.post('glance', '/v2/images', {
            'name': IMAGE, 'disk_format': 'raw', 'container_format': 'bare', 'visibility': 'public',
            'min_disk': 0, 'min_ram': 0})
        admin.put_bytes('glance', f'/v2/images/{image["id"]}/file', IMAGE_BYTES)

    aggregates = {a['name']: a for a in admin.get('nova', '/v2.1/os-aggregates')['aggregates']}
    for az, host in COMPUTE_HOSTS.items():
        agg = aggregates.get(az) or admin.post('nova', '/v2.1/os-aggregates', {'aggregate': {
            'name': az, 'availability_zone': az}})['aggregate']
        if host not in (agg.get('hosts') or []):
            admin.post('nova', f'/v2.1/os-aggregates/{agg["id"]}/action', {'add_host': {'host': host}})
    return {'image_id': image['id'], 'image': IMAGE, 'flavor': FLAVORS[0][0],
            'compute_hosts': dict(COMPUTE_HOSTS)}


def write_clouds_yaml(p: Paths, s: dict) -> None:
    def entry(name, user, password, project):
        return (f'  {name}:\n'
                f'    auth:\n'
                f'      auth_url: {url("keystone", "/v3")}\n'
                f'      username: {user}\n'
                f'      password: {password}\n'
                f'      project_name: {project}\n'
                f'      user_domain_name: Default\n'
                f'      project_domain_name: Default\n'
                f'    region_name: {REGION}\n'
                f'    interface: public\n'
                f'    identity_api_version: 3\n')
    text = ('# Written by lab/localcloud/up. Use: export OS_CLIENT_CONFIG_FILE=<this file> OS_CLOUD=localcloud\n'
            'clouds:\n' + entry(CLOUD, USER, s['user'], PROJECT)
            + entry(ADMIN_CLOUD, ADMIN_USER, s['admin'], 'admin'))
    tmp = p.clouds_yaml.with_suffix('.tmp')
    tmp.write_text(text)
    tmp.chmod(0o600)
    tmp.rename(p.clouds_yaml)
    env = (f'export OS_CLIENT_CONFIG_FILE={p.clouds_yaml}\nexport OS_CLOUD={CLOUD}\n')
    (p.root / 'env.sh').write_text(env)

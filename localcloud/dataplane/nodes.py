"""The dev stack's control-plane nodes: one Nova server per AZ serving on the data plane (seeded with the data plane).

Pulumi.dev.yaml names its members cp-0/cp-1/cp-2 at 10.10.1.10/10.10.2.10/10.10.3.10 on cp-az1..3; these are the
servers behind those addresses: each a port with that fixed IP in the group `cp-nodes` (what a real cluster's node
group does: the API port open to every client, since Octavia's OVN provider forwards clients unproxied, and so to the
provider's health checks too), and a server on it in its AZ, which the data plane plugs into the AZ's chassis with a
member server answering on the API port (member_server.py). Idempotent: what exists by name is kept.
"""
import time

from ..rest import Client
from ..settings import AZS

GROUP = 'cp-nodes'
API_PORT = 6443
NODES = tuple((f'cp-{n}', az, f'10.10.{n + 1}.10') for n, az in enumerate(AZS))   # (name, az, address)


def ensure(user: Client, subnets: dict[str, str], networks: dict[str, str], image: str, flavor: str,
           timeout: float = 120) -> dict[str, str]:
    """The nodes (created where missing), ACTIVE; returns name -> server id."""
    group = _group(user)
    flavor_id = next(f['id'] for f in user.get('nova', '/v2.1/flavors')['flavors'] if f['name'] == flavor)
    have = {s['name']: s for s in user.get('nova', '/v2.1/servers')['servers']}
    ids = {}
    for name, az, address in NODES:
        if name in have:
            ids[name] = have[name]['id']
            continue
        port = _port(user, name, networks[az], subnets[az], address, group)
        ids[name] = user.post('nova', '/v2.1/servers', {'server': {
            'name': name, 'imageRef': image, 'flavorRef': flavor_id, 'availability_zone': az,
            'networks': [{'port': port}]}})['server']['id']
    _wait_active(user, ids, timeout)
    return ids


def _group(user: Client) -> str:
    found = user.get('neutron', f'/v2.0/security-groups?name={GROUP}')['security_groups']
    if found:
        return found[0]['id']
    group = user.post('neutron', '/v2.0/security-groups', {'security_group': {
        'name': GROUP, 'description': 'localcloud control-plane nodes: the API port open to every client'}})
    group_id = group['security_group']['id']
    user.post('neutron', '/v2.0/security-group-rules', {'security_group_rule': {
        'security_group_id': group_id, 'direction': 'ingress', 'ethertype': 'IPv4', 'protocol': 'tcp',
        'port_range_min': API_PORT, 'port_range_max': API_PORT, 'remote_ip_prefix': '0.0.0.0/0'}})
    return group_id


def _port(user: Client, name: str, network: str, subnet: str, address: str, group: str) -> str:
    found = user.get('neutron', f'/v2.0/ports?name={name}')['ports']
    if found:
        return found[0]['id']
    return user.post('neutron', '/v2.0/ports', {'port': {
        'name': name, 'network_id': network, 'security_groups': [group],
        'fixed_ips': [{'subnet_id': subnet, 'ip_address': address}]}})['port']['id']


def _wait_active(user: Client, ids: dict[str, str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    pending = dict(ids)
    while pending:
        for name, server_id in list(pending.items()):
            status = user.get('nova', f'/v2.1/servers/{server_id}')['server']['status']
            if status == 'ACTIVE':
                del pending[name]
            elif status == 'ERROR':
                raise RuntimeError(f'control-plane node {name} ({server_id}) is ERROR: see logs/nova-compute-*.log')
        if pending and time.monotonic() > deadline:
            raise RuntimeError(f'control-plane nodes {", ".join(sorted(pending))} not ACTIVE after {timeout:.0f}s')
        if pending:
            time.sleep(0.5)

"""Servers that serve on the data plane: one Nova server per AZ at a fixed address (seeded with the data plane, or
asked for by localcloud.k8s).

Two node sets, each a security group of its own and one port + server per AZ on cp-az1..3:
- ``CONTROL_PLANE``: the dev stack's members cp-0/cp-1/cp-2 at 10.10.1.10/10.10.2.10/10.10.3.10 (Pulumi.dev.yaml), in
  the group `cp-nodes` (what a real cluster's node group does: the API port open to every client, since Octavia's OVN
  provider forwards clients unproxied, and so to the provider's health checks too). The data plane plugs each into
  its AZ's chassis with a member server answering on the API port (member_server.py). Seeded by lab/localcloud/up.
- ``KUBERNETES``: k8s-0/k8s-1/k8s-2 in az1/az2/az3 at 10.10.10.11/.12/.13 on one network across the AZs (`k8s-net`,
  subnet `k8s-subnet` 10.10.10.0/24, on the cloud's router), in the group `k8s-nodes` (the API port open to every
  client, etcd's client and peer ports to the group's own members): the nodes localcloud.k8s runs a real etcd member
  and kube-apiserver on (``python -m localcloud.k8s up --on-cloud``), the `k8s` stack's members. One network, so that
  etcd's and the API servers' traffic between the AZs stays on one logical switch (Geneve between the chassis) and
  never crosses the router: there, every packet goes through the load balancers' NAT conntrack, and Debian 12's
  userspace datapath (ovs 3.1.0) aborts on an assertion under that much routed traffic (`conn->conn_type ==
  CT_CONN_TYPE_DEFAULT`: ovs-vswitchd crashed every minute or two with the nodes on cp-az1..3).
Idempotent: what exists by name is kept (a server on another address is reported, never deleted); a rule missing
from an existing group is added.
"""
import time
from dataclasses import dataclass

from ..rest import Client
from ..settings import AZS

API_PORT = 6443
ETCD_PORTS = (2379, 2380)


@dataclass(frozen=True)
class NodeSet:
    """Servers of one role: their security group, its ingress rules, and (name, az, address) per node."""

    group: str
    description: str
    nodes: tuple[tuple[str, str, str], ...]
    rules: tuple[dict, ...]
    """Neutron rule bodies without the group id; ``remote_group_id: 'self'`` admits the group's own members."""
    network: tuple[str, str, str] = ()
    """(network, subnet, CIDR) of one network the nodes share, made where missing and put on the cloud's router;
    empty: each node on its AZ's subnet (cp-azN)."""


def _tcp(low: int, high: int, remote: dict) -> dict:
    return {'direction': 'ingress', 'ethertype': 'IPv4', 'protocol': 'tcp', 'port_range_min': low,
            'port_range_max': high, **remote}


CONTROL_PLANE = NodeSet(
    'cp-nodes', 'localcloud control-plane nodes: the API port open to every client',
    tuple((f'cp-{n}', az, f'10.10.{n + 1}.10') for n, az in enumerate(AZS)),
    (_tcp(API_PORT, API_PORT, {'remote_ip_prefix': '0.0.0.0/0'}),))
KUBERNETES = NodeSet(
    'k8s-nodes', 'localcloud Kubernetes nodes: the API port open to every client, etcd to the group',
    tuple((f'k8s-{n}', az, f'10.10.10.{11 + n}') for n, az in enumerate(AZS)),
    (_tcp(API_PORT, API_PORT, {'remote_ip_prefix': '0.0.0.0/0'}),
     _tcp(ETCD_PORTS[0], ETCD_PORTS[1], {'remote_group_id': 'self'})),
    network=('k8s-net', 'k8s-subnet', '10.10.10.0/24'))
KEEPALIVED_PEERS = NodeSet(
    'cp-nodes', 'localcloud control-plane nodes: the API port open to every client',
    tuple((f'cp-{n + 3}', az, f'10.10.{n + 1}.11') for n, az in enumerate(AZS)),
    (_tcp(API_PORT, API_PORT, {'remote_ip_prefix': '0.0.0.0/0'}),))
"""A second node per zone (cp-3/cp-4/cp-5 at 10.10.N.11), for the keepalived backend's failover within a zone; made
on demand (``python -m localcloud.dataplane.keepalived_nodes peers``), never by the seed."""
NODES = CONTROL_PLANE.nodes   # (name, az, address) of the dev stack's members
GROUP = CONTROL_PLANE.group


def ensure(user: Client, subnets: dict[str, str], networks: dict[str, str], image: str, flavor: str,
           timeout: float = 120, nodeset: NodeSet = CONTROL_PLANE) -> dict[str, str]:
    """The node set's servers (created where missing), ACTIVE; returns name -> server id."""
    group = _group(user, nodeset)
    if nodeset.network:
        network, subnet = _network(user, *nodeset.network)
        networks, subnets = {az: network for az in AZS}, {az: subnet for az in AZS}
    flavor_id = next(f['id'] for f in user.get('nova', '/v2.1/flavors')['flavors'] if f['name'] == flavor)
    have = {s['name']: s for s in user.get('nova', '/v2.1/servers/detail')['servers']}
    ids = {}
    for name, az, address in nodeset.nodes:
        if name in have:
            found = [a['addr'] for addrs in (have[name].get('addresses') or {}).values() for a in addrs]
            if found and address not in found:
                raise RuntimeError(f'server {name} has {", ".join(found)}, not {address}: it was made by an earlier '
                                   f'version of this cloud; delete it (and its port {name}), then run this again')
            ids[name] = have[name]['id']
            continue
        port = _port(user, name, networks[az], subnets[az], address, group)
        ids[name] = user.post('nova', '/v2.1/servers', {'server': {
            'name': name, 'imageRef': image, 'flavorRef': flavor_id, 'availability_zone': az,
            'networks': [{'port': port}]}})['server']['id']
    _wait_active(user, ids, timeout)
    return ids


def _group(user: Client, nodeset: NodeSet) -> str:
    found = user.get('neutron', f'/v2.0/security-groups?name={nodeset.group}')['security_groups']
    if found:
        group_id = found[0]['id']
    else:
        group_id = user.post('neutron', '/v2.0/security-groups', {'security_group': {
            'name': nodeset.group, 'description': nodeset.description}})['security_group']['id']
    have = user.get('neutron', f'/v2.0/security-group-rules?security_group_id={group_id}')['security_group_rules']
    for rule in nodeset.rules:
        body = {**rule, 'security_group_id': group_id}
        if body.get('remote_group_id') == 'self':
            body['remote_group_id'] = group_id
        if not any(all(existing.get(key) == value for key, value in body.items()) for existing in have):
            user.post('neutron', '/v2.0/security-group-rules', {'security_group_rule': body})
    return group_id


def _network(user: Client, network: str, subnet: str, cidr: str) -> tuple[str, str]:
    """The shared network and its subnet (made where missing), on the cloud's router: (network id, subnet id)."""
    from ..seed import ROUTER

    found = user.get('neutron', f'/v2.0/networks?name={network}')['networks']
    network_id = found[0]['id'] if found else user.post('neutron', '/v2.0/networks', {'network': {
        'name': network}})['network']['id']
    found = user.get('neutron', f'/v2.0/subnets?name={subnet}')['subnets']
    gateway = cidr.rsplit('.', 1)[0] + '.1'
    subnet_id = found[0]['id'] if found else user.post('neutron', '/v2.0/subnets', {'subnet': {
        'name': subnet, 'network_id': network_id, 'ip_version': 4, 'cidr': cidr,
        'gateway_ip': gateway}})['subnet']['id']
    router = user.get('neutron', f'/v2.0/routers?name={ROUTER}')['routers'][0]
    ports = user.get('neutron', f'/v2.0/ports?device_id={router["id"]}')['ports']
    if subnet_id not in {ip['subnet_id'] for port in ports for ip in port.get('fixed_ips', [])}:
        user.put('neutron', f'/v2.0/routers/{router["id"]}/add_router_interface', {'subnet_id': subnet_id})
    return network_id, subnet_id


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
                raise RuntimeError(f'node {name} ({server_id}) is ERROR: see logs/nova-compute-*.log')
        if pending and time.monotonic() > deadline:
            raise RuntimeError(f'nodes {", ".join(sorted(pending))} not ACTIVE after {timeout:.0f}s')
        if pending:
            time.sleep(0.5)

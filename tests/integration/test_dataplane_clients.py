"""Client namespaces (lab/localcloud/dataplane/client_ns.py) on the running local cloud: real clients resolve a name of
example.test. through the namespace's resolv.conf and DNS forwarder at named, and reach the floating IPs behind it;
kubectl and client-go (the failover loop's Kubernetes rows) get ``/readyz`` through them; nothing is left behind.

One set-up for the module, everything under the test's own name prefix and deleted afterwards: a security group
admitting 6443, a Nova server in az1 and one in az2 (each a data-plane member serving TLS on 6443 with a self-signed
certificate and ``/readyz`` -> ok: the stand-in for an API server), a floating IP on each, and the name
``<prefix>-api.example.test.`` with both addresses. No load balancer: the floating IPs lead to the servers directly.
A client namespace routes its /24 of the public network only, so nothing it sends can leave the machine.
"""
import json
import os
import ssl
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from localcloud.dataplane import client_ns, config, reach
from localcloud.settings import DNS_ZONE, PORTS, Paths
from localcloud.testing import Cleanup, eventually
from tests.e2e.failover import K8S_CLIENTS, Loop, dns_server, resolve
from tests.e2e.k8s_clients import K8sClients, build_client_go, insecure_kubeconfig

AZS = ('az1', 'az2')
PORT = 6443


def readyz(address: str) -> str:
    reach.check(address)
    insecure = ssl.create_default_context()
    insecure.check_hostname, insecure.verify_mode = False, ssl.CERT_NONE
    with urllib.request.urlopen(f'https://{address}:{PORT}/readyz', timeout=2, context=insecure) as answer:
        return answer.read().decode().strip()


@pytest.fixture(scope='module')
def endpoint(localcloud):
    """The name, its addresses and its URL (see the module's docstring)."""
    if not config.enabled(localcloud.paths):
        pytest.fail('the cloud under test has no data plane (started with LOCALCLOUD_DATAPLANE=none): use the default')
    conn, cleanup = localcloud.conn, Cleanup(localcloud)
    t0 = time.monotonic()
    try:
        sg = conn.network.create_security_group(name=cleanup.name('api'))
        conn.network.create_security_group_rule(security_group_id=sg.id, direction='ingress', protocol='tcp',
                                                port_range_min=PORT, port_range_max=PORT,
                                                remote_ip_prefix='0.0.0.0/0')
        image = conn.image.find_image('cirros').id
        servers = [conn.compute.create_server(name=cleanup.name(f'{az}-api'), image_id=image, flavor_id='1',
                                              availability_zone=az, security_groups=[{'name': sg.name}],
                                              networks=[{'uuid': localcloud.seed[f'{az}_network_id']}])
                   for az in AZS]
        fips = []
        for server in servers:
            server = conn.compute.wait_for_server(server, interval=1, wait=180)
            port = next(conn.network.ports(device_id=server.id))
            fip = conn.network.create_ip(floating_network_id=localcloud.seed['public_network_id'], port_id=port.id,
                                         description=cleanup.name('fip'))
            cleanup.add('floating_ip', fip.id)
            fips.append(fip.floating_ip_address)
        fqdn = f'{cleanup.prefix}-api.{DNS_ZONE}'
        zone = localcloud.seed['dns_zone_id']
        recordset = conn.dns.create_recordset(zone, name=fqdn, type='A', records=fips, ttl=60)
        cleanup.add('recordset', recordset.id, zone=zone)
        name = fqdn.rstrip('.')
        eventually(f'{name} served by named', lambda: sorted(resolve(name, dns_server())) == sorted(fips), 60, 0.5)
        for address in fips:
            eventually(f'{address}:{PORT} answers /readyz', lambda address=address: readyz(address) == 'ok', 60, 0.5)
        print(f'\nset-up: 2 servers, 2 floating IPs, {name} -> {fips} answering in {time.monotonic() - t0:.1f}s')
        yield {'name': name, 'addresses': fips, 'url': f'https://{name}:{PORT}'}
    finally:
        left = cleanup.run()
        assert not left, left


@pytest.fixture(scope='module')
def client():
    with client_ns.client_namespace() as cns:
        yield cns


@pytest.fixture(scope='module')
def k8s(endpoint, client, tmp_path_factory):
    from localcloud.k8s.cluster import binaries
    cache = Path(os.environ.get('HA_ENDPOINT_CACHE', Path.home() / '.cache' / 'ha-endpoint'))
    kubeconfig = insecure_kubeconfig(endpoint['url'], tmp_path_factory.mktemp('kube') / 'kubeconfig')
    return K8sClients(kubeconfig, client.name, binaries().kubectl, build_client_go(cache))


def inside(cns, *argv, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run([*cns.exec_prefix, *argv], capture_output=True, text=True, timeout=timeout)


def test_a_name_resolves_inside_at_named_through_resolv_conf(endpoint, client):
    """dig with no server given asks resolv.conf's 127.0.0.1:53, the forwarder, over UDP and TCP: named's answer."""
    assert inside(client, 'cat', '/etc/resolv.conf').stdout.split()[-2:] == ['nameserver', '127.0.0.1']
    for transport in ('+notcp', '+tcp'):
        answer = inside(client, 'dig', '+short', '+tries=1', '+time=3', transport, endpoint['name'])
        assert sorted(answer.stdout.split()) == sorted(endpoint['addresses']), (transport, answer)
    soa = inside(client, 'dig', '+short', 'example.test', 'SOA').stdout
    assert soa.split()[:1] == [line.split()[0] for line in subprocess.run(
        ['dig', '@127.0.0.1', '-p', str(PORTS['named']), '+short', 'example.test', 'SOA'],
        capture_output=True, text=True).stdout.splitlines()][:1]


def test_the_endpoint_answers_by_name_and_by_address_from_inside(endpoint, client):
    """curl (glibc's resolver, resolv.conf) by name, and each floating IP by address."""
    by_name = inside(client, 'curl', '-sk', '--max-time', '10', f'{endpoint["url"]}/readyz')
    assert by_name.stdout.strip() == 'ok', by_name
    for address in endpoint['addresses']:
        by_address = inside(client, 'curl', '-sk', '--max-time', '10', f'https://{address}:{PORT}/readyz')
        assert by_address.stdout.strip() == 'ok', (address, by_address)


def test_the_root_namespaces_services_are_out_of_reach(client):
    """Only the forwarder and the public network: Keystone on the root namespace's 127.0.0.1 is not there."""
    keystone = inside(client, 'curl', '-s', '--max-time', '3', f'http://127.0.0.1:{PORTS["keystone"]}/')
    assert keystone.returncode != 0 and not keystone.stdout


def test_kubectl_resolves_with_go_through_the_forwarder(endpoint, client, k8s):
    """kubectl gets /readyz by the endpoint's name, resolved by Go's own resolver (not cgo's: GODEBUG=netdns=2 says
    which) from resolv.conf, i.e. at the forwarder on port 53."""
    run = inside(client, 'env', 'GODEBUG=netdns=2', *k8s.kubectl_command()[4:], '-v=6')
    assert run.returncode == 0 and run.stdout.strip() == 'ok', run
    assert f'hostLookupOrder({endpoint["name"]}) = files,dns' in run.stderr, run.stderr[-2000:]
    assert f'url="{endpoint["url"]}/readyz" status="200 OK"' in run.stderr, run.stderr[-2000:]


def test_the_kubernetes_rows_loop_through_the_endpoint(endpoint, k8s):
    """The failover loop's kubectl and client-go rows for a while: every request answered ``ok``, at least three per
    client (a CI run under load took 4 s for one kubectl process, so the loop runs 20 s); client-go keeps its
    connection (one clientset) to one of the name's addresses."""
    loop = Loop(endpoint['url'] + '/', dns_server(), Path('unused'), duration=20, interval=0.5, clients=K8S_CLIENTS,
                k8s=k8s).start()
    loop.finish()
    rows = loop.rows(lost_at=20)
    print('\n' + '\n'.join(json.dumps(row) for row in rows))
    for client in K8S_CLIENTS:
        requests = loop.figures[client].requests
        print(f'{client}: ' + ' '.join(f'{r.start:.2f}-{r.end:.2f} {r.answer}' for r in requests[:6]))
        assert len(requests) >= 3 and all(r.ok and r.answer == 'ok' for r in requests), (client, requests[:3])
    peers = client_go_peers(k8s)
    assert len(peers) == 1 and peers[0].rsplit(':', 1)[0] in endpoint['addresses'], peers


def client_go_peers(k8s: K8sClients) -> list[str]:
    """The addresses client-go's requests went out on in a short run (one clientset: one connection)."""
    out = subprocess.run(k8s.client_go_command(dns_server(), 2, 0.2), capture_output=True, text=True, timeout=60)
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    print('client-go: ' + ' '.join(json.dumps(line) for line in lines[:3]))
    assert lines and all(line['ok'] for line in lines), out
    assert all(line['reused'] for line in lines[1:]), lines
    return sorted({line['peer'] for line in lines})


def leftovers(ns: str) -> list[str]:
    """What of client namespace ``ns`` still exists: the namespace, its veth's public end, /etc/netns/<ns>, its
    forwarder's PID file or process."""
    found = [f'netns {ns}'] if ns in subprocess.run(['ip', 'netns', 'list'], capture_output=True,
                                                    text=True).stdout.split() else []
    outside = client_ns.links(client_ns.slot_of(ns))[1]
    if subprocess.run(['ip', '-n', config.NET_NS, 'link', 'show', outside], capture_output=True).returncode == 0:
        found.append(f'link {outside}')
    if client_ns.resolv_dir(ns).exists():
        found.append(str(client_ns.resolv_dir(ns)))
    pidfile = client_ns.pidfile(Paths(), ns)
    if pidfile.exists():
        found.append(str(pidfile))
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            cmdline = Path(f'/proc/{pid}/cmdline').read_bytes().replace(b'\0', b' ').decode(errors='replace')
        except OSError:
            continue
        if client_ns.marker(ns) in cmdline:
            found.append(f'process {pid}: {cmdline}')
    return found


def test_nothing_is_left_behind_also_when_the_block_raises(client):
    """A second namespace at once (the next slot), a failure inside its block: everything of it removed; the
    first one untouched."""
    class Boom(Exception):
        pass
    seen = {}
    with pytest.raises(Boom):
        with client_ns.client_namespace() as second:
            seen.update(name=second.name, slot=second.slot, address=second.address)
            assert second.slot != client.slot
            assert inside(second, 'dig', '+short', 'example.test', 'SOA').stdout.strip()
            assert leftovers(second.name)   # the check sees a live one
            raise Boom()
    assert leftovers(seen['name']) == []
    assert client.name in client_ns.running() and leftovers(client.name)

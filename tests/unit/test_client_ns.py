"""Client namespaces (lab/localcloud/dataplane/client_ns.py) and their DNS forwarder (dns_forwarder.py), the parts that
need no root: names and addresses per cloud instance, the guard on what may be deleted, and the relay itself (on
127.0.0.1 of this namespace, a stub upstream in place of named)."""
import functools
import socket
import sys
import threading
from pathlib import Path

import pytest

from tests.unit.offset_interpreter import at_offset

from localcloud.dataplane import client_ns, config, dns_forwarder

ROOT = Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=None)
def _instance(offset: int) -> dict:
    """Every slot's names and address for a cloud instance with this port offset (a fresh interpreter: the offset
    is read once, at import)."""
    code = ("import json; from localcloud.dataplane import client_ns as c, config\n"
            "slots = [{'ns': c.name(s), 'links': c.links(s), 'address': c.address(s)} for s in range(c.SLOTS)]\n"
            "print(json.dumps({'slots': slots, 'cidr': config.PUBLIC_CIDR, 'pool': config.PUBLIC_POOL,\n"
            "                  'gateway': config.PUBLIC_GATEWAY, 'tag': config.TAG}))")
    return at_offset(offset, code)


OFFSETS = (0, 5000, 10000, 249000)


@pytest.mark.parametrize('offset', OFFSETS)
def test_each_slot_has_an_address_of_the_public_network_outside_the_floating_ip_pool(offset):
    import ipaddress
    found = _instance(offset)
    network = ipaddress.ip_network(found['cidr'])
    low, high = (ipaddress.ip_address(a) for a in found['pool'])
    addresses = [ipaddress.ip_address(s['address']) for s in found['slots']]
    assert [str(a).rsplit('.', 1)[1] for a in addresses] == ['251', '252', '253', '254']
    for address in addresses:
        assert address in network and not low <= address <= high and str(address) != found['gateway']


@pytest.mark.parametrize('offset', OFFSETS)
def test_names_carry_the_instance_tag_and_fit_linux(offset):
    found = _instance(offset)
    for slot, names in enumerate(found['slots']):
        assert names['ns'] == f"{found['tag']}-c{slot}"
        assert all(len(link) <= 15 and link.startswith(found['tag']) for link in names['links'])


def test_no_name_is_shared_between_two_instances():
    names = [n for offset in OFFSETS for s in _instance(offset)['slots'] for n in (s['ns'], *s['links'])]
    assert len(names) == len(set(names))


def test_only_this_instances_client_namespaces_are_stoppable():
    tag = config.TAG
    assert [client_ns.slot_of(f'{tag}-c{slot}') for slot in range(4)] == [0, 1, 2, 3]
    for other in (f'{tag}-net', f'{tag}-az1', f'{tag}-m-12345678', f'{tag}-c4', f'{tag}-c10', f'{tag}1-c0',
                  f'x{tag}-c0', f'{tag}-c0 ', 'c0'):
        assert client_ns.slot_of(other) is None
        with pytest.raises(ValueError, match='not a client namespace of this cloud instance'):
            client_ns.stop(other)


def test_a_slot_out_of_range_is_refused_with_the_range():
    with pytest.raises(ValueError, match='one of 0-3'):
        client_ns.address(4)


def test_the_forwarders_marker_names_its_namespace_only():
    command = ' '.join([sys.executable, '-m', client_ns.FORWARDER, '--ns', 'lc0-c1', '--upstream',
                        '127.0.0.1:5300']) + ' '   # /proc/<pid>/cmdline, NULs as spaces
    assert client_ns.marker('lc0-c1') in command
    assert client_ns.marker('lc0-c2') not in command and client_ns.marker('lc1-c1') not in command


# -- the relay ---------------------------------------------------------------------------------------------------

def _stub_named(answer_prefix: bytes):
    """A stub upstream on 127.0.0.1 answering each query (UDP and TCP, DNS framing) with prefix + the query, its id
    kept: (address, stop)."""
    for _ in range(50):  # one port for both: a free UDP port may be a busy TCP one (the CI machine runs clouds)
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(('127.0.0.1', 0))
        port = udp.getsockname()[1]
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            tcp.bind(('127.0.0.1', port))
            break
        except OSError:
            udp.close()
            tcp.close()
    tcp.listen(8)

    def serve_udp():
        while True:
            try:
                query, client = udp.recvfrom(65535)
            except OSError:
                return
            udp.sendto(query[:2] + answer_prefix + query[2:], client)

    def serve_tcp():
        while True:
            try:
                conn, _ = tcp.accept()
            except OSError:
                return
            with conn:
                while True:
                    head = conn.recv(2)
                    if len(head) < 2:
                        break
                    query = conn.recv(int.from_bytes(head, 'big'))
                    reply = query[:2] + answer_prefix + query[2:]
                    conn.sendall(len(reply).to_bytes(2, 'big') + reply)
    for target in (serve_udp, serve_tcp):
        threading.Thread(target=target, daemon=True).start()

    def stop():
        tcp.shutdown(socket.SHUT_RDWR)
        for sock in (udp, tcp):
            sock.close()
    return ('127.0.0.1', port), stop


def _listeners():
    """The forwarder's UDP and TCP listeners on one free port of 127.0.0.1 (as on 53 in a client namespace)."""
    for _ in range(20):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.bind(('127.0.0.1', 0))
            port = probe.getsockname()[1]
        try:
            return dns_forwarder.listeners(('127.0.0.1', port), None)
        except OSError:   # taken meanwhile: another
            continue
    raise AssertionError('no free port for both UDP and TCP')


@pytest.fixture
def forwarder():
    """The forwarder's relay between a listener of this namespace and a stub named: (listen address, upstream)."""
    upstream, stop_named = _stub_named(b'<named>')
    udp, tcp = _listeners()
    stop = threading.Event()
    for target, sock in ((dns_forwarder.serve_udp, udp), (dns_forwarder.serve_tcp, tcp)):
        threading.Thread(target=target, args=(sock, upstream, stop), daemon=True).start()
    yield udp.getsockname(), upstream
    stop.set()
    stop_named()


def test_a_udp_query_is_relayed_to_named_and_its_answer_back(forwarder):
    listen, _ = forwarder
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
        client.settimeout(5)
        for query_id in (b'\x00\x01', b'\xbe\xef'):
            client.sendto(query_id + b'query', listen)
            assert client.recv(65535) == query_id + b'<named>query'


def test_tcp_queries_are_relayed_on_one_connection(forwarder):
    listen, _ = forwarder
    with socket.create_connection(listen, timeout=5) as client:
        for query in (b'\x00\x07first', b'\x00\x08second'):
            client.sendall(len(query).to_bytes(2, 'big') + query)
            size = int.from_bytes(client.recv(2), 'big')
            assert client.recv(size) == query[:2] + b'<named>' + query[2:]


def test_an_upstream_that_never_answers_gives_no_answer_rather_than_a_wrong_one():
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    silent.bind(('127.0.0.1', 0))
    with silent:
        assert dns_forwarder.ask_udp(b'\x12\x34query', silent.getsockname(), timeout=0.3) is None


def test_a_stray_datagram_with_another_id_is_not_taken_for_the_answer():
    upstream = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    upstream.bind(('127.0.0.1', 0))

    def answer_twice():
        query, client = upstream.recvfrom(100)
        upstream.sendto(b'\x99\x99stray', client)
        upstream.sendto(query[:2] + b'answer', client)
    threading.Thread(target=answer_twice, daemon=True).start()
    with upstream:
        assert dns_forwarder.ask_udp(b'\x12\x34query', upstream.getsockname(), timeout=2) == b'\x12\x34answer'

"""The failover loop's Kubernetes rows (tests/e2e/failover.py, k8s_clients.py) without a cloud: what kubectl and
client-go are started with, and the loop's bounds on them (stand-in programs in place of the real ones)."""
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from localcloud.testing import eventually
from tests.e2e import failover
from tests.e2e.failover import CLIENTS, K8S_CLIENTS, Loop
from tests.e2e.k8s_clients import K8sClients, insecure_kubeconfig

CLIENTS_TOO = K8sClients(Path('/k/kubeconfig'), 'lc0-c1', Path('/bin/kubectl'), Path('/bin/clientgo'))


def test_the_kubernetes_rows_are_opt_in():
    assert not set(K8S_CLIENTS) & set(CLIENTS)
    with pytest.raises(ValueError, match='kubectl need k8s='):
        Loop('https://api.example.test:6443/', ('127.0.0.1', 5300), Path('go'), 1, clients=('kubectl',))


def test_kubectl_runs_in_the_client_namespace_with_its_own_defaults():
    command = CLIENTS_TOO.kubectl_command()
    assert command[:4] == ['ip', 'netns', 'exec', 'lc0-c1']
    assert command[4:] == ['/bin/kubectl', '--kubeconfig', '/k/kubeconfig', 'get', '--raw', '/readyz']
    assert not any(arg.startswith('--request-timeout') for arg in command)


def test_client_go_resolves_at_the_dns_server_given():
    command = CLIENTS_TOO.client_go_command(('127.0.0.1', 5300), 12.5, 0.5)
    assert command == ['/bin/clientgo', '-kubeconfig', '/k/kubeconfig', '-dns', '127.0.0.1:5300',
                       '-duration', '12.5s', '-interval', '0.5s', '-path', '/readyz']


def test_both_clients_get_the_path_given():
    clients = K8sClients(Path('/k/kubeconfig'), 'lc0-c1', Path('/bin/kubectl'), Path('/bin/clientgo'),
                         '/api/v1/namespaces/default')
    assert clients.kubectl_command()[-1] == '/api/v1/namespaces/default'
    assert clients.client_go_command(('127.0.0.1', 5300), 1, 0.5)[-2:] == ['-path', '/api/v1/namespaces/default']


def test_the_kubeconfig_skips_verification_and_carries_no_credential(tmp_path):
    config = json.loads(insecure_kubeconfig('https://api.example.test:6443/', tmp_path / 'k').read_text())
    cluster = config['clusters'][0]['cluster']
    assert cluster == {'server': 'https://api.example.test:6443', 'insecure-skip-tls-verify': True}
    assert config['users'][0]['user'] == {'username': 'anonymous'}   # no secret: only kubectl's prompt stopped
    assert (tmp_path / 'k').stat().st_mode & 0o077 == 0


@dataclass(frozen=True)
class StandIns:
    """K8sClients' interface with stand-in programs."""

    kubectl: list
    client_go: list

    def kubectl_command(self):
        return self.kubectl

    def client_go_command(self, server, duration, interval):
        return self.client_go


PRINT_LINES = ("import json, time\n"
               "for i in range(3):\n"
               "    print(json.dumps({'start': i * 0.1, 'end': i * 0.1 + 0.05, 'ok': i != 1, 'answer': 'ok',\n"
               "                      'error': 'x' if i == 1 else ''}), flush=True)\n"
               "    time.sleep(0.1)\n")


class LoopClock:
    """The loop's clock (tests/e2e/failover.py reads ``time.monotonic``), held at 0 until the test moves it: whether a
    stand-in's request ends inside the loop's time then depends on the test, not on how fast this machine starts a
    process (a loaded machine took 0.37 s per stand-in, and the last request of a 1.5 s loop was cut)."""

    def __init__(self):
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    sleep = staticmethod(time.sleep)


@pytest.fixture()
def clock(monkeypatch):
    held = LoopClock()
    monkeypatch.setattr(failover, "time", held)
    return held


def test_each_kubectl_request_is_a_process_and_client_go_one_process_for_the_loop(clock):
    k8s = StandIns([sys.executable, '-c', 'import os; print(os.getpid())'], [sys.executable, '-c', PRINT_LINES])
    loop = Loop('https://api.example.test:6443/', ('127.0.0.1', 5300), Path('go'), 30, interval=0.05,
                clients=K8S_CLIENTS, k8s=k8s).start()
    kubectl, client_go = loop.figures['kubectl'], loop.figures['client-go']
    eventually('three kubectl requests and client-go\'s three lines',
               lambda: len(kubectl.requests) >= 3 and len(client_go.requests) == 3, 60, interval=0.02)
    clock.now = 30.0   # the loop's time is up: no request starts after the one in flight, which ends in time
    loop.finish()
    assert all(r.ok for r in kubectl.requests) and len({r.answer for r in kubectl.requests}) == len(kubectl.requests)
    assert [r.ok for r in client_go.requests] == [True, False, True]
    assert not kubectl.cut and not client_go.cut


def test_a_kubectl_request_still_waiting_at_the_end_is_cut_not_recorded(clock):
    """The loop's clock held at 0: its one request starts however late this machine runs the loop's thread, and is cut
    when its 0.2 s of real time are up (the loop lasted a real second before, so that it started in time)."""
    k8s = StandIns([sys.executable, '-c', 'import time; time.sleep(30)'], [sys.executable, '-c', 'pass'])
    loop = Loop('https://api.example.test:6443/', ('127.0.0.1', 5300), Path('go'), 0.2,
                clients=('kubectl',), k8s=k8s).start()
    loop.finish()
    assert loop.figures['kubectl'].cut and not loop.figures['kubectl'].requests
    assert loop.rows(0.1)[0]['cut'] is not None


def test_a_failed_kubectl_request_reports_its_last_error_line(clock):
    k8s = StandIns([sys.executable, '-c', 'import sys; sys.stderr.write("I0 noise\\nerror: dial tcp: refused\\n");'
                    'sys.exit(1)'], [])
    loop = Loop('https://api.example.test:6443/', ('127.0.0.1', 5300), Path('go'), 30, interval=0.05,
                clients=('kubectl',), k8s=k8s).start()
    eventually('a kubectl request', lambda: loop.figures['kubectl'].requests, 60, interval=0.02)
    clock.now = 30.0
    loop.finish()
    first = loop.figures['kubectl'].requests[0]
    assert not first.ok and first.error == 'error: dial tcp: refused' and not loop.figures['kubectl'].cut

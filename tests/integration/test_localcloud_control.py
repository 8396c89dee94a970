"""The running local cloud: every service up, every socket of its processes on loopback, up is idempotent."""
import ipaddress
import json
import os
import subprocess
from pathlib import Path

import pytest

from localcloud import procs, services
from localcloud.settings import AZS, PKG, PORTS

pytestmark = pytest.mark.integration


def _listening_sockets() -> dict:
    """inode -> (proto, local address) of every listening TCP / bound UDP socket on the machine."""
    out = {}
    for proto, fname, v6 in (('tcp', 'tcp', False), ('tcp', 'tcp6', True), ('udp', 'udp', False),
                             ('udp', 'udp6', True)):
        try:
            lines = Path(f'/proc/net/{fname}').read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            local, state, inode = f[1], f[3], f[9]
            if proto == 'tcp' and state != '0A':  # LISTEN
                continue
            hexip, hexport = local.split(':')
            raw = bytes.fromhex(hexip)
            if v6:
                raw = b''.join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
                ip = ipaddress.IPv6Address(raw)
                ip = ip.ipv4_mapped or ip
            else:
                ip = ipaddress.IPv4Address(raw[::-1])
            out[inode] = (proto, ip, int(hexport, 16))
    return out


def _socket_inodes(pid: int) -> set:
    inodes = set()
    try:
        for fd in os.listdir(f'/proc/{pid}/fd'):
            try:
                target = os.readlink(f'/proc/{pid}/fd/{fd}')
            except OSError:
                continue
            if target.startswith('socket:['):
                inodes.add(target[8:-1])
    except OSError:
        pass
    return inodes


def test_every_service_runs_and_listens_on_loopback_only(localcloud):
    sockets = _listening_sockets()
    seen = []
    for name, svc in services.table(localcloud.paths).items():
        pid = procs.alive(localcloud.paths.pidfile(name), svc.marker)
        assert pid, f'{name} is not running'
        for p in procs.group_pids(pid):
            for inode in _socket_inodes(p) & sockets.keys():
                proto, ip, port = sockets[inode]
                assert ip.is_loopback, f'{name} (pid {p}) listens on {ip}:{port}/{proto}'
                seen.append((name, port))
        for proto, port in svc.ports:
            assert services.port_open(proto, port), f'{name}: nothing on 127.0.0.1:{port}/{proto}'
    assert {n for n, _ in seen} >= {'keystone', 'neutron-server', 'octavia-api', 'designate-api', 'mariadb'}


def test_up_again_starts_nothing_and_status_reports_all_running(localcloud):
    env = dict(os.environ, HA_ENDPOINT_STATE=str(localcloud.paths.root))
    out = subprocess.run([str(PKG / 'up')], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert 'started this time: nothing (all running)' in out.stdout
    assert out.stdout.rstrip().splitlines()[-3].endswith('ready')
    status = subprocess.run([str(PKG / 'status'), '--json'], env=env, capture_output=True, text=True)
    assert status.returncode == 0
    document = json.loads(status.stdout)
    rows = document['services']
    assert all(r['state'] == 'running' for r in rows), rows
    assert {r['service'] for r in rows} >= {'designate-worker', 'named'}
    assert document['dns'] == {'host': '127.0.0.1', 'port': PORTS['named']}
    if document.get('dataplane') == 'ovn':  # the default: a chassis per AZ, each up
        assert {az: chassis['up'] for az, chassis in document['chassis'].items()} == dict.fromkeys(AZS, True)
    # the whole cloud, with its data plane: 2.6 GiB when ready (lab/bench/dataplane_figures.py), 3.3 GiB after a test
    # run's worth of requests (measured in a CI run); past 4 GiB a small machine would notice
    assert sum(r['pss'] for r in rows) < 4 * 2 ** 30


def test_up_restarts_exactly_the_service_whose_configuration_changed(localcloud):
    """A cloud started by an older checkout keeps running with that checkout's configuration unless `up` restarts what
    changed (issue 52: without every service's service_type, access-rule credentials were refused with 401). Here a
    hand edit of designate-producer's file (a periodic-task daemon no test waits on) stands for the older text: `up`
    writes the file back, stops that service alone and starts it again; the next `up` starts nothing."""
    env = dict(os.environ, HA_ENDPOINT_STATE=str(localcloud.paths.root))
    conf = localcloud.paths.conf('designate-producer.conf')
    written = conf.read_text()
    conf.write_text(written + '# an older checkout\n')
    out = subprocess.run([str(PKG / 'up')], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert 'stopped designate-producer: designate-producer.conf changed since it started' in out.stdout, out.stdout
    assert 'started this time: designate-producer\n' in out.stdout, out.stdout
    assert conf.read_text() == written
    again = subprocess.run([str(PKG / 'up')], env=env, capture_output=True, text=True, timeout=300)
    assert 'started this time: nothing (all running)' in again.stdout, again.stdout


def test_no_password_is_on_a_command_line_or_in_a_log_others_can_read(localcloud):
    """Secrets go by file (mode 0600), environment or stdin: /proc/*/cmdline is readable by every user, and so would
    be a world-readable log that quotes one."""
    secrets = [value for value in json.loads(Path(localcloud.paths.secrets).read_text()).values()
               if isinstance(value, str) and len(value) >= 8]
    on_command_lines = []
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                cmdline = Path(f'/proc/{entry}/cmdline').read_bytes().decode(errors='ignore')
            except OSError:
                continue
            on_command_lines += [entry for secret in secrets if secret in cmdline]
    assert on_command_lines == []
    logs = Path(localcloud.paths.logs)
    assert oct(logs.stat().st_mode & 0o777) == '0o700'
    readable = [log.name for log in logs.glob('*.log') if log.stat().st_mode & 0o077]
    assert readable == []
    quoting = [log.name for log in logs.glob('*.log') for secret in secrets if secret in log.read_text(errors='ignore')]
    assert quoting == []

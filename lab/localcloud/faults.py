"""Fault injection for the local cloud: a Python API for tests and the ``lab/localcloud/fault`` CLI.

Standard library only (importable from the project venv). Member faults are overrides in
``<state>/faults.json`` that the heartbeat daemon reads on its next tick (0.5 s); the health
manager then sets the member's operating_status:

    DOWN  -> ERROR (pool and LB DEGRADED; pool ERROR when every member is DOWN)
    DRAIN -> DRAINING
    MAINT -> OFFLINE

Worker freeze/thaw SIGSTOPs/SIGCONTs the octavia-worker processes: the API still accepts
changes, the objects stay PENDING_* and further writes get 409 until thawed. ``force_status``
writes a provisioning_status straight into the Octavia database (the only way to get ERROR).

Whole services (localcloud.service_faults): keystone-restart stops Keystone by its PID file and
starts it again (nothing can authenticate meanwhile); octavia-api-unavailable makes the Octavia
API answer 503 (or another 5xx) to every request for a number of seconds. The DNS server
(localcloud.dns.faults): dns-stop / dns-start stop named and start it again. Object storage
(localcloud.swift.faults): swift-proxy-stop / swift-proxy-start stop Swift's proxy and start it again.
"""
import argparse
import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from . import procs
from .configs import without_address_pairs
from .dataplane.faults import DataPlaneFaults
from .dns.faults import DnsFaults
from .service_faults import ServiceFaults
from .settings import DB_ADMIN, Paths
from .swift.faults import SwiftFaults

MEMBER_FAULTS = ('DOWN', 'DRAIN', 'MAINT')
TABLES = {'member': 'member', 'pool': 'pool', 'listener': 'listener', 'health_monitor': 'health_monitor',
          'load_balancer': 'load_balancer', 'l7policy': 'l7policy', 'l7rule': 'l7rule'}


class Faults(ServiceFaults, DataPlaneFaults, DnsFaults, SwiftFaults):
    def __init__(self, state: str | os.PathLike | None = None):
        self.paths = Paths(state)

    # -- a cloud without allowed-address-pairs ---------------------------------------------------------
    def address_pairs(self, offered: bool) -> dict:
        """Offer Neutron's allowed-address-pairs extension or not (configs.without_address_pairs), then `up`: it
        writes ml2.ini and restarts neutron-server alone, and waits until Neutron answers."""
        marker = without_address_pairs(self.paths)
        if offered:
            marker.unlink(missing_ok=True)
        else:
            marker.touch()
        up = subprocess.run([str(Path(__file__).resolve().parent / 'up')], capture_output=True, text=True,
                            env={**os.environ, 'HA_ENDPOINT_STATE': str(self.paths.root)})
        if up.returncode != 0:
            raise RuntimeError(f'lab/localcloud/up failed ({up.returncode}): {(up.stdout + up.stderr)[-2000:]}')
        said = [line.split('started this time:', 1)[1].strip() for line in up.stdout.splitlines()
                if 'started this time:' in line]
        return {'allowed-address-pairs': offered, 'started': said[-1] if said else ''}

    # -- the override file -------------------------------------------------------------------------
    @contextlib.contextmanager
    def _edit(self):
        self.paths.root.mkdir(parents=True, exist_ok=True)
        with open(self.paths.root / 'faults.lock', 'w') as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            data = self.read()
            data.setdefault('members', {})
            yield data
            tmp = self.paths.faults.with_name(f'faults.{os.getpid()}.tmp')
            tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + '\n')
            tmp.rename(self.paths.faults)

    def read(self) -> dict:
        try:
            return json.loads(self.paths.faults.read_text() or '{}')
        except FileNotFoundError:
            return {}

    # -- member health ---------------------------------------------------------------------------
    def member(self, member_id: str, status: str) -> None:
        status = status.upper()
        if not _is_uuid(member_id):
            raise ValueError(f'not a member id: {member_id!r}')
        if status not in MEMBER_FAULTS:
            raise ValueError(f'member fault must be one of {MEMBER_FAULTS}, not {status!r}')
        with self._edit() as data:
            data['members'][member_id] = status

    def member_down(self, member_id: str) -> None:
        self.member(member_id, 'DOWN')

    def member_drain(self, member_id: str) -> None:
        self.member(member_id, 'DRAIN')

    def member_maint(self, member_id: str) -> None:
        self.member(member_id, 'MAINT')

    def member_clear(self, member_id: str | None = None) -> None:
        """Clear one member's override, or every member's when member_id is None."""
        with self._edit() as data:
            if member_id is None:
                data['members'] = {}
            else:
                data['members'].pop(member_id, None)

    def heartbeat_pause(self) -> None:
        """Stop sending heartbeats (statuses freeze where they are; no failover is triggered)."""
        with self._edit() as data:
            data['paused'] = True

    def heartbeat_resume(self) -> None:
        with self._edit() as data:
            data['paused'] = False

    def clear_all(self) -> None:
        """Every member override cleared, heartbeats on, worker thawed, the Octavia API serving, Keystone and named
        running if a fault stopped them."""
        with self._edit() as data:
            data.clear()
            data['members'] = {}
        self.worker_thaw()
        self.clear_services()
        self.data_plane_clear()
        self.clear_dns()
        self.clear_swift()

    # -- the Octavia worker ----------------------------------------------------------------------
    def _worker_pids(self) -> list[int]:
        pid = procs.alive(self.paths.pidfile('octavia-worker'), 'octavia-worker')
        if not pid:
            raise RuntimeError('octavia-worker is not running (lab/localcloud/up)')
        return procs.group_pids(pid)

    def worker_freeze(self) -> None:
        for pid in self._worker_pids():
            os.kill(pid, signal.SIGSTOP)

    def worker_thaw(self) -> None:
        try:
            pids = self._worker_pids()
        except RuntimeError:
            return
        for pid in pids:
            os.kill(pid, signal.SIGCONT)

    def worker_frozen(self) -> bool:
        states = [procs._state(p) for p in self._worker_pids()]
        return bool(states) and all(s == 'T' for s in states)

    @contextlib.contextmanager
    def frozen_worker(self):
        self.worker_freeze()
        try:
            yield self
        finally:
            self.worker_thaw()

    # -- database writes -------------------------------------------------------------------------
    def sql(self, statement: str, db: str = 'octavia') -> str:
        argv = ['mariadb', f'--defaults-file={self.paths.conf("my.cnf")}', f'-u{DB_ADMIN}', '-N', '-B', '-e',
                statement, db]
        return subprocess.run(argv, check=True, capture_output=True, text=True).stdout

    def force_status(self, object_id: str, status: str = 'ERROR', kind: str | None = None) -> str:
        """Set provisioning_status of an Octavia object (kind guessed when None). Returns the kind."""
        if not _is_uuid(object_id):
            raise ValueError(f'not an object id: {object_id!r}')
        status = status.upper()
        if status not in ('ERROR', 'ACTIVE', 'PENDING_CREATE', 'PENDING_UPDATE', 'PENDING_DELETE', 'DELETED'):
            raise ValueError(f'unknown provisioning_status {status!r}')
        kinds = [kind] if kind else list(TABLES)
        for k in kinds:
            out = self.sql(f"UPDATE {TABLES[k]} SET provisioning_status='{status}' WHERE id='{object_id}'; "
                           f"SELECT ROW_COUNT();")
            if out.strip() not in ('', '0'):
                return k
        raise LookupError(f'no Octavia {kind or "object"} with id {object_id}')

    def force_error(self, object_id: str, kind: str | None = None) -> str:
        return self.force_status(object_id, 'ERROR', kind)


def _is_uuid(value: str) -> bool:
    import uuid
    try:
        uuid.UUID(value)
        return True
    except ValueError:
        return False


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog='lab/localcloud/fault', description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    sub.add_parser('member-down', help='a Nova server of the data plane (name or id): stop its member server; '
                                       'else an Octavia member id: report it DOWN in heartbeats').add_argument('member_id')
    sub.add_parser('member-up', help='a Nova server of the data plane: start its member server again').add_argument(
        'server')
    for name in ('member-drain', 'member-maint'):
        sub.add_parser(name, help=f'report the member {name[7:].upper()} in heartbeats').add_argument('member_id')
    for name, text in (('az-down', 'stop the AZ\'s chassis (data plane): its members are cut off'),
                       ('az-up', 'start the AZ\'s chassis again')):
        sub.add_parser(name, help=text).add_argument('az')
    sub.add_parser('member-clear', help='remove a member override (all with --all)').add_argument(
        'member_id', nargs='?')
    for name, text in (('worker-freeze', 'SIGSTOP octavia-worker (changes stay PENDING_*, writes get 409)'),
                       ('worker-thaw', 'SIGCONT octavia-worker'),
                       ('heartbeat-pause', 'stop sending amphora heartbeats'),
                       ('heartbeat-resume', 'send amphora heartbeats again'),
                       ('clear', 'clear every fault (member overrides, pause, frozen worker, Octavia API '
                                 'fault, a Keystone a fault stopped)'),
                       ('list', 'print the current overrides'),
                       ('keystone-stop', 'stop Keystone (by its PID file): nothing can authenticate'),
                       ('keystone-start', 'start Keystone again as `up` does and wait until it answers'),
                       ('octavia-api-available', 'end an Octavia API fault now'),
                       ('dns-stop', 'stop named, the DNS server (by its PID file): nothing is answered'),
                       ('dns-start', 'start named again as `up` does and wait until it listens'),
                       ('swift-proxy-stop', 'stop Swift\'s proxy (by its PID file): object storage and its S3 API '
                                            'refuse every request'),
                       ('swift-proxy-start', 'start Swift\'s proxy again as `up` does and wait until it answers'),
                       ('neutron-without-address-pairs', 'Neutron without its allowed-address-pairs extension (a '
                                                         'cloud the keepalived backend refuses): restarts '
                                                         'neutron-server'),
                       ('neutron-with-address-pairs', 'the extension offered again: restarts neutron-server')):
        sub.add_parser(name, help=text)
    kr = sub.add_parser('keystone-restart', help='stop Keystone, keep it down --down seconds, start it, wait')
    kr.add_argument('--down', type=float, default=0.0, metavar='SECONDS')
    oa = sub.add_parser('octavia-api-unavailable', help='the Octavia API answers --status (503) to every request '
                                                         'for SECONDS, then serves again by itself')
    oa.add_argument('seconds', type=float)
    oa.add_argument('--status', type=int, default=503)
    oa.add_argument('--method', help='only requests of this method (e.g. POST)')
    oa.add_argument('--path', help='only requests whose path ends with this (e.g. /v2/lbaas/loadbalancers)')
    oa.add_argument('--body', help='only requests whose body contains this (e.g. a load balancer\'s name)')
    oa.add_argument('--hold', type=float, default=0.0, metavar='SECONDS',
                    help='hold each request this long before answering (it never reaches Octavia)')
    fe = sub.add_parser('force-error', help='set an Octavia object\'s provisioning_status to ERROR (DB write)')
    fe.add_argument('object_id')
    fe.add_argument('--kind', choices=list(TABLES))
    fs = sub.add_parser('force-status', help='set an Octavia object\'s provisioning_status (DB write)')
    fs.add_argument('object_id')
    fs.add_argument('status')
    fs.add_argument('--kind', choices=list(TABLES))
    args = ap.parse_args(argv)
    f = Faults()
    c = args.cmd
    data_plane = ('member-up', 'az-down', 'az-up') + (('member-down',) if c == 'member-down' and
                                                       f.is_data_plane_member(args.member_id) else ())
    if c in data_plane:
        arg = getattr(args, 'member_id', None) or getattr(args, 'server', None) or args.az
        action = {'member-down': f.server_down, 'member-up': f.server_up, 'az-down': f.az_down, 'az-up': f.az_up}
        print(json.dumps(action[c](arg)))
        return 0
    if c in ('member-down', 'member-drain', 'member-maint'):
        f.member(args.member_id, c.split('-')[1].upper())
    elif c == 'member-clear':
        f.member_clear(args.member_id)
    elif c == 'worker-freeze':
        f.worker_freeze()
    elif c == 'worker-thaw':
        f.worker_thaw()
    elif c == 'heartbeat-pause':
        f.heartbeat_pause()
    elif c == 'heartbeat-resume':
        f.heartbeat_resume()
    elif c == 'clear':
        f.clear_all()
    elif c == 'force-error':
        print(f'{f.force_error(args.object_id, args.kind)} {args.object_id}: ERROR')
    elif c == 'force-status':
        print(f'{f.force_status(args.object_id, args.status, args.kind)} {args.object_id}: {args.status.upper()}')
    elif c == 'keystone-stop':
        print(json.dumps({'stopped_pid': f.keystone_stop()}))
    elif c == 'keystone-start':
        print(json.dumps({'pid': f.keystone_start()}))
    elif c == 'keystone-restart':
        print(json.dumps(f.keystone_restart(args.down)))
    elif c == 'octavia-api-unavailable':
        f.octavia_api_unavailable(args.seconds, args.status, args.method, args.path, args.hold, args.body)
    elif c == 'octavia-api-available':
        f.octavia_api_available()
    elif c == 'dns-stop':
        print(json.dumps({'stopped_pid': f.dns_stop()}))
    elif c == 'dns-start':
        print(json.dumps({'pid': f.dns_start()}))
    elif c == 'swift-proxy-stop':
        print(json.dumps({'stopped_pid': f.swift_proxy_stop()}))
    elif c == 'swift-proxy-start':
        print(json.dumps({'pid': f.swift_proxy_start()}))
    elif c in ('neutron-without-address-pairs', 'neutron-with-address-pairs'):
        print(json.dumps(f.address_pairs(c == 'neutron-with-address-pairs')))
    if c not in ('force-error', 'force-status', 'keystone-stop', 'keystone-start', 'keystone-restart', 'dns-stop',
                 'dns-start', 'swift-proxy-stop', 'swift-proxy-start', 'neutron-without-address-pairs',
                 'neutron-with-address-pairs'):
        print(json.dumps({**f.read(), 'worker_frozen': _safe(f.worker_frozen), **f.services_state()},
                         sort_keys=True))
    return 0


def _safe(fn):
    try:
        return fn()
    except Exception:
        return None


if __name__ == '__main__':
    try:
        sys.exit(main())
    except (LookupError, ValueError, RuntimeError, subprocess.CalledProcessError) as exc:
        print(f'lab/localcloud/fault: {exc}', file=sys.stderr)
        sys.exit(1)

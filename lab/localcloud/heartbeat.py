"""Amphora heartbeat daemon: member health without a data plane (system python + PyMySQL).

Every INTERVAL seconds, for every allocated amphora in the Octavia database, build the signed v3
heartbeat an amphora agent would send the health manager (UDP 127.0.0.1:5555): the amphora's
listeners (OPEN), pools and members, members UP (or "no check" when the pool has no health
monitor, MAINT when disabled) unless the fault file overrides them with DOWN / DRAIN / MAINT. The
health manager turns these into operating_status ONLINE / ERROR / DRAINING / OFFLINE.

A heartbeat is sent when it differs from the amphora's last one sent, or its load balancer's tree
changed in the database (a provisioning or operating status, an enabled flag: what the health
manager compares the report with), or KEEPALIVE seconds passed: a change is reported within one
INTERVAL as before, and an amphora whose tree stands still costs the health manager (one process
per heartbeat and one statistics write per listener) and the database nothing between keepalives.
Resuming after a pause sends every heartbeat at once.

It also marks associated floating IPs ACTIVE (and disassociated ones DOWN) in the Neutron DB, as
an L3 agent would.

Fault overrides: ``<state>/faults.json`` (written by localcloud.faults), re-read when it changes.
"""
import argparse
import hashlib
import hmac
import json
import os
import socket
import sys
import time
import zlib

from .settings import HOST, PORTS, Paths, load_secrets

INTERVAL = float(os.environ.get('LOCALCLOUD_HEARTBEAT_INTERVAL', '0.5'))
KEEPALIVE = float(os.environ.get('LOCALCLOUD_HEARTBEAT_KEEPALIVE', '10'))
"""The longest pause between two heartbeats of an amphora whose report and tree stand still (Octavia's own
``heartbeat_interval``)."""


def envelope(obj: dict, key: str) -> bytes:
    """Octavia's status_message.wrap_envelope: zlib(json) + hex HMAC-SHA256 of it."""
    payload = zlib.compress(json.dumps(obj).encode(), 9)
    return payload + hmac.new(key.encode(), payload, hashlib.sha256).hexdigest().encode()


class Faults:
    def __init__(self, path):
        self.path = path
        self.mtime = None
        self.data = {}

    def get(self) -> dict:
        try:
            mtime = os.stat(self.path).st_mtime_ns
        except FileNotFoundError:
            self.mtime, self.data = None, {}
            return self.data
        if mtime != self.mtime:
            try:
                self.data = json.loads(open(self.path).read() or '{}')
                self.mtime = mtime
            except (OSError, ValueError):
                pass  # half-written: keep the previous view, retry next tick
        return self.data


def _rows(cur, sql, args=()):
    cur.execute(sql, args)
    return cur.fetchall()


def _in(ids) -> str:
    return ','.join(['%s'] * len(ids))


def messages(cur, member_faults: dict, seq: int) -> list:
    """Per allocated amphora: (its load balancer's id, the heartbeat its agent would send)."""
    amps = _rows(cur, "SELECT id, load_balancer_id FROM octavia.amphora "
                      "WHERE status='ALLOCATED' AND load_balancer_id IS NOT NULL")
    if not amps:
        return []
    lb_ids = sorted({a[1] for a in amps})
    listeners = _rows(cur, f'SELECT id, load_balancer_id FROM octavia.listener '
                           f'WHERE enabled=1 AND load_balancer_id IN ({_in(lb_ids)})', lb_ids)
    pools = _rows(cur, f'SELECT id, load_balancer_id FROM octavia.pool '
                       f'WHERE load_balancer_id IN ({_in(lb_ids)})', lb_ids)
    pool_ids = [p[0] for p in pools]
    monitored, members = set(), []
    if pool_ids:
        monitored = {r[0] for r in _rows(cur, f'SELECT pool_id FROM octavia.health_monitor '
                                              f'WHERE enabled=1 AND pool_id IN ({_in(pool_ids)})', pool_ids)}
        members = _rows(cur, f'SELECT id, pool_id, enabled FROM octavia.member '
                             f'WHERE pool_id IN ({_in(pool_ids)})', pool_ids)
    by_pool = {}
    for mid, pid, enabled in members:
        if mid in member_faults:
            status = member_faults[mid]
        elif not enabled:
            status = 'MAINT'
        else:
            status = 'UP' if pid in monitored else 'no check'
        by_pool.setdefault(pid, {})[mid] = status
    out = []
    zero = {'tx': 0, 'rx': 0, 'conns': 0, 'totconns': 0, 'ereq': 0}
    for amp_id, lb_id in amps:
        lst = {lid: {'status': 'OPEN', 'stats': dict(zero)} for lid, lb in listeners if lb == lb_id}
        pls = {}
        for pid, lb in pools:
            if lb != lb_id:
                continue
            mem = by_pool.get(pid, {})
            down = bool(mem) and all(s == 'DOWN' for s in mem.values())
            pls[pid] = {'status': 'DOWN' if down else 'UP', 'members': mem}
        out.append((lb_id, {'id': amp_id, 'seq': seq, 'ver': 3, 'listeners': lst, 'pools': pls}))
    return out


def trees(cur, lb_ids) -> dict:
    """Per load balancer, what the health manager compares a heartbeat with: the statuses and enabled flags of the
    load balancer, its listeners, pools, monitors and members (sorted rows; equal when nothing changed)."""
    if not lb_ids:
        return {}
    ids = sorted(set(lb_ids))
    args = ids * 5
    rows = _rows(cur, f"""
        SELECT id, 'lb', id, provisioning_status, operating_status, enabled FROM octavia.load_balancer
            WHERE id IN ({_in(ids)})
        UNION ALL SELECT load_balancer_id, 'listener', id, provisioning_status, operating_status, enabled
            FROM octavia.listener WHERE load_balancer_id IN ({_in(ids)})
        UNION ALL SELECT load_balancer_id, 'pool', id, provisioning_status, operating_status, enabled
            FROM octavia.pool WHERE load_balancer_id IN ({_in(ids)})
        UNION ALL SELECT p.load_balancer_id, 'monitor', h.id, h.provisioning_status, h.operating_status, h.enabled
            FROM octavia.health_monitor h JOIN octavia.pool p ON h.pool_id = p.id
            WHERE p.load_balancer_id IN ({_in(ids)})
        UNION ALL SELECT p.load_balancer_id, 'member', m.id, m.provisioning_status, m.operating_status, m.enabled
            FROM octavia.member m JOIN octavia.pool p ON m.pool_id = p.id
            WHERE p.load_balancer_id IN ({_in(ids)})""", args)
    out: dict = {}
    for lb_id, *row in rows:
        out.setdefault(lb_id, []).append(tuple(row))
    return {lb_id: tuple(sorted(tree)) for lb_id, tree in out.items()}


class Sender:
    """Which heartbeats go out this tick: per amphora, the last one sent (its report without ``seq``, its load
    balancer's tree) and when."""

    def __init__(self, keepalive: float = KEEPALIVE):
        self.keepalive = keepalive
        self.sent: dict = {}

    def due(self, msg: dict, tree, now: float) -> bool:
        """Whether ``msg`` goes out at ``now``; when it does, it is recorded as sent."""
        key = (json.dumps({k: v for k, v in msg.items() if k != 'seq'}, sort_keys=True), tree)
        last = self.sent.get(msg['id'])
        if last is not None and last[0] == key and now - last[1] < self.keepalive:
            return False
        self.sent[msg['id']] = (key, now)
        return True

    def keep_only(self, amphora_ids) -> None:
        """Forget amphorae that are gone (a new one with the same id is sent at once)."""
        self.sent = {k: v for k, v in self.sent.items() if k in amphora_ids}

    def forget(self) -> None:
        """Paused: the next tick sends every heartbeat."""
        self.sent.clear()


def floating_ips(cur) -> None:
    cur.execute("UPDATE neutron.floatingips SET status='ACTIVE' "
                "WHERE fixed_port_id IS NOT NULL AND status<>'ACTIVE'")
    cur.execute("UPDATE neutron.floatingips SET status='DOWN' "
                "WHERE fixed_port_id IS NULL AND status<>'DOWN'")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog='localcloud-heartbeat')
    ap.add_argument('--state', default=None)
    ap.add_argument('--once', action='store_true')
    args = ap.parse_args(argv)
    p = Paths(args.state)
    s = load_secrets(p)
    faults = Faults(p.faults)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((HOST, 0))
    target = (HOST, PORTS['octavia-health'])
    import pymysql  # system python (python3-pymysql); imported here so tests can import this module
    conn, seq, last_err, sender = None, 0, None, Sender()
    print(f'heartbeat: reporting changes to {target[0]}:{target[1]} within {INTERVAL}s, '
          f'every amphora at least every {KEEPALIVE}s', flush=True)
    while True:
        tick = time.monotonic()
        try:
            if conn is None:
                conn = pymysql.connect(host=HOST, port=PORTS['mariadb'], user='localcloud', password=s['db'],
                                       autocommit=True, connect_timeout=5)
            f = faults.get()
            with conn.cursor() as cur:
                if f.get('paused'):
                    sender.forget()
                else:
                    seq += 1
                    reports = messages(cur, f.get('members', {}), seq)
                    tree = trees(cur, [lb_id for lb_id, _ in reports])
                    now = time.monotonic()
                    sender.keep_only({msg['id'] for _, msg in reports})
                    for lb_id, msg in reports:
                        if sender.due(msg, tree.get(lb_id), now):
                            sock.sendto(envelope(msg, s['heartbeat']), target)
                if f.get('fip_active', True):
                    floating_ips(cur)
            last_err = None
        except Exception as exc:  # keep beating; reconnect next tick
            if str(exc) != last_err:
                print(f'heartbeat: {type(exc).__name__}: {exc}', flush=True)
                last_err = str(exc)
            try:
                conn and conn.close()
            except Exception:
                pass
            conn = None
        if args.once:
            return 0
        time.sleep(max(0.05, INTERVAL - (time.monotonic() - tick)))


if __name__ == '__main__':
    sys.exit(main())

"""The heartbeat daemon's packets: Octavia's own code accepts them; statuses follow faults and monitors."""
import json
import shutil
import subprocess

import pytest

from localcloud.heartbeat import Sender, envelope, messages

pytestmark = pytest.mark.integration


@pytest.mark.skipif(not shutil.which('octavia-health-manager'), reason='octavia is not installed')
def test_envelope_is_accepted_by_octavias_unwrap():
    msg = {'id': 'amp-1', 'seq': 7, 'ver': 3, 'listeners': {}, 'pools': {}}
    packet = envelope(msg, 'secret-key')
    code = ('import sys, json; from octavia.amphorae.backends.health_daemon import status_message as s; '
            'print(json.dumps(s.unwrap_envelope(sys.stdin.buffer.read(), "secret-key")))')
    out = subprocess.run(['/usr/bin/python3', '-c', code], input=packet, capture_output=True, check=True)
    assert json.loads(out.stdout) == msg
    bad = subprocess.run(['/usr/bin/python3', '-c', code.replace('secret-key', 'other-key')], input=packet,
                         capture_output=True)
    assert bad.returncode != 0


class FakeCursor:
    def __init__(self, tables):
        self.tables, self.result = tables, []

    def execute(self, sql, args=()):
        for key, rows in self.tables.items():
            if f'FROM octavia.{key} ' in sql + ' ':
                self.result = rows
                return
        raise AssertionError(sql)

    def fetchall(self):
        return self.result


def test_messages_report_members_by_monitor_state_and_fault():
    cur = FakeCursor({
        'amphora': [('amp1', 'lb1')],
        'listener': [('l1', 'lb1')],
        'pool': [('p1', 'lb1'), ('p2', 'lb1')],
        'health_monitor': [('p1',)],
        'member': [('m1', 'p1', 1), ('m2', 'p1', 1), ('m3', 'p1', 0), ('m4', 'p2', 1)],
    })
    [(lb, msg)] = messages(cur, {'m2': 'DOWN'}, seq=3)
    assert lb == 'lb1' and msg['id'] == 'amp1' and msg['ver'] == 3 and msg['seq'] == 3
    assert msg['listeners'] == {'l1': {'status': 'OPEN', 'stats': {'tx': 0, 'rx': 0, 'conns': 0, 'totconns': 0,
                                                                   'ereq': 0}}}
    assert msg['pools']['p1'] == {'status': 'UP', 'members': {'m1': 'UP', 'm2': 'DOWN', 'm3': 'MAINT'}}
    assert msg['pools']['p2'] == {'status': 'UP', 'members': {'m4': 'no check'}}
    [(_, msg)] = messages(cur, {'m1': 'DOWN', 'm2': 'DOWN', 'm3': 'DOWN'}, seq=4)
    assert msg['pools']['p1']['status'] == 'DOWN'


def test_a_heartbeat_goes_out_on_a_change_of_its_report_or_its_tree_and_otherwise_once_per_keepalive():
    sender = Sender(keepalive=10)
    report = {'id': 'amp1', 'seq': 1, 'ver': 3, 'listeners': {}, 'pools': {'p1': {'status': 'UP', 'members': {}}}}
    tree = (('lb', 'lb1', 'ACTIVE', 'ONLINE', 1),)
    assert sender.due(report, tree, now=0)                             # first sight
    assert not sender.due({**report, 'seq': 2}, tree, now=0.5)         # the same report: only seq differs
    assert not sender.due({**report, 'seq': 3}, tree, now=9.9)
    assert sender.due({**report, 'seq': 4}, tree, now=10.0)            # keepalive
    member = {**report, 'seq': 5, 'pools': {'p1': {'status': 'UP', 'members': {'m1': 'UP'}}}}
    assert sender.due(member, tree, now=10.5)                          # a member appeared
    pending = (('lb', 'lb1', 'PENDING_UPDATE', 'ONLINE', 1),)
    assert sender.due({**member, 'seq': 6}, pending, now=11)           # the database changed under the same report
    assert not sender.due({**member, 'seq': 7}, pending, now=11.5)
    assert sender.due({**report, 'id': 'amp2'}, tree, now=11.5)        # another amphora: its own record
    sender.forget()                                                    # paused
    assert sender.due({**member, 'seq': 8}, pending, now=12)           # resumed: sent at once
    sender.keep_only({'amp2'})
    assert sender.due({**member, 'seq': 9}, pending, now=12.5)         # amp1 gone and back: sent at once

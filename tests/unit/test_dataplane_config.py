"""The data plane's names and guard (localcloud/dataplane): no device name too long for Linux, no name or route
shared between two instances, and a cloud address that would leave the machine refused before any packet."""
import importlib
import subprocess
import sys

import pytest

from localcloud.dataplane import config, reach


def _config_for(offset: int, monkeypatch):
    monkeypatch.setenv('LOCALCLOUD_PORT_OFFSET', str(offset))
    for name in ('localcloud.settings', 'localcloud.dataplane.config'):
        sys.modules.pop(name, None)
    try:
        return importlib.import_module('localcloud.dataplane.config')
    finally:
        for name in ('localcloud.settings', 'localcloud.dataplane.config'):
            sys.modules.pop(name, None)
        importlib.import_module('localcloud.dataplane.config')


@pytest.mark.parametrize('offset', [0, 5000, 30000, 249000])
def test_every_interface_name_fits_linux_ifnamsiz(offset, monkeypatch):
    c = _config_for(offset, monkeypatch)
    port = 'a29923f0-9b6e-42b7-b6e4-1bf45a9a8e72'
    names = [c.ROOT_PUBLIC_IF, c.ROOT_PUBLIC_PEER, *c.member_if(port)]
    for az in ('az1', 'az2', 'az3'):
        names += [*c.underlay_if(az), *c.public_if(az)]
    assert all(len(n) <= 15 for n in names), [n for n in names if len(n) > 15]


def test_two_instances_share_no_namespace_device_or_public_network(monkeypatch):
    a, b = _config_for(0, monkeypatch), _config_for(5000, monkeypatch)
    assert (a.PUBLIC_CIDR, b.PUBLIC_CIDR) == ('172.24.4.0/24', '172.24.9.0/24')
    assert a.chassis_ns('az1') != b.chassis_ns('az1') and a.ROOT_PUBLIC_IF != b.ROOT_PUBLIC_IF


def test_an_offset_the_public_network_cannot_follow_is_refused_with_the_fix(monkeypatch):
    c = _config_for(1234, monkeypatch)
    with pytest.raises(ValueError, match='LOCALCLOUD_PORT_OFFSET=1234.*multiple of 1000'):
        c.check_offset()


def test_an_unknown_data_plane_mode_names_the_variable_and_the_choices(monkeypatch, tmp_path):
    from localcloud.settings import Paths
    monkeypatch.setenv('LOCALCLOUD_DATAPLANE', 'ovs')
    with pytest.raises(ValueError, match="LOCALCLOUD_DATAPLANE='ovs' is not one of none, ovn"):
        config.mode(Paths(tmp_path))


def test_an_address_routed_through_the_default_gateway_is_refused():
    """`ip route get` asks the kernel only: no packet is sent."""
    line = subprocess.run(['ip', 'route', 'get', '192.0.2.200'], capture_output=True, text=True).stdout
    with pytest.raises(reach.NotLocal, match='refusing to connect to 192.0.2.200'):
        reach.check('192.0.2.200')
    assert line  # the kernel had a route (the machine's own), and it was still refused


@pytest.mark.parametrize('line, crash', [
    ('2026-11-22T10:00:00Z|00042|util|EMER|lib/conntrack.c:1234: assertion conn->conn_type == CT_CONN_TYPE_DEFAULT '
     'failed in conn_update_state()', True),
    ('2026-11-25T09:54:05Z|00001|fatal_signal(urcu2)|WARN|terminating with signal 6 (Aborted)', True),
    ('2026-11-25T09:54:05Z|00001|fatal_signal(urcu2)|WARN|terminating with signal 15 (Terminated)', False),
    ('2026-11-25T09:54:05Z|00002|bridge|INFO|bridge br-int: added interface lc5000v1a2b3c on port 7', False),
])
def test_crash_lines_are_assertions_and_fatal_signals_not_stops(line, crash):
    from localcloud.dataplane.ovn import CRASH
    assert bool(CRASH.search(line)) is crash

"""The data plane's names and guard (lab/localcloud/dataplane): no device name too long for Linux, no name or route
shared between two instances, and a cloud address that would leave the machine refused before any packet."""
import functools
import subprocess
from pathlib import Path

import pytest

from tests.unit.offset_interpreter import at_offset

from localcloud.dataplane import config, reach
from localcloud.settings import Paths

ROOT = Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=None)
def _names(offset: int) -> dict:
    """The names an instance with this port offset uses (computed in a fresh interpreter: the offset is read once,
    at import)."""
    code = ("import json; from localcloud.dataplane import config as c\n"
            "port = 'a29923f0-9b6e-42b7-b6e4-1bf45a9a8e72'\n"
            "ifs = [c.ROOT_PUBLIC_IF, c.ROOT_PUBLIC_PEER, *c.member_if(port)]\n"
            "ifs += [n for az in ('az1', 'az2', 'az3') for n in (*c.underlay_if(az), *c.public_if(az))]\n"
            "err = None\n"
            "try:\n    c.check_offset()\nexcept ValueError as exc:\n    err = str(exc)\n"
            "print(json.dumps({'ifs': ifs, 'cidr': c.PUBLIC_CIDR, 'ns': c.chassis_ns('az1'), 'error': err}))")
    return at_offset(offset, code)


@pytest.mark.parametrize('offset', [0, 5000, 30000, 249000])
def test_every_interface_name_fits_linux_ifnamsiz(offset):
    names = _names(offset)['ifs']
    assert all(len(n) <= 15 for n in names), [n for n in names if len(n) > 15]


def test_two_instances_share_no_namespace_device_or_public_network():
    a, b = _names(0), _names(5000)
    assert (a['cidr'], b['cidr']) == ('172.24.4.0/24', '172.24.9.0/24')
    assert a['ns'] != b['ns'] and not set(a['ifs']) & set(b['ifs'])


def test_an_offset_the_public_network_cannot_follow_is_refused_with_the_fix():
    assert 'LOCALCLOUD_PORT_OFFSET=1234: the data plane needs a multiple of 1000' in _names(1234)['error']
    assert _names(5000)['error'] is None


def test_an_unknown_data_plane_mode_names_the_variable_and_the_choices(monkeypatch, tmp_path):
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


def test_a_new_state_directory_gets_the_data_plane_and_remembers_it(monkeypatch, tmp_path):
    monkeypatch.delenv('LOCALCLOUD_DATAPLANE', raising=False)
    p = Paths(tmp_path)
    assert config.mode(p) == 'ovn' and config.seeded_mode(p) == ''
    config.remember(p)
    assert (tmp_path / config.MODE_FILE).read_text() == 'ovn\n'


def test_the_control_plane_alone_is_asked_for_and_kept(monkeypatch, tmp_path):
    p = Paths(tmp_path)
    monkeypatch.setenv('LOCALCLOUD_DATAPLANE', 'none')
    config.remember(p)
    monkeypatch.delenv('LOCALCLOUD_DATAPLANE')
    p.seeded.write_text('{}')
    assert config.mode(p) == 'none' and config.seeded_mode(p) == 'none'


def test_a_state_directory_an_older_checkout_seeded_without_the_data_plane_moves_to_it(monkeypatch, tmp_path):
    """Older checkouts wrote 'none' to <state>/dataplane by default: that was no choice, so the next `up` wipes the
    state directory and seeds it with the data plane (ctl.data_plane_matches), unless LOCALCLOUD_DATAPLANE=none."""
    monkeypatch.delenv('LOCALCLOUD_DATAPLANE', raising=False)
    p = Paths(tmp_path)
    (tmp_path / config.LEGACY_FILE).write_text('none\n')
    p.seeded.write_text('{}')
    assert config.seeded_mode(p) == 'none' and config.mode(p) == 'ovn'
    monkeypatch.setenv('LOCALCLOUD_DATAPLANE', 'none')
    assert config.mode(p) == 'none'


def test_an_older_checkouts_opt_in_keeps_its_data_plane(monkeypatch, tmp_path):
    monkeypatch.delenv('LOCALCLOUD_DATAPLANE', raising=False)
    p = Paths(tmp_path)
    (tmp_path / config.LEGACY_FILE).write_text('ovn\n')
    p.seeded.write_text('{}')
    assert config.seeded_mode(p) == 'ovn' and config.mode(p) == 'ovn'


def test_the_chassis_run_the_ovs_vswitchd_that_ovs_build_sh_builds(monkeypatch, tmp_path):
    """One version in two files (the build script and the data plane's config): the chassis start the binary and
    schema the script installs, from the cache the run uses, never Debian 12's 3.1.0 (its conntrack aborts)."""
    import re
    from pathlib import Path as P

    from localcloud.dataplane import ovn
    script = (P(__file__).resolve().parents[2] / 'lab' / 'localcloud' / 'ovs-build.sh').read_text()
    assert re.search(r'^OVS_VERSION=(\S+)$', script, re.M).group(1) == config.OVS_VERSION
    assert f'openvswitch-source_{config.OVS_VERSION}-' in script
    monkeypatch.setenv('HA_ENDPOINT_CACHE', str(tmp_path))
    vswitchd = [s for s in ovn.specs(Paths(tmp_path / 'state')) if s['name'].startswith('ovs-vswitchd-')]
    assert len(vswitchd) == 3
    assert {s['argv'][4] for s in vswitchd} == {str(tmp_path / f'openvswitch-{config.OVS_VERSION}' / 'bin' / 'ovs-vswitchd')}

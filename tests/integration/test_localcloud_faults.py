"""Fault injection on the local cloud: member health overrides, frozen worker (PENDING + 409), forced ERROR, the
Octavia API answering 503 for a while, Keystone restarted."""
import json
import subprocess
import time

import openstack
import pytest
from keystoneauth1 import exceptions as ks_exc
from openstack import exceptions

from localcloud.settings import PKG, PORTS
from localcloud.smoke import wait_for

# A frozen Octavia worker, Keystone restarted, every Octavia request failed: nothing else may run meanwhile.
pytestmark = [pytest.mark.integration, pytest.mark.exclusive]


def _lb_with_pool(conn, seed, cleanup, monitor=True):
    lbp = conn.load_balancer

    def active(lb_id):
        return wait_for('lb ACTIVE', lambda: lbp.get_load_balancer(lb_id), lambda o: o.provisioning_status == 'ACTIVE')
    lb = cleanup.add('load_balancer', lbp.create_load_balancer(
        name=cleanup.name('lb'), vip_subnet_id=seed['az2_subnet_id'], availability_zone='az2'))
    active(lb.id)
    listener = lbp.create_listener(loadbalancer_id=lb.id, protocol='TCP', protocol_port=6443)
    active(lb.id)
    pool = lbp.create_pool(listener_id=listener.id, protocol='TCP', lb_algorithm='ROUND_ROBIN')
    active(lb.id)
    if monitor:
        lbp.create_health_monitor(pool_id=pool.id, type='TCP', delay=5, timeout=3, max_retries=3)
        active(lb.id)
    return lb, pool, active


def _member(conn, pool, cleanup, ip, active, lb):
    m = cleanup.add('member', conn.load_balancer.create_member(pool.id, address=ip, protocol_port=6443))
    active(lb.id)
    return m


def _op(conn, pool, m):
    return conn.load_balancer.get_member(m.id, pool.id).operating_status


def test_member_health_overrides(localcloud, cloud_cleanup):
    conn, faults = localcloud.conn, localcloud.faults
    lb, pool, active = _lb_with_pool(conn, localcloud.seed, cloud_cleanup)
    a = _member(conn, pool, cloud_cleanup, '10.10.2.31', active, lb)
    b = _member(conn, pool, cloud_cleanup, '10.10.2.32', active, lb)
    wait_for('both ONLINE', lambda: {_op(conn, pool, a), _op(conn, pool, b)}, lambda s: s == {'ONLINE'}, 20)

    faults.member_drain(a.id)
    wait_for('DRAINING', lambda: _op(conn, pool, a), lambda s: s == 'DRAINING', 20)
    faults.member_maint(a.id)
    wait_for('OFFLINE', lambda: _op(conn, pool, a), lambda s: s == 'OFFLINE', 20)
    faults.member_down(a.id)
    faults.member_down(b.id)
    wait_for('pool ERROR when every member is DOWN', lambda: conn.load_balancer.get_pool(pool.id).operating_status,
             lambda s: s == 'ERROR', 20)
    assert conn.load_balancer.get_load_balancer(lb.id).operating_status == 'ERROR'
    faults.member_clear()
    wait_for('ONLINE again', lambda: {_op(conn, pool, a), _op(conn, pool, b)}, lambda s: s == {'ONLINE'}, 20)


def test_no_monitor_members_report_no_monitor(localcloud, cloud_cleanup):
    conn = localcloud.conn
    lb, pool, active = _lb_with_pool(conn, localcloud.seed, cloud_cleanup, monitor=False)
    m = _member(conn, pool, cloud_cleanup, '10.10.2.41', active, lb)
    wait_for('NO_MONITOR', lambda: _op(conn, pool, m), lambda s: s == 'NO_MONITOR', 20)


def test_frozen_worker_keeps_pending_and_conflicts(localcloud, cloud_cleanup):
    conn, faults = localcloud.conn, localcloud.faults
    lbp = conn.load_balancer
    lb, pool, active = _lb_with_pool(conn, localcloud.seed, cloud_cleanup)
    with faults.frozen_worker():
        m = cloud_cleanup.add('member', lbp.create_member(pool.id, address='10.10.2.51', protocol_port=6443))
        assert lbp.get_member(m.id, pool.id).provisioning_status == 'PENDING_CREATE'
        assert lbp.get_load_balancer(lb.id).provisioning_status == 'PENDING_UPDATE'
        with pytest.raises(exceptions.ConflictException):
            lbp.create_member(pool.id, address='10.10.2.52', protocol_port=6443)
    wait_for('member ACTIVE after thaw', lambda: lbp.get_member(m.id, pool.id),
             lambda o: o.provisioning_status == 'ACTIVE', 30)
    active(lb.id)


def test_force_error(localcloud, cloud_cleanup):
    conn, faults = localcloud.conn, localcloud.faults
    lb, pool, active = _lb_with_pool(conn, localcloud.seed, cloud_cleanup, monitor=False)
    m = _member(conn, pool, cloud_cleanup, '10.10.2.61', active, lb)
    assert faults.force_error(m.id) == 'member'
    assert conn.load_balancer.get_member(m.id, pool.id).provisioning_status == 'ERROR'


@pytest.fixture
def switched_octavia_api(localcloud):
    """The Octavia API behind its fault switch: an octavia-api started by an older localcloud is restarted once."""
    faults = localcloud.faults
    if not faults.octavia_api_has_switch():
        subprocess.run([str(PKG / 'restart'), 'octavia-api'], check=True, capture_output=True, timeout=300)
    assert faults.octavia_api_has_switch()
    yield faults
    faults.octavia_api_available()


def _fault_cli(*args):
    done = subprocess.run([str(PKG / 'fault'), *args], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_octavia_api_answers_503_for_the_given_seconds_then_serves_again(localcloud, switched_octavia_api):
    conn, faults = localcloud.conn, switched_octavia_api
    assert isinstance(list(conn.load_balancer.load_balancers()), list)
    started = time.time()
    listed = json.loads(_fault_cli('octavia-api-unavailable', '4'))
    assert listed['octavia_api_fault']['status'] == 503 and 0 < listed['octavia_api_fault']['remaining_seconds'] <= 4
    with pytest.raises(exceptions.HttpException) as caught:  # an authenticated connection ...
        list(conn.load_balancer.load_balancers())
    assert caught.value.status_code == 503 and 'localcloud fault: Service Unavailable' in str(caught.value)
    fresh = openstack.connect(cloud='localcloud')  # ... and a new one, whose version discovery meets it first
    with pytest.raises(exceptions.SDKException):
        list(fresh.load_balancer.load_balancers())
    assert faults.octavia_api_faulted_requests(started)[0] == '503 GET /v2.0/lbaas/loadbalancers'
    def serves():
        try:
            return list(conn.load_balancer.load_balancers()) is not None
        except exceptions.HttpException as exc:
            assert exc.status_code == 503
            return False
    wait_for('the API serves again by itself', serves, bool, 15)
    assert time.time() - started >= 4
    assert faults.octavia_api_fault() == {}
    assert conn.network.find_network('public') is not None, 'only Octavia was affected'


def test_a_narrowed_fault_holds_only_one_load_balancers_create_and_it_never_reaches_octavia(
        localcloud, switched_octavia_api, cloud_cleanup):
    """``--method POST --path /lbaas/loadbalancers --body <name> --hold 3``: reads pass, so does another load
    balancer's create; this one's create is held (logged as it arrives), then refused, and it was never created: what
    tests use to interrupt a client whose create is in flight without harming other clients of the cloud."""
    conn, faults = localcloud.conn, switched_octavia_api
    started = time.time()
    name = f'held-{int(started)}'
    _fault_cli('octavia-api-unavailable', '60', '--method', 'POST', '--path', '/lbaas/loadbalancers', '--body', name,
               '--hold', '3')
    assert isinstance(list(conn.load_balancer.load_balancers()), list), 'a read passes'
    other = cloud_cleanup.add('load_balancer', conn.load_balancer.create_load_balancer(
        name=cloud_cleanup.name('not-held'), vip_subnet_id=localcloud.seed['az1_subnet_id']))
    assert other.id, 'another load balancer is created'
    assert faults.octavia_api_held_requests(started) == [], 'and its create was not held (no timing: CI is loaded)'
    with pytest.raises(exceptions.HttpException) as caught:
        conn.load_balancer.create_load_balancer(name=name, vip_subnet_id=localcloud.seed['az1_subnet_id'])
    assert caught.value.status_code == 503 and time.time() - started >= 3
    assert faults.octavia_api_held_requests(started) == ['POST /v2.0/lbaas/loadbalancers']
    assert faults.octavia_api_faulted_requests(started) == ['503 POST /v2.0/lbaas/loadbalancers']
    faults.octavia_api_available()
    assert [lb for lb in conn.load_balancer.load_balancers() if lb.name == name] == []


def test_an_octavia_api_fault_ends_at_once_when_cleared(localcloud, switched_octavia_api):
    conn, faults = localcloud.conn, switched_octavia_api
    faults.octavia_api_unavailable(600, status=502)
    with pytest.raises(exceptions.HttpException) as caught:
        list(conn.load_balancer.load_balancers())
    assert caught.value.status_code == 502
    _fault_cli('clear')
    assert isinstance(list(conn.load_balancer.load_balancers()), list)
    with pytest.raises(ValueError, match='5xx'):
        faults.octavia_api_unavailable(5, status=404)


def test_keystone_restart_makes_authentication_unavailable_for_a_while(localcloud):
    conn, faults = localcloud.conn, localcloud.faults
    list(conn.network.networks())  # this connection holds a token from before the restart
    old_pid = faults.keystone_pid()
    restart = subprocess.Popen([str(PKG / 'fault'), 'keystone-restart', '--down', '3'], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        def fresh_auth():
            try:
                openstack.connect(cloud='localcloud').authorize()
                return None
            except (ks_exc.ConnectionError, exceptions.SDKException) as exc:  # refused, or reset while it starts;
                return exc                                                   # openstacksdk's authorize() wraps both
        refused = wait_for('Keystone down', fresh_auth, lambda exc: exc is not None, 20)
        assert f"http://127.0.0.1:{PORTS['keystone']}" in str(refused)
    finally:
        out, err = restart.communicate(timeout=180)
    assert restart.returncode == 0, err
    report = json.loads(out)
    assert report['old_pid'] == old_pid and report['new_pid'] == faults.keystone_pid() != old_pid
    assert report['down_seconds'] >= 3
    assert openstack.connect(cloud='localcloud').authorize(), 'a new token after the restart'
    assert list(conn.network.networks()), 'a token from before the restart stays valid (Fernet keys on disk)'

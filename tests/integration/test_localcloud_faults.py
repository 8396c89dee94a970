"""Fault injection on the local cloud: member health overrides, frozen worker (PENDING + 409), forced ERROR."""
import pytest
from openstack import exceptions

from localcloud.smoke import wait_for

pytestmark = pytest.mark.integration


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

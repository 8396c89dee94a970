"""The smoke flow (one zone's endpoint, end to end, through openstacksdk alone), timed per step.

Used by tests/integration/test_localcloud_smoke.py (which asserts) and lab/bench/localcloud_figures.py
(which prints the timings). Raises AssertionError on any unexpected state.
"""
import time

POLL = 0.05


class Timer:
    def __init__(self):
        self.steps: list[tuple[str, float]] = []

    def step(self, name: str, fn):
        t = time.monotonic()
        out = fn()
        self.steps.append((name, time.monotonic() - t))
        return out


def wait_for(what: str, get, ok, timeout: float = 60, fail=lambda o: False):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = get()
        if ok(last):
            return last
        if last is not None and fail(last):
            raise AssertionError(f'{what}: reached a failure state: {_status(last)}')
        time.sleep(POLL)
    raise AssertionError(f'{what}: not reached within {timeout}s; last seen {_status(last)}')


def _status(o):
    if o is None:
        return None
    return {k: getattr(o, k, None) for k in ('id', 'provisioning_status', 'operating_status', 'status')
            if getattr(o, k, None) is not None}


def run(conn, faults, seed: dict, cleanup, zone_name: str = 'az1', n_members: int = 3) -> Timer:
    lbp = conn.load_balancer
    net = conn.network
    t = Timer()
    subnet_id = seed[f'{zone_name}_subnet_id']
    octet = zone_name[-1]

    def lb_active(lb_id):
        return wait_for(f'load balancer {lb_id} ACTIVE', lambda: lbp.get_load_balancer(lb_id),
                        lambda o: o.provisioning_status == 'ACTIVE',
                        fail=lambda o: o.provisioning_status == 'ERROR')

    def create_lb():
        lb = cleanup.add('load_balancer', lbp.create_load_balancer(
            name=cleanup.name('lb'), vip_subnet_id=subnet_id, availability_zone=zone_name))
        return lb_active(lb.id)
    lb = t.step('load balancer -> ACTIVE', create_lb)
    assert lb.vip_port_id and lb.vip_address.startswith(f'10.10.{octet}.'), _status(lb)
    assert net.get_port(lb.vip_port_id).fixed_ips[0]['ip_address'] == lb.vip_address

    def create(kind, fn):
        obj = fn()
        lb_active(lb.id)
        return obj
    listener = t.step('listener -> ACTIVE', lambda: create('listener', lambda: lbp.create_listener(
        name=cleanup.name('api'), loadbalancer_id=lb.id, protocol='TCP', protocol_port=6443)))
    pool = t.step('pool -> ACTIVE', lambda: create('pool', lambda: lbp.create_pool(
        name=cleanup.name('pool'), listener_id=listener.id, protocol='TCP', lb_algorithm='ROUND_ROBIN')))
    t.step('health monitor -> ACTIVE', lambda: create('monitor', lambda: lbp.create_health_monitor(
        name=cleanup.name('hm'), pool_id=pool.id, type='TCP', delay=5, timeout=3, max_retries=3)))

    members = []
    for i in range(n_members):
        def add_member(i=i):
            m = lbp.create_member(pool.id, name=cleanup.name(f'cp{i}'), address=f'10.10.{octet}.{21 + i}',
                                  protocol_port=6443, subnet_id=subnet_id)
            cleanup.add('member', m)
            return wait_for(f'member {m.id} ACTIVE', lambda: lbp.get_member(m.id, pool.id),
                            lambda o: o.provisioning_status == 'ACTIVE',
                            fail=lambda o: o.provisioning_status == 'ERROR')
        members.append(t.step(f'member {i + 1} -> ACTIVE', add_member))
        lb_active(lb.id)

    def all_online():
        for m in members:
            wait_for(f'member {m.id} ONLINE', lambda: lbp.get_member(m.id, pool.id),
                     lambda o: o.provisioning_status == 'ACTIVE' and o.operating_status == 'ONLINE', timeout=20)
    t.step('members -> ONLINE (heartbeat)', all_online)

    public = seed['public_network_id']

    def fip_active():
        ip = cleanup.add('floating_ip', net.create_ip(floating_network_id=public, port_id=lb.vip_port_id,
                                                      description=cleanup.name('vip')))
        return wait_for(f'floating IP {ip.id} ACTIVE', lambda: net.get_ip(ip.id), lambda o: o.status == 'ACTIVE',
                        timeout=20)
    fip = t.step('floating IP on VIP -> ACTIVE', fip_active)
    assert fip.fixed_ip_address == lb.vip_address, (fip.fixed_ip_address, lb.vip_address)

    zone = conn.dns.get_zone(seed['dns_zone_id'])
    fqdn = f'{cleanup.prefix}-api.{zone.name}'

    created = time.monotonic()

    def recordset_answered():
        rs = cleanup.add('recordset', conn.dns.create_recordset(zone, name=fqdn, type='A',
                                                                records=[fip.floating_ip_address], ttl=60),
                         zone=zone.id)
        _named_answers(fqdn, (fip.floating_ip_address,))
        return rs
    rs = t.step('recordset -> answered by named', recordset_answered)
    rs = wait_for(f'recordset {fqdn} ACTIVE', lambda: conn.dns.get_recordset(rs, zone),
                  lambda o: o.status == 'ACTIVE', fail=lambda o: o.status == 'ERROR', timeout=30)
    t.steps.append(('recordset -> ACTIVE', time.monotonic() - created))
    assert rs.records == [fip.floating_ip_address]

    victim = members[0]

    def down():
        faults.member_down(victim.id)
        wait_for(f'member {victim.id} ERROR', lambda: lbp.get_member(victim.id, pool.id),
                 lambda o: o.operating_status == 'ERROR', timeout=20)
        wait_for(f'pool {pool.id} DEGRADED', lambda: lbp.get_pool(pool.id),
                 lambda o: o.operating_status == 'DEGRADED', timeout=10)
    t.step('inject DOWN -> member ERROR', down)
    others = [lbp.get_member(m.id, pool.id).operating_status for m in members[1:]]
    assert others == ['ONLINE'] * (n_members - 1), others

    def clear():
        faults.member_clear(victim.id)
        wait_for(f'member {victim.id} ONLINE again', lambda: lbp.get_member(victim.id, pool.id),
                 lambda o: o.operating_status == 'ONLINE', timeout=20)
        wait_for(f'load balancer {lb.id} ONLINE again', lambda: lbp.get_load_balancer(lb.id),
                 lambda o: o.operating_status == 'ONLINE', timeout=10)
    t.step('clear -> member ONLINE', clear)

    def delete_recordset():
        conn.dns.delete_recordset(rs, zone)
        _named_answers(fqdn, ())
        wait_for(f'recordset {fqdn} gone', lambda: _find_rs(conn, zone, rs.id), lambda o: o is None, timeout=30)
    t.step('delete recordset (gone from named, then from the API)', delete_recordset)

    def delete_fip():
        net.delete_ip(fip)
        wait_for(f'floating IP {fip.id} gone', lambda: net.find_ip(fip.id), lambda o: o is None, timeout=20)
    t.step('delete floating IP', delete_fip)

    def delete_lb():
        lbp.delete_load_balancer(lb.id, cascade=True)
        wait_for(f'load balancer {lb.id} gone', lambda: lbp.find_load_balancer(lb.id), lambda o: o is None,
                 timeout=60)
    t.step('delete load balancer (cascade)', delete_lb)

    assert net.find_port(lb.vip_port_id) is None, f'VIP port {lb.vip_port_id} left behind'
    assert net.find_ip(fip.id) is None, f'floating IP {fip.id} left behind'
    assert not [r for r in conn.dns.recordsets(zone) if r.name == fqdn], f'recordset {fqdn} left behind'
    assert not [p for p in net.ports() if p.name == f'octavia-lb-{lb.id}'], 'octavia VIP port left behind'
    return t


def _named_answers(fqdn: str, records: tuple, timeout: float = 30) -> None:
    """Wait until the DNS server (named) answers exactly these A records for fqdn (none: the name is gone)."""
    from .dns import query
    samples = query.watch(fqdn, every_ms=20, duration_s=timeout, until=lambda a: a.records == records)
    assert samples[-1].answer.records == records, \
        f'named never answered {records} for {fqdn} within {timeout}s; last: {samples[-1].answer}'


def _find_rs(conn, zone, rs_id):
    for r in conn.dns.recordsets(zone):
        if r.id == rs_id:
            return r
    return None

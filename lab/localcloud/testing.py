"""pytest support for integration tests against the local cloud (import from a conftest.py).

Fixtures:
- ``localcloud`` (session): brings the cloud up once per run (``lab/localcloud/up``) or reuses a running
  one; a :class:`LocalCloud` with ``conn`` (project user), ``admin`` (admin), ``faults``
  (:class:`localcloud.faults.Faults`), ``seed`` (ids of the seeded networks, subnets, zone...).
- ``os_conn`` (session): the project user's openstacksdk connection.
- ``cloud_cleanup`` (function): a :class:`Cleanup` that gives the test a unique name prefix,
  records what the test registers, and after the test deletes everything it registered or that
  carries its prefix (servers, recordsets, DNS zones, floating IPs, load balancers with cascade, routers, ports,
  subnets, networks, security groups), clears the test's member faults and thaws the worker.

Environment: ``LOCALCLOUD_AUTOSTART=0`` fails instead of starting the cloud; ``HA_ENDPOINT_STATE``
points at another state directory.
"""
import json
import os
import subprocess
import time
import uuid

import pytest

from .faults import Faults
from .rest import http_answers
from .settings import ADMIN_CLOUD, CLOUD, PKG, Paths, url

DELETE_TIMEOUT = 90


def recordsets_of_every_zone(conn, **query):
    """``(zone, recordset)`` for every DNS zone of ``conn``'s project, each zone's recordsets filtered by ``query``.

    Tests share the cloud: a zone another test deletes between the listing of zones and the listing of its recordsets
    answers 404 ("Could not find Zone"), which is that test's business, not the caller's: the zone is skipped."""
    import openstack.exceptions
    for zone in conn.dns.zones():
        try:
            for recordset in conn.dns.recordsets(zone, **query):
                yield zone, recordset
        except openstack.exceptions.NotFoundException:
            continue


def eventually(what: str, check, timeout: float, interval: float = 0.25):
    """``check()``'s first truthy result within ``timeout`` seconds, polled every ``interval``; an exception counts as
    not yet. Fails naming ``what`` and the last result (or exception) seen."""
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return last
        except Exception as exc:  # noqa: BLE001 (reported when time is up)
            last = exc
        time.sleep(interval)
    raise AssertionError(f'{what}: not after {timeout:.0f}s (last: {last!r})')


class LocalCloud:
    def __init__(self, paths: Paths):
        import openstack
        self.paths = paths
        self.clouds_yaml = str(paths.clouds_yaml)
        os.environ['OS_CLIENT_CONFIG_FILE'] = self.clouds_yaml
        os.environ.setdefault('OS_CLOUD', CLOUD)
        self.conn = openstack.connect(cloud=CLOUD)
        self.admin = openstack.connect(cloud=ADMIN_CLOUD)
        self.faults = Faults(paths.root)
        self.seed = json.loads(paths.seeded.read_text())


def _running(paths: Paths) -> bool:
    if not (paths.clouds_yaml.exists() and paths.seeded.exists()):
        return False
    from . import procs, services
    for name, svc in services.table(paths).items():
        if not procs.alive(paths.pidfile(name), svc.marker):
            return False
    return all(http_answers(url(s, '/')) for s in ('keystone', 'neutron', 'octavia', 'designate', 'nova', 'placement',
                                                   'glance'))


def ensure_up(paths: Paths | None = None) -> LocalCloud:
    paths = paths or Paths()
    if not _running(paths):
        if os.environ.get('LOCALCLOUD_AUTOSTART', '1') == '0':
            pytest.fail('the local cloud is not running and LOCALCLOUD_AUTOSTART=0 (run lab/localcloud/up)')
        proc = subprocess.run([str(PKG / 'up')], capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            pytest.fail(f'lab/localcloud/up failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}')
    return LocalCloud(paths)


@pytest.fixture(scope='session')
def localcloud():
    yield ensure_up()


@pytest.fixture(scope='session')
def os_conn(localcloud):
    return localcloud.conn


class Cleanup:
    """What one test created; deleted (dependencies first) when the test ends."""

    def __init__(self, cloud: LocalCloud):
        self.cloud = cloud
        self.conn = cloud.conn
        self.prefix = f'it-{uuid.uuid4().hex[:8]}'
        self.registered: list[tuple[str, str]] = []
        self.members: set[str] = set()
        self.leftovers: list[str] = []

    def name(self, suffix: str) -> str:
        return f'{self.prefix}-{suffix}'

    def add(self, kind: str, obj_or_id, **extra):
        """Register a resource: kind in server, load_balancer, floating_ip, recordset (zone=...), zone, router,
        port, subnet, network, security_group, member (faults only). Returns the object."""
        oid = obj_or_id if isinstance(obj_or_id, str) else obj_or_id.id
        if kind == 'member':
            self.members.add(oid)
        else:
            self.registered.append((kind, oid, extra))
        return obj_or_id

    # -- teardown --------------------------------------------------------------------------------
    def run(self) -> list[str]:
        f = self.cloud.faults
        f.worker_thaw()
        for m in self.members:
            f.member_clear(m)
        c = self.conn
        mine = lambda o: (o.name or '').startswith(self.prefix) or (o.id in reg)  # noqa: E731
        reg = {oid for _, oid, _ in self.registered}
        lbs = [lb for lb in c.load_balancer.load_balancers() if mine(lb)]
        for lb in lbs:
            for pool in c.load_balancer.pools(loadbalancer_id=lb.id):
                for m in c.load_balancer.members(pool.id):
                    f.member_clear(m.id)
        vip_ports = {lb.vip_port_id for lb in lbs}
        self._delete_servers([s for s in c.compute.servers() if mine(s)])
        for kind, oid, extra in self.registered:
            if kind == 'recordset':
                self._try(lambda: c.dns.delete_recordset(oid, extra['zone'], ignore_missing=True))
        for zone, rs in recordsets_of_every_zone(c):
            if rs.name.startswith(self.prefix) or rs.id in reg:
                self._try(lambda: c.dns.delete_recordset(rs, zone, ignore_missing=True))
        for zone in c.dns.zones():
            if (zone.name.startswith(self.prefix) or zone.id in reg) and zone.action != 'DELETE':
                self._try(lambda: c.dns.delete_zone(zone, ignore_missing=True))
        for ip in c.network.ips():
            if ip.id in reg or ip.port_id in vip_ports or (ip.description or '').startswith(self.prefix):
                self._try(lambda: c.network.delete_ip(ip, ignore_missing=True))
        for lb in lbs:
            self._delete_lb(lb)
        # Router interfaces, in one listing: every interface of a router of ours, and every interface on a subnet of
        # ours whatever its router (the seeded one: a test's second subnet behind it keeps that router's port, and the
        # subnet's delete is refused with 409 "one or more ports still in use"; an aborted run's sweep met it).
        routers = [router for router in c.network.routers() if mine(router)]
        ours = {router.id for router in routers}
        subnets = {subnet.id for subnet in c.network.subnets() if mine(subnet)}
        for port in c.network.ports(device_owner='network:router_interface'):
            for ip in port.fixed_ips or ():
                if port.device_id in ours or ip.get('subnet_id') in subnets:
                    self._try(lambda: c.network.remove_interface_from_router(port.device_id,
                                                                             subnet_id=ip['subnet_id']))
        for router in routers:
            self._try(lambda: c.network.delete_router(router, ignore_missing=True))
        for kind, finder, deleter in (('port', c.network.ports, c.network.delete_port),
                                      ('subnet', c.network.subnets, c.network.delete_subnet),
                                      ('network', c.network.networks, c.network.delete_network),
                                      ('security_group', c.network.security_groups,
                                       c.network.delete_security_group)):
            for obj in finder():
                if mine(obj):
                    self._try(lambda: deleter(obj, ignore_missing=True))
        return self.leftovers

    def _delete_servers(self, servers):
        """Delete, then wait until each is gone (Nova deletes the ports it created, unbinds the others)."""
        c = self.conn
        for server in servers:
            self._try(lambda: c.compute.delete_server(server, ignore_missing=True))
        for server in servers:
            try:
                c.compute.wait_for_delete(server, interval=0.5, wait=DELETE_TIMEOUT)
            except Exception as exc:
                self.leftovers.append(f'server {server.id} not deleted: {exc}')

    def _delete_lb(self, lb):
        c = self.conn
        deadline = time.monotonic() + DELETE_TIMEOUT
        while time.monotonic() < deadline:
            cur = c.load_balancer.find_load_balancer(lb.id)
            if cur is None:
                return
            if cur.provisioning_status.startswith('PENDING'):
                time.sleep(0.5)
                continue
            try:
                c.load_balancer.delete_load_balancer(cur.id, cascade=True, ignore_missing=True)
            except Exception:  # 409 while it turns PENDING: retry
                pass
            time.sleep(0.5)
        self.leftovers.append(f'load balancer {lb.id} not deleted after {DELETE_TIMEOUT}s')

    def _try(self, fn):
        from openstack import exceptions
        try:
            fn()
        except exceptions.NotFoundException:
            pass
        except Exception as exc:
            self.leftovers.append(f'{type(exc).__name__}: {exc}')


@pytest.fixture
def cloud_cleanup(localcloud):
    cleanup = Cleanup(localcloud)
    yield cleanup
    leftovers = cleanup.run()
    if leftovers:
        pytest.fail('cleanup left resources behind:\n' + '\n'.join(leftovers), pytrace=False)


def pytest_configure(config):
    config.addinivalue_line('markers', 'integration: runs against the local OpenStack cloud (lab/localcloud/up)')

"""named as a service of the local cloud: its command line and ports (a row of ``lab/localcloud/status``), the ``dns``
section of ``status --json``, and making sure named serves the zones Designate holds (system python)."""
import time

from ..settings import HOST, PORTS, Paths
from . import config

NAME = 'named'


def service(p: Paths):
    """named in the foreground (``-g``: its log goes to logs/named.log), IPv4 only, one worker thread."""
    from ..services import Service
    return Service(NAME, ['/usr/sbin/named', '-g', '-4', '-n', '1', '-c', str(config.named_conf(p))],
                   str(config.named_conf(p)),
                   [('tcp', PORTS['named']), ('udp', PORTS['named']), ('tcp', PORTS['named-rndc'])])


def status(p: Paths) -> dict:
    """Where clients ask: the ``dns`` object of ``lab/localcloud/status --json``."""
    return {'host': HOST, 'port': PORTS['named']}


def ensure_served(client, zone_id: str, timeout: float = 60, nudge_after: float = 10) -> float:
    """Wait until Designate has the zone ACTIVE and named answers its serial; seconds it took.

    A state directory that ran the ``fake`` backend before, or whose ``lib/named`` was lost, has zones named does not
    know; a worker stopped in the middle of a change leaves a zone PENDING. Any zone update makes Designate's worker
    push the zone to its targets again (the bind9 backend adds a zone named lacks), so such a zone (ACTIVE but not
    served, ERROR, or PENDING for ``nudge_after`` seconds) is updated once with its own TTL, then awaited."""
    from .query import soa_serial
    t0 = time.monotonic()
    nudged = False
    while True:
        zone = client.get('designate', f'/v2/zones/{zone_id}')
        served = soa_serial(zone['name'])
        if zone['status'] == 'ACTIVE' and served is not None and served >= zone['serial']:
            return time.monotonic() - t0
        waited = time.monotonic() - t0
        stuck = zone['status'] in ('ACTIVE', 'ERROR') or waited > nudge_after
        if stuck and not nudged:
            client.call('PATCH', 'designate', f'/v2/zones/{zone_id}', {'ttl': zone['ttl']})
            nudged = True
        elif (zone['status'] == 'ERROR' and nudged) or waited > timeout:
            raise RuntimeError(f'DNS zone {zone["name"]}: Designate says {zone["status"]} (serial {zone["serial"]}),'
                               f' named on {HOST}:{PORTS["named"]} answers serial {served}; see '
                               f'logs/designate-worker.log and logs/named.log')
        time.sleep(0.2)

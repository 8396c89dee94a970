"""Octavia network driver for the local cloud's worker (runs inside octavia, system python).

The API process uses the real ``allowed_address_pairs_driver`` (so VIPs are real Neutron
ports with real fixed IPs). The worker cannot plug a VIP into a noop compute instance, so it
uses this driver: the noop driver in every respect, except that deallocating a VIP deletes
the Octavia-owned Neutron port, so deleting a load balancer leaks no port.
"""
from oslo_config import cfg
from oslo_log import log as logging

from octavia.common import clients
from octavia.network.drivers.noop_driver import driver as noop

LOG = logging.getLogger(__name__)
CONF = cfg.CONF
OCTAVIA_OWNER = 'Octavia'


class NoopWithVipCleanupDriver(noop.NoopNetworkDriver):

    def _neutron(self):
        return clients.NeutronAuth.get_neutron_client(
            endpoint=CONF.neutron.endpoint,
            region=CONF.neutron.region_name,
            endpoint_type=CONF.neutron.endpoint_type,
            service_name=CONF.neutron.service_name,
            insecure=CONF.neutron.insecure,
            ca_cert=CONF.neutron.ca_certificates_file)

    def deallocate_vip(self, vip):
        super().deallocate_vip(vip)
        if not vip or not vip.port_id:
            return
        client = self._neutron()
        try:
            port = client.show_port(vip.port_id)['port']
        except Exception as exc:  # already gone (or never real)
            LOG.info('localcloud: VIP port %s not found (%s), nothing to delete',
                     vip.port_id, exc)
            return
        if port.get('device_owner') != OCTAVIA_OWNER:
            LOG.info('localcloud: VIP port %s is not owned by Octavia, kept', vip.port_id)
            return
        try:
            client.delete_port(vip.port_id)
            LOG.info('localcloud: deleted VIP port %s', vip.port_id)
        except Exception as exc:
            LOG.warning('localcloud: deleting VIP port %s failed: %s', vip.port_id, exc)

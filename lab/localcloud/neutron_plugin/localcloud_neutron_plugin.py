"""ML2 mechanism driver for the local cloud's neutron-server (runs inside neutron, system python).

The local cloud has no L2 agent, so no stock mechanism driver can bind a port (openvswitch and linuxbridge
bind only on a host whose agent reports alive). Nova's compute service asks Neutron to bind every port of
a server to its host (``binding:host_id``); an unbindable port comes back ``binding_failed`` and the server
goes to ERROR. This driver binds every ``normal`` port on a flat or vxlan segment, on any host, as an
Open vSwitch port, and marks it ACTIVE at once (what the OVS agent reports once it has wired the port).
Nothing is wired: there is no data plane. Unbinding (host cleared) puts the port DOWN, as ML2 always does.
"""
from neutron_lib.api.definitions import portbindings
from neutron_lib import constants
from neutron_lib.plugins.ml2 import api
from oslo_log import log as logging

LOG = logging.getLogger(__name__)

SEGMENT_TYPES = (constants.TYPE_FLAT, constants.TYPE_VXLAN, constants.TYPE_VLAN, constants.TYPE_LOCAL)
VIF_DETAILS = {portbindings.CAP_PORT_FILTER: True, portbindings.OVS_HYBRID_PLUG: False}


class BindEverywhereDriver(api.MechanismDriver):
    """Binds normal ports on any host (vif_type ovs) and sets them ACTIVE."""

    def initialize(self):
        LOG.info('localcloud: ML2 mechanism driver binds every normal port (vif_type %s)',
                 portbindings.VIF_TYPE_OVS)

    @property
    def connectivity(self):
        return portbindings.CONNECTIVITY_L2

    def bind_port(self, context):
        vnic_type = context.current.get(portbindings.VNIC_TYPE, portbindings.VNIC_NORMAL)
        if vnic_type != portbindings.VNIC_NORMAL:
            LOG.info('localcloud: port %s has vnic_type %s; not bound', context.current['id'], vnic_type)
            return
        for segment in context.segments_to_bind:
            if segment[api.NETWORK_TYPE] in SEGMENT_TYPES:
                context.set_binding(segment[api.ID], portbindings.VIF_TYPE_OVS, dict(VIF_DETAILS),
                                    status=constants.PORT_STATUS_ACTIVE)
                LOG.debug('localcloud: bound port %s on host %s (segment %s)', context.current['id'],
                          context.host, segment[api.ID])
                return


ADDRESS_PAIRS = 'allowed-address-pairs'


class WithoutAddressPairsDriver(api.MechanismDriver):
    """A cloud without Neutron's allowed-address-pairs extension, for the keepalived backend's preview refusal
    (`lab/localcloud/fault neutron-without-address-pairs`): listed after the real mechanism driver, it binds nothing and
    takes the extension out of what ML2 supports (ML2 keeps the extensions every loaded mechanism driver supports), so
    the API lists it no more and refuses the attribute, as a cloud built without it does."""

    def initialize(self):
        LOG.info('localcloud: the %s extension is not offered (lab fault)', ADDRESS_PAIRS)

    def supported_extensions(self, extensions):
        return set(extensions) - {ADDRESS_PAIRS}

"""Compute on the local cloud, through openstacksdk alone: a server per AZ reaches ACTIVE on its AZ's compute host
with a bound, ACTIVE Neutron port on the seeded subnet, and deleting it leaves nothing behind (lab/localcloud/README.md,
"Compute")."""
import ipaddress
import time

import pytest
from openstack import exceptions

from localcloud.seed import FLAVORS, IMAGE
from localcloud.settings import AZS, COMPUTE_HOSTS

pytestmark = pytest.mark.integration

BOOT_TIMEOUT = 180


def subnet_of(localcloud, az):
    return localcloud.conn.network.get_subnet(localcloud.seed[f'{az}_subnet_id'])


def boot(localcloud, cloud_cleanup, az, **network):
    conn = localcloud.conn
    server = conn.compute.create_server(
        name=cloud_cleanup.name(f'server-{az}'), image_id=conn.image.find_image(IMAGE, ignore_missing=False).id,
        flavor_id=conn.compute.find_flavor(FLAVORS[0][0], ignore_missing=False).id, availability_zone=az,
        networks=[network or {'uuid': localcloud.seed[f'{az}_network_id']}])
    cloud_cleanup.add('server', server)
    return server


PORT_UP_TIMEOUT = 60  # seconds from the server's ACTIVE to its port's


def check_active_on(localcloud, server, az):
    """ACTIVE in az on cmp-<az>, one bound ACTIVE port whose fixed IP is on the AZ's subnet; the port."""
    conn, admin = localcloud.conn, localcloud.admin
    server = conn.compute.wait_for_server(server, status='ACTIVE', interval=0.5, wait=BOOT_TIMEOUT)
    assert server.availability_zone == az
    assert admin.compute.get_server(server.id).compute_host == COMPUTE_HOSTS[az]
    ports = list(conn.network.ports(device_id=server.id))
    assert len(ports) == 1, ports
    # The port turns ACTIVE once the data plane has plugged the server and its chassis claimed the port (the fake
    # virt driver marks the server ACTIVE without waiting for that, as a hypervisor's network-vif-plugged would):
    # seconds on a loaded machine.
    deadline = time.monotonic() + PORT_UP_TIMEOUT
    while (port := admin.network.get_port(ports[0].id)).status != 'ACTIVE' and time.monotonic() < deadline:
        time.sleep(0.5)
    subnet = subnet_of(localcloud, az)
    [fixed] = port.fixed_ips
    assert fixed['subnet_id'] == subnet.id
    assert ipaddress.ip_address(fixed['ip_address']) in ipaddress.ip_network(subnet.cidr)
    assert (port.status, port.binding_host_id, port.binding_vif_type) == ('ACTIVE', COMPUTE_HOSTS[az], 'ovs')
    assert port.device_owner == f'compute:{az}'
    net_name = conn.network.get_network(subnet.network_id).name
    assert [a['addr'] for a in server.addresses[net_name]] == [fixed['ip_address']]
    return server, port


def check_gone(localcloud, server):
    conn, admin = localcloud.conn, localcloud.admin
    conn.compute.delete_server(server)
    deadline = time.monotonic() + BOOT_TIMEOUT
    while True:  # wait_for_delete also returns on status DELETED, which Nova shows just before the 404
        try:
            conn.compute.get_server(server.id)
        except exceptions.NotFoundException:
            break
        assert time.monotonic() < deadline, f'server {server.id} still there {BOOT_TIMEOUT}s after its delete'
        time.sleep(0.3)
    assert list(conn.network.ports(device_id=server.id)) == []
    # no resources left claimed in Placement for it
    assert admin.placement.get(f'/allocations/{server.id}').json()['allocations'] == {}


def test_a_server_per_az_is_active_on_its_subnet_and_leaves_nothing(localcloud, cloud_cleanup):
    servers = {az: boot(localcloud, cloud_cleanup, az) for az in AZS}  # all three boot at once
    for az, server in servers.items():
        servers[az], port = check_active_on(localcloud, server, az)
        print(f'{az}: {server.id} ACTIVE on {COMPUTE_HOSTS[az]}, port {port.id} {port.fixed_ips[0]["ip_address"]}')
    for server in servers.values():
        check_gone(localcloud, server)


def test_a_server_on_a_port_of_its_own_binds_it_and_unbinds_it_on_delete(localcloud, cloud_cleanup):
    conn, admin = localcloud.conn, localcloud.admin
    az = AZS[0]
    port = cloud_cleanup.add('port', conn.network.create_port(
        name=cloud_cleanup.name('port'), network_id=localcloud.seed[f'{az}_network_id'],
        fixed_ips=[{'subnet_id': localcloud.seed[f'{az}_subnet_id']}]))
    assert admin.network.get_port(port.id).status == 'DOWN'
    server, bound = check_active_on(localcloud, boot(localcloud, cloud_cleanup, az, port=port.id), az)
    assert bound.id == port.id and bound.fixed_ips == port.fixed_ips
    check_gone(localcloud, server)
    kept = admin.network.get_port(port.id)  # Nova deletes only the ports it created
    assert (kept.device_id, kept.binding_host_id, kept.status) == ('', '', 'DOWN')
    assert kept.fixed_ips == port.fixed_ips


def test_an_unknown_az_is_refused_and_nothing_is_created(localcloud, cloud_cleanup):
    conn = localcloud.conn
    with pytest.raises(exceptions.BadRequestException, match='availability zone'):
        boot(localcloud, cloud_cleanup, 'az9', uuid=localcloud.seed['az1_network_id'])
    assert [s for s in conn.compute.servers() if s.name.startswith(cloud_cleanup.prefix)] == []

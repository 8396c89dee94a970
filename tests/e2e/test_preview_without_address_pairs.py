"""A cloud without Neutron's allowed-address-pairs extension, in a real preview (issue 49, item 4): the keepalived
backend puts each zone's VIP in its members' allowed address pairs, so a cloud without the extension is refused at
preview, naming ``backend`` and the fix, with nothing created.

ML2 offers the extension whenever security groups are on; ``lab/localcloud/fault neutron-without-address-pairs`` loads,
after the OVN mechanism driver, the lab's ``WithoutAddressPairsDriver`` (lab/localcloud/neutron_plugin), which takes the
extension out of what ML2 supports: Neutron then lists it no more and refuses the attribute, as a cloud built without
it. ``lab/localcloud/up`` writes ml2.ini with it and restarts neutron-server alone; ``neutron-with-address-pairs`` puts it
back the same way. Marked ``own_cloud``: Neutron restarts twice, never on the user's cloud and never beside another
test on that cloud."""

from __future__ import annotations

import pytest
from tests.e2e.keepalived_stack import keepalived_endpoint
from tests.e2e.pulumi_cli import PulumiStack, refused

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.own_cloud]

NAME = "prn-api"
EXTENSION = "allowed-address-pairs"


@pytest.fixture
def without_address_pairs(localcloud):
    """The local cloud with Neutron not offering the extension, offered again (and checked) after the test."""
    assert localcloud.faults.address_pairs(False)["started"] == "neutron-server"
    try:
        yield localcloud
    finally:
        assert localcloud.faults.address_pairs(True)["started"] == "neutron-server"
        conn = localcloud.conn   # Neutron as before for the lane's next tests: the extension, and a port made (ML2/OVN)
        assert EXTENSION in {extension.alias for extension in conn.network.extensions()}
        subnet = conn.network.find_subnet("cp-az1", ignore_missing=False)
        port = conn.network.create_port(network_id=subnet.network_id, name="prn-check",
                                        fixed_ips=[{"subnet_id": subnet.id}])
        conn.network.delete_port(port)


def test_a_cloud_without_allowed_address_pairs_is_refused_by_a_real_keepalived_preview(without_address_pairs,
                                                                                       pulumi_environment, tmp_path):
    cloud = without_address_pairs.conn
    assert EXTENSION not in {extension.alias for extension in cloud.network.extensions()}
    stack = PulumiStack.create(tmp_path / "prn", "prn-refused", pulumi_environment)
    refused(stack, keepalived_endpoint(NAME, "prn"),
            f"backend: the cloud's Neutron has no {EXTENSION} extension (openstack extension list --network), "
            "so no member port can hold a zone's VIP; ask the cloud's operator to enable it, or use backend octavia")
    assert stack.resources() == []
    assert [port.name for port in cloud.network.ports() if (port.name or "").startswith(f"{NAME}-")] == []

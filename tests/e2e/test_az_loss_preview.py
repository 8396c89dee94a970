"""A real preview against a router pinned to one AZ fails with the message; the dev stack passes (issue 15)."""

from __future__ import annotations

import pytest

from localcloud.testing import Cleanup
from tests.e2e.pulumi_cli import PulumiStack

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

PREFIX = "azl"


@pytest.fixture(scope="module")
def pinned_router(cloud, localcloud):
    """A network with a VIP subnet for az1 and az2, joined and NATed by one router hinted to az1 only."""
    sweep = Cleanup(localcloud)
    sweep.prefix = PREFIX
    created = []
    try:
        public = cloud.network.find_network("public", ignore_missing=False)
        network = cloud.network.create_network(name=f"{PREFIX}-net")
        created.append(("network", network))
        subnets = [cloud.network.create_subnet(name=f"{PREFIX}-az{n}", network_id=network.id, ip_version=4,
                                               cidr=f"10.77.{n}.0/24") for n in (1, 2)]
        created += [("subnet", subnet) for subnet in subnets]
        router = cloud.network.create_router(name=f"{PREFIX}-router", availability_zone_hints=["az1"],
                                             external_gateway_info={"network_id": public.id})
        created.append(("router", router))
        for subnet in subnets:
            cloud.network.add_interface_to_router(router, subnet_id=subnet.id)
        yield router
    finally:
        for kind, obj in reversed(created):
            if kind == "router":
                for subnet in [o for k, o in created if k == "subnet"]:
                    try:
                        cloud.network.remove_interface_from_router(obj, subnet_id=subnet.id)
                    except Exception:  # noqa: BLE001 - best effort: the interface may never have been added
                        pass
                cloud.network.delete_router(obj, ignore_missing=True)
            elif kind == "subnet":
                cloud.network.delete_subnet(obj, ignore_missing=True)
            else:
                cloud.network.delete_network(obj, ignore_missing=True)


def test_a_preview_against_a_router_pinned_to_one_az_fails_with_the_message(pinned_router, pulumi_environment,
                                                                             tmp_path):
    stack = PulumiStack.create(tmp_path / "azl", "azl-preview", pulumi_environment)
    stack.write_config({
        "name": f"{PREFIX}-api", "floatingNetwork": "public",
        "zones": {"az1": {"subnet": f"{PREFIX}-az1"}, "az2": {"subnet": f"{PREFIX}-az2"}},
        "listeners": [{"port": 6443, "monitor": {"type": "TCP"}}],
        "members": [{"name": "cp-1", "address": "10.77.1.10", "az": "az1"},
                    {"name": "cp-2", "address": "10.77.2.10", "az": "az2"}],
    })
    result = stack.preview(check=False)
    assert result.returncode != 0
    assert (f"zones.az2.subnet: router {PREFIX}-router ({pinned_router.id}) is hinted to az1 only, but zone(s) az1, "
            "az2 depend on it") in result.output
    assert "losing az1 takes zone(s) az2 down with it" in result.output and "Traceback" not in result.output
    assert stack.resources() == []


def test_the_dev_stack_passes(pulumi_environment, tmp_path):
    from tests.mocks.configs import amphora_endpoint

    stack = PulumiStack.create(tmp_path / "dev", "azl-dev", pulumi_environment)
    dev = amphora_endpoint()
    stack.write_config({**dev, "name": f"{PREFIX}-dev", "dns": {**dev["dns"], "record": f"{PREFIX}-dev"}})
    result = stack.preview()
    assert result.returncode == 0
    assert "ha-endpoint-az-independence " not in result.output  # the mandatory policy has nothing to say

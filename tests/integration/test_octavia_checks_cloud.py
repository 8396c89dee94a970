"""The preview checks that only the cloud can answer (ha_endpoint.backends.octavia.checks), against the real local cloud:
Octavia's availability zones as openstacksdk lists them, the key manager's absence, and Octavia's own refusal of a
load balancer in an availability zone it does not know (what the check prevents at preview)."""

from __future__ import annotations

import os

import pytest
from openstack import exceptions as os_exc

from ha_endpoint.backends.octavia.checks import OpenStackOctaviaCatalog
from ha_endpoint.core.plan import PollTarget

pytestmark = pytest.mark.integration


def test_the_catalog_lists_octavias_availability_zones(localcloud):
    azs = OpenStackOctaviaCatalog().octavia_azs(PollTarget(os.environ.get("OS_CLOUD"), None, "readiness"))
    assert {az.name for az in azs} >= {"az1", "az2", "az3"} and all(az.enabled for az in azs)


def test_a_cloud_without_a_key_manager_is_told_apart_from_a_missing_certificate(localcloud, os_conn):
    found = OpenStackOctaviaCatalog().certificate(PollTarget(os.environ.get("OS_CLOUD"), None, "readiness"),
                                                  "https://barbican.example:9311/v1/containers/"
                                                  "0b7d2c1e-7c52-4f3a-9b1e-3d2f6a8c9e10")
    assert found is (False if os_conn.has_service("key-manager") else None)


def test_octavia_refuses_a_load_balancer_in_an_unknown_availability_zone(localcloud, os_conn, cloud_cleanup):
    subnet = os_conn.network.find_subnet("cp-az1") or next(iter(os_conn.network.subnets()))
    with pytest.raises(os_exc.BadRequestException) as caught:
        lb = os_conn.load_balancer.create_load_balancer(name=cloud_cleanup.name("unknown-az"),
                                                        vip_subnet_id=subnet.id, availability_zone="az-nowhere")
        cloud_cleanup.add("load_balancer", lb)  # not expected: the cleanup deletes it
    assert "availability zone" in str(caught.value).lower() or "availability_zone" in str(caught.value).lower()

"""Smoke test of the local cloud, through openstacksdk alone: one zone's endpoint end to end."""
import pytest

from localcloud import smoke

pytestmark = pytest.mark.integration


def test_one_zone_endpoint_lifecycle(localcloud, cloud_cleanup):
    timer = smoke.run(localcloud.conn, localcloud.faults, localcloud.seed, cloud_cleanup)
    for name, seconds in timer.steps:
        print(f'{name:36} {seconds:6.2f}s')

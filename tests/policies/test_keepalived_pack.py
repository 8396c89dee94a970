"""The pack on the keepalived backend's resources: Pulumi.keepalived.yaml's endpoint passes at preview and up (the
zones declare backend keepalived, so the Octavia rules leave them alone; the generic rules judge them)."""

from __future__ import annotations

import pytest

from ha_endpoint import HaEndpoint
from policy_harness import run_program_for_pack
from tests.unit.test_keepalived import cloud_with_members, keepalived_endpoint


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_the_keepalived_stack_passes_the_pack(preview):
    run = run_program_for_pack(lambda: HaEndpoint("k8s-api", keepalived_endpoint()), cloud_with_members(preview),
                               preview=preview)
    assert {zone["backend"] for zone in run.facts()["zones"].values()} == {"keepalived"}
    assert run.violations() == []

"""Issue 11: the SCTP listener the component and the pack once judged differently (the plan made `sctp` rules, the pack
looked for `udp`-else-`tcp` and raised three mandatory violations) passes a real `pulumi preview` with the pack, under
the real engine and the OpenStack provider plugin's own schema, and the members' group admits SCTP on its port. Its
monitor is an SCTP one: the plugin (terraform-provider-openstack v3.4.0, pulumi-openstack 5.5.3) accepts the type,
which v1.54.1's schema refused at preview."""

from __future__ import annotations

import pytest

from tests.e2e.pulumi_cli import PulumiStack
from tests.mocks.configs import amphora_endpoint

pytestmark = [pytest.mark.e2e, pytest.mark.integration]


def sctp_endpoint() -> dict:
    endpoint = amphora_endpoint()
    endpoint.update(name="sctp-api", dns={**endpoint["dns"], "record": "sctp"})
    endpoint["listeners"].append({"port": 3868, "protocol": "SCTP", "monitor": {"type": "SCTP"}})
    return endpoint


def test_an_sctp_listener_passes_a_real_preview_with_the_pack(pulumi_environment, tmp_path):
    stack = PulumiStack.create(tmp_path / "sctp", "sctp-preview", pulumi_environment)
    stack.write_config(sctp_endpoint())
    result = stack.preview()  # with the pack; raises on any error or mandatory violation
    text = " ".join(result.output.split())
    assert "mandatory" not in text and "violation" not in text.lower(), result.output[-3000:]
    assert 'protocol : "SCTP"' in text or 'protocol: "SCTP"' in text, result.output[-3000:]
    assert 'type : "SCTP"' in text or 'type: "SCTP"' in text, result.output[-3000:]  # the monitor
    assert '"sctp"' in text  # the members' group rule for the SCTP port
    assert stack.resources() == []

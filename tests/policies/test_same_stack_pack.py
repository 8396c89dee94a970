"""The pack on an endpoint whose inputs are Outputs of resources declared beside it (examples/same-stack): at preview
it says plainly which declared facts it could not see (the subnets, zones and members that depend on resources not
created yet), instead of passing silently; after the update it judges every fact and finds nothing wrong."""

from __future__ import annotations

import runpy
from pathlib import Path

from policy_harness import run_program_for_pack
from tests.mocks.cloud import FakeCloud

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "same-stack" / "__main__.py"


def _run(preview: bool):
    return run_program_for_pack(lambda: runpy.run_path(str(EXAMPLE), run_name="__main__"),
                                FakeCloud.dev(preview=preview), preview=preview)


def test_at_preview_the_pack_names_the_facts_it_could_not_see_and_nothing_else():
    violations = _run(preview=True).violations()
    assert [policy for policy, _ in violations] == ["ha-endpoint-facts-known-at-preview"]
    [(_, message)] = violations
    assert message.startswith(
        "endpoint app-api: 12 declared fact(s) are not known at preview (facts.dns, facts.floatingNetworkId, "
        "facts.members.cp-az1, facts.members.cp-az2, facts.members.cp-az3, facts.membersSecurityGroup, "
        "facts.networks, facts.routers, facts.subnets, facts.zones.az1 and 2 more), so the pack cannot check this "
        "endpoint before `up`")


def test_after_the_update_every_fact_is_known_and_only_the_routers_single_agent_is_advised():
    violations = _run(preview=False).violations()
    assert [policy for policy, _ in violations] == ["ha-endpoint-az-independence-advisory"]
    assert "router app-router" in violations[0][1] and "is neither HA nor distributed" in violations[0][1]

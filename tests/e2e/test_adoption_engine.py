"""Adopting a running cluster's endpoint (issue 50, docs/adoption.md) with the real engine, on the local cloud's data
plane: CAPO's single load balancer taken over as one zone of three and given back, with clients looping through the
cluster's DNS name and through its floating IP (tests/e2e/adoption.py, the code lab/bench/adopt_figures.py prints).

One case here, ``name``: the cluster's endpoint is a DNS name, so the move adopts the load balancer, its floating IP
and the A record, and the clients through the address cover what the ``fip`` case's clients see. The ``fip`` case
(no record to adopt: the stack makes its own) adds no step of the component's that this one skips; its full run
with real clients is `lab/bench/adopt_figures.py --cases fip` (both cases by default), kept out of `make test` for
the suite's budget (issue 53).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from localcloud.testing import Cleanup
from tests.e2e import adoption, failover
from tests.e2e.pulumi_cli import PulumiStack

pytestmark = [pytest.mark.e2e, pytest.mark.integration]


def test_a_capo_load_balancer_is_adopted_as_one_zone_of_three_and_given_back_with_no_failed_request(
        pulumi_environment, localcloud, tmp_path):
    cache = Path(os.environ.get("HA_ENDPOINT_CACHE", Path.home() / ".cache" / "ha-endpoint"))
    go_client = failover.build_go_client(cache)
    stack = PulumiStack.create(tmp_path / "adopt", "adopt", pulumi_environment)
    cleanup = Cleanup(localcloud)
    cleanup.prefix = adoption.ENDPOINT
    try:
        outcome = adoption.run_case("name", localcloud, stack, go_client, failover.dns_server(), cleanup,
                                    say=lambda text: None)
    finally:
        stack.destroy(check=False)
        assert cleanup.run() == []
    # the preview shows the adoption: every object of the tree (and the record) imported, then updated to the
    # stack's identity
    assert "= 7 to import" in outcome.preview
    assert "to replace" not in outcome.preview and "to delete" not in outcome.preview
    # the move: the adopted load balancer and its address are az1's, every zone is ready and published
    assert outcome.adopted_lb_kept and all(outcome.zones_ready.values()) and len(outcome.published_after_move) == 3
    assert outcome.original_after_move.startswith("cp-")
    # the undo: the original load balancer and floating IP serve, the name publishes that address alone
    assert outcome.lb_after_undo == "ACTIVE/ONLINE" and outcome.fip_on_vip_after_undo
    assert outcome.original_after_undo.startswith("cp-")
    assert len(outcome.record_after_undo) == 1
    # no client, through the name or the address, missed an answer, in the move or the undo
    for row in outcome.rows:
        print(f"{adoption.line(row)} cut={row['cut']}")
    assert [(row["phase"], row["via"], row["client"], row["errors"]) for row in outcome.rows if row["failed"]] == []

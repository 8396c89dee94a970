"""Adopting a running cluster's endpoint (issue 50, docs/adoption.md): from one load balancer to one per zone, and
back, with real clients on the local cloud's data plane.

    .venv/bin/python lab/bench/adopt_figures.py                 # both cases (endpoint is a DNS name; is the floating IP)
    .venv/bin/python lab/bench/adopt_figures.py --cases fip

What each case does: tests/e2e/adoption.py (the same code tests/e2e/test_adoption_engine.py asserts on). Printed per
phase and client: requests, failed, longest time without an answer; what the preview showed for the adopted
objects; what serves afterwards. The last line is one JSON object: ``{"name": {...}, "fip": {...}, "undo": {...}}``
(name: the move of the name case, clients through the name; fip: the move of the floating-IP case, clients through
the address; undo: both undos, every client).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab")]


def main() -> None:
    from tests.e2e import adoption, failover

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(adoption.CASES))
    args = parser.parse_args()
    cases = [case for case in args.cases.split(",") if case]
    if set(cases) - set(adoption.CASES):
        parser.error(f"--cases: among {', '.join(adoption.CASES)}")

    from bench.lib.engine_in_use import describe, engine_environment
    from localcloud.testing import Cleanup, ensure_up
    from tests.e2e.pulumi_cli import PulumiStack, project_environment

    cloud = ensure_up()
    cache = Path(os.environ.get("HA_ENDPOINT_CACHE", Path.home() / ".cache" / "ha-endpoint"))
    go_client = failover.build_go_client(cache)
    server = failover.dns_server()
    environment = {**engine_environment(project_environment()), "OS_CLIENT_CONFIG_FILE": cloud.clouds_yaml,
                   "OS_CLOUD": "localcloud"}
    print(f"adopt: CAPO's single load balancer (ovn) -> one per zone and back; clients {', '.join(adoption.CLIENTS)} every "
          f"0.5 s, TTL {adoption.TTL} s ({describe(environment)})", flush=True)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="adopt-") as workdir:
        stack = PulumiStack.create(Path(workdir), "adopt", environment)
        for case in cases:
            cleanup = Cleanup(cloud)
            cleanup.prefix = adoption.ENDPOINT
            try:
                rows += adoption.run_case(case, cloud, stack, go_client, server,
                                          cleanup, say=lambda text: print(text, flush=True)).rows
            finally:
                stack.destroy(check=False)
                left = cleanup.run()
                if left:
                    print(f"  left behind: {left}")
    print("\n| case | phase | through | client | requests | failed | longest without an answer (s) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print(adoption.line(row))
    print(json.dumps({
        "name": adoption.totals([row for row in rows if row["case"] == "name" and row["phase"] == "move" and
                        row["via"] == "name"]),
        "fip": adoption.totals([row for row in rows if row["case"] == "fip" and row["phase"] == "move" and
                       row["via"] == "fip"]),
        "undo": adoption.totals([row for row in rows if row["phase"] == "undo"]),
    }))


if __name__ == "__main__":
    main()

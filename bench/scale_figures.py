"""Members at scale: figures for the mock runtime and for the real engine on the local cloud.

    .venv/bin/python bench/scale_figures.py                 # mock figures, and the local cloud at 3 and 30 members
    .venv/bin/python bench/scale_figures.py --members 3 30 90
    .venv/bin/python bench/scale_figures.py --mock-only

Mock runtime (Pulumi mocks + the fake cloud of tests/mocks, a preview, one process per case so that peak memory is
the case's own): registrations, seconds, milliseconds per registration and peak RSS, from the dev shape up to 20
zones x 500 members (one listener: 20,205 registrations), plus the size of the facts the component records.

Local cloud (the real engine and provider, 3 zones, one TCP listener, members per zone as given): `up`, a rotation
that replaces every member (make-before-break: new members are created and ready before the old ones go), and
`destroy`, with the cost per member. Octavia serializes writes per load balancer, so a zone's members are created
one after another; zones run in parallel.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MOCK_CASES = ((3, 1, 2), (6, 50, 1), (10, 200, 1), (20, 500, 1))  # zones, members per zone, listeners

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from tests.mocks import FakeCloud, run_component
from tests.mocks.configs import sized_endpoint
zones, members, listeners = map(int, sys.argv[2:5])
raw = sized_endpoint(zones, members, listeners, wide=True)
cloud = FakeCloud.topology(preview=True, zones=zones, fip_count=zones + 5, wide=True)
start = time.perf_counter()
run = run_component(raw, cloud, preview=True)
seconds = time.perf_counter() - start
facts = next(r for r in run.registrations if r["type"] == "haendpoint:index:HaEndpoint")["outputs"]["facts"]
print(json.dumps({"registrations": len(run.registrations), "seconds": seconds,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "facts_kib": len(json.dumps(facts)) / 1024}))
"""


def mock_figures() -> None:
    print("mock runtime (preview under Pulumi mocks, one process per case)")
    print(f"  {'zones x members x listeners':28s} {'registrations':>13s} {'seconds':>8s} {'ms/reg':>7s} "
          f"{'peak MiB':>9s} {'facts KiB':>9s}")
    for zones, members, listeners in MOCK_CASES:
        out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(zones), str(members), str(listeners)],
                             capture_output=True, text=True, timeout=1800)
        if out.returncode != 0:
            print(f"  {zones} x {members} x {listeners}: failed\n{out.stderr[-2000:]}")
            continue
        figures = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"  {f'{zones} x {members} x {listeners}':28s} {figures['registrations']:13d} "
              f"{figures['seconds']:8.1f} {1000 * figures['seconds'] / figures['registrations']:7.2f} "
              f"{figures['peak_mib']:9.0f} {figures['facts_kib']:9.0f}")


def cloud_figures(sizes: list[int]) -> None:
    from localcloud.testing import Cleanup, ensure_up
    from tests.e2e.pulumi_cli import PulumiStack, project_environment

    cloud = ensure_up()
    environment = {**project_environment(), "OS_CLIENT_CONFIG_FILE": cloud.clouds_yaml, "OS_CLOUD": "localcloud"}
    print("local cloud, real engine: 3 zones, one TCP listener")
    print(f"  {'members/zone':>12s} {'up s':>8s} {'s/member':>9s} {'rotation s':>11s} {'destroy s':>10s}")
    for size in sizes:
        sweep = Cleanup(cloud)
        sweep.prefix = "scale-api"
        sweep.run()
        with tempfile.TemporaryDirectory(prefix="scale-figures-") as workdir:
            stack = PulumiStack.create(Path(workdir), "scale", environment)
            try:
                stack.write_config(_endpoint(size, first_host=10))
                up = stack.up(policy=False)
                stack.write_config(_endpoint(size, first_host=10 + size))
                rotation = stack.up(policy=False)
            finally:
                destroy = stack.destroy(check=False)
        print(f"  {size:12d} {up.seconds:8.1f} {up.seconds / size:9.2f} {rotation.seconds:11.1f} "
              f"{destroy.seconds:10.1f}")


def _endpoint(members_per_zone: int, first_host: int) -> dict:
    return {
        "name": "scale-api", "floatingNetwork": "public",
        "zones": {f"az{z}": {"subnet": f"cp-az{z}"} for z in (1, 2, 3)},
        "listeners": [{"port": 6443, "monitor": {"type": "TCP"}}],
        "members": [{"name": f"cp-{z}-{host}", "address": f"10.10.{z}.{host}", "az": f"az{z}"}
                    for z in (1, 2, 3) for host in range(first_host, first_host + members_per_zone)],
        "dns": {"dnsZone": "example.test.", "record": "scale-api", "ttl": 30},
        "readiness": {"timeoutSeconds": 900},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, nargs="*", default=[3, 30], help="members per zone on the local cloud")
    parser.add_argument("--mock-only", action="store_true")
    options = parser.parse_args()
    started = time.perf_counter()
    mock_figures()
    if not options.mock_only:
        cloud_figures(options.members)
    print(f"({time.perf_counter() - started:.0f} s; peak of this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB)")


if __name__ == "__main__":
    main()

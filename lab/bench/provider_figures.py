"""The dev stack on Octavia's ovn provider beside the amphora shape, measured in one run on the local cloud.

Prints, per shape and as medians over --rounds N interleaved rounds (ovn, amphora, amphora, ovn, ...: the machine's
load moves from one minute to the next): `pulumi up` (pack preview excluded), the seconds from the end of `up` until
every zone's floating IP answers on the API port (ovn only: amphora's data path is simulated), `pulumi destroy`, and
the resources each shape registers.

  ovn      Pulumi.dev.yaml as it is (one TCP listener, the seeded control-plane nodes cp-0..2 serving on 6443)
  amphora  Pulumi.amphora.yaml (HTTPS /readyz and TCP listeners; members ONLINE by the local cloud's heartbeat)

Each shape runs under its own endpoint name and record, in a private copy of the project with its own backend.

Run: .venv/bin/python lab/bench/provider_figures.py [--rounds N]   (needs lab/engine/build.sh and `make localcloud`, the data plane on)
"""

from __future__ import annotations

import argparse
import socket
import ssl
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab")]

import yaml  # noqa: E402

from bench.lib.engine_in_use import describe, engine_environment  # noqa: E402
from localcloud.dataplane import reach  # noqa: E402
from localcloud.testing import ensure_up  # noqa: E402
from tests.e2e.pulumi_cli import PulumiStack, project_environment  # noqa: E402

SHAPES = {"ovn": "Pulumi.dev.yaml", "amphora": "Pulumi.amphora.yaml"}


def endpoint(shape: str) -> dict:
    raw = yaml.safe_load((ROOT / SHAPES[shape]).read_text())["config"]["ha-endpoint:endpoint"]
    name = f"bench-{shape}"
    return {**raw, "name": name, "dns": {**raw["dns"], "record": name}}


def answers(address: str, port: int) -> bool:
    """Whether a TLS handshake on ``address:port`` completes (what a client of the API needs first)."""
    reach.check(address)
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    try:
        with socket.create_connection((address, port), timeout=1) as raw, context.wrap_socket(raw):
            return True
    except OSError:
        return False


def serving_after(outputs: dict, port: int, timeout: float = 60) -> float:
    started = time.monotonic()
    pending = {zone["floatingIp"] for zone in outputs["zones"].values() if zone.get("floatingIp")}
    while pending and time.monotonic() - started < timeout:
        pending = {address for address in pending if not answers(address, port)}
        if pending:
            time.sleep(0.2)
    if pending:
        raise RuntimeError(f"floating IPs {sorted(pending)} not answering on {port} {timeout:.0f}s after up")
    return time.monotonic() - started


def round_of(stack: PulumiStack, shape: str) -> dict:
    figures = {"up_s": stack.up(policy=False).seconds}
    try:
        outputs = stack.outputs()
        figures["resources"] = len(stack.resources())
        if shape == "ovn":
            figures["serving_after_up_s"] = serving_after(outputs, 6443)
    finally:
        figures["destroy_s"] = stack.destroy().seconds
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    cloud = ensure_up()
    environment = engine_environment(project_environment())
    environment.update(OS_CLIENT_CONFIG_FILE=cloud.clouds_yaml, OS_CLOUD="localcloud")
    order = [shape for n in range(args.rounds) for shape in (("ovn", "amphora") if n % 2 == 0 else ("amphora", "ovn"))]
    results: dict[str, list[dict]] = {shape: [] for shape in SHAPES}
    with tempfile.TemporaryDirectory() as tmp:
        stacks = {}
        for shape in SHAPES:
            stacks[shape] = PulumiStack.create(Path(tmp) / shape, "bench", environment)
            stacks[shape].write_config(endpoint(shape))
        for shape in order:
            figures = round_of(stacks[shape], shape)
            print(f"  {shape}: {figures}", flush=True)
            results[shape].append(figures)
    print(f"\n{describe(environment)}; {args.rounds} round(s), medians")
    print(f"{'figure':<34}{'ovn (Pulumi.dev.yaml)':>24}{'amphora (Pulumi.amphora.yaml)':>32}")
    for key, label in (("up_s", "pulumi up (s)"), ("serving_after_up_s", "every FIP answers after up (s)"),
                       ("destroy_s", "pulumi destroy (s)"), ("resources", "resources in the stack")):
        cells = []
        for shape in SHAPES:
            values = [r[key] for r in results[shape] if key in r]
            cells.append(("-" if not values else f"{statistics.median(values):.0f}" if key == "resources"
                          else f"{statistics.median(values):.1f}"))
        print(f"{label:<34}{cells[0]:>24}{cells[1]:>32}")


if __name__ == "__main__":
    main()

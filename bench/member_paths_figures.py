"""Issue 47's measurement of the member write paths, before one of them is kept: the dev shapes' `up` with
``memberUpdates: per-member`` and with ``memberUpdates: batch``, side by side in one run, on both providers.

Prints, per shape file (default Pulumi.dev.yaml: ovn, and Pulumi.amphora.yaml: amphora) and mode, the wall time of
`up` (from nothing), of a no-change `up`, and of `destroy`, through the real engine with the unpatched OpenStack
plugin on the local cloud; the modes are interleaved per round (per-member first in odd rounds).

Run: .venv/bin/python bench/member_paths_figures.py [--rounds N] [--shape Pulumi.dev.yaml ...]
     (needs engine/build.sh and `make localcloud`; about 2-4 min per shape and round on 2 cores)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from bench.engine_figures import engine_on_local_cloud  # noqa: E402
from tests.e2e.pulumi_cli import PulumiStack, with_openstack_plugin  # noqa: E402

MODES = ("per-member", "batch")


def shape_of(path: Path, mode: str) -> dict:
    endpoint = yaml.safe_load(path.read_text())["config"]["ha-endpoint:endpoint"]
    name = f"bench-{mode.split('-')[0]}"
    return {**endpoint, "name": name, "dns": {**endpoint["dns"], "record": name}, "memberUpdates": mode}


def run(stack: PulumiStack, *args: str) -> float:
    result = stack.run(*args, "--yes", "--non-interactive", "--skip-preview", check=False)
    if result.returncode != 0:
        raise RuntimeError(f"pulumi {args[0]} failed ({result.returncode}):\n{result.output[-3000:]}")
    return result.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--shape", type=Path, nargs="+",
                        default=[ROOT / "Pulumi.dev.yaml", ROOT / "Pulumi.amphora.yaml"])
    options = parser.parse_args()
    _cloud, environment, plugin = engine_on_local_cloud()
    with tempfile.TemporaryDirectory(prefix="member-paths-") as workdir:
        env = with_openstack_plugin(environment, plugin, Path(workdir) / "home")
        for shape in options.shape:
            rows: dict[str, list[dict]] = {mode: [] for mode in MODES}
            for number in range(options.rounds):
                for mode in (MODES if number % 2 == 0 else MODES[::-1]):
                    stack = PulumiStack.create(Path(workdir) / f"{shape.stem}-{mode}-{number}", "bench", env)
                    stack.write_config(shape_of(shape, mode))
                    row: dict = {}
                    try:
                        row["up_s"] = run(stack, "up")
                        row["noop_up_s"] = run(stack, "up")
                        print(f"{shape.name} round {number + 1} {mode:10s}: up {row['up_s']:6.2f} s, no-change up "
                              f"{row['noop_up_s']:6.2f} s", flush=True)
                    finally:
                        try:
                            row["destroy_s"] = run(stack, "destroy")
                        except RuntimeError as failed:   # the cloud's own fault (e.g. OVN's NB timing out): again
                            print(f"{shape.name} {mode}: destroy failed, once more: {str(failed)[-300:]}", flush=True)
                            row["destroy_s"] = float("nan")
                            run(stack, "destroy")
                    rows[mode].append(row)
                    print(f"{shape.name} round {number + 1} {mode:10s}: destroy {row['destroy_s']:6.2f} s", flush=True)
            for mode in MODES:
                print(f"{shape.name} median of {options.rounds} {mode:10s}: up "
                      f"{statistics.median(r['up_s'] for r in rows[mode]):6.2f} s, no-change up "
                      f"{statistics.median(r['noop_up_s'] for r in rows[mode]):6.2f} s, destroy "
                      f"{statistics.median(r['destroy_s'] for r in rows[mode]):6.2f} s", flush=True)


if __name__ == "__main__":
    main()

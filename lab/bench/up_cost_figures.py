"""What one `up` of the dev shape costs the machine, this checkout beside another revision, alternated in one run.

    .venv/bin/python lab/bench/up_cost_figures.py --against HEAD~1
    .venv/bin/python lab/bench/up_cost_figures.py --against 9f8eda5 --rounds 3 --shape amphora

A change to what the component asks of the cloud (a gate's polls, a lookup) shows in the CPU an `up` costs before it
shows in a suite's or a fleet's wall time, where the neighbours' noise hides a few percent. This brings the endpoint of
the shape's stack file (named ``bench-cost``, its own stack and file backend: never the dev stack) up and destroys it
again, from this checkout's files as they are and from the other revision's (``git archive`` into a temporary
directory), in turn, ``--rounds`` times each. Each `up` runs the program, its dynamic providers and the policy pack of
its own revision (``PYTHONPATH`` first: the virtualenv's editable install points at this checkout), in the same
virtualenv, engine and local cloud.

Prints one row per `up`: its wall time, the machine's CPU-seconds (/proc/stat: every process, the cloud's services
included), the cloud's services' CPU-seconds (the costliest by name) and the gates' listings; then each revision's
means and the ratios of this checkout's to the other's. Run it on an otherwise idle machine: the machine's figure
counts every process.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab")]

from bench.engine_figures import SHAPES, shaped_endpoint  # noqa: E402
from bench.lib.cloud_cpu import costliest, service_cpu_seconds  # noqa: E402
from bench.lib.machine import machine_cpu_seconds  # noqa: E402
from localcloud.testing import ensure_up  # noqa: E402
from tests.e2e.pulumi_cli import PROJECT_FILES, PulumiStack, project_environment  # noqa: E402

STACK = "bench-cost"
TREE_FILES = (*PROJECT_FILES, "lab")
"""What an `up` runs of a revision: the project's files and the lab (the local cloud's client helpers)."""


def revisions(against: str) -> tuple[str, str]:
    """The short name of the revision ``against`` and this checkout's (``git describe``: ``-dirty`` with changes)."""
    def git(*words: str) -> str:
        return subprocess.run(["git", *words], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()

    return git("rev-parse", "--short", against), git("describe", "--always", "--dirty")


def revision_tree(revision: str, into: Path) -> Path:
    """The revision's project files, unpacked into ``into``."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", revision, *TREE_FILES], cwd=ROOT, check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def stack_of(tree: Path, workdir: Path, shape: str, environment: dict[str, str]) -> PulumiStack:
    """A stack of ``tree``'s program in ``workdir`` (its own backend), running ``tree``'s modules first."""
    workdir.mkdir(parents=True)
    for name in ("Pulumi.yaml", "__main__.py", "stacks", "policies"):
        (workdir / name).symlink_to(tree / name)
    (workdir / ".venv").symlink_to(ROOT / ".venv")
    path = os.pathsep.join(str(p) for p in (tree / "components", tree / "lab", tree))
    stack = PulumiStack(workdir, STACK, {**environment, "PYTHONPATH": path})
    stack.run("stack", "init", STACK, "--non-interactive")
    endpoint = shaped_endpoint(shape)
    stack.write_config({**endpoint, "name": STACK, "dns": {**endpoint["dns"], "record": STACK}})
    return stack


def one_up(stack: PulumiStack) -> dict:
    """Up (with the policy pack), read what it cost, destroy (also when the up failed: the stack's backend goes
    with the scratch directory, so nothing it created may outlive this)."""
    services, machine, started = service_cpu_seconds(), machine_cpu_seconds(), time.monotonic()
    try:
        stack.up()
        wall, machine = time.monotonic() - started, machine_cpu_seconds() - machine
        after = service_cpu_seconds()
        polls = [resource["outputs"].get("polls") for resource in stack.export()["deployment"]["resources"]
                 if resource["type"].endswith(":MemberReadiness")]
    finally:
        stack.destroy()
    cloud = {name: after[name] - services.get(name, 0.0) for name in after}
    return {"wall_s": wall, "machine_cpu_s": machine, "cloud_cpu_s": sum(cloud.values()),
            "services": {name: seconds for name, seconds in cloud.items() if seconds >= 0.2}, "gate_polls": polls}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", required=True, help="the revision to compare this checkout with (e.g. HEAD~1)")
    parser.add_argument("--rounds", type=int, default=3, help="ups of each revision, alternated (default 3)")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="dev", help="whose stack file (default dev)")
    args = parser.parse_args(argv)
    revision, here = revisions(args.against)
    ensure_up()
    environment = project_environment()
    rows: dict[str, list[dict]] = {"this checkout": [], revision: []}
    with tempfile.TemporaryDirectory(prefix="up-cost-") as scratch:
        stacks = {"this checkout": stack_of(ROOT, Path(scratch) / "here", args.shape, environment),
                  revision: stack_of(revision_tree(revision, Path(scratch) / "tree"), Path(scratch) / "there",
                                     args.shape, environment)}
        print(f"up cost figures {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: the {args.shape} shape, "
              f"this checkout ({here}) beside {revision}, {args.rounds} round(s) alternated")
        print("| round | revision | up wall (s) | machine CPU-s | cloud CPU-s | costliest services (CPU-s) | gate polls |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for round_ in range(1, args.rounds + 1):
            for name, stack in stacks.items():
                row = one_up(stack)
                rows[name].append(row)
                print(f"| {round_} | {name} | {row['wall_s']:.1f} | {row['machine_cpu_s']:.1f} | "
                      f"{row['cloud_cpu_s']:.1f} | {costliest(row['services'], 4)} | {row['gate_polls']} |", flush=True)
    means = {name: {key: statistics.mean(row[key] for row in found) for key in ("wall_s", "machine_cpu_s",
                                                                                 "cloud_cpu_s")}
             for name, found in rows.items()}
    for name, mean in means.items():
        print(f"{name}: mean up {mean['wall_s']:.1f} s, machine {mean['machine_cpu_s']:.1f} CPU-s, cloud "
              f"{mean['cloud_cpu_s']:.1f} CPU-s")
    ratio = {key: means["this checkout"][key] / means[revision][key] for key in means[revision]}
    print(f"this checkout / {revision}: up wall x{ratio['wall_s']:.3f}, machine CPU x{ratio['machine_cpu_s']:.3f}, "
          f"cloud CPU x{ratio['cloud_cpu_s']:.3f}")
    print(json.dumps({"against": revision, "here": here, "means": means, "ratios": ratio}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

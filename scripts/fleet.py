"""Run one Pulumi command over many endpoint stacks: ``preview``, ``up``, ``destroy`` or ``refresh``.

    .venv/bin/python scripts/fleet.py up fleet/ --parallel 4 --json fleet-report.json

A fleet is a set of stack files (``Pulumi.<stack>.yaml``), given one by one or as directories holding them. A
directory is a Pulumi project of this program: the command writes its ``Pulumi.yaml`` (``main:`` this checkout) when
it has none, so ``pulumi -C <dir> ... -s <stack>`` works there too; the repository's root is such a directory.

Each stack runs through Pulumi's Automation API, at most ``--parallel`` at once; ``up`` is a ``preview`` with the
policy pack first (a mandatory violation stops that stack before anything changes, as ``make up`` does), then ``up``
with the pack. One stack's failure never stops the others. The run shows each stack's progress (rich), then a summary
table (stack, result, changes, time, published zones), writes a JSON report with ``--json``, and exits 1 when a stack
failed. ``--shard K/N`` runs every N-th stack from the K-th (sorted by name), for a CI matrix of N runners sharing
one state backend (docs/operations.md "A fleet"). The environment is ``scripts/env.sh``'s (the engine, the state
backend); secrets: ``PULUMI_CONFIG_PASSPHRASE``/``_FILE`` or a stack file's own ``secretsprovider:``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "ha-endpoint"
ACTIONS = ("preview", "up", "destroy", "refresh")


class FleetError(Exception):
    """Bad input to the fleet command: nothing ran."""


@dataclass(frozen=True)
class StackFile:
    """One stack of the fleet: its name and the project directory its file sits in."""

    name: str
    directory: Path

    @property
    def path(self) -> Path:
        return self.directory / f"Pulumi.{self.name}.yaml"


@dataclass
class Outcome:
    """What one stack's run gave."""

    stack: str
    file: str
    result: str = "queued"  # queued, running, succeeded, failed, locked, refused (`up` stopped at its preview)
    phase: str = ""
    changes: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    published_zones: list[str] = field(default_factory=list)
    resources_done: int = 0
    resource_seconds: dict[str, float] = field(default_factory=dict)
    """Seconds the engine spent on the stack's resource steps, summed per service (they overlap: where the time goes,
    not a wall time)."""
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.result == "succeeded"


def find_stacks(paths: list[str]) -> list[StackFile]:
    """The stack files given, directories expanded to the ``Pulumi.<stack>.yaml`` files they hold; every problem at
    once."""
    stacks: list[StackFile] = []
    problems: list[str] = []
    for given in paths:
        path = Path(given).resolve()
        if path.is_dir():
            found = sorted(p for p in path.glob("Pulumi.*.yaml"))
            if not found:
                problems.append(f"{given}: no stack file (Pulumi.<stack>.yaml) in this directory")
            stacks += [StackFile(p.name[len("Pulumi."):-len(".yaml")], path) for p in found]
        elif path.is_file() and path.name.startswith("Pulumi.") and path.name.endswith(".yaml") \
                and path.name != "Pulumi.yaml":
            stacks.append(StackFile(path.name[len("Pulumi."):-len(".yaml")], path.parent))
        else:
            problems.append(f"{given}: not a stack file (Pulumi.<stack>.yaml) or a directory of them")
    names: dict[str, StackFile] = {}
    for stack in stacks:
        if stack.name in names and names[stack.name] != stack:
            problems.append(f"stack {stack.name!r} is given twice ({names[stack.name].path} and {stack.path}): "
                            "a stack's name is its identity in the state backend; rename one file")
        names[stack.name] = stack
    for directory in sorted({s.directory for s in stacks}):
        project_file = directory / "Pulumi.yaml"
        if project_file.exists() and not _is_this_project(project_file):
            problems.append(f"{project_file}: a project other than {PROJECT!r}; put the fleet's stack files in a "
                            "directory of their own")
    if problems:
        raise FleetError("\n".join(problems))
    return sorted(set(stacks), key=lambda s: s.name)


def _is_this_project(project_file: Path) -> bool:
    import yaml
    return (yaml.safe_load(project_file.read_text()) or {}).get("name") == PROJECT


def shard(stacks: list[StackFile], spec: Optional[str]) -> list[StackFile]:
    """The stacks of shard ``K/N`` (every N-th from the K-th, 1-based, in name order); all of them without one."""
    if not spec:
        return stacks
    try:
        k, n = (int(part) for part in spec.split("/"))
    except ValueError:
        raise FleetError(f"--shard {spec!r}: give K/N with 1 <= K <= N, e.g. --shard 2/4") from None
    if not 1 <= k <= n:
        raise FleetError(f"--shard {spec!r}: give K/N with 1 <= K <= N, e.g. --shard 2/4")
    return stacks[k - 1::n]


def check_secrets(stacks: list[StackFile], environ: dict[str, str]) -> None:
    """Every stack can decrypt its secrets: a passphrase in the environment, or its own secrets provider."""
    if environ.get("PULUMI_CONFIG_PASSPHRASE") is not None or environ.get("PULUMI_CONFIG_PASSPHRASE_FILE"):
        return
    missing = [s for s in stacks
               if not any(line.startswith("secretsprovider:") for line in s.path.read_text().splitlines())]
    if missing:
        raise FleetError("no secrets provider for " + ", ".join(str(s.path) for s in missing) + ": set "
                         "PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE), or give each stack a secrets "
                         "provider (`pulumi stack change-secrets-provider`)")


def published_zones(outputs: dict[str, Any]) -> list[str]:
    """The zones the endpoint's ``zones`` output says are in DNS."""
    zones = outputs.get("zones")
    zones = getattr(zones, "value", zones) or {}
    return sorted(az for az, zone in zones.items() if isinstance(zone, dict) and zone.get("published"))


def service_of(resource_type: str) -> Optional[str]:
    """What a step's time counts towards: the OpenStack service, our gates (readiness, drains), or nothing (the stack
    and components, whose steps only wrap their children's)."""
    if resource_type.startswith("openstack:"):
        module = resource_type.split(":")[1].split("/")[0]
        return {"loadbalancer": "octavia", "dns": "designate", "networking": "neutron"}.get(module, module)
    if resource_type.startswith("pulumi-python:dynamic") or resource_type.startswith("haendpoint:index:"):
        return None if resource_type == "haendpoint:index:HaEndpoint" else "gates"
    return None


def first_error(text: str) -> str:
    """The line of a failed command's output that says why (Pulumi's ``error:`` lines), else its last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:") or "mandatory policy violation" in line]
    return (errors[0] if errors else (lines[-1] if lines else ""))[:400]


def workspace(directory: Path):
    """The Automation API workspace of a fleet directory: this program, this virtualenv."""
    from pulumi import automation as auto
    settings = None
    if not (directory / "Pulumi.yaml").exists():
        settings = auto.ProjectSettings(
            name=PROJECT, main=str(ROOT),
            runtime=auto.ProjectRuntimeInfo(name="python", options={"virtualenv": str(ROOT / ".venv")}),
            description="A fleet of ha-endpoint stacks (scripts/fleet.py); the program is main:'s checkout.")
    return auto.LocalWorkspace(work_dir=str(directory), project_settings=settings)


def run_stack(action: str, stack: StackFile, outcome: Outcome, lock: threading.Lock) -> None:
    """One stack's command, its outcome written into ``outcome`` as it goes (the display reads it)."""
    from pulumi import automation as auto
    started = time.monotonic()
    outcome.result = "running"
    pack = [str(ROOT / "policies")]

    step_started: dict[str, float] = {}

    def on_event(event) -> None:
        if event.resource_pre_event is not None and event.resource_pre_event.metadata.op.value != "same":
            step_started[event.resource_pre_event.metadata.urn] = time.monotonic()
        elif event.res_outputs_event is not None:
            metadata = event.res_outputs_event.metadata
            service = service_of(metadata.type)
            with lock:
                outcome.resources_done += 1
                if service and metadata.urn in step_started:
                    spent = time.monotonic() - step_started.pop(metadata.urn)
                    outcome.resource_seconds[service] = round(outcome.resource_seconds.get(service, 0) + spent, 1)
        elif event.diagnostic_event is not None and event.diagnostic_event.severity == "error":
            with lock:
                outcome.error = outcome.error or first_error(event.diagnostic_event.message)

    try:
        with lock:
            outcome.phase = "selecting"
        pulumi_stack = auto.Stack.create_or_select(stack.name, workspace(stack.directory))
        if action in ("preview", "up"):
            with lock:
                outcome.phase = "preview (with the policy pack)"
            preview = pulumi_stack.preview(policy_packs=pack, on_event=on_event, on_output=lambda _: None)
            outcome.changes = {k: v for k, v in (preview.change_summary or {}).items() if k != "same" and v}
        if action == "up":
            with lock:
                outcome.phase, outcome.resources_done, outcome.resource_seconds = "up", 0, {}
                step_started.clear()
            result = pulumi_stack.up(policy_packs=pack, on_event=on_event, on_output=lambda _: None)
            outcome.changes = {k: v for k, v in (result.summary.resource_changes or {}).items() if k != "same" and v}
            outcome.published_zones = published_zones(result.outputs)
        elif action == "destroy":
            with lock:
                outcome.phase = "destroy"
            result = pulumi_stack.destroy(on_event=on_event, on_output=lambda _: None)
            outcome.changes = dict(result.summary.resource_changes or {})
        elif action == "refresh":
            with lock:
                outcome.phase = "refresh"
            result = pulumi_stack.refresh(on_event=on_event, on_output=lambda _: None)
            outcome.changes = {k: v for k, v in (result.summary.resource_changes or {}).items() if k != "same" and v}
            outcome.published_zones = published_zones(pulumi_stack.outputs())
        elif action == "preview":
            outcome.published_zones = published_zones(pulumi_stack.outputs())
        outcome.result = "succeeded"
    except auto.ConcurrentUpdateError as error:
        outcome.result, outcome.error = "locked", first_error(str(error)) or "another update of this stack is running"
    except auto.CommandError as error:
        text = str(error)
        # stopped at the preview (the program's checks, the pack's mandatory rules, the cloud's answers at preview):
        # nothing changed
        outcome.result = "refused" if action == "up" and outcome.phase.startswith("preview") else "failed"
        outcome.error = outcome.error or first_error(text)
    except Exception as error:  # a bug or an environment fault in this stack's run: report it, run the others
        outcome.result, outcome.error = "failed", f"{type(error).__name__}: {error}"[:400]
    finally:
        outcome.seconds = round(time.monotonic() - started, 1)
        outcome.phase = ""


def summary_table(action: str, outcomes: list[Outcome]):
    from rich.table import Table
    table = Table(title=f"fleet {action}: {sum(o.ok for o in outcomes)} of {len(outcomes)} succeeded")
    for column in ("stack", "result", "changes", "time (s)", "published zones", "why"):
        table.add_column(column)
    for o in outcomes:
        changes = ", ".join(f"{k} {v}" for k, v in sorted(o.changes.items())) or "-"
        table.add_row(o.stack, o.result if o.ok else f"[red]{o.result}[/red]", changes, f"{o.seconds:.1f}",
                      " ".join(o.published_zones) or "-", o.error or "")
    return table


def progress_table(outcomes: list[Outcome], started: float):
    from rich.table import Table
    table = Table(title=f"fleet: {time.monotonic() - started:.0f} s")
    for column in ("stack", "state", "resources done", "time (s)"):
        table.add_column(column)
    for o in outcomes:
        table.add_row(o.stack, o.phase or o.result, str(o.resources_done), f"{o.seconds:.0f}" if o.seconds else "")
    return table


def run(action: str, stacks: list[StackFile], parallel: int, console) -> list[Outcome]:
    """Every stack's command, ``parallel`` at once; the display live on a terminal, a line per stack otherwise."""
    from rich.live import Live
    lock = threading.Lock()
    outcomes = [Outcome(stack=s.name, file=str(s.path)) for s in stacks]
    for directory in sorted({s.directory for s in stacks}):
        workspace(directory)  # the project file first, once per directory, before the threads
    started = time.monotonic()

    def one(index: int) -> None:
        if not console.is_terminal:
            console.print(f"fleet: {stacks[index].name}: {action} started")
        run_stack(action, stacks[index], outcomes[index], lock)
        if not console.is_terminal:
            o = outcomes[index]
            console.print(f"fleet: {o.stack}: {o.result} in {o.seconds:.1f} s" + (f": {o.error}" if o.error else ""))

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        futures = [pool.submit(one, i) for i in range(len(stacks))]
        if console.is_terminal:
            with Live(progress_table(outcomes, started), console=console, refresh_per_second=2) as live:
                while not all(f.done() for f in futures):
                    time.sleep(0.5)
                    live.update(progress_table(outcomes, started))
        for future in futures:
            future.result()
    return outcomes


def report(action: str, outcomes: list[Outcome], seconds: float) -> dict[str, Any]:
    """The JSON report: one object per stack, the totals."""
    return {"action": action, "seconds": round(seconds, 1), "stacks": [
        {k: v for k, v in asdict(o).items() if k not in ("phase", "resources_done")} for o in outcomes],
            "succeeded": sum(o.ok for o in outcomes), "failed": sum(not o.ok for o in outcomes)}


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="scripts/fleet.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=ACTIONS)
    parser.add_argument("paths", nargs="+", metavar="PATH", help="stack files (Pulumi.<stack>.yaml) or directories")
    parser.add_argument("--parallel", type=int, default=4, help="stacks at once (default 4)")
    parser.add_argument("--json", metavar="FILE", help="write the JSON report here (- for standard output)")
    parser.add_argument("--shard", metavar="K/N", help="only every N-th stack from the K-th (a CI matrix of N)")
    args = parser.parse_args(argv)
    if args.parallel < 1:
        parser.error(f"--parallel {args.parallel}: give at least 1")
    return args


def main(argv: Optional[list[str]] = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    from rich.console import Console
    console = Console(stderr=args.json == "-")
    if not console.is_terminal:
        console = Console(stderr=args.json == "-", width=200)  # CI logs: whole names and reasons, not 80 columns
    try:
        stacks = shard(find_stacks(args.paths), args.shard)
        check_secrets(stacks, dict(os.environ))
    except FleetError as error:
        print(f"fleet: {error}", file=sys.stderr)
        return 2
    if not stacks:
        print(f"fleet: shard {args.shard} has no stack", file=sys.stderr)
        return 0
    started = time.monotonic()
    outcomes = run(args.action, stacks, args.parallel, console)
    console.print(summary_table(args.action, outcomes))
    document = report(args.action, outcomes, time.monotonic() - started)
    if args.json == "-":
        print(json.dumps(document, indent=1))
    elif args.json:
        Path(args.json).write_text(json.dumps(document, indent=1) + "\n")
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    if "HA_ENDPOINT_CACHE" not in os.environ:  # scripts/env.sh's environment: the engine, the state backend
        os.execvp("bash", ["bash", "-c", f'. "{ROOT}/scripts/env.sh" && exec "$0" "$@"', sys.executable,
                           *sys.argv])
    sys.exit(main())

"""Where an engine run's time goes: per-resource step timings from the engine's event log.

The engine writes one JSON event per line to ``--event-log <file>`` (the CLI accepts the flag with
``PULUMI_DEBUG_COMMANDS=true``, which tests/e2e/pulumi_cli.PulumiStack sets). Its own timestamps are whole seconds,
so :func:`run_logged` tails the file while the command runs and stamps each event with this process's monotonic
clock (resolution: the 20 ms poll). A step of a resource lasts from its ``resourcePreEvent`` to its
``resOutputsEvent`` (or ``resOpFailedEvent``).

:func:`chain` explains the wall time: starting from the step that ended last, it walks back to the step that ended
last before this one started, and so on; the gaps between links are time no step of the chain was running (the
engine or the program between steps).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Optional


@dataclass
class Step:
    """One resource operation of the run (create, update, delete, same, replace...), seconds from the command start."""

    op: str
    type: str
    name: str
    start: float
    end: Optional[float]
    custom: bool = True

    @property
    def seconds(self) -> float:
        return (self.end if self.end is not None else self.start) - self.start

    @property
    def label(self) -> str:
        return f"{self.op} {self.type.rsplit(':', 1)[-1]} {self.name}"


def run_logged(stack, *args: str, timeout: float = 1800) -> tuple[float, int, str, list[tuple[float, dict]]]:
    """Run ``pulumi <args> --event-log`` in ``stack`` (a tests.e2e.pulumi_cli.PulumiStack); returns (seconds,
    exit code, output, [(offset, event)])."""
    log = stack.workdir / f"events-{time.monotonic_ns()}.jsonl"
    argv = ["pulumi", *args, "--stack", stack.stack, "--event-log", str(log)]
    events: list[tuple[float, dict]] = []
    started = time.monotonic()
    process = subprocess.Popen(argv, cwd=stack.workdir, env=stack.env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    done = threading.Event()
    tail = threading.Thread(target=_tail, args=(log, started, events, done), daemon=True)
    tail.start()
    output, _ = process.communicate(timeout=timeout)
    seconds = time.monotonic() - started
    done.set()
    tail.join()
    return seconds, process.returncode, output, events


def _tail(path: Path, started: float, events: list, done: threading.Event) -> None:
    position, pending = 0, ""
    while True:
        finished = done.is_set()
        if path.exists():
            with path.open() as handle:
                handle.seek(position)
                chunk = handle.read()
                position = handle.tell()
            now = time.monotonic() - started
            pending += chunk
            *lines, pending = pending.split("\n")
            for line in lines:
                if line.strip():
                    events.append((now, json.loads(line)))
        if finished:
            return
        time.sleep(0.02)


def steps(events: list[tuple[float, dict]]) -> list[Step]:
    """The resource steps of a run, in start order (provider registrations left out)."""
    open_steps: dict[tuple[str, str], Step] = {}
    result: list[Step] = []
    for offset, event in events:
        for kind in ("resourcePreEvent", "resOutputsEvent", "resOpFailedEvent"):
            if kind not in event:
                continue
            metadata = event[kind]["metadata"]
            urn, op = metadata["urn"], metadata["op"]
            if "::pulumi:providers:" in urn or urn.split("::")[2].endswith("pulumi:pulumi:Stack"):
                continue
            key = (urn, op)
            if kind == "resourcePreEvent":
                state = metadata.get("new") or metadata.get("old") or {}
                step = Step(op, metadata["type"], urn.rsplit("::", 1)[1], offset, None, bool(state.get("custom")))
                open_steps[key] = step
                result.append(step)
            elif key in open_steps:
                open_steps.pop(key).end = offset
    return sorted(result, key=lambda s: s.start)


def chain(all_steps: list[Step]) -> list[Step]:
    """The steps that explain the wall time, first to last (see the module docstring); components left out (a
    component's step spans its children's)."""
    timed = [s for s in all_steps if s.end is not None and s.seconds > 0 and s.custom]
    if not timed:
        return []
    link = max(timed, key=lambda s: s.end)
    links = [link]
    while True:
        before = [s for s in timed if s.end <= link.start + 0.02 and s is not link]
        if not before:
            return list(reversed(links))
        link = max(before, key=lambda s: s.end)
        links.append(link)


def by_type(all_steps: list[Step]) -> list[tuple[str, int, float, float]]:
    """(op + type, count, total seconds, longest), most total first; components left out."""
    groups: dict[str, list[float]] = defaultdict(list)
    for step in all_steps:
        if not step.custom:
            continue
        groups[f"{step.op} {step.type.rsplit(':', 1)[-1]}"].append(step.seconds)
    return sorted(((key, len(v), sum(v), max(v)) for key, v in groups.items()), key=lambda row: -row[2])


def report(title: str, seconds: float, events: list[tuple[float, dict]], indent: str = "  ") -> None:
    """Print where the time of one run went: its chain (with gaps) and the steps per type."""
    all_steps = steps(events)
    print(f"{indent}{title}: {seconds:.1f} s wall, {sum(s.custom for s in all_steps)} resource steps")
    print(f"{indent}  chain that explains the wall time (start..end s, duration):")
    previous_end = 0.0
    for step in chain(all_steps):
        gap = step.start - previous_end
        gap_text = f" (after {gap:.1f} s with no chain step)" if gap > 0.3 else ""
        print(f"{indent}    {step.start:6.1f}..{step.end:6.1f} {step.seconds:6.1f} s  {step.label}{gap_text}")
        previous_end = step.end
    print(f"{indent}    {previous_end:6.1f}..{seconds:6.1f} {seconds - previous_end:6.1f} s  (engine: after the last step)")
    print(f"{indent}  per type: count, sum of step durations, longest")
    for key, count, total, longest in by_type(all_steps):
        if total >= 0.05:
            print(f"{indent}    {key:44s} {count:4d} {total:8.1f} s {longest:6.1f} s")

"""Run a bench script and keep what it printed as a dated record in the docs' results folder.

    .venv/bin/python lab/bench/record.py -- lab/bench/fleet_figures.py --sizes 1 8 --no-serial
    .venv/bin/python lab/bench/record.py --title "A fleet on an idle machine" -- lab/bench/fleet_figures.py

The command runs as given (its output shown as it comes); once it exits 0, what it printed is written to
``docs/results/<UTC date>-<hour><minute>-<script>.md`` under a heading (``--title``, else the first line of the
script's docstring) and one line that says when, where and how: the command, the commit (and whether the tree had
uncommitted changes), the start and end, the machine's cores and its load average before and after. The record gets
a row in ``docs/results/index.md``; the site's nav lists every record by itself (``scripts/results_nav.py``). A
command that fails is not recorded: its exit status is this script's. ``make bench`` records every script it runs.

Dated figures are written this way, not by hand into prose (issue 47): what a record says about its figures goes
under them, in a section of its own, and never changes them.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[2]


def script_title(command: list[str]) -> str:
    """The first line of the docstring of the command's script (the first argument ending in ``.py``), else the
    command itself."""
    script = next((Path(part) for part in command if part.endswith(".py")), None)
    if script is not None and (ROOT / script).is_file():
        doc = ast.get_docstring(ast.parse((ROOT / script).read_text()))
        if doc:
            return doc.strip().splitlines()[0].rstrip(".")
    return " ".join(command)


def record_path(results: Path, started: datetime.datetime, command: list[str], name: Optional[str] = None) -> Path:
    """``<UTC date>-<hour><minute>-<name>.md`` in ``results`` (so that the names sort as the runs did; the name is
    ``name``, else the script's), numbered when that minute has one already."""
    script = name or next((Path(part).stem for part in command if part.endswith(".py")), Path(command[0]).name)
    stem = f"{started:%Y-%m-%d-%H%M}-{script.replace('_', '-')}"
    path, number = results / f"{stem}.md", 1
    while path.exists():
        number += 1
        path = results / f"{stem}-{number}.md"
    return path


def commit() -> str:
    """The checkout's commit, marked when the tree has uncommitted changes."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if head.returncode != 0:
        return "no commit (not a git checkout)"
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                           text=True).stdout.strip()
    return head.stdout.strip() + (" with uncommitted changes" if dirty else "")


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def run(command: list[str]) -> tuple[int, str]:
    """Run ``command`` from the checkout's root, its output (stdout and stderr, merged) shown as it comes and kept."""
    kept: list[str] = []
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          bufsize=1) as process:
        assert process.stdout is not None
        for line in process.stdout:
            sys.stdout.write(line)
            kept.append(line)
    return process.returncode, "".join(kept)


def write_record(results: Path, title: str, command: list[str], output: str, started: datetime.datetime,
                 ended: datetime.datetime, load_before: str, load_after: str, revision: str,
                 name: Optional[str] = None) -> Path:
    """The record's page, and its row at the end of the results index."""
    day = started.strftime("%Y-%m-%d")
    path = record_path(results, started, command, name)
    shown = " ".join(shlex.quote(part) for part in command)
    fence = "````" if "```" in output else "```"
    path.write_text(
        f"# {title} ({day})\n\n"
        f"Printed by `{shown}` at {revision}, {started:%H:%M:%S}-{ended:%H:%M:%S} UTC, on {os.cpu_count()} cores; "
        f"load average (1, 5, 15 min) {load_before} before, {load_after} after. Written by `lab/bench/record.py`.\n\n"
        f"{fence}text\n{output.rstrip()}\n{fence}\n")
    index = results / "index.md"
    with index.open("a") as table:
        table.write(f"| [{title.replace('|', '/')}]({path.name}) | {day} | `{shown.replace('|', '/')}` |\n")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--title", help="the record's heading (default: the first line of the script's docstring)")
    parser.add_argument("--name", help="the record's file name after its date and time (default: the script's)")
    parser.add_argument("--results", type=Path, default=ROOT / "docs" / "results", help="the results folder")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- the command to run, e.g. lab/bench/x.py ...")
    options = parser.parse_args()
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    if not command:
        parser.error("give the command after --, e.g. -- lab/bench/args_path.py")
    if command[0].endswith(".py"):
        command = [sys.executable, *command]
    load_before, started = load(), datetime.datetime.now(datetime.timezone.utc)
    status, output = run(command)
    ended, load_after = datetime.datetime.now(datetime.timezone.utc), load()
    if status != 0:
        print(f"record.py: not recorded: the command exited {status}", file=sys.stderr)
        return status
    shown = [part if part != sys.executable else ".venv/bin/python" for part in command]
    path = write_record(options.results, options.title or script_title(command), shown, output, started, ended,
                        load_before, load_after, commit(), options.name)
    print(f"record.py: recorded in {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

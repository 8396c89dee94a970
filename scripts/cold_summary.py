"""Where `make up` spent its time, printed at its end when it installed or built something (a fresh machine).

    scripts/cold_summary.py <make's start, epoch s> <busy CPU jiffies then> <pulumi up's start, epoch s>

Makefile's `up` passes the three. Each part counts only if this run did it (its record is newer than make's start):
the virtualenv (its stamp, .venv/.installed-*), the local cloud's packages (apt: localcloud-install.json), the engine
(its BUILD_INFO: every part's wall and CPU seconds), the local cloud's start (<state>/run/last-up.json) and the
stack's `pulumi up` itself; then the run's wall time and how busy the machine's cores were (/proc/stat). A warm run
(nothing installed or built) prints nothing. Issue 53's goal is printed beside the total: a fresh machine serves in
10 minutes.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_SECONDS = 600


def busy_jiffies() -> int:
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    return sum(int(fields[i]) for i in (0, 1, 2, 5, 6, 7))   # user nice system irq softirq steal


def epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def parts(since: float) -> list[tuple[str, str]]:
    """(part, what it took) for each part this run did."""
    cache = Path(os.environ.get("HA_ENDPOINT_CACHE", Path.home() / ".cache/ha-endpoint"))
    state = Path(os.environ.get("HA_ENDPOINT_STATE", cache / "localcloud"))
    found = []
    stamps = [path.stat().st_mtime for path in (ROOT / ".venv").glob(".installed-*")]
    if stamps and max(stamps) >= since:
        found.append(("virtualenv", f"{max(stamps) - since:.0f} s"))
    install = cache / "localcloud-install.json"
    if install.exists():
        record = json.loads(install.read_text())
        if epoch(record["date"]) >= since:
            found.append(("local cloud packages (apt)", f"{record['seconds']:.0f} s, {record['packages']} packages"))
    info = cache / "engine/current/BUILD_INFO"
    if info.exists():
        lines = info.read_text().splitlines()
        built = re.match(r"built (\S+)", lines[0])
        if built and epoch(built.group(1)) >= since - 60:
            built_now = 0
            for line in lines[1:]:
                part = re.match(r"(\w[\w-]*): .*: ([\d.]+) s \(CPU ([\d.]+) s\) \[([\w.-]+)\]", line)
                # a part this run built (its cache directory is new), not one an assembly reused
                if part and (cache / "engine/parts" / part.group(4)).stat().st_mtime >= since:
                    built_now += 1
                    found.append((f"engine part {part.group(1)}",
                                  f"{float(part.group(2)):.0f} s (CPU {float(part.group(3)):.0f} s)"))
            total = re.search(r"^total: ([\d.]+) s", info.read_text(), re.M)
            if total and built_now:
                found.append(("engine, all parts", f"{float(total.group(1)):.0f} s"))
    last_up = state / "run/last-up.json"
    if found and last_up.exists():
        record = json.loads(last_up.read_text())
        if record["finished"] >= since:
            found.append(("local cloud start", f"{record['seconds']:.0f} s, {record['started']} services started"))
    return found


def main(argv: list[str]) -> int:
    started, busy_then, up_started = float(argv[0]), int(argv[1]), float(argv[2])
    found = parts(started)
    if not found:
        return 0
    now = time.time()
    found.append(("pulumi up of the stack", f"{now - up_started:.0f} s"))
    wall = now - started
    cores = os.cpu_count() or 1
    busy = (busy_jiffies() - busy_then) / os.sysconf("SC_CLK_TCK")
    print(f"\nmake up on a fresh machine (or after a change to what it builds): {wall / 60:.1f} min "
          f"(goal: at most {GOAL_SECONDS // 60} min on 2 cores)")
    for name, took in found:
        print(f"  {name:30} {took}")
    print(f"  {'CPU':30} {busy:.0f} s busy of {wall * cores:.0f} s on {cores} cores ({busy / (wall * cores):.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

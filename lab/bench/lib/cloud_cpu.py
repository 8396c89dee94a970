"""A local cloud's CPU as the bench scripts read it, by service: one reading, so that their figures count the same
seconds (``fleet_figures.py`` around a fleet's ``up``, ``cloud_idle_figures.py`` over an idle window)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from localcloud.settings import state_dir

MEMBER_SERVERS = "member servers"
"""The name the member servers' processes (``run/members/*.pid``) are counted under."""


def service_cpu_seconds(state: Optional[Path] = None) -> dict[str, float]:
    """CPU-seconds each service of the cloud at ``state`` (default: the current one) has used so far: every process
    below a PID file of its ``run`` directory (found through its parents), with its children that exited and were
    waited for (``/proc/<pid>/stat`` utime + stime + cutime + cstime), by the PID file's name; the member servers'
    under :data:`MEMBER_SERVERS`. A difference of two readings is what the services cost in between."""
    run = (state or state_dir()) / "run"
    tick = os.sysconf("SC_CLK_TCK")
    processes: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        processes[int(entry)] = (int(fields[1]), sum(int(value) for value in fields[11:15]) / tick)
    roots: dict[int, str] = {}
    for pid_file in sorted(run.glob("*.pid")) + sorted((run / "members").glob("*.pid")):
        try:
            pid = int(pid_file.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        roots.setdefault(pid, MEMBER_SERVERS if pid_file.parent.name == "members" else pid_file.stem)
    used: dict[str, float] = {}
    for pid, (_, seconds) in processes.items():
        root, hops = pid, 0
        while root not in roots and root in processes and hops < 64:
            root, hops = processes[root][0], hops + 1
        if root in roots:
            used[roots[root]] = used.get(roots[root], 0.0) + seconds
    return used


def used_since(before: dict[str, float]) -> dict[str, float]:
    """CPU-seconds each of the cloud's services used since the reading ``before``."""
    after = service_cpu_seconds()
    return {service: after[service] - before.get(service, 0.0) for service in after}


def costliest(used: dict[str, float], most: int, per: float = 1.0) -> str:
    """The ``most`` costliest services of ``used``: CPU-seconds (``per`` 1), else milliseconds per one of ``per``."""
    unit = (lambda cpu: f"{cpu:.1f}") if per == 1.0 else (lambda cpu: f"{cpu / per * 1000:.0f}")
    return ", ".join(f"{service} {unit(cpu)}" for service, cpu in sorted(used.items(), key=lambda item: -item[1])[:most])

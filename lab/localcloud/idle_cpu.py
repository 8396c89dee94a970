"""What a running local cloud costs the cores, by service, over a window (standard library only).

    python3 -m localcloud.idle_cpu                 # 120 s window (PYTHONPATH=lab, or .venv/bin/python -m ...)
    python3 -m localcloud.idle_cpu --seconds 60 --json

Each service's processes are the session its PID file in ``<state>/run`` names (``up`` starts every daemon in a
session of its own), the member servers those of ``run/members/``. For every process it reads
``/proc/<pid>/stat`` utime + stime (+ cutime + cstime: its children that exited and were waited for) at the start and
at the end of the window and adds the differences per service; the machine's busy CPU (``/proc/stat``) over the same
window is printed beside them, so what is not the cloud's shows as the rest. Run it on a cloud that has settled (a
minute after ``up``) and with nothing else busy: what it prints is the cloud's idle cost, which ``make test`` pays
once per cloud (up to three) for the whole run.
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

from .settings import state_dir

TICK = os.sysconf('SC_CLK_TCK')


def _processes() -> dict[int, tuple[int, int]]:
    """pid -> (session, CPU ticks: utime + stime + cutime + cstime)."""
    out = {}
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f'/proc/{entry}/stat').read_text().rsplit(')', 1)[1].split()
        except OSError:
            continue
        out[int(entry)] = (int(fields[3]), sum(int(v) for v in fields[11:15]))
    return out


def _sessions(run: Path) -> dict[int, str]:
    """session id -> service name, from the PID files ``up`` wrote."""
    roots = {}
    for pid_file in sorted(run.glob('*.pid')) + sorted((run / 'members').glob('*.pid')):
        try:
            pid = int(pid_file.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        name = 'member servers' if pid_file.parent.name == 'members' else pid_file.stem
        roots.setdefault(pid, name)
    return roots


def machine_busy_seconds() -> float:
    fields = [int(v) for v in Path('/proc/stat').read_text().split('\n', 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / TICK


def sample(seconds: float, state: Path | None = None) -> dict:
    run = (state or state_dir()) / 'run'
    sessions = _sessions(run)
    busy0, t0, before = machine_busy_seconds(), time.monotonic(), _processes()
    time.sleep(seconds)
    busy1, t1, after = machine_busy_seconds(), time.monotonic(), _processes()
    by_service: dict[str, float] = {}
    for pid, (session, ticks) in after.items():
        name = sessions.get(session)
        if name is None:
            continue
        base = before.get(pid, (session, None))[1]
        delta = ticks - base if base is not None else ticks  # started in the window: all of it
        by_service[name] = by_service.get(name, 0.0) + delta / TICK
    window = t1 - t0
    return {'seconds': round(window, 1), 'machine_busy': round(busy1 - busy0, 2),
            'services': {k: round(v, 2) for k, v in sorted(by_service.items(), key=lambda kv: -kv[1])}}


def print_table(result: dict) -> None:
    window = result['seconds']
    print(f'{"service":26} {"CPU-s":>7} {"% core":>7}   ({window:.0f} s window)')
    total = 0.0
    for name, cpu in result['services'].items():
        total += cpu
        print(f'{name:26} {cpu:7.2f} {100 * cpu / window:6.2f}%')
    print(f'{"the cloud, total":26} {total:7.2f} {100 * total / window:6.2f}%')
    busy = result['machine_busy']
    print(f'{"machine busy (/proc/stat)":26} {busy:7.2f} {100 * busy / window:6.2f}%')


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--seconds', type=float, default=120.0)
    ap.add_argument('--json', action='store_true', help='also print the figures as one JSON line')
    args = ap.parse_args(argv)
    result = sample(args.seconds)
    print_table(result)
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())

"""Figures of the local cloud: install time, start time (empty state; installed packages + existing
state after down), memory of the running control plane, and per-object timings of the smoke flow.

By default everything is measured on a separate, throw-away instance (its own state directory in
/tmp and ports shifted by --offset), so the shared cloud on the standard ports keeps serving tests.
Run with the project venv:  .venv/bin/python lab/bench/localcloud_figures.py [--offset 10000] [--keep]
                            .venv/bin/python lab/bench/localcloud_figures.py --shared   (no restart)
Goals: ready < 60 s with packages installed, < 4 min on a fresh machine, < 3 GiB.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LC = ROOT / 'lab' / 'localcloud'
GiB = 2 ** 30


def sh(cmd: list, env: dict) -> tuple[float, str]:
    t = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    dt = time.monotonic() - t
    if proc.returncode != 0:
        sys.exit(f'{" ".join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}')
    return dt, proc.stdout


def packages_missing() -> bool:
    text = (LC / 'install.sh').read_text()
    pkgs = re.search(r'PKGS=\((.*?)\)', text, re.S).group(1).split()
    out = subprocess.run(['dpkg-query', '-W', '-f=${db:Status-Status}\n', *pkgs], capture_output=True, text=True)
    return out.stdout.split() != ['installed'] * len(pkgs)


def status_rows(env: dict) -> list:
    out = subprocess.run([str(LC / 'status'), '--json'], env=env, capture_output=True, text=True).stdout
    return json.loads(out)['services']


def memory(env: dict) -> tuple[float, float]:
    rows = status_rows(env)
    return sum(r['pss'] for r in rows) / GiB, sum(r['rss'] for r in rows) / GiB


def named_memory(env: dict) -> str:
    row = next(r for r in status_rows(env) if r['service'] == 'named')
    return f'{row["pss"] / 2**20:.0f} MiB ({row["rss"] / 2**20:.0f} MiB)'


def smoke(state: Path) -> list:
    os.environ['HA_ENDPOINT_STATE'] = str(state)
    sys.path[:0] = [str(ROOT), str(ROOT / "lab")]
    from localcloud import smoke as flow
    from localcloud.settings import Paths
    from localcloud.testing import Cleanup, LocalCloud
    cloud = LocalCloud(Paths(state))
    cleanup = Cleanup(cloud)
    try:
        timer = flow.run(cloud.conn, cloud.faults, cloud.seed, cleanup)
    finally:
        cleanup.run()
    return timer.steps


def leftovers(state: Path, offset: int) -> list:
    """Processes of this instance still alive: command line names its state directory or its ports."""
    marks = [str(state), f'-port {4369 + offset}', f'127.0.0.1:{5000 + offset}', f'127.0.0.1:{9876 + offset}']
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmd = Path(f'/proc/{entry}/cmdline').read_bytes().replace(b'\0', b' ').decode(errors='replace')
        except OSError:
            continue
        if any(m in cmd for m in marks):
            found.append(f'{entry}:{cmd[:60]}')
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--shared', action='store_true', help='measure the running default instance (no restarts)')
    ap.add_argument('--offset', type=int, default=10000, help='port offset of the throw-away instance')
    ap.add_argument('--keep', action='store_true', help='leave the throw-away instance running')
    ap.add_argument('--no-cache', action='store_true',
                    help='ignore the schema cache: the start of a first-ever run (all migrations)')
    args = ap.parse_args()
    figures = []
    load_before = os.getloadavg()[0]
    env = dict(os.environ)
    env.pop('LOCALCLOUD_PORT_OFFSET', None)

    cache = Path(os.environ.get('HA_ENDPOINT_CACHE', Path.home() / '.cache' / 'ha-endpoint'))
    if packages_missing():
        dt, _ = sh([str(LC / 'install.sh')], env)
        figures.append(('install (apt-get update + install, this run)', f'{dt:.0f} s'))
    else:
        try:
            rec = json.loads((cache / 'localcloud-install.json').read_text())
            figures.append(('install (apt, recorded at first install)', f'{rec["seconds"]:.0f} s ({rec["date"]})'))
        except (OSError, ValueError, KeyError):
            figures.append(('install', 'packages already installed; no recorded time'))

    if args.shared:
        state = Path(env.get('HA_ENDPOINT_STATE') or Path.home() / '.cache' / 'ha-endpoint' / 'localcloud')
        env['HA_ENDPOINT_STATE'] = str(state)
        dt, _ = sh([str(LC / 'up')], env)
        figures.append(('up when already running (idempotent check)', f'{dt:.1f} s'))
    else:
        state = Path(tempfile.mkdtemp(prefix='localcloud-bench-'))
        env.update(HA_ENDPOINT_STATE=str(state), LOCALCLOUD_PORT_OFFSET=str(args.offset))
        if args.no_cache:
            env['LOCALCLOUD_SCHEMA_CACHE'] = '0'
        dt, out = sh([str(LC / 'up')], env)
        cached = 'schema cache' if 'from the schema cache' in out else 'schemas migrated, no cache'
        figures.append((f'start from empty state -> ready ({cached})', f'{dt:.1f} s'))
        milestones = [ln.strip() for ln in out.splitlines() if ' done in ' in ln or ln.rstrip().endswith(' ready')]

    pss, rss = memory(env)
    figures.append(('memory of the control plane (PSS; RSS sum)', f'{pss:.2f} GiB ({rss:.2f} GiB)'))
    figures.append(('memory of named, the DNS server (PSS; RSS)', named_memory(env)))

    for name, seconds in smoke(state):
        figures.append((f'smoke: {name}', f'{seconds:.2f} s'))

    if not args.shared:
        dt, _ = sh([str(LC / 'down')], env)
        left = leftovers(state, args.offset)
        figures.append(('down', f'{dt:.1f} s, processes left: {len(left)} {left or ""}'))
        dt, _ = sh([str(LC / 'up')], env)
        figures.append(('start after down (installed packages, existing state)', f'{dt:.1f} s'))
        pss, rss = memory(env)
        figures.append(('memory after restart (PSS; RSS sum)', f'{pss:.2f} GiB ({rss:.2f} GiB)'))
        if not args.keep:
            sh([str(LC / 'reset')], env)

    width = max(len(k) for k, _ in figures)
    print(f'localcloud figures ({time.strftime("%F %T")}, {os.cpu_count()} CPUs, load average {load_before:.1f} '
          f'before / {os.getloadavg()[0]:.1f} after'
          f'{", throw-away instance, ports +" + str(args.offset) if not args.shared else ", shared instance"})')
    for k, v in figures:
        print(f'  {k:{width}}  {v}')
    if not args.shared:
        print('  milestones of the start from empty state:')
        for line in milestones:
            print(f'    {line}')
    return 0


if __name__ == '__main__':
    sys.exit(main())

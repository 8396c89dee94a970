"""Figures of the data plane: the local cloud's start time and memory (PSS) without it and with it.

Two throw-away instances one after the other (state in /tmp, ports +7000 and +8000: other instances keep serving):
one with LOCALCLOUD_DATAPLANE=none (the control plane alone), one with LOCALCLOUD_DATAPLANE=ovn (plus OVN, three
chassis, the member reconciler, Octavia's OVN provider agent). For each: `up` from empty state (schema cache), `down`,
`up` again (the start after down), PSS when ready (and the data plane's part), then `reset` (which must leave no
namespace, veth or route behind: checked).
Run with the project venv:  .venv/bin/python lab/bench/dataplane_figures.py [--keep]
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LC = ROOT / 'lab' / 'localcloud'
MiB = 2 ** 20
DATA_PLANE = ('ovn-', 'ovsdb-', 'ovs-vswitchd-', 'dataplane-members', 'octavia-driver-agent')


def run(cmd: str, env: dict) -> tuple[float, str]:
    t = time.monotonic()
    proc = subprocess.run([str(LC / cmd)], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f'lab/localcloud/{cmd} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}')
    return time.monotonic() - t, proc.stdout


def leftovers(tag: str) -> list[str]:
    links = subprocess.run(['ip', '-o', 'link'], capture_output=True, text=True).stdout
    netns = subprocess.run(['ip', 'netns', 'list'], capture_output=True, text=True).stdout
    routes = subprocess.run(['ip', 'route'], capture_output=True, text=True).stdout
    return [line for text in (links, netns, routes) for line in text.splitlines() if tag in line]


def measure(mode: str, offset: int, keep: bool) -> dict:
    state = Path(f'/tmp/lc-bench-{mode}')
    env = dict(os.environ, HA_ENDPOINT_STATE=str(state), LOCALCLOUD_PORT_OFFSET=str(offset),
               LOCALCLOUD_DATAPLANE=mode)
    env.pop('OS_CLIENT_CONFIG_FILE', None)
    run('reset', env)
    sys.path[:0] = [str(ROOT), str(ROOT / "lab")]
    from localcloud.services import port_open
    from localcloud.settings import BASE_PORTS
    taken = sorted(port + offset for port in BASE_PORTS.values() if port_open('tcp', port + offset))
    if taken:
        sys.exit(f'ports {taken} (offset {offset}) are taken by another instance: pick another offset')
    empty, _ = run('up', env)
    run('down', env)
    after_down, _ = run('up', env)
    status = json.loads(subprocess.run([str(LC / 'status'), '--json'], env=env, capture_output=True,
                                       text=True).stdout)
    rows = status['services']
    pss = sum(r['pss'] for r in rows)
    dp = sum(r['pss'] for r in rows if r['service'].startswith(DATA_PLANE))
    out = {'mode': mode, 'up_from_empty_s': empty, 'up_after_down_s': after_down, 'pss_mib': pss / MiB,
           'data_plane_pss_mib': dp / MiB, 'processes': sum(r['procs'] for r in rows),
           'chassis_up': [az for az, c in status['chassis'].items() if c['up']]}
    if not keep:
        run('reset', env)
        out['left_after_reset'] = leftovers(f'lc{offset}')
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--keep', action='store_true', help='leave both instances running')
    args = ap.parse_args()
    results = [measure('none', 7000, args.keep), measure('ovn', 8000, args.keep)]
    print(f'load average {os.getloadavg()[0]:.1f}')
    print(f'{"data plane":12} {"up from empty":>14} {"up after down":>14} {"PSS MiB":>8} {"of it data plane":>17} '
          f'{"procs":>6}  chassis up / left after reset')
    for r in results:
        print(f'{r["mode"]:12} {r["up_from_empty_s"]:13.1f}s {r["up_after_down_s"]:13.1f}s {r["pss_mib"]:8.0f} '
              f'{r["data_plane_pss_mib"]:17.0f} {r["processes"]:6}  {r["chassis_up"]} / '
              f'{r.get("left_after_reset", "kept")}')
    print(json.dumps(results))
    return 1 if any(r.get('left_after_reset') for r in results) else 0


if __name__ == '__main__':
    sys.exit(main())

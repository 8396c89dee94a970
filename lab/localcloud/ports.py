"""Before a start: the TCP ports this cloud listens on must be free or held by this cloud's own processes.

Two local clouds on one port set (two state directories at one ``LOCALCLOUD_PORT_OFFSET``) do not fail loudly: each
daemon that finds its port taken keeps retrying (OVN's ovsdb-servers every minute), and whichever instance stops first
hands its ports to the other. Seen here: a second instance left running from another HOME took ovn-nb/ovn-sb's ports
when the first restarted, so Neutron wrote to the stray northbound database, its chassis looked dead ("Refusing to
bind port ... to dead agent") and every Nova server went to ERROR. So ``up`` refuses, naming the port, the process
and the fix, before it starts anything.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterable, Mapping

from .settings import PORT_OFFSET, PORTS, Paths

UDP_ONLY = {'octavia-health'}
"""Ports of ``PORTS`` that are UDP only: nothing listens on them over TCP."""


def foreign(listeners: Mapping[int, Iterable[int]], ours: set[int], parent: Callable[[int], int | None],
            ports: Mapping[str, int] = PORTS) -> list[tuple[str, int, int]]:
    """``(service, port, pid)`` for each of ``ports`` some process outside ``ours`` listens on. ``listeners``: port ->
    the PIDs holding a listening socket on it; a process counts as ours when it or an ancestor (``parent``) is in
    ``ours`` (forked workers hold their server's socket)."""
    found = []
    for service, port in sorted(ports.items(), key=lambda item: item[1]):
        if service in UDP_ONLY:
            continue
        for pid in sorted(listeners.get(port, ())):
            if not descends(pid, ours, parent):
                found.append((service, port, pid))
                break
    return found


def descends(pid: int, ours: set[int], parent: Callable[[int], int | None]) -> bool:
    seen: set[int] = set()
    current: int | None = pid
    while current and current not in seen:
        if current in ours:
            return True
        seen.add(current)
        current = parent(current)
    return False


def listening_pids(ports: Iterable[int], proc: Path = Path('/proc')) -> dict[int, set[int]]:
    """Port -> PIDs with a listening TCP socket on it (IPv4 or IPv6), read from ``/proc``: the sockets' inodes from
    ``net/tcp*``, then the processes holding them (those this user may read)."""
    wanted, inodes = set(ports), {}
    for table in ('net/tcp', 'net/tcp6'):
        try:
            lines = (proc / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            port, state, inode = int(fields[1].rsplit(':', 1)[1], 16), fields[3], fields[9]
            if state == '0A' and port in wanted and inode != '0':  # 0A: LISTEN
                inodes[f'socket:[{inode}]'] = port
    found: dict[int, set[int]] = {}
    if not inodes:
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / 'fd').iterdir():
                port = inodes.get(os.readlink(fd))
                if port is not None:
                    found.setdefault(port, set()).add(int(entry.name))
        except OSError:
            continue  # gone, or not ours to read
    return found


def parent_pid(pid: int, proc: Path = Path('/proc')) -> int | None:
    try:
        return int((proc / str(pid) / 'stat').read_text().rsplit(')', 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def own_pids(p: Paths) -> set[int]:
    """The PIDs this state directory's PID files record."""
    pids = set()
    for pidfile in p.run.rglob('*.pid') if p.run.exists() else ():
        try:
            pids.add(int(pidfile.read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            continue
    return pids


def check_free(p: Paths) -> None:
    """Raise naming every port of this cloud another process holds, and the fix; nothing is started before."""
    taken = foreign(listening_pids(PORTS.values()), own_pids(p), parent_pid)
    if not taken:
        return
    lines = []
    for service, port, pid in taken:
        try:
            command = (Path('/proc') / str(pid) / 'cmdline').read_bytes().replace(b'\0', b' ').decode()[:160].strip()
        except OSError:
            command = '?'
        lines.append(f'  port {port} ({service}): pid {pid}: {command}')
    raise RuntimeError(
        f'{len(taken)} port(s) of this local cloud ({p.root}, port offset {PORT_OFFSET}) are held by processes it did not '
        f'start (another local cloud, from another state directory?):\n' + '\n'.join(lines) + '\n'
        f'Stop them (that cloud\'s `lab/localcloud/down` with its HA_ENDPOINT_STATE), or start this one apart with '
        f'LOCALCLOUD_PORT_OFFSET=<a multiple of 1000, e.g. 21000> on a fresh state directory.')

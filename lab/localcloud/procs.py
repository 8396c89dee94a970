"""Start, find, stop and measure the daemons of the local cloud by PID file (standard library only).

Every daemon is started in its own session (setsid), so its PID is also its process-group id:
stopping a service signals exactly that group, i.e. the process we started and its children.
"""
import os
import signal
import subprocess
import time
from pathlib import Path


def read_pid(pidfile: Path) -> int | None:
    try:
        return int(pidfile.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _cmdline(pid: int) -> str:
    try:
        return Path(f'/proc/{pid}/cmdline').read_bytes().replace(b'\0', b' ').decode(errors='replace')
    except OSError:
        return ''


def _state(pid: int) -> str:
    try:
        stat = Path(f'/proc/{pid}/stat').read_text()
        return stat.rsplit(')', 1)[1].split()[0]
    except (OSError, IndexError):
        return ''


def started_at(pid: int) -> float:
    """When process ``pid`` started (epoch seconds), from /proc (OSError when it is gone)."""
    ticks = int(Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[19])
    boot = next(float(line.split()[1]) for line in Path('/proc/stat').read_text().splitlines()
                if line.startswith('btime '))
    return boot + ticks / os.sysconf('SC_CLK_TCK')


def alive(pidfile: Path, marker: str) -> int | None:
    """The PID recorded in pidfile if that process still runs the expected program, else None."""
    pid = read_pid(pidfile)
    if not pid or not _running(pid):
        return None
    cmd = _cmdline(pid)
    if not cmd:  # exiting, or rewriting its title right now: ours only if still a session leader
        return pid if _session(pid) == pid else None
    if marker and marker not in cmd:
        return None
    return pid


def _session(pid: int) -> int | None:
    """The session id of ``pid`` (/proc/<pid>/stat after the command: state ppid pgrp session ...)."""
    try:
        return int(Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[3])
    except (OSError, IndexError, ValueError):
        return None


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    return _state(pid) not in ('', 'Z')


def exited(pidfile: Path) -> bool:
    """Whether the process pidfile names is gone (no such process, or a zombie). For a process just started: unlike
    ``alive``, it does not read the command line, which is empty for a moment while the process execs."""
    pid = read_pid(pidfile)
    return not pid or not _running(pid)


def start(name: str, argv: list, pidfile: Path, logfile: Path, env: dict | None = None,
          cwd: Path | None = None) -> int:
    logfile.parent.mkdir(parents=True, exist_ok=True)
    full_env = dict(os.environ)
    full_env.pop('PYTHONPATH', None)
    full_env.pop('VIRTUAL_ENV', None)
    full_env['PATH'] = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
    full_env.update(env or {})
    with open(os.open(logfile, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), 'ab') as log:
        log.write(f'\n=== localcloud: starting {name} at {time.strftime("%F %T")}: {argv}\n'.encode())
        log.flush()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                env=full_env, cwd=str(cwd) if cwd else None, start_new_session=True,
                                close_fds=True)
    pidfile.parent.mkdir(parents=True, exist_ok=True)
    pidfile.write_text(f'{proc.pid}\n')
    return proc.pid


def group_pids(pgid: int) -> list[int]:
    pids = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f'/proc/{entry}/stat').read_text()
        except OSError:
            continue
        fields = stat.rsplit(')', 1)[1].split()
        # fields: state ppid pgrp session ...
        if int(fields[2]) == pgid or int(fields[3]) == pgid:
            pids.append(int(entry))
    return pids


def rss_bytes(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            for line in Path(f'/proc/{pid}/status').read_text().splitlines():
                if line.startswith('VmRSS:'):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def pss_bytes(pids: list[int]) -> int:
    """Proportional set size: shared pages split between their users, so totals add up."""
    total = 0
    for pid in pids:
        try:
            for line in Path(f'/proc/{pid}/smaps_rollup').read_text().splitlines():
                if line.startswith('Pss:'):
                    total += int(line.split()[1]) * 1024
                    break
        except OSError:
            pass
    return total


def stop(pidfile: Path, marker: str, timeout: float = 15.0) -> bool:
    """SIGTERM the group (session) we started, then SIGKILL what is left. True if something ran."""
    pid = alive(pidfile, marker)
    if pid is None:
        # The leader is gone; children it left in its session (e.g. workers of a crashed master) are
        # still ours if they run the same program. (Linux does not reuse a PID still in use as a session id.)
        leader = read_pid(pidfile)
        orphans = [p for p in group_pids(leader) if marker in _cmdline(p)] if leader else []
        if not orphans:
            pidfile.unlink(missing_ok=True)
            return False
        targets = lambda: [p for p in orphans if _running(p)]  # noqa: E731
    else:
        targets = lambda: [p for p in group_pids(pid) if _running(p)]  # noqa: E731
    _signal(targets(), signal.SIGCONT)  # a frozen (SIGSTOPped) process cannot handle SIGTERM
    _signal(targets(), signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not targets():
            break
        time.sleep(0.2)
    else:
        _signal(targets(), signal.SIGKILL)
        time.sleep(0.3)
    pidfile.unlink(missing_ok=True)
    return True


def _signal(pids: list[int], sig: int) -> None:
    for p in pids:
        try:
            os.kill(p, sig)
        except ProcessLookupError:
            pass

"""Faults of whole services of the local cloud: Keystone restarted (tokens cannot be issued or validated while it is
down), and the Octavia API answering an HTTP error (503 by default) for a given number of seconds.

Standard library only (the control scripts run on the system python; tests import it from the venv). Mixed into
:class:`localcloud.faults.Faults`; the ``lab/localcloud/fault`` CLI exposes every method.

- Keystone: stopped and started by its PID file, exactly as ``lab/localcloud/up`` starts it (same command line, same
  log), under the lock ``up``/``down``/``restart`` take, so that an ``up`` running meanwhile cannot start a second
  one. Fernet keys are on disk, so tokens issued before a restart stay valid after it; while it is down nothing can
  authenticate, and the services cannot validate a token they have not cached.
- Octavia API: ``octavia-api`` runs behind ``lab/localcloud/fault_wsgi.py``; writing its fault file makes it answer every
  request (version discovery included) with the status until the given time, then it serves again by itself. A
  client sees exactly what a load balancer in front of a restarting API would answer.
"""
import contextlib
import fcntl
import json
import time
from pathlib import Path

from . import procs
from .settings import Paths

KEYSTONE = 'keystone'
OCTAVIA_API = 'octavia-api'


class ServiceFaults:
    paths: Paths

    # -- Keystone ----------------------------------------------------------------------------------
    def _service(self, name: str):
        from . import services
        return services.table(self.paths)[name]

    @contextlib.contextmanager
    def _control_lock(self):
        """The lock of lab/localcloud/ctl.py (up, down, reset, restart): one change of processes at a time."""
        lockfile = self.paths.root.parent / f'.{self.paths.root.name}.lock'
        with open(lockfile, 'w') as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    # -- a supervised service stopped by a fault, started again as `up` starts it ----------------------
    def _fault_marker(self, svc) -> Path:
        """Marks ``svc`` stopped by a fault (``clear`` starts it again)."""
        return self.paths.run / f'{svc.name}.stopped-by-fault'

    def _fault_pid(self, svc) -> int | None:
        return procs.alive(self.paths.pidfile(svc.name), svc.marker)

    def _fault_stop(self, svc) -> int | None:
        """Stop ``svc`` (its session, by PID file); returns the PID it had (None if it was not running)."""
        with self._control_lock():
            pid = self._fault_pid(svc)
            if pid is not None:
                self._fault_marker(svc).write_text(f'{time.time():.3f}\n')
                procs.stop(self.paths.pidfile(svc.name), svc.marker, timeout=10)
            return pid

    def _fault_start(self, svc, timeout: float, poll: float) -> int:
        """Start ``svc`` as `up` does (no-op when it runs) and wait until it is ready; returns its PID."""
        from . import services
        with self._control_lock():
            pid = self._fault_pid(svc) or procs.start(svc.name, svc.argv, self.paths.pidfile(svc.name),
                                                      self.paths.log(svc.name), svc.env, cwd=self.paths.root)
            deadline = time.monotonic() + timeout
            while not services.ready(svc):
                if time.monotonic() > deadline or not self._fault_pid(svc):
                    raise RuntimeError(f'{svc.name} is not ready {timeout:.0f}s after its start; see '
                                       f'{self.paths.log(svc.name)}')
                time.sleep(poll)
            self._fault_marker(svc).unlink(missing_ok=True)
            return pid

    @contextlib.contextmanager
    def _fault_down(self, svc, timeout: float, poll: float):
        self._fault_stop(svc)
        try:
            yield self
        finally:
            self._fault_start(svc, timeout, poll)

    def _fault_clear(self, svc, timeout: float, poll: float) -> None:
        if self._fault_marker(svc).exists():
            self._fault_start(svc, timeout, poll)

    def _stopped_marker(self):
        return self.paths.run / 'keystone.stopped-by-fault'

    def keystone_pid(self) -> int | None:
        return procs.alive(self.paths.pidfile(KEYSTONE), self._service(KEYSTONE).marker)

    def keystone_stop(self) -> int | None:
        """Stop Keystone (its session, by PID file); returns the PID it had (None if it was not running)."""
        with self._control_lock():
            return self._keystone_stop()

    def _keystone_stop(self) -> int | None:
        svc = self._service(KEYSTONE)
        pid = procs.alive(self.paths.pidfile(KEYSTONE), svc.marker)
        if pid is None:
            return None
        self._stopped_marker().write_text(f'{time.time():.3f}\n')
        procs.stop(self.paths.pidfile(KEYSTONE), svc.marker, timeout=10)
        return pid

    def keystone_start(self, timeout: float = 90) -> int:
        """Start Keystone as `up` does (no-op when it runs) and wait until it answers; returns its PID."""
        with self._control_lock():
            return self._keystone_start(timeout)

    def _keystone_start(self, timeout: float) -> int:
        from . import services
        svc = self._service(KEYSTONE)
        pid = procs.alive(self.paths.pidfile(KEYSTONE), svc.marker)
        if pid is None:
            pid = procs.start(KEYSTONE, svc.argv, self.paths.pidfile(KEYSTONE), self.paths.log(KEYSTONE), svc.env,
                              cwd=self.paths.root)
        deadline = time.monotonic() + timeout
        dead = 0
        while not services.ready(svc):
            dead = 0 if procs.alive(self.paths.pidfile(KEYSTONE), svc.marker) else dead + 1
            if dead >= 4:  # as lab/localcloud/up judges a start: not one glimpse while uwsgi renames its processes
                raise RuntimeError(f'keystone exited after its restart; see {self.paths.log(KEYSTONE)}')
            if time.monotonic() > deadline:
                raise RuntimeError(f'keystone does not answer {timeout:.0f}s after its restart; see '
                                   f'{self.paths.log(KEYSTONE)}')
            time.sleep(0.1)
        self._stopped_marker().unlink(missing_ok=True)
        return pid

    def keystone_restart(self, down_seconds: float = 0.0, timeout: float = 90) -> dict:
        """Stop Keystone, keep it down ``down_seconds``, start it again and wait until it answers.

        Returns ``{"old_pid", "new_pid", "down_seconds"}``: the time nothing answered on Keystone's port.
        """
        with self._control_lock():
            started = time.monotonic()
            old = self._keystone_stop()
            time.sleep(max(0.0, down_seconds - (time.monotonic() - started)))
            new = self._keystone_start(timeout)
            return {'old_pid': old, 'new_pid': new, 'down_seconds': round(time.monotonic() - started, 2)}

    @contextlib.contextmanager
    def keystone_down(self):
        """``with faults.keystone_down():`` Keystone is stopped inside the block and started again after it."""
        self.keystone_stop()
        try:
            yield self
        finally:
            self.keystone_start()

    # -- the Octavia API's fault switch ------------------------------------------------------------
    def octavia_api_has_switch(self) -> bool:
        """Whether the running octavia-api was started behind lab/localcloud/fault_wsgi.py."""
        svc = self._service(OCTAVIA_API)
        pid = procs.alive(self.paths.pidfile(OCTAVIA_API), svc.marker)
        return bool(pid) and 'fault_wsgi' in procs._cmdline(pid)

    def wsgi_file_current(self, name: str) -> bool:
        """Whether the running uwsgi service `name` (octavia-api, keystone, placement-api) serves through this
        checkout's ``lab/localcloud/fault_wsgi.py`` as it is now: started behind a file of the same content that has not
        changed since the process started. A cloud left running by an older checkout serves an older one (without
        the newer narrowing keys of the fault switch, or its own script directly)."""
        svc = self._service(name)
        pid = procs.alive(self.paths.pidfile(name), svc.marker)
        if not pid:
            return False
        try:
            argv = Path(f'/proc/{pid}/cmdline').read_bytes().split(b'\0')
            running = Path(argv[argv.index(b'--wsgi-file') + 1].decode())
            ours = Path(__file__).with_name('fault_wsgi.py')
            return running.read_bytes() == ours.read_bytes() and running.stat().st_mtime <= procs.started_at(pid)
        except (OSError, ValueError, IndexError):
            return False

    def octavia_api_unavailable(self, seconds: float, status: int = 503, method: str | None = None,
                                path: str | None = None, hold: float = 0.0, body: str | None = None) -> float:
        """Make every Octavia API request answer ``status`` for ``seconds`` from now; returns the end (epoch). With
        ``method``, ``path`` (a suffix, e.g. ``/v2/lbaas/loadbalancers``) and/or ``body`` (a substring, e.g. a
        name) only the matching requests; with ``hold`` each is held that long first (in flight, never reaching
        Octavia: see lab/localcloud/fault_wsgi.py)."""
        if not 500 <= int(status) <= 599:
            raise ValueError(f'status must be a 5xx HTTP status, not {status}')
        if not seconds > 0:
            raise ValueError(f'seconds must be > 0, not {seconds}')
        if not self.octavia_api_has_switch():
            raise RuntimeError('octavia-api runs without the fault switch (started by an older localcloud): run '
                               '`lab/localcloud/restart octavia-api` once')
        if hold < 0:
            raise ValueError(f'hold must be >= 0 seconds, not {hold}')
        until = time.time() + float(seconds)
        narrowed = {key: value for key, value in (('method', method and method.upper()), ('path', path),
                                                  ('body', body), ('hold', float(hold) or None)) if value}
        self._write_switch({'status': int(status), 'until': round(until, 3), **narrowed})
        return until

    def octavia_api_held_requests(self, since: float = 0.0) -> list[str]:
        """The requests the switch has started to hold since ``since`` (epoch): ``"<method> <path>"``."""
        return [rest.split(' ', 1)[1] for rest in self.octavia_api_faulted_requests(since, held=True)]

    def octavia_api_available(self) -> None:
        """End an Octavia API fault now."""
        self.paths.fault_switch(OCTAVIA_API).unlink(missing_ok=True)

    def octavia_api_fault(self) -> dict:
        """The current fault: ``{"status", "until", "remaining_seconds"}``, or ``{}`` when the API serves."""
        try:
            fault = json.loads(self.paths.fault_switch(OCTAVIA_API).read_text())
        except (OSError, ValueError):
            return {}
        remaining = float(fault.get('until') or 0) - time.time()
        return {**fault, 'remaining_seconds': round(remaining, 1)} if remaining > 0 else {}

    def octavia_api_faulted_requests(self, since: float = 0.0, held: bool = False) -> list[str]:
        """The requests the switch answered with an error since ``since`` (epoch): ``"<status> <method> <path>"``
        (with ``held``: the requests it started to hold, ``"held <method> <path>"``)."""
        log = self.paths.fault_switch(OCTAVIA_API).with_name(self.paths.fault_switch(OCTAVIA_API).name + '.log')
        try:
            lines = log.read_text().splitlines()
        except OSError:
            return []
        out = []
        for line in lines:
            at, _, rest = line.partition(' ')
            if rest.startswith('held ') != held:
                continue
            try:
                if float(at) >= since:
                    out.append(rest)
            except ValueError:
                continue
        return out

    @contextlib.contextmanager
    def octavia_api_down(self, seconds: float = 3600, status: int = 503):
        """``with faults.octavia_api_down():`` the API answers ``status`` inside the block (at most ``seconds``)."""
        self.octavia_api_unavailable(seconds, status)
        try:
            yield self
        finally:
            self.octavia_api_available()

    def _write_switch(self, data: dict) -> None:
        target = self.paths.fault_switch(OCTAVIA_API)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f'{target.name}.tmp')
        tmp.write_text(json.dumps(data) + '\n')
        tmp.rename(target)

    def clear_services(self) -> None:
        """The Octavia API serves, and Keystone runs again if a fault stopped it."""
        self.octavia_api_available()
        if self._stopped_marker().exists():
            self.keystone_start()

    def services_state(self) -> dict:
        return {'keystone_pid': _safe(self.keystone_pid), 'octavia_api_fault': self.octavia_api_fault(),
                'octavia_api_switch': _safe(self.octavia_api_has_switch)}


def _safe(fn):
    try:
        return fn()
    except Exception:
        return None

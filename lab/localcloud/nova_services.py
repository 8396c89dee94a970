"""The local cloud's Nova services, forked from one parent that imported Nova once (system python).

Each child is one of Nova's own services, run by its own entry point (``nova.cmd.api``, ``nova.cmd.conductor``,
``nova.cmd.scheduler``, ``nova.cmd.compute`` with the fake virt driver) with its own command line (configuration
files, log file, ``host = cmp-azN`` for a compute service). Importing Nova costs ~3 CPU seconds and ~120 MiB per
process; here it is done once, before the forks, so the six services share those pages (``gc.freeze`` keeps the
collector from copying them): about 40% less memory and 9 CPU seconds less per start than separate processes. The
Debian package ``nova-compute`` is not installed (it pulls a hypervisor); its code is python3-nova's.

Usage: python3 -m localcloud.nova_services SPEC.json, where SPEC is a list of
``{"name": ..., "module": "nova.cmd.<x>", "argv": [...], "gate": null | "<file>"}``: a child with a gate is forked
once that file exists (``lab/localcloud/startup.py`` creates it when Keystone and Placement answer and the conductor
listens: the scheduler needs Placement in the catalog to start at all, and a compute service that starts earlier
loses its first conductor ping (10 s) or its first resource report (60 s)). SIGTERM (``lab/localcloud/down`` signals the whole session) stops every child; when one child exits, the parent
stops the others and exits too, so ``lab/localcloud/status`` shows the service stopped and ``lab/localcloud/up`` starts it
again.
"""
import gc
import importlib
import json
import os
import signal
import sys
import time

# What the children need, imported by the parent before it forks (the four entry points and what they load).
PRELOAD = ('nova.cmd.api', 'nova.api.openstack.compute.routes', 'nova.cmd.conductor', 'nova.conductor.manager',
           'nova.cmd.scheduler', 'nova.cmd.compute', 'nova.virt.fake')
# Modules that read the configuration when imported (their periodic tasks' spacings, e.g. sync_power_state_interval):
# imported before a child has parsed its configuration they would run on Nova's defaults. Each child imports them
# itself, after parsing, as the nova-* commands do (they add ~3 MiB).
CONFIGURED_AT_IMPORT = ('nova.compute.manager', 'nova.scheduler.manager')


def _calm_process_launcher() -> None:
    """nova-api always forks its worker under oslo.service's ProcessLauncher, whose parent looks for a dead worker
    every 10 ms: 1.2% of a core per idle cloud, the largest idle cost of the whole cloud (measured 2026-11-28). Every
    0.5 s here: a dead worker is restarted, and a signal handled, within half a second."""
    from oslo_service import service
    service.ProcessLauncher.__init__.__defaults__ = (0.5, 'reload')


def _child(spec: dict) -> None:
    """Runs in the forked child: the service's own main() with its own argv; never returns."""
    code = 1
    try:
        try:  # `ps` tells the children apart (the marker stays in the title: lab/localcloud/procs.py)
            import setproctitle
            setproctitle.setproctitle(f'{spec["name"]} [localcloud.nova_services] {" ".join(spec["argv"])}')
        except ImportError:
            pass
        sys.argv = [spec['name'], *spec['argv']]
        _calm_process_launcher()
        code = importlib.import_module(spec['module']).main() or 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:  # reported in the parent's log (the service's own log may not exist yet)
        print(f'{spec["name"]}: {type(exc).__name__}: {exc}', flush=True)
    finally:
        os._exit(code)


def main(argv: list | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        sys.exit('usage: python3 -m localcloud.nova_services SPEC.json')
    with open(argv[0]) as f:
        pending = json.load(f)
    for module in PRELOAD:  # the first import monkey-patches eventlet, as every nova-* command does
        importlib.import_module(module)
    early = [m for m in CONFIGURED_AT_IMPORT if m in sys.modules]
    if early:
        sys.exit(f'nova_services: {", ".join(early)} imported before the configuration is parsed (by PRELOAD)')
    gc.freeze()

    children: dict[int, str] = {}
    stopping = False

    def stop(signum=signal.SIGTERM, frame=None):
        nonlocal stopping
        stopping = True
        for child in list(children):
            try:
                os.kill(child, signal.SIGTERM)
            except ProcessLookupError:
                pass
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    status = 0
    while (pending and not stopping) or children:
        for spec in [s for s in pending if not stopping and (not s.get('gate') or os.path.exists(s['gate']))]:
            pending.remove(spec)
            pid = os.fork()
            if pid == 0:
                _child(spec)
            children[pid] = spec['name']
            print(f'{spec["name"]}: pid {pid}', flush=True)
        try:
            pid, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            pid, code = 0, 0
        if pid == 0:
            time.sleep(0.2)
            continue
        name = children.pop(pid, None)
        if name is None:
            continue
        status = status or os.waitstatus_to_exitcode(code)
        if not stopping:
            print(f'{name} (pid {pid}) exited ({os.waitstatus_to_exitcode(code)}): stopping the others', flush=True)
            stop()
    return status


if __name__ == '__main__':
    sys.exit(main())

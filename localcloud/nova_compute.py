"""The local cloud's nova-compute services: one per AZ host, forked from one parent (system python).

Each child is Nova's own ``nova-compute`` (``nova.cmd.compute.main``, the fake virt driver) with its own
configuration (``host = cmp-azN``, its own log file). The parent imports Nova once and then forks, so the three
children share the pages of the imported code (``gc.freeze`` keeps the collector from copying them): about half
the memory of three separate processes. The Debian package ``nova-compute`` is not installed (it pulls a hypervisor).

Usage: python3 -m localcloud.nova_compute --config-file nova.conf -- nova-compute-az1.conf nova-compute-az2.conf ...
The common arguments come before ``--``, one configuration file per host after it. SIGTERM (``localcloud/down``
signals the whole session) stops every child; when one child exits, the parent stops the others and exits too, so
``localcloud/status`` shows the service stopped and ``localcloud/up`` starts it again.
"""
import gc
import os
import signal
import sys
import time


def _split(argv: list) -> tuple[list, list]:
    if '--' not in argv:
        sys.exit('usage: nova_compute.py <common nova-compute arguments> -- <host config file>...')
    i = argv.index('--')
    return argv[:i], argv[i + 1:]


def main(argv: list | None = None) -> int:
    common, hosts = _split(list(sys.argv[1:] if argv is None else argv))
    import nova.cmd.compute  # monkey-patches eventlet, as nova-compute does
    import nova.compute.manager  # noqa: F401  the bulk of what every child needs, imported before the fork
    import nova.virt.fake  # noqa: F401
    gc.freeze()
    children = {}
    for conf in hosts:
        pid = os.fork()
        if pid == 0:
            sys.argv = ['nova-compute', *common, '--config-file', conf]
            code = 1
            try:
                code = nova.cmd.compute.main() or 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            finally:
                os._exit(code)
        children[pid] = conf
        print(f'nova-compute {conf}: pid {pid}', flush=True)

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
    while children:
        try:
            pid, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.2)
            continue
        conf = children.pop(pid, None)
        if conf is None:
            continue
        status = status or os.waitstatus_to_exitcode(code)
        if not stopping:
            print(f'nova-compute {conf} (pid {pid}) exited ({os.waitstatus_to_exitcode(code)}): stopping the others',
                  flush=True)
            stop()
    return status


if __name__ == '__main__':
    sys.exit(main())

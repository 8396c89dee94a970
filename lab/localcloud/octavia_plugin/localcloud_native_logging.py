"""Logging's locks stay native in the local cloud's threaded OpenStack processes that eventlet does not patch.

Debian 12's oslo.log (5.0.1) ``setup()`` replaces the standard library's logging module lock with an eventlet green
RLock, and every handler's lock with a pipe mutex, whenever eventlet is merely imported (oslo.concurrency imports it
in every OpenStack service). Keystone, Placement and the Octavia API (uwsgi's eight threads), Octavia's worker,
health manager and housekeeping and the OVN provider's driver agent (thread pools) run on native threads and
monkey-patch nothing: when a release must wake a waiter on another thread, eventlet raises ``greenlet.error: cannot
switch to a different thread``, the waiter is never woken, and one by one every thread stops in
``logging.getLogger`` (keystoneauth calls it per request), then on whatever lock those threads hold. The process
answers nothing again: the Octavia API hung so in 2 of ~26 ``make test`` runs (oslo.log bug 1983863). `keep_native`
keeps the swap for processes whose threads eventlet has patched, which is what it was written for.

Used two ways: ``lab/localcloud/fault_wsgi.py`` and ``localcloud_driver_sockets`` call `keep_native()` before they load
the service; ``python3 -m localcloud_native_logging <script> <args>`` runs a service's console script (e.g.
``/usr/bin/octavia-worker``) as its ``__main__`` after it. Standard library only, before oslo.log is set up.
"""
import runpy
import sys


def keep_native() -> None:
    """oslo.log's ``setup()`` swaps logging's locks only where eventlet has patched threads (nothing without oslo.log;
    a second call changes nothing)."""
    try:
        from oslo_log import log
    except ImportError:
        return
    swap = getattr(log, '_fix_eventlet_logging', None)
    if swap is None or getattr(swap, 'keeps_native_threads', False):
        return

    def swap_only_where_threads_are_green():
        eventlet = sys.modules.get('eventlet')
        if eventlet is not None:
            import eventlet.patcher
            if eventlet.patcher.is_monkey_patched('thread'):
                swap()

    swap_only_where_threads_are_green.keeps_native_threads = True
    log._fix_eventlet_logging = swap_only_where_threads_are_green


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit('usage: python3 -m localcloud_native_logging <console script> [args...]')
    keep_native()
    sys.argv = sys.argv[1:]
    runpy.run_path(sys.argv[0], run_name='__main__')


if __name__ == '__main__':
    main()

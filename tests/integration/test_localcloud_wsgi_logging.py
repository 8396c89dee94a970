"""The local cloud's threaded OpenStack processes keep logging's locks native
(lab/localcloud/octavia_plugin/localcloud_native_logging.py).

Debian 12's oslo.log swaps them for eventlet's green locks whenever eventlet is imported; under native threads that
deadlocked the whole Octavia API in 2 of ~26 `make test` runs (every thread stopped in `logging.getLogger`). The
uwsgi services take the fix through lab/localcloud/fault_wsgi.py, Octavia's daemons through
`python3 -m localcloud_native_logging <console script>`: both ways are run here as the services run them."""
import json
import shutil
import subprocess

import pytest

from localcloud.services import FAULT_WSGI, NATIVE_LOGGING, OCTAVIA_PLUGIN
from localcloud.settings import SYSTEM_PYTHON

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not shutil.which('octavia-wsgi'), reason='octavia is not installed')]

# A service's start, then eight threads asking for loggers at once, as keystoneauth does per request in uwsgi's
# threads. Prints the locks oslo.log left and how many threads got stuck.
SERVICE = '''
import importlib.util, json, logging, os, sys, threading, time
import eventlet                       # oslo.concurrency imports it in every service; nothing monkey-patches
if sys.argv[1] == 'wsgi':             # what fault_wsgi.py does before it loads the service's script
    spec = importlib.util.spec_from_file_location('fault_wsgi', sys.argv[3])
    fault_wsgi = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fault_wsgi)
    fault_wsgi._native_thread_logging()
from oslo_config import cfg
from oslo_log import log
log.register_options(cfg.CONF)
cfg.CONF([], project='probe')
log.setup(cfg.CONF, 'probe')
lock = logging._lock
green = type(getattr(lock, '_block', lock)).__module__.startswith('eventlet')
done, errors = [0], []
def serve(i):
    try:
        for n in range(int(sys.argv[2])):
            logging.getLogger(f'probe.{i}.{n % 50}').debug('request %d', n)
            done[0] += 1
    except BaseException as e:
        errors.append(repr(e))
threads = [threading.Thread(target=serve, args=(i,), daemon=True) for i in range(8)]
for t in threads:
    t.start()
deadline = time.time() + 20
for t in threads:
    t.join(max(0.0, deadline - time.time()))
print(json.dumps({'green_lock': green, 'handler_lock': logging.Handler.createLock.__module__,
                  'stuck': sum(t.is_alive() for t in threads), 'errors': errors, 'calls': done[0]}), flush=True)
os._exit(0)                           # stuck threads would keep the interpreter from exiting
'''


def _serve(tmp_path, launcher: list, mode: str, calls: int) -> dict:
    script = tmp_path / 'service'
    script.write_text(SERVICE)
    out = subprocess.run([*launcher, str(script), mode, str(calls), str(FAULT_WSGI)], capture_output=True, text=True,
                         timeout=60, env={'PYTHONPATH': str(OCTAVIA_PLUGIN)})
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_oslo_log_makes_logging_green_when_eventlet_is_only_imported(tmp_path):
    """The precondition, without the fix: what the services would run on (if Debian's oslo.log stops doing this,
    the fix has become unnecessary and this test says so)."""
    report = _serve(tmp_path, [SYSTEM_PYTHON], 'plain', 0)
    assert report['green_lock'] is True
    assert report['handler_lock'] == 'oslo_log.pipe_mutex'


@pytest.mark.parametrize('way', ['fault_wsgi', 'console script'])
def test_eight_threads_log_at_once_without_a_stuck_thread(tmp_path, way):
    launcher, mode = ([SYSTEM_PYTHON], 'wsgi') if way == 'fault_wsgi' else (NATIVE_LOGGING, 'plain')
    report = _serve(tmp_path, launcher, mode, 20000)
    assert report['green_lock'] is False
    assert report['handler_lock'] == 'logging'
    assert report == {**report, 'stuck': 0, 'errors': []}
    assert report['calls'] == 8 * 20000

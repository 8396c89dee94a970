"""The local cloud's WSGI services as uwsgi loads them: their own script, a fault switch in front.

uwsgi loads this file instead of the service's own script (Keystone, Placement, the Octavia API). First it keeps
logging's locks native under uwsgi's threads (octavia_plugin/localcloud_native_logging.py), then it builds the
service's application from its script, as uwsgi would. With ``LOCALCLOUD_FAULT_FILE`` set (the Octavia API) the
fault switch goes in front (``--env LOCALCLOUD_WSGI_FILE=<the service's wsgi script>
--env LOCALCLOUD_FAULT_FILE=<state>/run/<service>.fault.json``) and answers every request itself while the fault
file says so:

    {"status": 503, "until": <epoch seconds>}

-> ``503 Service Unavailable`` with an Octavia-style JSON fault body, until that time (the file is re-read when it
changes; no file, or a time in the past: every request goes to the service). Each request answered by the switch is
appended to ``<fault file>.log`` (``<epoch> <status> <method> <path>``), so a test can tell that clients met it.
Optional keys narrow and shape the fault: ``"method"`` (only requests of that method), ``"path"`` (only paths ending
with it, e.g. ``/v2/lbaas/loadbalancers``: creates of load balancers), ``"body"`` (only requests whose body
contains it, e.g. one load balancer's name: other clients of the cloud go on unharmed), and ``"hold"`` (seconds the request is held
before the answer: a request in flight that never reaches the service; ``<epoch> held <method> <path>`` is logged
when it arrives, so a test can interrupt its client meanwhile).
Standard library only (and oslo.log where the service has it): it runs on the system python inside uwsgi, next to the
Debian packages.
"""
import importlib.util
import io
import json
import os
import runpy
import threading
import time

REASONS = {500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout'}


class FaultSwitch:
    """WSGI middleware: the fault the file describes, or the wrapped application."""

    def __init__(self, app, fault_file: str):
        self.app = app
        self.fault_file = fault_file
        self.log_file = fault_file + '.log'
        self._lock = threading.Lock()
        self._stamp = None
        self._fault: dict = {}

    def _current(self) -> dict:
        try:
            st = os.stat(self.fault_file)
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            return {}
        with self._lock:
            if stamp != self._stamp:
                try:
                    with open(self.fault_file) as f:
                        self._fault = json.load(f)
                except (OSError, ValueError):
                    self._fault = {}
                self._stamp = stamp
            return self._fault

    @staticmethod
    def _body(environ) -> str:
        """The request's body (read once, then handed on to the service as if unread)."""
        try:
            length = int(environ.get('CONTENT_LENGTH') or 0)
        except ValueError:
            length = 0
        body = environ['wsgi.input'].read(length) if length > 0 else b''
        environ['wsgi.input'] = io.BytesIO(body)
        return body.decode('utf-8', 'replace')

    def _log(self, what: str, environ) -> None:
        line = f'{time.time():.3f} {what} {environ.get("REQUEST_METHOD")} {environ.get("PATH_INFO")}\n'
        fd = os.open(self.log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)

    def __call__(self, environ, start_response):
        fault = self._current()
        status = int(fault.get('status') or 0)
        remaining = float(fault.get('until') or 0) - time.time()
        if not status or remaining <= 0:
            return self.app(environ, start_response)
        if fault.get('method') and environ.get('REQUEST_METHOD') != fault['method']:
            return self.app(environ, start_response)
        if fault.get('path') and not (environ.get('PATH_INFO') or '').rstrip('/').endswith(fault['path']):
            return self.app(environ, start_response)
        if fault.get('body') and fault['body'] not in self._body(environ):
            return self.app(environ, start_response)
        if float(fault.get('hold') or 0) > 0:
            self._log('held', environ)
            time.sleep(float(fault['hold']))
        reason = REASONS.get(status, 'Fault')
        body = json.dumps({'faultcode': 'Server', 'debuginfo': None,
                           'faultstring': f'localcloud fault: {reason} for {remaining:.0f} more seconds'}).encode()
        self._log(str(status), environ)
        start_response(f'{status} {reason}', [('Content-Type', 'application/json'),
                                               ('Content-Length', str(len(body)))])
        return [body]


def _native_thread_logging() -> None:
    """Logging's locks stay native under uwsgi's threads: octavia_plugin/localcloud_native_logging.py (loaded by path:
    this file's directory holds packages, such as ``dns``, that would shadow the services' own)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'octavia_plugin', 'localcloud_native_logging.py')
    spec = importlib.util.spec_from_file_location('localcloud_native_logging', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.keep_native()


def _application():
    _native_thread_logging()
    if os.environ.get('LOCALCLOUD_DRIVER_SOCKETS'):   # lab/localcloud/octavia_plugin/localcloud_driver_sockets.py
        import localcloud_driver_sockets
        localcloud_driver_sockets.patch(os.environ['LOCALCLOUD_DRIVER_SOCKETS'])
    script = os.environ['LOCALCLOUD_WSGI_FILE']
    app = runpy.run_path(script, run_name='localcloud_wrapped_wsgi')['application']
    if not os.environ.get('LOCALCLOUD_FAULT_FILE'):
        return app
    return FaultSwitch(app, os.environ['LOCALCLOUD_FAULT_FILE'])


if os.environ.get('LOCALCLOUD_WSGI_FILE'):
    application = _application()

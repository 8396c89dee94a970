"""Run one Swift server (``proxy-server``, ``account-server``, ``container-server``, ``object-server``) from its
configuration file under the state directory: Swift's own ``run_wsgi``, with swift.conf read from the same directory
(``swift_dir``) rather than /etc/swift, and its log on stderr (the service's log file) and nowhere else: Swift's syslog
handler, without a /dev/log, sends to UDP port 514 from a socket bound to 0.0.0.0 (every socket of the cloud is on
127.0.0.1).

    python3 -m localcloud.swift.serve <section> <conf file>
"""
import logging
import os
import sys

from swift.common import utils
from swift.common.wsgi import run_wsgi


class NoSyslog(logging.Handler):
    """Swift's syslog handler replaced: records go to the console handler (stderr) only."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def emit(self, record):
        pass


def main(argv: list[str]) -> int:
    section, conf = argv
    utils.ThreadSafeSysLogHandler = NoSyslog
    utils.set_swift_dir(os.path.dirname(os.path.abspath(conf)))
    return run_wsgi(conf, section, verbose=True)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))

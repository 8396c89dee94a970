"""Run one Swift server (``proxy-server``, ``account-server``, ``container-server``, ``object-server``) from its
configuration file under the state directory: Swift's own ``run_wsgi``, with swift.conf read from the same directory
(``swift_dir``) rather than /etc/swift, and its log on stderr (the service's log file) instead of syslog alone.

    python3 -m localcloud.swift.serve <section> <conf file>
"""
import os
import sys

from swift.common import utils
from swift.common.wsgi import run_wsgi


def main(argv: list[str]) -> int:
    section, conf = argv
    utils.set_swift_dir(os.path.dirname(os.path.abspath(conf)))
    return run_wsgi(conf, section, verbose=True)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))

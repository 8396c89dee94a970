"""Octavia's driver-agent sockets per local cloud instance (runs inside octavia-api and octavia-driver-agent).

octavia-api and the driver agent read their socket paths from `[driver_agent]`, but ovn-octavia-provider builds its
octavia_lib DriverLibrary with the library's defaults (/var/run/octavia/{status,stats,get}.sock): two instances
would share them, and the provider would wait for sockets nobody creates. patch(dir) makes `dir` the default for
every DriverLibrary of the process (and of the processes it forks: the driver agent forks its provider agents).

It also gives every driver-agent request (the provider asking for a listener or pool while it creates a member) the
library's own agent timeout (30 s) instead of its 5 s socket timeout: on this 2-core machine under test load an answer
took longer, the provider's member_create died on `TimeoutError` and the member stayed PENDING_CREATE for good (its
load balancer PENDING_UPDATE, every later write 409), measured in tests/e2e/test_ovn_engine.py.

`python3 -m localcloud_driver_sockets <dir> <octavia-driver-agent arguments>` runs the driver agent patched, with
Octavia's database mappers configured before it serves: its listeners fork a process per request (each status update
of the OVN provider), and each fork configured them again (0.04 s of CPU and six SQLAlchemy warnings in the log per
request: 50 MB of octavia-driver-agent.log in a day of tests), and logging's locks kept native under its threads
(localcloud_native_logging).
"""
import os
import sys


def patch(directory: str) -> None:
    from octavia_lib.api.drivers import driver_lib
    paths = tuple(os.path.join(directory, f'{kind}.sock') for kind in ('status', 'stats', 'get'))
    driver_lib.DEFAULT_STATUS_SOCKET, driver_lib.DEFAULT_STATS_SOCKET, driver_lib.DEFAULT_GET_SOCKET = paths
    driver_lib.DriverLibrary.__init__.__defaults__ = paths
    driver_lib.SOCKET_TIMEOUT = driver_lib.DRIVER_AGENT_TIMEOUT


def main() -> int:
    import localcloud_native_logging
    localcloud_native_logging.keep_native()
    patch(sys.argv[1])
    sys.argv = ['octavia-driver-agent', *sys.argv[2:]]
    import sqlalchemy.orm
    from octavia.db import models  # noqa: F401  (the mappers to configure)
    sqlalchemy.orm.configure_mappers()   # no connection: each fork opens its own
    from octavia.cmd.driver_agent import main as agent
    return agent()


if __name__ == '__main__':
    sys.exit(main())

"""Octavia's driver-agent sockets per local cloud instance (runs inside octavia-api and octavia-driver-agent).

octavia-api and the driver agent read their socket paths from `[driver_agent]`, but ovn-octavia-provider builds its
octavia_lib DriverLibrary with the library's defaults (/var/run/octavia/{status,stats,get}.sock): two instances
would share them, and the provider would wait for sockets nobody creates. patch(dir) makes `dir` the default for
every DriverLibrary of the process (and of the processes it forks: the driver agent forks its provider agents).

`python3 -m localcloud_driver_sockets <dir> <octavia-driver-agent arguments>` runs the driver agent patched.
"""
import os
import sys


def patch(directory: str) -> None:
    from octavia_lib.api.drivers import driver_lib
    paths = tuple(os.path.join(directory, f'{kind}.sock') for kind in ('status', 'stats', 'get'))
    driver_lib.DEFAULT_STATUS_SOCKET, driver_lib.DEFAULT_STATS_SOCKET, driver_lib.DEFAULT_GET_SOCKET = paths
    driver_lib.DriverLibrary.__init__.__defaults__ = paths


def main() -> int:
    patch(sys.argv[1])
    sys.argv = ['octavia-driver-agent', *sys.argv[2:]]
    from octavia.cmd.driver_agent import main as agent
    return agent()


if __name__ == '__main__':
    sys.exit(main())

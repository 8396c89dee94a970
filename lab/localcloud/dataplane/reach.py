"""The guard every test and script runs before it connects to a cloud address (standard library only).

A floating IP or any public-network address of the local cloud must be routed to this instance's public network
(`ip route get` names the root namespace's end of it, lc<offset>pub, with no gateway): otherwise the packets would
leave the machine through its default route. `check(address)` refuses with the route it found.
"""
import ipaddress
import subprocess

from . import config


class NotLocal(RuntimeError):
    """The address is not routed to the local cloud's public network."""


def route(address: str) -> str:
    r = subprocess.run(['ip', 'route', 'get', str(ipaddress.ip_address(address))], capture_output=True, text=True)
    if r.returncode != 0:
        raise NotLocal(f'ip route get {address} failed: {r.stderr.strip()}')
    return r.stdout.strip().splitlines()[0]


def check(address: str) -> str:
    """The local route to address; NotLocal when it would leave the machine or is not this instance's."""
    line = route(address)
    words = line.split()
    dev = words[words.index('dev') + 1] if 'dev' in words else None
    if ' via ' in f' {line} ' or dev != config.ROOT_PUBLIC_IF:
        raise NotLocal(f'refusing to connect to {address}: `ip route get` says "{line}", not the local cloud\'s '
                       f'public network ({config.PUBLIC_CIDR} on {config.ROOT_PUBLIC_IF}); is the data plane up '
                       f'(lab/localcloud/status; a cloud started with LOCALCLOUD_DATAPLANE=none has none)?')
    return line

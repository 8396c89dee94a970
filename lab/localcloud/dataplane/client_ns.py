"""Client namespaces: a network namespace on the cloud's public network that resolves names at the local cloud's
DNS server, as a client out on the public network would (system python or the venv, root).

``ip netns exec <ns> kubectl ...`` (or pulumi, dig, curl) in one resolves the endpoint's name through real DNS and
reaches its floating IPs through the data plane. What a client namespace is:

- namespace ``<TAG>-c<slot>`` (slot 0-3: at most four at once per cloud instance), lo up;
- a veth ``<TAG>c<slot>`` (inside, with address ``.251 + slot`` of the public CIDR: outside the floating IP pool
  .10-.250, and not the gateway .1) whose peer ``<TAG>c<slot>x`` sits on the public bridge in NET_NS, beside the
  chassis' br-ex and the root namespace's end (netns.wires); only the connected /24 is routed, nothing else;
- ``/etc/netns/<ns>/resolv.conf`` naming ``127.0.0.1`` (``ip netns exec`` bind-mounts it over /etc/resolv.conf);
- localcloud.dataplane.dns_forwarder listening on UDP and TCP 127.0.0.1:53 inside, relaying to named in the root
  namespace (127.0.0.1:<PORTS['named']>): resolvers ask port 53 only. Its own session and PID file; stopped by that.

Nothing else of the root namespace is reachable from inside (Keystone and the other APIs listen on the root
namespace's 127.0.0.1): a Pulumi program run in one reaches the endpoint only.

    from localcloud.dataplane import client_ns
    with client_ns.client_namespace() as ns:
        subprocess.run([*ns.exec_prefix, 'dig', '+short', 'api.example.test'])

    python3 -m localcloud.dataplane.client_ns start | stop <ns>... | list
"""
import argparse
import ipaddress
import re
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .. import procs
from ..settings import HOST, LAB, PORTS, SYSTEM_PYTHON, Paths
from . import config, netns

SLOTS = 4                  # .251-.254 of the public CIDR
FIRST_HOST = 251
FORWARDER = 'localcloud.dataplane.dns_forwarder'
NETNS_ETC = Path('/etc/netns')
READY_TIMEOUT = 10.0       # seconds for the forwarder to listen
RESOLV_COMMENT = 'localcloud.dataplane.client_ns'


def name(slot: int) -> str:
    """The namespace of ``slot``."""
    check_slot(slot)
    return f'{config.TAG}-c{slot}'


def links(slot: int) -> tuple[str, str]:
    """(inside end, public-bridge end) of the slot's veth: at most 15 characters."""
    check_slot(slot)
    return f'{config.TAG}c{slot}', f'{config.TAG}c{slot}x'


def address(slot: int) -> str:
    """The slot's address on the public network: .251 + slot, outside the floating IP pool."""
    check_slot(slot)
    network = ipaddress.ip_network(config.PUBLIC_CIDR)
    ip = network.network_address + FIRST_HOST + slot
    low, high = (ipaddress.ip_address(a) for a in config.PUBLIC_POOL)
    if low <= ip <= high or str(ip) == config.PUBLIC_GATEWAY or ip not in network:
        raise ValueError(f'{ip}: a client address must be on {network} outside the floating IP pool '
                         f'{low}-{high} and not the gateway')
    return str(ip)


def check_slot(slot: int) -> None:
    if not 0 <= slot < SLOTS:
        raise ValueError(f'client namespace slot {slot}: one of 0-{SLOTS - 1} (addresses .{FIRST_HOST}-'
                         f'.{FIRST_HOST + SLOTS - 1})')


def slot_of(ns: str) -> int | None:
    """The slot of ``ns`` when it is a client namespace of this instance, else None."""
    match = re.fullmatch(rf'{re.escape(config.TAG)}-c(\d)', ns)
    return int(match.group(1)) if match and int(match.group(1)) < SLOTS else None


def marker(ns: str) -> str:
    """What the forwarder's command line holds (procs.alive/stop check it): this namespace's forwarder only."""
    return f'{FORWARDER} --ns {ns} '


def pidfile(p: Paths, ns: str) -> Path:
    return p.run / 'clients' / f'{ns}-dns.pid'


def log(p: Paths, ns: str) -> Path:
    return p.logs / f'client-{ns}-dns.log'


def resolv_dir(ns: str) -> Path:
    return NETNS_ETC / ns


@dataclass(frozen=True)
class ClientNamespace:
    name: str
    slot: int
    address: str

    @property
    def exec_prefix(self) -> list[str]:
        """The command prefix that runs a program inside (with its resolv.conf)."""
        return ['ip', 'netns', 'exec', self.name]


def running() -> list[str]:
    """This instance's client namespaces that exist now."""
    return [ns for ns in netns.namespaces() if slot_of(ns) is not None]


def start(p: Paths | None = None) -> ClientNamespace:
    """A new client namespace in the first free slot, wired and resolving (everything undone on failure)."""
    p = p or Paths()
    config.check_offset()
    for slot in range(SLOTS):
        ns = name(slot)
        try:
            netns.sh('ip', 'netns', 'add', ns)    # the claim: fails when another client holds the slot
        except netns.CommandError:
            continue
        try:
            _wire(p, slot)
        except BaseException:
            stop(ns, p)
            raise
        return ClientNamespace(ns, slot, address(slot))
    raise RuntimeError(f'no free client namespace: {", ".join(running())} exist (at most {SLOTS}); stop one left '
                       f'behind with `python3 -m localcloud.dataplane.client_ns stop <ns>`')


def _wire(p: Paths, slot: int) -> None:
    ns, (inside, outside) = name(slot), links(slot)
    netns.sh('ip', 'link', 'set', 'lo', 'up', ns=ns)
    netns.veth(inside, ns, outside, config.NET_NS)
    netns.sh('ip', 'link', 'set', outside, 'master', config.PUBLIC_BRIDGE, ns=config.NET_NS)
    netns.sh('ip', 'addr', 'add', f'{address(slot)}/{config.PUBLIC_CIDR.split("/")[1]}', 'dev', inside, ns=ns)
    resolv_dir(ns).mkdir(parents=True, exist_ok=True)
    (resolv_dir(ns) / 'resolv.conf').write_text(f'# {RESOLV_COMMENT}: the DNS forwarder inside {ns} (to named)\n'
                                                'nameserver 127.0.0.1\n')
    procs.start(f'dns forwarder of {ns}', [SYSTEM_PYTHON, '-m', FORWARDER, '--ns', ns, '--upstream',
                                           f'{HOST}:{PORTS["named"]}'],
                pidfile(p, ns), log(p, ns), {'PYTHONPATH': str(LAB)}, cwd=p.root)
    deadline = time.monotonic() + READY_TIMEOUT
    while not _listening(ns):
        if not procs.alive(pidfile(p, ns), marker(ns)) or time.monotonic() > deadline:
            tail = log(p, ns).read_text(errors='replace')[-1500:] if log(p, ns).exists() else ''
            raise RuntimeError(f'the DNS forwarder of {ns} is not listening on 127.0.0.1:53 (log {log(p, ns)}):\n'
                               f'{tail}')
        time.sleep(0.1)


def _listening(ns: str) -> bool:
    out = subprocess.run(['ip', 'netns', 'exec', ns, 'ss', '-Hlntu', 'src', '127.0.0.1', 'sport', '=', ':53'],
                         capture_output=True, text=True).stdout
    kinds = {line.split()[0] for line in out.splitlines() if line.strip()}
    return {'udp', 'tcp'} <= kinds


def stop(ns: str, p: Paths | None = None) -> list[str]:
    """Stop the namespace's forwarder (by its PID file), delete the namespace (its veth goes with it) and
    /etc/netns/<ns>; what was removed. Refuses any name that is not a client namespace of this instance."""
    if slot_of(ns) is None:
        raise ValueError(f'{ns!r} is not a client namespace of this cloud instance ({config.TAG}-c0..'
                         f'{config.TAG}-c{SLOTS - 1})')
    p = p or Paths()
    gone = []
    if procs.stop(pidfile(p, ns), marker(ns), timeout=3):
        gone.append(f'forwarder of {ns}')
    if ns in netns.namespaces():
        netns.sh('ip', 'netns', 'del', ns)
        gone.append(f'netns {ns}')
    outside = links(slot_of(ns))[1]
    if config.NET_NS in netns.namespaces() and netns.link_exists(outside, config.NET_NS):
        netns.sh('ip', 'link', 'del', outside, ns=config.NET_NS, check=False)   # normally gone with its peer
        gone.append(f'link {outside}')
    if resolv_dir(ns).exists():
        shutil.rmtree(resolv_dir(ns))
        gone.append(str(resolv_dir(ns)))
    return gone


def stop_all(p: Paths | None = None) -> list[str]:
    """Every client namespace of this instance stopped, and every forwarder whose PID file outlived its namespace
    (``lab/localcloud/down`` calls it before it deletes the instance's namespaces: /etc/netns/<ns> and the forwarder
    would outlive them)."""
    p = p or Paths()
    recorded = [f.name[:-len('-dns.pid')] for f in (p.run / 'clients').glob('*-dns.pid')]
    gone = []
    for ns in sorted(set(running()) | {ns for ns in recorded if slot_of(ns) is not None}):
        gone += stop(ns, p)
    return gone


@contextmanager
def client_namespace(p: Paths | None = None):
    """A client namespace for the ``with`` block, removed afterwards (also when the block raises)."""
    cns = start(p)
    try:
        yield cns
    finally:
        stop(cns.name, p)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog='localcloud.dataplane.client_ns')
    sub = ap.add_subparsers(dest='cmd', required=True)
    sub.add_parser('start', help='start one; print its name and address')
    stop_ap = sub.add_parser('stop', help='stop these (their forwarders, veths, /etc/netns dirs)')
    stop_ap.add_argument('names', nargs='+')
    sub.add_parser('list', help="this instance's client namespaces")
    run_ap = sub.add_parser('run', help='run a command in a new one, then stop it; its exit status')
    run_ap.add_argument('command', nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    try:
        if args.cmd == 'run':
            command = args.command[1:] if args.command[:1] == ['--'] else args.command
            if not command:
                raise ValueError('run: give a command, e.g. run -- dig +short api.example.test')
            with client_namespace() as cns:
                return subprocess.run([*cns.exec_prefix, *command]).returncode
        if args.cmd == 'start':
            cns = start()
            print(cns.name, cns.address)
        elif args.cmd == 'stop':
            for ns in args.names:
                print('\n'.join(stop(ns)) or f'{ns}: nothing to remove')
        else:
            print('\n'.join(running()))
    except (ValueError, RuntimeError) as exc:   # a wrong name, no free slot: the message says what to do
        print(f'client_ns: {exc}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())

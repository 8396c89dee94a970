"""Network namespaces, veth pairs and command helpers of the data plane (system python, root).

Every veth end gets TX checksum offload off (ethtool -K <dev> tx off): the userspace (netdev) datapath does not
complete partial checksums, and TCP dies with conntrack_l4csum_err otherwise.
"""
import subprocess

from . import config


class CommandError(RuntimeError):
    pass


def sh(*argv, ns: str | None = None, check: bool = True, env: dict | None = None) -> str:
    """Run a command (inside namespace ns when given); its stdout. A failure names the command and its stderr."""
    full = (['ip', 'netns', 'exec', ns] if ns else []) + [str(a) for a in argv]
    r = subprocess.run(full, capture_output=True, text=True, env=env)
    if check and r.returncode != 0:
        raise CommandError(f'{" ".join(full)} failed ({r.returncode}): {r.stderr.strip() or r.stdout.strip()}')
    return r.stdout


def namespaces() -> list[str]:
    return [line.split()[0] for line in sh('ip', 'netns', 'list', check=False).splitlines() if line.strip()]


def ours(names: list[str]) -> list[str]:
    """The namespaces of this instance (every name starts with its tag)."""
    return [n for n in names if n.startswith(config.TAG + '-')]


def ensure_ns(name: str) -> None:
    if name not in namespaces():
        sh('ip', 'netns', 'add', name)
    sh('ip', 'link', 'set', 'lo', 'up', ns=name)


def link_exists(dev: str, ns: str | None = None) -> bool:
    return subprocess.run((['ip', 'netns', 'exec', ns] if ns else []) + ['ip', 'link', 'show', dev],
                          capture_output=True).returncode == 0


def offload_off(dev: str, ns: str | None = None) -> None:
    sh('ethtool', '-K', dev, 'tx', 'off', ns=ns)


def veth(a: str, a_ns: str | None, b: str, b_ns: str | None, mac: str | None = None) -> bool:
    """A veth pair a (in a_ns, None = root) <-> b (in b_ns), both up, TX offload off; kept when it exists (and set up
    again: a pass cut short between creating and raising it is completed by the next); True when it made the pair."""
    if link_exists(a, a_ns) and link_exists(b, b_ns):
        for dev, ns in ((a, a_ns), (b, b_ns)):
            sh('ip', 'link', 'set', dev, 'up', ns=ns)
        return False
    for dev, ns in dict.fromkeys(((a, a_ns), (b, b_ns), (a, None), (b, None))):
        if link_exists(dev, ns):   # half a pair: a pass cut short, or a peer its namespace's deletion left behind
            sh('ip', 'link', 'del', dev, ns=ns)
    sh('ip', 'link', 'add', a, *(['address', mac] if mac else []), 'type', 'veth', 'peer', 'name', b)
    if a_ns:
        sh('ip', 'link', 'set', a, 'netns', a_ns)
    if b_ns:
        sh('ip', 'link', 'set', b, 'netns', b_ns)
    for dev, ns in ((a, a_ns), (b, b_ns)):
        offload_off(dev, ns)
        sh('ip', 'link', 'set', dev, 'up', ns=ns)
    return True


def wires() -> None:
    """NET_NS with the underlay bridge and the public bridge; the root namespace's end of the public network
    (the public subnet's gateway address, PUBLIC_CIDR routed to it and nothing else)."""
    ns = config.NET_NS
    ensure_ns(ns)
    for br in (config.UNDERLAY_BRIDGE, config.PUBLIC_BRIDGE):
        if not link_exists(br, ns):
            sh('ip', 'link', 'add', br, 'type', 'bridge', ns=ns)
        sh('ip', 'link', 'set', br, 'up', ns=ns)
    veth(config.ROOT_PUBLIC_IF, None, config.ROOT_PUBLIC_PEER, ns)
    sh('ip', 'link', 'set', config.ROOT_PUBLIC_PEER, 'master', config.PUBLIC_BRIDGE, ns=ns)
    have = sh('ip', '-4', '-o', 'addr', 'show', 'dev', config.ROOT_PUBLIC_IF)
    if config.PUBLIC_GATEWAY + '/' not in have:
        sh('ip', 'addr', 'add', f'{config.PUBLIC_GATEWAY}/{config.PUBLIC_CIDR.split("/")[1]}',
           'dev', config.ROOT_PUBLIC_IF)


def chassis_wires(az: str) -> None:
    """az's namespace, with its underlay and public veths plugged into NET_NS's bridges."""
    ns = config.chassis_ns(az)
    ensure_ns(ns)
    for (inner, outer), br in ((config.underlay_if(az), config.UNDERLAY_BRIDGE),
                               (config.public_if(az), config.PUBLIC_BRIDGE)):
        veth(inner, ns, outer, config.NET_NS)
        sh('ip', 'link', 'set', outer, 'master', br, ns=config.NET_NS)


def teardown() -> list[str]:
    """Delete every namespace of this instance (their veths, taps and bridges go with them) and the root
    namespace's public end (its route goes with it); what was removed."""
    gone = []
    for ns in ours(namespaces()):
        sh('ip', 'netns', 'del', ns, check=False)
        gone.append(f'netns {ns}')
    for dev in root_links():
        sh('ip', 'link', 'del', dev, check=False)
        gone.append(f'link {dev}')
    return gone


def root_links() -> list[str]:
    """Links of this instance left in the root namespace (normally just the public end)."""
    out = sh('ip', '-o', 'link', 'show', check=False)
    names = [line.split(':')[1].strip().split('@')[0] for line in out.splitlines() if ':' in line]
    return [n for n in names if n.startswith(config.TAG) and n[len(config.TAG):][:1].isalpha()]

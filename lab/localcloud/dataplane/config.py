"""Names, addresses, ports and paths of the data plane (standard library only; the venv imports it too).

Everything instance-specific derives from the state directory's port offset: the tag ``lc<offset>`` prefixes every
namespace and every interface this instance creates in the root namespace, and the public network's CIDR is
172.24.<4 + offset/1000>.0/24, so two instances never share a name or a route.
"""
import os
from pathlib import Path

from ..settings import AZS, COMPUTE_HOSTS, PORT_OFFSET, Paths, cache_dir

MODES = ('none', 'ovn')
DEFAULT = 'ovn'              # real packets unless LOCALCLOUD_DATAPLANE=none asks for the control plane alone
MODE_FILE = 'dataplane-mode'  # <state>/dataplane-mode: the mode this state directory was seeded with
LEGACY_FILE = 'dataplane'     # what older checkouts wrote at every up ('none' unless LOCALCLOUD_DATAPLANE=ovn)


def chosen() -> str:
    """LOCALCLOUD_DATAPLANE when set (checked), else ''."""
    env = os.environ.get('LOCALCLOUD_DATAPLANE', '').strip()
    if env and env not in MODES:
        raise ValueError(f'LOCALCLOUD_DATAPLANE={env!r} is not one of {", ".join(MODES)}; '
                         f'unset it (the data plane: {DEFAULT}) or set LOCALCLOUD_DATAPLANE=none')
    return env


def _read(path: Path) -> str:
    try:
        value = path.read_text().strip()
    except OSError:
        return ''
    return value if value in MODES else ''


def seeded_mode(p: Paths) -> str:
    """The mode the state directory's cloud was seeded with ('' when it was never seeded). Older checkouts seeded
    without the data plane unless asked, and wrote that choice to LEGACY_FILE."""
    recorded = _read(p.root / MODE_FILE)
    if recorded:
        return recorded
    if not p.seeded.exists():
        return ''
    return _read(p.root / LEGACY_FILE) or 'none'


def mode(p: Paths) -> str:
    """The data plane of this state directory: LOCALCLOUD_DATAPLANE when set, else what the state directory was
    seeded with in this mode's file, else DEFAULT ('ovn'; an older checkout's LEGACY_FILE says nothing here: its
    'ovn' is the default anyway, and its 'none' was no choice, so that state directory moves to the data plane at
    the next `up`, see ctl.data_plane_matches)."""
    return chosen() or _read(p.root / MODE_FILE) or DEFAULT


def remember(p: Paths) -> None:
    p.root.mkdir(parents=True, exist_ok=True)
    (p.root / MODE_FILE).write_text(mode(p) + '\n')
    (p.root / LEGACY_FILE).unlink(missing_ok=True)


def enabled(p: Paths) -> bool:
    return mode(p) == 'ovn'


TAG = f'lc{PORT_OFFSET}'                       # e.g. lc0, lc5000: in every namespace and root-side interface name
NET_NS = f'{TAG}-net'                          # the wires: underlay bridge + public bridge
UNDERLAY_BRIDGE, PUBLIC_BRIDGE = 'ul', 'pub'
UNDERLAY_CIDR = '10.255.0.0/24'                # inside namespaces only
ROOT_PUBLIC_IF = f'{TAG}pub'                   # root-namespace end of the public network (the gateway address)
ROOT_PUBLIC_PEER = f'{TAG}pubx'                # its peer, on the public bridge in NET_NS

OFFSET_OK = PORT_OFFSET % 1000 == 0 and PORT_OFFSET < 250000


def public_cidr(offset: int) -> str:
    """The public network of the instance at port offset ``offset`` (a multiple of 1000): 172.24.4.0/24 for the
    first cloud (offset 0), 172.24.<4 + offset/1000>.0/24 for another."""
    return f'172.24.{4 + offset // 1000}.0/24'


_THIRD = int(public_cidr(PORT_OFFSET if OFFSET_OK else 0).split('.')[2])


def check_offset() -> None:
    if not OFFSET_OK:
        raise ValueError(f'LOCALCLOUD_PORT_OFFSET={PORT_OFFSET}: the data plane needs a multiple of 1000 below 250000 '
                         f'(it names the public network 172.24.<4 + offset/1000>.0/24); pick such an offset')
PUBLIC_CIDR = f'172.24.{_THIRD}.0/24'
PUBLIC_GATEWAY = f'172.24.{_THIRD}.1'
PUBLIC_POOL = (f'172.24.{_THIRD}.10', f'172.24.{_THIRD}.250')
PUBLIC_PHYSNET = 'public'


def chassis_ns(az: str) -> str:
    return f'{TAG}-{az}'


def chassis_id(az: str) -> str:
    """OVS system-id, i.e. the SB Chassis name."""
    return f'{TAG}-{az}'


def chassis_hostname(az: str) -> str:
    """The SB Chassis hostname: Nova's compute host of the AZ, so Neutron binds that host's ports here."""
    return COMPUTE_HOSTS[az]


def chassis_ip(az: str) -> str:
    return f'10.255.0.{AZS.index(az) + 11}'


def underlay_if(az: str) -> tuple[str, str]:
    """(chassis end, bridge end) of the chassis' underlay veth."""
    return f'{TAG}{az}u', f'{TAG}{az}ux'


def public_if(az: str) -> tuple[str, str]:
    return f'{TAG}{az}p', f'{TAG}{az}px'


def member_ns(port_id: str) -> str:
    return f'{TAG}-m-{port_id[:8]}'


def member_if(port_id: str) -> tuple[str, str]:
    """(member end, chassis end) of a member's veth: at most 15 characters."""
    return f'{TAG}m{port_id[:6]}', f'{TAG}v{port_id[:6]}'


class DPPaths:
    """Files of the data plane under the state directory."""

    def __init__(self, p: Paths):
        self.p = p
        self.lib = p.lib / 'ovn'
        self.run = p.run / 'ovn'
        self.nb_db = self.lib / 'ovnnb.db'
        self.sb_db = self.lib / 'ovnsb.db'
        self.nb_sock = self.run / 'nb.sock'
        self.sb_sock = self.run / 'sb.sock'
        self.members = p.run / 'members'

    def chassis_dir(self, az: str) -> Path:
        return self.run / az

    def conf_db(self, az: str) -> Path:
        return self.chassis_dir(az) / 'conf.db'

    def db_sock(self, az: str) -> Path:
        return self.chassis_dir(az) / 'db.sock'

    def vswitchd_ctl(self, az: str) -> Path:
        return self.chassis_dir(az) / 'ovs-vswitchd.ctl'

    def controller_ctl(self, az: str) -> Path:
        return self.chassis_dir(az) / 'ovn-controller.ctl'

    def makedirs(self) -> None:
        for d in (self.lib, self.run, self.members, *(self.chassis_dir(az) for az in AZS)):
            d.mkdir(parents=True, exist_ok=True)


OVN_PROVIDER_VERSION = '3.1.2'   # lab/localcloud/install.sh installs it (3.0.0, Debian's, has bug 1997418)


def ovn_provider_dir() -> Path:
    """ovn-octavia-provider, installed by lab/localcloud/install.sh with pip --target (PYTHONPATH of octavia-api and
    octavia-driver-agent)."""
    return cache_dir() / f'ovn-octavia-provider-{OVN_PROVIDER_VERSION}'


OVS_VERSION = '3.5.0'   # ovs-vswitchd only, built by lab/localcloud/ovs-build.sh (3.1.0, Debian 12's, aborts in conntrack)


def ovs_dir() -> Path:
    """The data plane's ovs-vswitchd (bin/ovs-vswitchd) and its database schema (share/vswitch.ovsschema), built by
    lab/localcloud/ovs-build.sh from Debian's source package; every other OVS and OVN tool is Debian 12's."""
    return cache_dir() / f'openvswitch-{OVS_VERSION}'


def nb_tcp() -> str:
    from ..settings import HOST, PORTS
    return f'tcp:{HOST}:{PORTS["ovn-nb"]}'


def sb_tcp() -> str:
    from ..settings import HOST, PORTS
    return f'tcp:{HOST}:{PORTS["ovn-sb"]}'

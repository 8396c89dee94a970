"""What a running local cloud holds beyond its seed: load balancers, servers, floating IPs and DNS records that a stack
or a test created and did not delete.

An interrupted test run leaves its endpoints behind (a killed `make test`, a CI run cut at its time limit): their
member servers, OVN load balancers and Octavia objects then cost CPU in every later run on that cloud's state (one such
run left 36 servers and 6 load balancers: the idle cloud's CPU went from 7% to 22% of a core). `make test` prints
this report for each cloud it starts, so a slow run names its cause; nothing is deleted here (the first cloud is also
the `dev` stack's: `make down` removes that stack, `lab/localcloud/reset` wipes a cloud's state).

``python -m localcloud.leftovers <label>`` (the cloud of ``HA_ENDPOINT_STATE``) prints one line, or nothing when the
cloud holds only its seed.
"""

from __future__ import annotations

import sys

SHOWN = 3
"""Names shown per kind; the rest are counted."""


def the_clouds_own_servers() -> frozenset[str]:
    """The names of the servers the cloud makes for itself and keeps: its node sets (the control-plane nodes the seed
    records, the Kubernetes nodes the Kubernetes tests ask for, the keepalived peers the keepalived tests ask for:
    :mod:`localcloud.dataplane.nodes`)."""
    from .dataplane.nodes import CONTROL_PLANE, KEEPALIVED_PEERS, KUBERNETES
    return frozenset(name for nodeset in (CONTROL_PLANE, KUBERNETES, KEEPALIVED_PEERS) for name, _, _ in nodeset.nodes)


def unseeded(cloud) -> dict[str, list[str]]:
    """Kind -> names of what ``cloud`` (a :class:`localcloud.testing.LocalCloud`) holds that its seed did not create
    (its node sets' servers are its own)."""
    from .testing import recordsets_of_every_zone
    conn, own = cloud.conn, the_clouds_own_servers()
    return {
        'load balancers': sorted(lb.name or lb.id for lb in conn.load_balancer.load_balancers()),
        'servers': sorted(s.name or s.id for s in conn.compute.servers() if s.name not in own),
        'floating IPs': sorted(ip.floating_ip_address for ip in conn.network.ips()),
        'DNS records': sorted(rs.name for _, rs in recordsets_of_every_zone(conn)
                              if rs.type not in ('SOA', 'NS')),
    }


def report(label: str, found: dict[str, list[str]]) -> str:
    """One line naming what ``found`` holds, or "" when it holds nothing."""
    parts = []
    for kind, names in found.items():
        if names:
            more = f', {len(names) - SHOWN} more' if len(names) > SHOWN else ''
            noun = kind if len(names) > 1 else kind.replace('IPs', 'IP').rstrip('s')
            parts.append(f'{len(names)} {noun} ({", ".join(names[:SHOWN])}{more})')
    if not parts:
        return ''
    return (f'{label} holds what its seed did not create (an interrupted run\'s, or a deployed stack\'s; they cost '
            f'CPU in every test): ' + '; '.join(parts))


def main(argv: list[str]) -> int:
    from .testing import ensure_up
    label = argv[0] if argv else 'the local cloud'
    line = report(label, unseeded(ensure_up()))
    if line:
        print(line)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))

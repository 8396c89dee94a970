"""The cloud operator's answer to a load balancer with no live member: a TCP reset instead of silence.

OVN drops what reaches a load balancer VIP none of whose backends is live (its health checks all failed, or it has
none), unless the Load_Balancer row has ``options:reject=true``: then ovn-northd programs a reject, and a TCP client
gets a reset (an ICMP port unreachable for UDP) at once instead of waiting out its connect timeout (the kernel's SYN
retries, ~127 s, for curl and Python requests). ovn-octavia-provider never sets the option, and never rewrites the
row's ``options`` (3.1.2; later versions copy them when they add affinity timeouts), so an operator can set it and
it stays: the local cloud does, on every row the provider made (``external_ids:"neutron:vip"``), within 2 s
of its creation (every fourth reconciler tick). A row whose ``reject`` was set explicitly (true or false) is left as it is: the
failover benchmark sets ``false`` on its own rows to measure the provider's default beside this.

By hand, on any OVN cloud: ``ovn-nbctl set Load_Balancer <uuid> options:reject=true`` for each row of
``ovn-nbctl --columns=_uuid,external_ids find Load_Balancer``.
"""
import json

from ..settings import Paths
from . import ovn

PROVIDER_MARK = 'neutron:vip'   # ovn-octavia-provider's external_ids key on every Load_Balancer row it creates


def _rows(p: Paths) -> list[dict]:
    """Every Load_Balancer row as {uuid, external_ids, options}."""
    table = json.loads(ovn.nbctl(p, '--format=json', '--columns=_uuid,external_ids,options', 'list',
                                 'Load_Balancer'))
    rows = []
    for uuid, external_ids, options in table.get('data', []):
        rows.append({'uuid': uuid[1], 'external_ids': dict(external_ids[1]), 'options': dict(options[1])})
    return rows


def unset(rows: list[dict]) -> list[str]:
    """The uuids of the provider's rows with no ``reject`` option of their own (pure: the reconciler's decision)."""
    return [row['uuid'] for row in rows if PROVIDER_MARK in row['external_ids'] and 'reject' not in row['options']]


def ensure(p: Paths) -> list[str]:
    """Set ``options:reject=true`` on every provider row that has no ``reject`` option; the uuids set (one nbctl
    call to read, at most one to write)."""
    todo = unset(_rows(p))
    if todo:
        args = []
        for uuid in todo:
            args += ['--', 'set', 'Load_Balancer', uuid, 'options:reject=true']
        ovn.nbctl(p, *args[1:])
    return todo

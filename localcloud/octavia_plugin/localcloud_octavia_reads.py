"""Octavia's API reads without its whole object graph (runs inside octavia-api, system python).

Octavia 11 answers a GET by turning the database row into a data model with ``OctaviaBase.to_data_model()``, which
follows every relationship of every object it reaches, one lazy query each: reading one load balancer loads its
listeners, pools, members, monitors, amphorae, their statistics, and so on, and reading one member loads the same
through its pool. Measured on the local cloud (2026-11-28, py-spy in octavia-api): 66% of a load balancer GET's CPU
(24 ms for a load balancer with one listener, one pool, three members), and 739 of the ~1300 busy samples of the API
in a minute of `make test`, where the provider's waits read load balancers, pools and members all the time.

``wrap(app)`` makes the conversion stop one relationship away from the object asked for, only while the thread
serves a GET of a load balancer, listener, pool, member, health monitor, L7 policy or rule, one or a list
(``READS``). Those responses show the object's own columns and plain lists (tags), and the columns of what it refers
to directly (the ids of its listeners, pools, members; its VIP, session persistence, allowed CIDRs): nothing deeper.
Every other request (writes, status trees, statistics, amphorae, quotas) and every other process (worker, driver
agent, health manager) converts the whole graph as before. tests/integration/test_octavia_reads.py builds each of
those responses both ways from the local cloud's own database and asserts they are equal.
"""
import re
import threading

READS = re.compile(r'/v2(?:\.0)?/lbaas/(?:loadbalancers|listeners|pools|healthmonitors|l7policies)'
                   r'(?:/[^/]+(?:/(?:members|rules)(?:/[^/]+)?)?)?/?')
"""The GET paths answered from the limited graph (not ``.../status``, ``.../stats``: they walk the tree)."""

_serving = threading.local()


def limited_data_model(obj, depth: int, nodes: dict | None = None):
    """``obj``'s data model as ``to_data_model()`` builds it, down to ``depth`` relationships: at depth 0 its columns
    only; above, also what each relationship holds (converted with ``depth - 1``) and plain list items as they are.
    An object met twice is one node, as in Octavia's graph."""
    nodes = {} if nodes is None else nodes
    model = obj.__data_model__(**{column.name: getattr(obj, column.name) for column in obj.__table__.columns})
    nodes[obj._get_unique_key(model)] = model
    if depth <= 0:
        return model
    base = _octavia_base()

    def convert(item):
        key = obj._get_unique_key(item)
        return nodes[key] if key in nodes else limited_data_model(item, depth - 1, nodes)

    for name in dir(obj):
        if name.startswith('_'):
            continue
        value = getattr(obj, name)
        if isinstance(value, base):
            setattr(model, name, convert(value))
        elif isinstance(value, list):  # InstrumentedList included
            setattr(model, name, [convert(item) if isinstance(item, base) else item for item in value])
    return model


def _octavia_base():
    from octavia.db import base_models
    return base_models.OctaviaBase


def patch() -> None:
    """Route ``OctaviaBase.to_data_model()`` to the limited conversion while this thread serves one of ``READS``."""
    from octavia.db import base_models
    full = base_models.OctaviaBase.to_data_model
    if getattr(full, 'localcloud_limited', False):
        return

    def to_data_model(self, _graph_nodes=None):
        depth = getattr(_serving, 'depth', None)
        if depth is None or _graph_nodes is not None:
            return full(self, _graph_nodes=_graph_nodes)
        return limited_data_model(self, depth)

    to_data_model.localcloud_limited = True
    base_models.OctaviaBase.to_data_model = to_data_model


def wrap(app):
    """The WSGI application ``app`` with ``READS`` served from the graph one relationship deep."""
    patch()

    def application(environ, start_response):
        if environ.get('REQUEST_METHOD') != 'GET' or not READS.fullmatch(environ.get('PATH_INFO') or ''):
            return app(environ, start_response)
        _serving.depth = 1
        try:
            return app(environ, start_response)
        finally:
            _serving.depth = None

    return application


def responses(session) -> dict:
    """Per API response type, for every object of the database that is not DELETED: (its id, the response built from
    Octavia's full graph, the response built from the limited one), both as the API's JSON."""
    from octavia.api.v2.types import (health_monitor, l7policy, l7rule, listener, load_balancer, member, pool)
    from octavia.db import models
    from wsme.rest.json import tojson
    kinds = {
        'loadbalancer': (models.LoadBalancer, load_balancer.LoadBalancerResponse),
        'listener': (models.Listener, listener.ListenerResponse),
        'pool': (models.Pool, pool.PoolResponse),
        'member': (models.Member, member.MemberResponse),
        'healthmonitor': (models.HealthMonitor, health_monitor.HealthMonitorResponse),
        'l7policy': (models.L7Policy, l7policy.L7PolicyResponse),
        'l7rule': (models.L7Rule, l7rule.L7RuleResponse),
    }
    out = {}
    for kind, (model, response) in kinds.items():
        rows = session.query(model).filter(model.provisioning_status != 'DELETED').all()
        out[kind] = []
        for row in rows:
            session.expire_all()  # each conversion loads what it follows itself, as in a request of its own
            full = tojson(response, response.from_data_model(row.to_data_model()))
            session.expire_all()
            limited = tojson(response, response.from_data_model(limited_data_model(row, 1)))
            out[kind].append((row.id, full, limited))
    return out


def main() -> int:
    """``python3 -m localcloud_octavia_reads < <database URL>``: every response of ``READS`` from the database both
    ways; prints the count per kind and each difference, exits 1 on a difference. The URL (it holds the database's
    password) is read from stdin, never from the command line, which every user of the machine can read."""
    import json
    import sys
    import warnings
    import sqlalchemy
    from sqlalchemy import exc, orm
    warnings.simplefilter('ignore', exc.SAWarning)  # Octavia's own mappers' overlap warnings
    url = sys.stdin.readline().strip()
    session = orm.Session(sqlalchemy.create_engine(url))
    differences = 0
    for kind, rows in responses(session).items():
        print(json.dumps({'kind': kind, 'count': len(rows)}))
        for row_id, full, limited in rows:
            if full != limited:
                differences += 1
                print(json.dumps({'kind': kind, 'id': row_id, 'full': full, 'limited': limited}, default=str))
    return 1 if differences else 0


if __name__ == '__main__':
    raise SystemExit(main())

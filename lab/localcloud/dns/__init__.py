"""The local cloud's DNS server: named (bind9, Debian's package) on 127.0.0.1, the target of Designate's pool.

Designate's worker adds each zone to named with ``rndc addzone`` (a secondary zone whose primary is designate-mdns),
sends named a NOTIFY on every change and polls named's SOA serial until the change is there; only then are the zone
and its recordsets ACTIVE. Clients ask named: ``dig @127.0.0.1 -p <PORTS['named']> api.example.test``.

- ``config``: named.conf, the rndc key (generated once per state directory) and rndc.conf, the pool Designate runs
  and the worker's polling (system python, standard library only)
- ``server``: named as a service of the local cloud (command line, ports, status) and the zones it must serve
- ``query``: ask named for a name, once or in a loop with timestamps (dnspython: the venv and the system python)
"""

"""DNS that follows health between runs: a watcher that takes a stably unhealthy zone's address out of the
endpoint's A record and puts it back once the zone is stably healthy again, never removing the last published zone.

- :mod:`.decide`: the rules, pure (streaks of polls, the published set, fail-open);
- :mod:`.observe`: one zone's health, from Octavia (the gates' client) and, optionally, a TCP connect to its address;
- :mod:`.records`: the endpoint's A record in Designate, touched only when its identity is the endpoint's;
- :mod:`.inputs`: its command line (options, defaults, rules) and the outputs it reads, also used by the Kubernetes
  Deployment that runs it (:mod:`ha_endpoint.kubernetes.watcher_manifests`).
"""

"""named's configuration, its rndc key, and the Designate pool and worker settings that make named the backend.

Standard library only (system python). Everything named reads or writes lives under the state directory:
``etc/named.conf``, ``etc/rndc.key`` (generated once, mode 0600, never in the clone), ``etc/rndc.conf``,
``lib/named/`` (the zones Designate added: their transferred copies and named's new-zone database).
"""
import base64
import secrets
from pathlib import Path

from ..configs import _write
from ..settings import HOST, PORTS, Paths

KEY_NAME = 'localcloud-rndc'

# Designate's worker after a change: poll named at once, then every second, for up to 30 s, until named has the new
# serial (each poll a SOA query with a 2 s timeout). named transfers a change from designate-mdns within
# milliseconds of the worker's NOTIFY, so a recordset is ACTIVE ~1 s after it was written (Designate's defaults:
# poll after 5 s, then every 15 s). The same retries cover a failed `rndc` call (named restarting).
WORKER_POLLING = {'poll_delay': 0, 'poll_retry_interval': 1, 'poll_max_retries': 30, 'poll_timeout': 2}


def named_dir(p: Paths) -> Path:
    return p.lib / 'named'


def named_conf(p: Paths) -> Path:
    return p.conf('named.conf')


def rndc_conf(p: Paths) -> Path:
    return p.conf('rndc.conf')


def rndc_key(p: Paths) -> Path:
    return p.conf('rndc.key')


def ensure_key(p: Paths) -> Path:
    """The rndc key of this state directory (HMAC-SHA256, 256 random bits): written once, then kept."""
    path = rndc_key(p)
    if not path.exists():
        secret = base64.b64encode(secrets.token_bytes(32)).decode()
        _write(path, f'key "{KEY_NAME}" {{\n\talgorithm hmac-sha256;\n\tsecret "{secret}";\n}};\n')
    return path


def write(p: Paths) -> None:
    """named.conf and rndc.conf (rewritten by every `up`), the key (kept)."""
    work = named_dir(p)
    work.mkdir(parents=True, exist_ok=True)
    key = ensure_key(p)
    port, rndc_port = PORTS['named'], PORTS['named-rndc']
    # Every socket on 127.0.0.1; every query named itself sends (SOA checks and transfers from designate-mdns)
    # leaves from 127.0.0.1, which the kernel never routes off the machine. No recursion, no DNSSEC validation
    # (no root trust anchor to maintain), no NOTIFY of its own: named only answers and follows designate-mdns.
    _write(named_conf(p), f"""// written by lab/localcloud/dns (every `lab/localcloud/up`)
include "{key}";
controls {{ inet {HOST} port {rndc_port} allow {{ {HOST}; }} keys {{ "{KEY_NAME}"; }}; }};
options {{
\tdirectory "{work}";
\tpid-file none;
\tsession-keyfile none;
\tmanaged-keys-directory "{work}";
\tnew-zones-directory "{work}";
\tlisten-on port {port} {{ {HOST}; }};
\tlisten-on-v6 {{ none; }};
\tallow-new-zones yes;
\trecursion no;
\tallow-query {{ {HOST}; }};
\tallow-transfer {{ none; }};
\tnotify no;
\tdnssec-validation no;
\tquery-source address {HOST};
\ttransfer-source {HOST};
\tnotify-source {HOST};
\tmax-cache-size 4m;
}};
""")
    _write(rndc_conf(p), f"""// written by lab/localcloud/dns: rndc for this state directory's named
include "{key}";
options {{ default-key "{KEY_NAME}"; default-server {HOST}; default-port {rndc_port}; }};
""")


def pool_yaml(p: Paths) -> str:
    """Designate's one pool: named is its nameserver and its bind9 target, designate-mdns the target's primary.

    The worker runs `rndc` in the state directory (its working directory), so rndc.conf is named relative to it: the
    pool, and the schema cache keyed by it, stay the same for every state directory on the same ports."""
    host, named, mdns = HOST, PORTS['named'], PORTS['designate-mdns']
    return f"""- name: default
  description: localcloud pool (bind9 backend, named on {host}:{named})
  attributes: {{}}
  ns_records:
    - hostname: ns1.localcloud.test.
      priority: 1
  nameservers:
    - host: {host}
      port: {named}
  targets:
    - type: bind9
      description: named on {host}:{named}
      masters:
        - host: {host}
          port: {mdns}
      options:
        host: {host}
        port: {named}
        rndc_host: {host}
        rndc_port: {PORTS['named-rndc']}
        rndc_config_file: {rndc_conf(p).relative_to(p.root)}
        clean_zonefile: true
"""

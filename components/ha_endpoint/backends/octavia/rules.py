"""The Octavia backend's own rules of a configuration, as Octavia's API (and its OVN provider) judges it: which health
monitors a pool takes and how often a UDP-CONNECT one may probe, the fields only an HTTP(S) monitor takes, the OVN
provider's limits, the listener timeouts nothing applies (ovn, and the amphora's LVS listeners) and the data timeouts
that cut idle Kubernetes API connections, the addresses Octavia reserves, and the words of the rules every backend
shares that it says its own way. Its :class:`ha_endpoint.core.checks.Rules` (:mod:`.backend`) ask them of a
configuration that names the backend; the policy pack decides the same rules on what a stack declares, and imports
this module for them.

Pure: the standard library and the core only (no Pulumi, no provider SDK, no openstacksdk), so the pack loads it
without the backend's resource code.
"""

from __future__ import annotations

from typing import Optional

from ...core import predicates

NAME = "octavia"
"""The backend's name in the registry and in each zone's facts (``backend``): the pack holds the zones declared so to
the Octavia rules."""

OCTAVIA_DATA_TIMEOUT = 50000
"""Octavia's shipped ``[haproxy_amphora] timeout_client_data`` and ``timeout_member_data``, in milliseconds: what an
amphora listener gets when none is given, or 0 (its template writes ``value or the configured default``)."""

CERTIFICATE_REF_MAX = 255
"""Octavia's limit on a listener's ``default_tls_container_ref``."""


def certificate_ref_length_problem(ref: str) -> Optional[str]:
    """Why Octavia cannot take ``ref`` as a listener's certificate reference for its length, or None (at most
    :data:`CERTIFICATE_REF_MAX` characters; its syntax is the core's :func:`ha_endpoint.core.args.
    certificate_ref_problem`)."""
    if len(ref) <= CERTIFICATE_REF_MAX:
        return None
    return (f"the reference is {len(ref)} characters long and Octavia takes at most {CERTIFICATE_REF_MAX}; give the "
            "container's reference as Barbican lists it (openstack secret container list), or its id alone")


ONE_IP_VERSION = "Octavia admits on a listener only CIDRs of its VIP's IP version"
"""Why the allowed CIDRs are of one IP version (:attr:`ha_endpoint.core.checks.Rules.one_ip_version`)."""
OTHER_IP_VERSION = "Octavia refuses a CIDR of another IP version on its listeners"
"""Why the default allowed CIDR does not fit a VIP of another IP version (:attr:`~ha_endpoint.core.checks.Rules.
other_ip_version`)."""

MISSING_MONITOR = ("without a health monitor Octavia cannot take a dead member out of rotation and a member reports "
                   "NO_MONITOR, which says nothing about whether it serves, so readiness would be blind")
"""Why every pool needs a health monitor: validation refuses ``monitor: null`` (:attr:`ha_endpoint.core.checks.Rules.
needs_monitor`) and the pack a pool without one."""

NO_CERTIFICATE = "Octavia refuses one without a certificate reference"
"""Why a TERMINATED_HTTPS listener needs a certificate (:attr:`ha_endpoint.core.checks.Rules.needs_certificate`)."""

RESERVED_ADDRESSES = (("169.254.169.254", "reserved by Octavia (the metadata service)"),)
"""Octavia's default ``[networking] reserved_ips``: addresses it refuses as member addresses, with what they are
(:attr:`ha_endpoint.core.checks.Rules.reserved_addresses`)."""


# -- health monitors ---------------------------------------------------------------------------------------------------

DATAGRAM_POOL_PROTOCOLS = ("UDP", "SCTP")
DATAGRAM_MONITOR_TYPES = ("UDP-CONNECT", "SCTP", "TCP", "HTTP")
"""Octavia's API: pools of UDP or SCTP take only these monitor types; UDP-CONNECT and SCTP monitors only such pools."""

UDP_CONNECT_MIN_DELAY = 3
"""Octavia's default ``[api_settings] udp_connect_min_interval_health_monitor``: the least delay of a UDP-CONNECT
monitor."""

HTTP_MONITOR_TYPES = ("HTTP", "HTTPS")
"""The monitor types that send a request (``url_path``, ``expected_codes``); Octavia refuses those fields on others."""


def monitor_pool_problem(monitor_type: str, pool_protocol: str) -> Optional[str]:
    """Why Octavia refuses a monitor of ``monitor_type`` on a pool of ``pool_protocol``, or None when it accepts it
    (the OpenStack provider, terraform-provider-openstack v3.4.0, accepts every monitor type Octavia has)."""
    kind, protocol = str(monitor_type).upper(), str(pool_protocol).upper()
    if protocol in DATAGRAM_POOL_PROTOCOLS and kind not in DATAGRAM_MONITOR_TYPES:
        return (f"{_a(protocol)} {protocol} pool takes only {', '.join(DATAGRAM_MONITOR_TYPES)} health monitors, "
                f"not {kind}")
    if protocol not in DATAGRAM_POOL_PROTOCOLS and kind in ("UDP-CONNECT", "SCTP"):
        return f"{_a(kind)} {kind} health monitor works only on UDP or SCTP pools, not on {_a(protocol)} {protocol} pool"
    return None


def _a(acronym: str) -> str:
    """The article before an acronym read letter by letter ("an HTTP pool", "a TCP pool")."""
    return "an" if acronym[:1].upper() in "AEFHILMNORSX" else "a"


def monitor_delay_problem(monitor_type: str, delay: int) -> Optional[str]:
    """Why Octavia refuses a monitor of ``monitor_type`` probing every ``delay`` seconds, or None: a UDP-CONNECT monitor
    must wait at least :data:`UDP_CONNECT_MIN_DELAY` seconds between probes (Octavia's default setting)."""
    if str(monitor_type).upper() == "UDP-CONNECT" and delay < UDP_CONNECT_MIN_DELAY:
        return (f"a UDP-CONNECT health monitor probes at most every {UDP_CONNECT_MIN_DELAY} seconds (Octavia's "
                f"udp_connect_min_interval_health_monitor), not every {delay}")
    return None


# -- the OVN provider --------------------------------------------------------------------------------------------------

OVN_PROTOCOLS = ("TCP", "UDP", "SCTP")
OVN_MONITOR_TYPES = ("TCP", "UDP-CONNECT", "SCTP")


def ovn_protocol_allowed(protocol: str) -> bool:
    """Whether Octavia's OVN provider serves listeners and pools of ``protocol``."""
    return str(protocol).upper() in OVN_PROTOCOLS


def ovn_monitor_allowed(monitor_type: str) -> bool:
    """Whether Octavia's OVN provider has health monitors of ``monitor_type``."""
    return str(monitor_type).upper() in OVN_MONITOR_TYPES


def ovn_method_allowed(lb_method: Optional[str]) -> bool:
    """Whether Octavia's OVN provider balances with ``lb_method`` (None: the provider's default)."""
    return lb_method is None or str(lb_method).upper() == predicates.OVN_METHOD


# -- listener timeouts (long-lived API connections) --------------------------------------------------------------------

def listener_timeouts_problem(provider: Optional[str], protocol: str) -> Optional[str]:
    """Why a listener of ``protocol`` under ``provider`` has no use for the listener timeouts, or None when they are
    what its load balancer applies (:func:`ha_endpoint.core.predicates.listener_timeouts_apply`: an amphora listener
    HAProxy serves).

    ovn-octavia-provider ignores them: its ``listener_create``/``listener_update`` (``ovn_octavia_provider/driver.py``)
    hand the OVN helper the listener's id, protocol, port, load balancer, default pool and admin state only, so Octavia
    stores and shows the timeouts while nothing applies them. An OVN load balancer is no proxy: it DNATs each
    connection to a member with conntrack (``ct_lb_mark``), and an idle connection lives as long as its conntrack
    entry (on Linux's datapath ``net.netfilter.nf_conntrack_tcp_timeout_established``, 5 days by default); the only
    timer the provider sets on it is ``affinity_timeout`` (SOURCE_IP session persistence)."""
    if predicates.listener_timeouts_apply(provider, protocol):
        return None
    if predicates.is_ovn(provider):
        return ("the ovn provider ignores listener timeouts (Octavia records them, nothing applies them: an OVN load "
                "balancer is no proxy, an idle connection lives as long as its conntrack entry, 5 days on Linux by "
                "default)")
    return (f"an amphora serves {str(protocol).upper()} listeners with LVS, which has no such timeouts (Octavia "
            f"records them, nothing applies them)")


def data_timeout_problem(key: str, value: Optional[int], minimum: int = predicates.WATCH_IDLE_MS) -> Optional[str]:
    """Why ``key`` (``timeoutClientData`` or ``timeoutMemberData``) at ``value`` milliseconds (None: not given) cuts
    idle long-lived Kubernetes API connections (watches, ``logs -f``, ``exec``) sooner than ``minimum``, or None."""
    if value is None or value == 0:
        given = "is not set" if value is None else "is 0"
        return (f"{key} {given}, so the amphora applies Octavia's configured default ({OCTAVIA_DATA_TIMEOUT} ms as "
                f"shipped): an idle watch, logs -f or exec is cut after {OCTAVIA_DATA_TIMEOUT // 1000} s")
    if value < minimum:
        return (f"{key} is {value} ms: an idle watch, logs -f or exec is cut after {_duration(value)}, sooner "
                f"than {_duration(minimum)}")
    return None


def _duration(ms: int) -> str:
    seconds = ms / 1000
    if seconds >= 120 and seconds % 60 == 0:
        return f"{int(seconds // 60)} min"
    return f"{seconds:g} s"

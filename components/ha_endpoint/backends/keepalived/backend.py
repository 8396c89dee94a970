"""The keepalived backend: each availability zone served by a VIP that the zone's members hold with VRRP, for clouds
without a load-balancer service (Octavia).

What it refuses at preview (:mod:`.checks`), how it serves a zone (:mod:`.serving`: the VIP port, the VRRP group, the
VIP in each member port's allowed address pairs (:mod:`.pairs`), the floating IP and the zone's readiness
(:mod:`.readiness`)), and what runs on the members (:mod:`.config`: keepalived's configuration, as a file, a
cloud-init fragment and a static pod, in the zone's ``keepalived`` output), how the DNS watcher watches its zones
(:mod:`.watched`), and its two dynamic resources as the package's provider host serves them (``hosted_types``).
docs/keepalived.md.
"""

from ..plugin import Backend, Serve, provider_path, served_when_needed
from . import pairs, readiness
from .checks import NAME, check_keepalived
from .watched import WATCHED


def _serving() -> Serve:
    from .serving import serve  # when a zone is served (plugin.served_when_needed)

    return serve


BACKEND = Backend(name=NAME, serve=served_when_needed(_serving), preview=check_keepalived, watched=WATCHED,
                  vip_address=True,
                  hosted_types={readiness.TYPE_NAME: provider_path(readiness.VipReadinessProvider),
                                pairs.TYPE_NAME: provider_path(pairs.MemberVipProvider)})

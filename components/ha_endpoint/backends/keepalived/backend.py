"""The keepalived backend as the registry holds it (:class:`ha_endpoint.backends.plugin.Backend`): its preview
refusals, serve, watcher and dynamic resources; it has no rules of its own beyond its preview's (the core's defaults,
:data:`ha_endpoint.core.checks.NO_RULES`). The registry loads it when first asked (:mod:`ha_endpoint.backends`).
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

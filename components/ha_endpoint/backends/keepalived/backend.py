"""The keepalived backend as the registry holds it (:class:`ha_endpoint.backends.plugin.Backend`): its rules of a
configuration (:mod:`.rules`), its preview's refusals (what the cloud tells: :mod:`.checks`), serve, watcher and
dynamic resources. The registry loads it when first asked (:mod:`ha_endpoint.backends`).
"""

from ..plugin import Backend, Serve, provider_path, served_when_needed
from . import pairs, readiness
from .checks import check_keepalived
from .rules import NAME, RULES
from .watched import WATCHED


def _serving() -> Serve:
    from .serving import serve  # when a zone is served (plugin.served_when_needed)

    return serve


BACKEND = Backend(name=NAME, serve=served_when_needed(_serving), preview=check_keepalived, rules=RULES,
                  watched=WATCHED, vip_address=True,
                  hosted_types={readiness.TYPE_NAME: provider_path(readiness.VipReadinessProvider),
                                pairs.TYPE_NAME: provider_path(pairs.MemberVipProvider)})

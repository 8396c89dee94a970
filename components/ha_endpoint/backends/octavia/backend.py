"""The Octavia backend as the registry holds it (:class:`ha_endpoint.backends.plugin.Backend`): its preview, serve,
notices, watcher, settings, member client and agent, and its rules (:mod:`.rules`). The registry loads it when first
asked (:mod:`ha_endpoint.backends`).
"""

from ..plugin import Backend, MemberAgent, Serve, served_when_needed
from .access import member_agent_calls
from .agent_client import AgentOctavia
from .checks import NAME, ovn_weights, preview
from .rules import RULES
from .status import OctaviaStatusSource
from .watched import WATCHED
from .zone import SETTINGS


def _serving() -> Serve:
    from .serving import serve  # when a zone is served (plugin.served_when_needed)

    return serve


BACKEND = Backend(name=NAME, serve=served_when_needed(_serving), preview=preview, notices=ovn_weights, watched=WATCHED,
                  settings=SETTINGS, adopts=True, rules=RULES, status_source=OctaviaStatusSource,
                  agent=MemberAgent(client=AgentOctavia, calls=member_agent_calls))

"""The Octavia backend as the registry holds it (:class:`ha_endpoint.backends.plugin.Backend`): its preview, serve,
notices, watcher, settings, member client and agent, and its rules (:class:`ha_endpoint.core.checks.Rules`: its rules
of the listeners, :func:`.checks.listener_problems` on :mod:`.rules`, its words, and what adopting a load balancer
would replace, :func:`.checks.adoption_problems`, judged on the cloud facts after the checks every backend shares).
The registry loads it when first asked (:mod:`ha_endpoint.backends`).
"""

from ...core.checks import Rules
from ..plugin import Backend, MemberAgent, Serve, served_when_needed
from . import rules
from .access import member_agent_calls
from .agent_client import AgentOctavia
from .checks import NAME, adoption_problems, listener_problems, ovn_weights, preview
from .status import OctaviaStatusSource
from .watched import WATCHED
from .zone import SETTINGS


def _serving() -> Serve:
    from .serving import serve  # when a zone is served (plugin.served_when_needed)

    return serve


RULES = Rules(cloud_facts=adoption_problems, configuration=listener_problems, one_ip_version=rules.ONE_IP_VERSION,
              other_ip_version=rules.OTHER_IP_VERSION, needs_monitor=rules.MISSING_MONITOR,
              needs_certificate=rules.NO_CERTIFICATE, reserved_addresses=rules.RESERVED_ADDRESSES)
"""The Octavia backend's rules."""

BACKEND = Backend(name=NAME, serve=served_when_needed(_serving), preview=preview, notices=ovn_weights, watched=WATCHED,
                  settings=SETTINGS, adopts=True, rules=RULES, status_source=OctaviaStatusSource,
                  agent=MemberAgent(client=AgentOctavia, calls=member_agent_calls))

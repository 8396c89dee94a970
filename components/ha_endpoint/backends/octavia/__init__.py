"""The Octavia backend: each availability zone served by an Octavia load balancer (amphora or ovn provider).

What it asks the cloud at preview (:mod:`.checks`: its availability zones, the listeners' certificates), how it serves a
zone (:mod:`.serving`: the load balancer, listeners, pools, monitors, members, floating IP and the member waits) and
how the DNS watcher watches its zones (:mod:`.watched`); its own plan of a zone (:mod:`.zone`: the load balancer's
name, provider and availability zone, an adopted tree). Its member client: the one its gates and drains poll and
write through, and the watcher polls through (:mod:`.status`), and the member agent's (:mod:`.agent_client`), with
the calls the two agents' scoped credentials allow (:mod:`.access`). Its settings are the endpoint's top-level keys
(``loadBalancerProvider``, listener timeouts), where deployed stacks have them. The pack holds zones declared
``backend: octavia`` to its Octavia rules (zone placement, pools, OVN limits).
"""

from typing import Any, Mapping

from ...core.plan import ZonePlan
from ..plugin import Backend, MemberAgent, ZoneServing
from .access import member_agent_calls
from .agent_client import AgentOctavia
from .checks import NAME, ovn_weights, preview
from .rules import RULES
from .status import OctaviaStatusSource
from .watched import WATCHED
from .zone import SETTINGS


def serve(zone: ZonePlan, vip_group_id: Any, parent: Any, member_ports: Mapping[str, Any]) -> ZoneServing:
    """:func:`.serving.serve`, loaded when a zone is served: the registry loads without the resource code, so a gate's
    process that asks it for the member client (:mod:`ha_endpoint.gates.source`) imports no Pulumi provider SDK."""
    from .serving import serve as served

    return served(zone, vip_group_id, parent, member_ports)


BACKEND = Backend(name=NAME, serve=serve, preview=preview, notices=ovn_weights, watched=WATCHED, settings=SETTINGS,
                  adopts=True, rules=RULES, status_source=OctaviaStatusSource,
                  agent=MemberAgent(client=AgentOctavia, calls=member_agent_calls))

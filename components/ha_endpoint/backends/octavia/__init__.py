"""The Octavia backend: each availability zone served by an Octavia load balancer (amphora or ovn provider).

What it asks the cloud at preview (:mod:`.checks`: its availability zones, the listeners' certificates), how it serves a
zone (:mod:`.serving`: the load balancer, listeners, pools, monitors, members, floating IP and the member waits) and
how the DNS watcher watches its zones (:mod:`.watched`); its own plan of a zone (:mod:`.zone`: the load balancer's
name, provider and availability zone, an adopted tree). Its settings are the endpoint's top-level keys
(``loadBalancerProvider``, listener timeouts), where deployed stacks have them. The pack holds zones declared ``backend: octavia`` to its Octavia rules (zone placement,
pools, OVN limits).
"""

from ..plugin import Backend
from .checks import NAME, ovn_weights, preview
from .rules import RULES
from .serving import serve
from .watched import WATCHED
from .zone import SETTINGS

BACKEND = Backend(name=NAME, serve=serve, preview=preview, notices=ovn_weights, watched=WATCHED, settings=SETTINGS,
                  adopts=True, rules=RULES)

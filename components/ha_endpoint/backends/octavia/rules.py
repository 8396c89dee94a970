"""The Octavia backend's own rules of a configuration (:attr:`ha_endpoint.backends.plugin.Backend.rules`): what
adopting a load balancer would replace (:func:`.checks.adoption_problems`, judged on the cloud facts after the checks
every backend shares, :func:`ha_endpoint.core.checks.check_cloud_facts`), and why a listener admits CIDRs of its VIP's
IP version only.
"""

from __future__ import annotations

from ...core.checks import Rules
from .checks import adoption_problems


RULES = Rules(cloud_facts=adoption_problems,
              one_ip_version="Octavia admits on a listener only CIDRs of its VIP's IP version",
              other_ip_version="Octavia refuses a CIDR of another IP version on its listeners")
"""The Octavia backend's rules."""

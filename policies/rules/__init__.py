"""The pack's rules, declared once each with their metadata (:func:`policies.registry.rule`): pure functions from the
resources the engine shows to violations.

The modules are imported in the order the pack lists its policies; :data:`RULES` is that list.
"""

from ..registry import RULES as _DECLARED
from . import declared_facts, facts_known, min_zones, zone_placement, member_zones  # noqa: F401 - declare
from . import member_reachability, member_security_group, production_listeners, production_timeouts  # noqa: F401
from . import pool_health_monitor  # noqa: F401
from . import dns_ttl, dns_records, dns_readiness, ovn_constraints, az_independence, outage_floor  # noqa: F401
from . import neighbour_members, neighbour_rules, neighbour_records  # noqa: F401

RULES = tuple(_DECLARED)

__all__ = ["RULES"]

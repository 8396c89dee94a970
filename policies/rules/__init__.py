"""The pack's rules, one module each: pure functions from the resources the engine shows to violations.

Each module has NAME, DESCRIPTION, ENFORCEMENT, SEVERITY, KIND ("stack" or "resource"), CONFIG (the JSON schema
of its configuration, with defaults) and ``check(resources, config)`` (stack rules) or
``check_resource(resource_type, props, name, urn, config)`` (resource rules).
"""

from . import (
    az_independence, az_independence_advisory, declared_facts, facts_known, dns_readiness, dns_records, dns_ttl, member_reachability, member_security_group, member_zones, min_zones,
    neighbour_member_reachability, neighbour_member_unjudged, neighbour_records, neighbour_rules, ovn_constraints,
    pool_health_monitor, production_listeners, zone_placement,
)

RULES = (
    declared_facts, facts_known, min_zones, zone_placement, member_zones, member_reachability, member_security_group, production_listeners,
    pool_health_monitor, dns_ttl, dns_records, dns_readiness, ovn_constraints, az_independence,
    az_independence_advisory, neighbour_member_reachability, neighbour_member_unjudged, neighbour_rules,
    neighbour_records,
)

__all__ = ["RULES"]

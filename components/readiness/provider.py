"""``components.readiness.provider`` of stacks deployed before the rename: see the package docstring."""

from ha_endpoint.gates.provider import MemberReadiness, MemberReadinessProvider  # noqa: F401

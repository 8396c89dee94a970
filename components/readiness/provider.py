"""``components.readiness.provider`` of stacks deployed before the rename: see the package docstring."""

from ha_endpoint.readiness.provider import MemberReadiness, MemberReadinessProvider  # noqa: F401

"""``ha_endpoint.readiness.provider`` of stacks deployed before the rename to ``gates``: see the package docstring."""

from ..gates.provider import MemberReadinessProvider  # noqa: F401

"""``ha_endpoint.readiness.drain`` of stacks deployed before the rename to ``gates``: see the package docstring."""

from ..gates.drain import MemberDrainProvider  # noqa: F401

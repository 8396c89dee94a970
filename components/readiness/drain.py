"""``components.readiness.drain`` of stacks deployed before the rename: see the package docstring."""

from ha_endpoint.gates.drain import MemberDrain, MemberDrainProvider  # noqa: F401

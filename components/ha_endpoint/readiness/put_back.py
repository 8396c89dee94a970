"""``ha_endpoint.readiness.put_back`` of stacks deployed before the rename to ``gates``: see the package docstring."""

from ..gates.put_back import PutBackProvider  # noqa: F401

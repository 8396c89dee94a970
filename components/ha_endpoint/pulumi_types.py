"""Pulumi's classes behind the names the core gives them.

The core (:mod:`ha_endpoint.core`) plans and checks without importing Pulumi, and names what it needs of it; this
module, the first the package's ``__init__`` imports (so every import of the package runs it), binds those names:

- ``pulumi.Output`` is the core's :class:`~ha_endpoint.core.inputs.Output` (an input is checked against it, and a
  name with an Output in it is concatenated by it), ``pulumi.CustomResource`` its
  :class:`~ha_endpoint.core.inputs.Resource` (a member given as its server resource).
- ``pulumi.RunError`` becomes a base of :class:`~ha_endpoint.core.errors.UserError`. The engine prints a RunError's
  message alone and any other exception with a Python traceback, and it tells them apart by class (the program runner's
  and the component provider host's ``except pulumi.RunError``), so the class itself must derive from it: a
  registration, as for the Outputs, would not reach an ``except`` clause.
"""

import pulumi

from .core.errors import UserError
from .core.inputs import Output, Resource

Output.implemented_by(pulumi.Output)
Resource.register(pulumi.CustomResource)
if not issubclass(UserError, pulumi.RunError):
    UserError.__bases__ = (*UserError.__bases__, pulumi.RunError)

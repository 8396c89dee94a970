"""The ``static`` member source: the ``members`` list of the arguments, as given (by address, or by server: the
server's address, port and AZ are looked up with the other cloud facts, :mod:`ha_endpoint.cloud.lookups`)."""

from __future__ import annotations

from ..core.args import EndpointArgs, MemberArgs
from ..core.errors import Problem


class StaticSource:
    """``members``: what the configuration lists."""

    key = "members"

    def read(self, args: EndpointArgs) -> tuple[list[MemberArgs], list[Problem]]:
        return list(args.members), []

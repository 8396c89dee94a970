"""Where the endpoint's members come from: every member source read in one place, into one typed member list.

A :class:`MemberSource` gives members (:class:`~ha_endpoint.core.args.MemberArgs`, the one model of a member) and the
problems it found reading them. Two sources exist:

- ``static`` (:mod:`.static`): the ``members`` list of the arguments, by address or by server (a server's address and
  port are looked up with the other cloud facts, :mod:`ha_endpoint.cloud.lookups`);
- ``clusterApi`` (:mod:`.cluster_api`): the control-plane Machines of a Cluster API cluster, read from its management
  cluster at preview and up (``memberSources.clusterApi``).

:func:`read_members` reads every configured source once and gives the arguments back with ``members`` the resolved
list (static members first, in their order, then each source's, sorted by name) and ``memberSources`` spent; each
member remembers its source and where messages name it (``_origin``). The rules over
the whole list (zones covered, names, addresses and ports unique, capacity left) then run once, on that list
(:mod:`ha_endpoint.core.validation`). Everything after, the pipeline, the resources and the facts the policy pack
reads (``facts.members.<name>.source``), reads that list and nothing else.

A member the source could not give (a Machine without an address or failure domain) is left out and reported as a
problem naming it, never guessed: a warning on the component, and part of the error when the list that remains is
refused (a zone left without members).

Members the member agent (``python -m ha_endpoint.agent``) writes between runs carry its tag
(``ha-endpoint:agent=<namespace>/<cluster>``, :data:`AGENT_TAG_PREFIX`) and are the agent's: ``up`` never writes,
adopts or deletes a member carrying it. A Machine whose member the agent holds already in a pool (asked at preview,
:func:`ha_endpoint.cloud.octavia_checks.agent_held`) gets no member resource there; the other Machines become the
stack's members, tagged with its identity, which the agent never touches.
"""

from __future__ import annotations

from typing import Protocol

from ..core.args import EndpointArgs, MemberArgs
from ..core.errors import ConfigError, Problem
from ..core.validation import check_members
from .cluster_api import AGENT_TAG_PREFIX, ClusterApiSource
from .static import StaticSource

__all__ = ["AGENT_TAG_PREFIX", "MemberSource", "read_members", "sources"]


class MemberSource(Protocol):
    """Something that gives members: its configuration key and what it read."""

    key: str
    """Where it is configured (``members``, ``memberSources.clusterApi``): the prefix of its problems."""

    def read(self, args: EndpointArgs) -> tuple[list[MemberArgs], list[Problem]]:
        """Its members (each with ``_source`` and, when not a static member, ``_origin`` set) and the problems of
        what it could not give, each naming the object and the fix."""


def sources(args: EndpointArgs) -> list[MemberSource]:
    """The sources ``args`` configure: ``static`` always, then those under ``memberSources``."""
    found: list[MemberSource] = [StaticSource()]
    if args.member_sources is not None and args.member_sources.cluster_api is not None:
        found.append(ClusterApiSource(args.member_sources.cluster_api))
    return found


def read_members(args: EndpointArgs, root: str) -> tuple[EndpointArgs, list[Problem]]:
    """``args`` (checked: :func:`ha_endpoint.core.validation.load_endpoint_args`) with ``members`` the one resolved
    list of every source's members (checked: a refused list raises :class:`ConfigError` with the sources' problems
    too), and the problems of the members the sources could not give (to report: they were left out)."""
    if args.member_sources is None:  # no source but the static list, checked with the arguments
        return args, []
    members: list[MemberArgs] = []
    problems: list[Problem] = []
    for source in sources(args):
        try:
            found, trouble = source.read(args)
        except ConfigError as error:  # the source could not be read at all: its problems, under ``root``
            raise ConfigError(_rooted(error.problems, root)) from None
        members += found
        problems += _rooted(trouble, root)
    resolved = args.model_copy(update={"members": members, "member_sources": None})
    refused = check_members(resolved, root)  # the rest of the arguments was checked before (load_endpoint_args)
    if refused:
        raise ConfigError(refused + problems)
    resolved._checked = args._checked
    return resolved, problems


def _rooted(problems: list[Problem], root: str) -> list[Problem]:
    """``problems`` (their paths relative to the arguments) under the key prefix ``root``."""
    return [Problem(f"{root}.{problem.path}", problem.message) for problem in problems]

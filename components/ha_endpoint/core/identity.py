"""Which stack a cloud object belongs to: the identity the component writes on everything it creates, and reads back.

Every object the endpoint creates carries its stack's identity where the API allows it: a tag on load balancers,
listeners, pools, members, floating IPs and security groups (``ha-endpoint:stack=<project>/<stack>``), and a suffix on
the description of load balancers, listeners, pools, floating IPs, security groups and their rules, and recordsets
(``[ha-endpoint <project>/<stack> <resource name>]``). Octavia monitors take neither; they are proven ours through
their pool. Recovery (``scripts/recover.py``) deletes an object only when its identity is this stack's, its
name and type match, and exactly one object does. Pure: no Pulumi, no cloud.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional

TAG_PREFIX = "ha-endpoint:stack="
_DESCRIPTION = re.compile(r"\[ha-endpoint (?P<project>[^/\s\]]+)/(?P<stack>[^\s\]]+) (?P<name>[^\s\]]+)\]$")


@dataclass(frozen=True)
class StackIdentity:
    """A project and stack: whose objects these are."""

    project: str
    stack: str

    @property
    def tag(self) -> str:
        """The tag put on every taggable object of this stack."""
        return f"{TAG_PREFIX}{self.project}/{self.stack}"

    def describe(self, text: str, resource_name: str) -> str:
        """``text`` with the stack's identity and the object's resource name appended (max 255 characters kept for
        Neutron and Octavia: the identity suffix is never cut)."""
        suffix = f" [ha-endpoint {self.project}/{self.stack} {resource_name}]"
        return text[: max(0, 255 - len(suffix))] + suffix

    def owns_tags(self, tags: Optional[Iterable[str]]) -> bool:
        return self.tag in set(tags or ())

    def owns_description(self, description: Optional[str], resource_name: str) -> bool:
        found = parse_description(description)
        return found is not None and found == (self, resource_name)


UNNAMED_STACK = StackIdentity("ha-endpoint", "unnamed")
"""The identity of objects made outside any stack (a plan computed without one, e.g. in a test)."""


def parse_description(description: Optional[str]) -> Optional[tuple[StackIdentity, str]]:
    """The (identity, resource name) a description carries, or None."""
    match = _DESCRIPTION.search(description or "")
    if match is None:
        return None
    return StackIdentity(match["project"], match["stack"]), match["name"]

"""What the watcher is given: its command line (options, defaults and rules, said once here) and the endpoint stack's
outputs (read here; what each zone of them is, its backend says: :mod:`ha_endpoint.backends.watching`). Pure: nothing
here talks to a cloud.

``python -m ha_endpoint.watch`` parses its arguments with :func:`parse`; the Kubernetes Deployment that runs it
(:mod:`ha_endpoint.kubernetes.watcher_manifests`) builds its command line from the same option names and checks each
value with :func:`refusal`, so a value the watcher would refuse is refused before anything is deployed, with the
same words.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import threading
from typing import Any, Optional, Sequence

from ..core.errors import HaEndpointError

PROG = "python -m ha_endpoint.watch"
DESCRIPTION = "Keep an endpoint's A record following its zones' health."


def seconds(text: str) -> float:
    """A number of seconds above 0 (an interval or a timeout)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, e.g. 5 (got {text})")
    return value


def polls(text: str) -> int:
    """A number of polls in a row, at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of polls, at least 1, e.g. 3 (got {text})")
    return value


def stack(text: str) -> str:
    """``<project>/<stack>``, the identity the endpoint's objects carry."""
    project, _, name = text.partition("/")
    if not project or not name or "/" in name:
        raise argparse.ArgumentTypeError(f"must be <project>/<stack>, e.g. ha-endpoint/dev (got {text!r})")
    return text


class OptionRefused(HaEndpointError):
    """A value an option refuses (raised instead of exiting, for :func:`refusal`; the member agent's too)."""


class OptionParser(argparse.ArgumentParser):
    """argparse that raises :class:`OptionRefused` instead of exiting when ``exits`` is false (the watcher's and the
    member agent's command lines, asked by their Deployments' checks before anything is deployed)."""

    def __init__(self, *args: Any, exits: bool = True, **kwargs: Any):
        super().__init__(*args, exit_on_error=exits, **kwargs)
        self.exits = exits

    def error(self, message: str):  # type: ignore[override]
        if self.exits:
            super().error(message)
        raise OptionRefused(message)


def daemon_parser(prog: str, description: str, exits: bool, passes: str, reads: Optional[str] = None
                  ) -> OptionParser:
    """A daemon's argument parser (the watcher's, the member agent's) with the options every daemon takes:
    ``--outputs``, the endpoint stack's outputs (:func:`read_outputs`; ``reads``, when given, says which of them it
    reads), ``--interval``, the seconds between two of its ``passes`` (default 5), and ``--cloud`` and ``--region``,
    where the endpoint's load balancers are asked. With ``exits=False`` a refused argument raises instead of
    exiting."""
    found = OptionParser(prog=prog, description=description, exits=exits)
    which = f" ({reads})" if reads else ""
    found.add_argument("--outputs", required=True, help=f"the endpoint stack's outputs as JSON{which}: a file, or - "
                       "for stdin")
    found.add_argument("--interval", type=seconds, default=5.0, help=f"seconds between {passes} (default 5)")
    found.add_argument("--cloud", help="clouds.yaml entry (default: OS_CLOUD)")
    found.add_argument("--region", help="region (default: the entry's)")
    return found


def parser(exits: bool = True) -> argparse.ArgumentParser:
    """The watcher's argument parser; with ``exits=False`` a refused argument raises instead of exiting."""
    found = daemon_parser(PROG, DESCRIPTION, exits, "polls")
    found.add_argument("--stack", type=stack, help="project/stack the endpoint must belong to (e.g. ha-endpoint/dev)")
    found.add_argument("--unhealthy-polls", type=polls, default=3, help="unhealthy polls in a row before a zone "
                       "leaves DNS (default 3)")
    found.add_argument("--healthy-polls", type=polls, default=3, help="healthy polls in a row before it comes back "
                       "(default 3)")
    found.add_argument("--no-reach", action="store_true", help="judge by the cloud's health reports only: do not "
                       "connect to the zones' addresses (for a watcher on a network that does not reach them)")
    found.add_argument("--connect-timeout", type=seconds, default=2.0, help="seconds a connect may take (default 2)")
    found.add_argument("--dry-run", action="store_true", help="log what would change, write nothing")
    found.add_argument("--once", action="store_true", help="one poll, then exit")
    return found


def parse(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    """The watcher's arguments (argparse's usage message and exit status 2 for a refused one)."""
    return parser().parse_args(argv)


def flag(option: str) -> str:
    """The command-line flag of an option named as the parsed arguments name it (``unhealthy_polls`` ->
    ``--unhealthy-polls``)."""
    return "--" + option.replace("_", "-")


def default(option: str) -> Any:
    """The watcher's default for ``option`` (e.g. ``interval`` -> 5.0)."""
    return parser().get_default(option)


def refusal(option: str, value: Any) -> Optional[str]:
    """Why the watcher would refuse ``value`` for ``option`` (its words, without the flag), or None when it takes it.
    ``True`` stands for a flag without a value (``--dry-run``)."""
    return refused(parser(exits=False), ["--outputs", "-", *([flag(option)] if value is True
                                                             else [flag(option), str(value)])])


def refused(found: argparse.ArgumentParser, words: Sequence[str]) -> Optional[str]:
    """Why ``found`` (an :class:`OptionParser` that does not exit) refuses ``words``, in its words; None when it takes
    them (the watcher's and the member agent's ``refusal``)."""
    try:
        found.parse_args(list(words))
    except argparse.ArgumentError as error:
        return error.message
    except OptionRefused as error:
        return str(error)
    return None


def read_outputs(path: str) -> Any:
    """The endpoint stack's outputs (``pulumi stack output --json``) from the file ``path``, or standard input for
    ``-`` (the watcher's and the member agent's ``--outputs``)."""
    try:
        if path == "-":
            return json.load(sys.stdin)
        with open(path) as file:
            return json.load(file)
    except json.JSONDecodeError as error:
        raise HaEndpointError(f"--outputs {path}: not JSON ({error}): give the endpoint stack's `pulumi stack output "
                              "--json`") from None


def stop_on_signals() -> threading.Event:
    """An event that SIGINT and SIGTERM set: a daemon's loops (the watcher's, the agent's) end once it is set."""
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    return stop


def cannot_run(daemon: str, why: object) -> int:
    """Say on stderr why ``daemon`` (``ha_endpoint.watch``, ``ha_endpoint.agent``) cannot run; its exit status, 2."""
    print(f"{daemon}: {why}", file=sys.stderr)
    return 2

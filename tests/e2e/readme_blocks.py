"""The shell blocks a newcomer pastes (README.md, then docs/getting-started.md) and the one change the README walk
(tests/e2e/test_readme_walk.py) makes to them: the facts of the local cloud they name, rewritten to the cloud the walk
runs on. Pure (no cloud, no engine): tests/unit/test_readme_blocks.py tests it.

The pages are written for the first cloud, the one `make up` starts on the machine's base ports
(lab/localcloud/settings.py ``BASE_PORTS``, port offset 0) and keeps the user's dev stack in. The walk runs on a cloud
instance of its own (a `make test` lane's, at ``LOCALCLOUD_PORT_OFFSET`` N), whose facts differ in exactly three ways:

- its ports: each service's base port + N (the DNS server clients ask, named: 5300 -> 5300 + N), named in a block as
  ``-p PORT``, ``--port PORT`` / ``--port=PORT`` or ``127.0.0.1:PORT`` / ``localhost:PORT``;
- its public network: 172.24.<4 + N/1000>.0/24 instead of 172.24.4.0/24 (lab/localcloud/dataplane/config.py), named by
  its addresses' prefix ``172.24.4.``;
- its state directory (clouds.yaml, env.sh, seed.json): ``$HA_ENDPOINT_STATE`` instead of
  ``~/.cache/ha-endpoint/localcloud``.

Everything else a block reaches comes through the environment the walk gives it, as it would in a user's shell:
``HA_ENDPOINT_STATE`` (and ``LOCALCLOUD_PORT_OFFSET``) point every script (scripts/env.sh, scripts/stack.sh,
lab/localcloud/*) and the Makefile at that cloud, and the printed facts (`make up`'s DNS server line, `lab/localcloud/status`)
come from it. The stack files name no fact of an instance (Pulumi.dev.yaml: the cloud ``localcloud``, the networks
and subnets by name, the members at 10.10.N.10, the zone example.test.: the same in every instance), so nothing else
is rewritten. A first cloud's port or state directory written in any other form fails the rewrite
(:class:`NotRewritten`) rather than being pasted as it is: on another cloud it would reach the user's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from localcloud.dataplane.config import public_cidr
from localcloud.settings import BASE_PORTS

NOT_RUN = re.compile(r"^make test\b")
"""The suite itself: the only pasted command the walk does not run."""


def sh_blocks(text: str) -> list[str]:
    """The ``sh`` blocks of a page, in its order: what a user is told to paste."""
    return re.findall(r"```sh\n(.*?)```", text, re.S)


def runnable(block: str) -> str:
    """The block without the lines the walk does not run (``make test``)."""
    return "\n".join(line for line in block.splitlines() if not NOT_RUN.match(line.strip()))


@dataclass(frozen=True)
class Cloud:
    """What a pasted block can name of one local cloud instance."""

    ports: Mapping[str, int]
    """service -> port, as localcloud.settings.PORTS (``named``: the DNS server clients ask)"""
    public_cidr: str
    """its public network (floating IPs), e.g. 172.24.4.0/24"""
    state: str
    """its state directory, as a shell names it"""

    @property
    def public_prefix(self) -> str:
        """The first three octets of its public network's addresses, with the dot: ``172.24.4.``"""
        network = self.public_cidr.split("/")[0]
        return network.rsplit(".", 1)[0] + "."


FIRST = Cloud(ports=dict(BASE_PORTS), public_cidr=public_cidr(0), state="~/.cache/ha-endpoint/localcloud")
"""The first cloud, as the pages name it: the base ports, 172.24.4.0/24, the default state directory."""

_PORT = re.compile(r"(?P<lead>(?:\b127\.0\.0\.1|\blocalhost):|(?<![\w-])-p[ \t]*|(?<![\w-])--port(?:=|[ \t]+))"
                   r"(?P<port>\d+)(?!\d)")
_STATE = re.compile(r"(?:~|\$HOME|\$\{HOME\})/\.cache/ha-endpoint/localcloud(?![\w.-])")
_STATE_ELSEWHERE = re.compile(r"(?:\.cache/ha-endpoint|HA_ENDPOINT_CACHE\}?)/localcloud(?![\w.-])")
_NUMBER = re.compile(r"(?<![\w.])\d{4,5}(?![\w.])")


class NotRewritten(ValueError):
    """A block names a fact of the first cloud in a form the walk does not rewrite."""


def for_cloud(block: str, cloud: Cloud) -> str:
    """``block`` as pasted, with the first cloud's facts (its ports, its public network's prefix, its state directory)
    replaced by ``cloud``'s; nothing else changes. A first cloud's port or state directory in another form raises
    :class:`NotRewritten`, naming it and the forms that are rewritten."""
    service_of = {port: service for service, port in FIRST.ports.items()}
    left = _STATE.sub("", _PORT.sub("", block))
    for line in left.splitlines():
        for number in _NUMBER.findall(line):
            if int(number) in service_of:
                raise NotRewritten(
                    f"{number} (the first cloud's {service_of[int(number)]} port) in a form the walk does not rewrite: "
                    f"{line.strip()!r}; write it as -p {number}, --port {number} or 127.0.0.1:{number}")
        if _STATE_ELSEWHERE.search(line):
            raise NotRewritten(f"the first cloud's state directory in a form the walk does not rewrite: "
                               f"{line.strip()!r}; write it as ~/.cache/ha-endpoint/localcloud")

    def port(match: re.Match) -> str:
        number = int(match["port"])
        service = service_of.get(number)
        return match["lead"] + str(cloud.ports[service] if service else number)

    text = _PORT.sub(port, block)
    text = re.sub(r"(?<![\w.])" + re.escape(FIRST.public_prefix), cloud.public_prefix, text)
    return _STATE.sub(lambda _: cloud.state, text)

"""PutBack: the record, for one update, of the members a zone re-creates because they are put back.

Putting a member back under the ovn provider re-creates it delete-first (:mod:`ha_endpoint.resources.octavia`), and
the engine deletes the member's drain (:mod:`.drain`) before it: a delete served by the dynamic provider. The Pulumi
engine (v3.274.1) loses that delete ("grpc: the client connection is closing", the update fails) when the run's first
dynamic resource registers while the delete is under way: the default ``pulumi-python`` provider is then configured
anew and the instance the delete was sent to is closed. Reproduced with a two-resource program (a security group
replaced delete-first with a dynamic dependent, and an unrelated dynamic resource registered meanwhile: failed 3 of 3
runs; with a dynamic resource registered first and the replaced resource depending on it: 3 of 3 passed).

So a zone that puts members back registers this resource first and its put-back members depend on it: the dynamic
provider is registered before any delete-first begins. It holds the names of the members put back (shown in the
preview); it makes no API call, and the next update, with nothing put back, deletes it (no call either).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ResourceProvider, UpdateResult

from . import hosted

PUT_BACK_TYPE_NAME = "PutBack"


class PutBackProvider(ResourceProvider):
    """No API call: the record is its inputs."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult("put-back", {key: value for key, value in props.items() if key != "__provider"})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        return DiffResult(changes=olds.get("members") != news.get("members"), replaces=[],
                          delete_before_replace=False)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult({key: value for key, value in news.items() if key != "__provider"})

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        return None


class PutBack(pulumi.dynamic.Resource, module="haendpoint", name=PUT_BACK_TYPE_NAME):
    """The members (``members``: their names) a zone puts back in this update; name it ``<load balancer>-put-back``."""

    def __init__(self, name: str, *, members: Sequence[str], opts: Optional[pulumi.ResourceOptions] = None):
        hosted.register(self, PutBackProvider(), PUT_BACK_TYPE_NAME, name, {"members": sorted(members)}, opts)

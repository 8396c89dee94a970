"""The HaEndpoint inputs the pack saw in this run, for the stack policies.

The engine shows a resource policy each resource's *inputs* when the resource registers (``Analyze``), and a stack
policy each resource's *outputs* at the end (``AnalyzeStack``). For a component resource the outputs are what it
passed to ``register_outputs``, so the looked-up facts the component declares as its inputs reach the stack policies
only if the component repeats them there (under ``facts``). Until it does, the pack's resource policies record the
HaEndpoint's inputs here (the same pack process serves both calls during one preview or update), and the stack
policies read them back by URN.
"""

from __future__ import annotations

import threading
from typing import Any, Optional

from ha_endpoint import contract

_lock = threading.Lock()
_inputs: dict[str, Any] = {}


def record(resource_type: str, urn: str, props: Any) -> None:
    """Keep an HaEndpoint's (plain) inputs; other resources are ignored."""
    if resource_type != contract.ENDPOINT_TYPE:
        return
    with _lock:
        _inputs[urn] = props


def inputs(urn: str) -> Optional[Any]:
    with _lock:
        return _inputs.get(urn)


def clear() -> None:
    with _lock:
        _inputs.clear()

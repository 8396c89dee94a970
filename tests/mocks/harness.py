"""Run a Pulumi program (the component, or the whole ``__main__.py``) against the fake cloud, in preview or up mode.

    run = run_stack(FakeCloud.dev(), config=amphora_config(), preview=False)
    run.of_type(contract.LOADBALANCER_TYPE)   # registrations: type, name, urn, parent, inputs, id, state
    run.outputs["addresses"]                  # the stack's exports, resolved (None where unknown in preview)
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import functools
import gc
import json
import runpy
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import pulumi
from pulumi.runtime import rpc
from pulumi.runtime import mocks, settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await

from .cloud import FakeCloud
from .tuning import mock_runtime_tuning

ROOT = Path(__file__).resolve().parents[2]
PROJECT, STACK = "ha-endpoint", "dev"
AMPHORA_STACK_FILE = "Pulumi.amphora.yaml"   # the shape the tests start from (amphora_config)
_LOCK = threading.Lock()  # the Pulumi runtime's settings are process-wide: one mock run at a time


class RecordingMonitor(mocks.MockMonitor):
    """The mock monitor, telling the fake cloud the URN, parent and dependencies of each registration."""

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """The engine's URN: the whole parent type chain (the stock mock keeps only the parent's own type)."""
        if parent and not parent.split("::")[2].startswith("pulumi:pulumi:Stack"):
            type_ = parent.split("::")[2] + "$" + type_
        return sys.intern("urn:pulumi:" + "::".join([settings.get_stack(), settings.get_project(), type_, name]))

    def RegisterResource(self, request):
        self.mocks.current.urn = self.make_urn(request.parent, request.type, request.name)
        # one string object per URN: each request carries its own copies of the URNs of its parent and dependencies
        # (20,000 registrations: about 20 MB of duplicates)
        self.mocks.current.parent = sys.intern(request.parent) if request.parent else None
        self.mocks.current.dependencies = [sys.intern(urn) for urn in sorted(set(request.dependencies))]
        self.mocks.current.aliases = [_alias(alias) for alias in request.aliases] + list(request.aliasURNs)
        self.mocks.current.delete_before_replace = request.deleteBeforeReplace
        self.mocks.current.retain_on_delete = request.retainOnDelete
        self.mocks.current.replace_on_changes = list(request.replaceOnChanges)
        self.mocks.current.ignore_changes = list(request.ignoreChanges)
        return super().RegisterResource(request)

    def RegisterResourceOutputs(self, request):
        """A component's ``register_outputs``: kept on its registration as ``outputs`` (what stack policies read)."""
        outputs = rpc.deserialize_properties(request.outputs, keep_unknowns=True)
        with self.mocks.lock:
            for record in self.mocks.registrations:
                if record["urn"] == request.urn:
                    record["outputs"] = outputs
        return super().RegisterResourceOutputs(request)


def _alias(alias) -> Any:
    """An alias as the engine gets it: a URN, or a spec (``{"name": ..., "type": ...}`` of what changed)."""
    if alias.urn:
        return alias.urn
    spec = alias.spec
    return {key: value for key, value in (("name", spec.name), ("type", spec.type)) if value}


@dataclass
class Run:
    """What a mock run registered and exported."""

    cloud: FakeCloud
    outputs: dict[str, Any]
    result: Any = None

    @property
    def registrations(self) -> list[dict]:
        return self.cloud.registrations

    def of_type(self, typ: str) -> list[dict]:
        return [r for r in self.registrations if r["type"] == typ]

    def named(self, name: str) -> dict:
        return next(r for r in self.registrations if r["name"] == name)

    @property
    def urns(self) -> list[str]:
        return sorted(r["urn"] for r in self.registrations)


def run_program(program: Callable[[], Any], cloud: FakeCloud, preview: Optional[bool] = None,
                config: Optional[dict[str, Any]] = None, outputs: Optional[Callable[[Any], dict]] = None) -> Run:
    """Run ``program`` under mocks backed by ``cloud``; ``outputs(result)`` picks the outputs to resolve (the
    stack's exports by default). Errors raised by the program or by the fake cloud propagate."""
    from ha_endpoint.cloud.catalog import use_catalog

    from .cloud import FakeCatalog

    preview = cloud.preview if preview is None else preview
    cloud.preview = preview
    with _LOCK, use_catalog(FakeCatalog(cloud)), mock_runtime_tuning(), _collecting_only_this_run():
        _ensure_event_loop()  # an earlier asyncio.run() (e.g. a test of the provider host) leaves the thread without one
        settings.ROOT.set(None)
        mocks.set_mocks(cloud, PROJECT, STACK, preview=preview, monitor=RecordingMonitor(cloud))
        pulumi.runtime.set_all_config({f"{PROJECT}:{key}" if ":" not in key else key: json.dumps(value)
                                       if not isinstance(value, str) else value
                                       for key, value in (config or {}).items()})
        settings.SETTINGS.rpc_manager.clear()
        settings.SETTINGS.outputs.clear()
        holder: dict[str, Any] = {}

        def body():
            holder["result"] = program()
            holder["wanted"] = outputs(holder["result"]) if outputs else dict(settings.get_root_resource().outputs)

        def finish():
            if "error" in holder:
                raise holder["error"]

        # The program runs outside the event loop, in a context of its own (as a task would), so that its
        # registrations are carried out while it constructs the rest (tests/mocks/tuning.py); run_pulumi_func then
        # waits for the outstanding ones and raises the program's error, if any, as when it ran the program itself.
        try:
            contextvars.copy_context().run(body)
        except BaseException as error:  # noqa: BLE001 re-raised by finish() after the runtime's cleanup
            holder["error"] = error
        try:
            _sync_await(run_pulumi_func(finish))
            # Resolved once every registration is done, by the outermost loop: a nested _sync_await inside body would
            # pump the whole run and pad asyncio's ready queue back after each output (~270k handles at 4k resources).
            holder["outputs"] = {key: _sync_await(pulumi.Output.from_input(value).future())
                                 for key, value in holder["wanted"].items()}
        except BaseException:
            _cancel_leftovers()
            raise
    return Run(cloud, holder.get("outputs") or {}, holder.get("result"))


@contextmanager
def _collecting_only_this_run() -> Iterator[None]:
    """The objects that exist when a run starts are frozen while it runs (``gc.freeze``): the collector's passes
    during the run, and the full collection after a failed one (:func:`_cancel_leftovers`), walk only what the run
    allocated, not the whole heap of the test session, which grows with every test a pytest worker has run. Frozen
    objects are never freed by those passes (what they reference stays alive); a cycle of them that became garbage
    meanwhile is collected after the run, once they are unfrozen."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _cancel_leftovers() -> None:
    """After a failed run, cancel the tasks it left behind so that they cannot leak into the next run, and collect
    its failed futures now: their finalizers (asyncio's "exception was never retrieved" report) otherwise run at
    a random later allocation, e.g. inside a compile(), where CPython 3.11 can fail with "AST constructor recursion
    depth mismatch". The futures the raised error still holds (its traceback, the test's ``pytest.raises``) become
    garbage only later: from then on the loop drops those reports too (:func:`_without_echoes`)."""
    loop = asyncio.get_event_loop()
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    handler = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, _context: None)  # the run's error is raised; its echoes are noise
    try:
        gc.collect()
    finally:
        loop.set_exception_handler(handler if getattr(handler, "drops_echoes", False) else _without_echoes(handler))


ECHOES = ("exception was never retrieved", "Task was destroyed but it is pending")


def _without_echoes(handler: Optional[Callable[..., Any]]) -> Callable[..., Any]:
    """The loop's exception handler (``handler``, or asyncio's default) without the echoes of failed runs: a failed
    future or task nobody awaited any more, reported when the collector frees it. The run's error was raised by
    :func:`run_program`; each report formatted a traceback (3.11's carets parse every frame's source) at whichever
    later test's collection freed it: one collection freeing a few failed runs' futures took 3 s of a test-unit
    worker. Any other report of the loop goes to ``handler`` as before."""

    def report(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if any(echo in str(context.get("message", "")) for echo in ECHOES):
            return
        if handler is not None:
            handler(loop, context)
        else:
            loop.default_exception_handler(context)

    report.drops_echoes = True  # type: ignore[attr-defined]
    return report


def run_component(raw: Any, cloud: FakeCloud, preview: Optional[bool] = None, name: Optional[str] = None) -> Run:
    """Build one HaEndpoint (named like its ``name`` setting unless ``name`` is given) from ``raw`` (a mapping or
    EndpointArgs) and resolve its outputs."""
    from ha_endpoint import HaEndpoint

    def program():
        default = raw.get("name", "endpoint") if isinstance(raw, dict) else getattr(raw, "name", "endpoint")
        return HaEndpoint(name or default, raw)

    def outputs(endpoint) -> dict:
        return {"fqdn": endpoint.fqdn, "ports": endpoint.ports, "addresses": endpoint.addresses,
                "membersSecurityGroupId": endpoint.members_security_group_id, "zones": endpoint.zones}

    return run_program(program, cloud, preview, outputs=outputs)


def run_stack(cloud: FakeCloud, config: dict[str, Any], preview: Optional[bool] = None) -> Run:
    """Run the project's ``__main__.py`` with ``config`` (keys without the project prefix, e.g. ``endpoint``)."""
    return run_program(lambda: runpy.run_path(str(ROOT / "__main__.py"), run_name="__main__"), cloud, preview,
                       config)


def amphora_config() -> dict[str, Any]:
    """The amphora shape's configuration, read from Pulumi.amphora.yaml (keys without the project prefix): the dev
    stack before it moved to the ovn provider, the baseline the tests change one field of. A fresh copy each call,
    of the file parsed once per file version (a test worker asked for it about 90 times)."""
    path = ROOT / AMPHORA_STACK_FILE
    stat = path.stat()
    return copy.deepcopy(_stack_config(str(path), stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=4)
def _stack_config(path: str, _mtime_ns: int, _size: int) -> dict[str, Any]:
    """A stack file's project configuration (keys without the project prefix), parsed once per version of the file."""
    import yaml

    raw = yaml.safe_load(Path(path).read_text())["config"]
    return {key.split(":", 1)[1]: value for key, value in raw.items() if key.startswith(f"{PROJECT}:")}

"""Cheaper mock runs of large programs, changing nothing a test can observe: :func:`mock_runtime_tuning`.

Measured on a preview of 10 zones x 200 members (4,105 registrations), CPU seconds of the run
(``lab/bench/scale_figures.py`` prints the figures of every size):

* the cyclic garbage collector: Pulumi's runtime allocates millions of small container objects per run (an ``Output``
  is three futures, a task per ``apply``, a coroutine per registration step), and most of them live until the run
  ends. With the default thresholds (700, 10, 10) a young collection runs every 700 allocations and the full
  collections walk the whole growing heap: 78 s of wall time against 23 s with the collector off. A young-generation
  threshold of 50,000 for the duration of the run keeps the cost of collection negligible (28 s) at the same peak
  memory (the run's garbage is mostly acyclic and freed by reference counting). Restored afterwards.
* alias URNs: see :func:`_alias_not_collapsed` (a quarter of the CPU and a sixth of the peak memory: every member
  and drain carries an alias for its former name).
* stack traces: the SDK captures the Python stack of every registration (``traceback.extract_stack`` plus a file URI
  per frame: the engine's "source position" of a resource). The mock monitor discards them, so under mocks the
  capture returns an empty trace: about a fifth of the CPU of a registration.
* registrations carried out while the program runs: a resource under construction costs about 35 KB (an Output per
  property, each with its futures and task, plus the registration's coroutines) until its registration is done, then
  about 10 KB. A program that constructs 20,000 resources before the event loop runs held them all at once (1.2 GB
  peak). The harness runs the program outside the event loop (as ``@pulumi.runtime.test`` does) and
  :func:`_settle` runs the loop after every :data:`REGISTRATIONS_PER_SETTLE` constructions until nothing is left to
  do but wait for resources not constructed yet; the peak becomes the finished registrations plus one batch.
* finished Outputs: every property of every resource is an Output whose value a task computes; the finished task
  (its coroutine, a context, an entry in asyncio's set of all tasks) lives as long as the resource, i.e. the whole
  run. :func:`_compact` keeps the value in a plain resolved future instead: 20 zones x 500 members peak at 391 MiB
  instead of 505 MiB, at the same CPU.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import itertools
from contextlib import contextmanager
from typing import Iterator

from pulumi import output as _output
from pulumi import resource as _resource
from pulumi.runtime import resource as _runtime_resource

YOUNG_THRESHOLD = 50_000
REGISTRATIONS_PER_SETTLE = 50

try:  # the SDK's private capture: when it is renamed, runs are only slower, never different
    from pulumi.runtime.proto import source_pb2 as _source_pb2

    _EMPTY_TRACE = _source_pb2.StackTrace()
except ImportError:  # pragma: no cover
    _EMPTY_TRACE = None


@contextmanager
def mock_runtime_tuning() -> Iterator[None]:
    """For the duration of one mock run: a high young-generation GC threshold, no stack-trace capture, no alias URNs
    computed ahead of need."""
    thresholds = gc.get_threshold()
    capture = getattr(_runtime_resource, "_get_stack_trace", None)
    collapse = getattr(_resource, "collapse_alias_to_urn", None)
    register = _resource.register_resource
    track = _output.Output._track
    gc.set_threshold(YOUNG_THRESHOLD, *thresholds[1:])
    if capture is not None and _EMPTY_TRACE is not None:
        _runtime_resource._get_stack_trace = lambda: _EMPTY_TRACE
    if collapse is not None:
        _resource.collapse_alias_to_urn = _alias_not_collapsed
    _resource.register_resource = _settling(register)
    _output.Output._track = _compacting(track)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        _resource.register_resource = register
        _output.Output._track = track
        if capture is not None:
            _runtime_resource._get_stack_trace = capture
        if collapse is not None:
            _resource.collapse_alias_to_urn = collapse


def _settling(register):
    """``register_resource`` that settles the event loop after every :data:`REGISTRATIONS_PER_SETTLE` calls."""
    count = itertools.count(1)

    def register_resource(*args, **kwargs):
        register(*args, **kwargs)
        if next(count) % REGISTRATIONS_PER_SETTLE == 0:
            _settle()

    return register_resource


def _settle() -> None:
    """Run the event loop until nothing is ready to run (executor threads given a millisecond to hand back the mock
    monitor's answers). Only when the program runs outside the loop: inside it, the registrations wait for the
    program, as before."""
    loop = asyncio.get_event_loop()
    if loop.is_running():
        return
    ready = getattr(loop, "_ready", None)
    for _ in range(100_000):
        loop.run_until_complete(asyncio.sleep(0))
        if not ready:
            loop.run_until_complete(asyncio.sleep(0.001))
            if not ready:
                return


def _compacting(track):
    """``Output._track`` that, once the Output's value is computed, keeps it in a plain resolved future instead of
    the finished task that computed it (see :func:`_compact`)."""

    def _track(self) -> None:
        track(self)
        data = self._data
        if isinstance(data, asyncio.Task):
            data.add_done_callback(functools.partial(_compact, self))

    return _track


def _compact(output, task: asyncio.Task) -> None:
    """Every property of every resource is an Output whose value is computed by a task; the finished task keeps
    its coroutine, a context and an entry in asyncio's set of all tasks (about 700 bytes, ten per resource) for as
    long as the resource lives, i.e. the whole run. Awaiting the resolved future gives the same value; a failed or
    cancelled task is kept as it is (its error is reported as before)."""
    if output._data is not task or task.cancelled() or task.exception() is not None:
        return
    future = task.get_loop().create_future()
    future.set_result(task.result())
    output._data = future


def _alias_not_collapsed(alias, *_defaults):
    """What ``Resource.__init__`` keeps in ``_aliases`` under mocks: the alias as given. The SDK turns every alias into
    a URN Output there (about ten Outputs and twenty tasks per alias), which it reads only for a monitor without
    alias specs; the mock monitor has them (the engine gets ``request.aliases`` specs, recorded by RecordingMonitor)."""
    return alias

"""Cheaper mock runs of large programs, changing nothing a test can observe: :func:`mock_runtime_tuning`.

Measured on a preview of 10 zones x 200 members (4,105 registrations), CPU seconds of the run
(``bench/scale_figures.py`` prints the figures of every size):

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
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

from pulumi import resource as _resource
from pulumi.runtime import resource as _runtime_resource

YOUNG_THRESHOLD = 50_000

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
    gc.set_threshold(YOUNG_THRESHOLD, *thresholds[1:])
    if capture is not None and _EMPTY_TRACE is not None:
        _runtime_resource._get_stack_trace = lambda: _EMPTY_TRACE
    if collapse is not None:
        _resource.collapse_alias_to_urn = _alias_not_collapsed
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        if capture is not None:
            _runtime_resource._get_stack_trace = capture
        if collapse is not None:
            _resource.collapse_alias_to_urn = collapse


def _alias_not_collapsed(alias, *_defaults):
    """What ``Resource.__init__`` keeps in ``_aliases`` under mocks: the alias as given. The SDK turns every alias into
    a URN Output there (about ten Outputs and twenty tasks per alias), which it reads only for a monitor without
    alias specs; the mock monitor has them (the engine gets ``request.aliases`` specs, recorded by RecordingMonitor)."""
    return alias

"""Hypothesis example budgets: a tenth of the full budget (at least 20 examples) in `make test` and `make test-unit`,
the full budget in `make test-budgets` (HA_ENDPOINT_FULL_BUDGETS=1), which CI runs after `make test`. A tenth, not a
fifth, since 2026-12-06: the eight budget files took 9.2-11.2 CPU-s instead of 14.4-15.3 in one process, about 2.5 s of
`make test-unit`'s wall time against its 60 s budget (docs/results/2026-12-06-0413-unit-budget-figures.md). The same
properties are asserted either way; only how many generated examples each one sees differs. A test file that takes
its budget from here is in `make test-budgets` (the Makefile finds it by its import of tests.budget)."""

from __future__ import annotations

import os


def examples(full: int) -> int:
    """The number of examples a property test runs: ``full`` in the full run, else a tenth (at least 20)."""
    if os.environ.get("HA_ENDPOINT_FULL_BUDGETS"):
        return full
    return min(full, max(20, full // 10))


def cases(items: list, rotation: int) -> list:
    """A systematic test's cases for one group: all of ``items`` in the full run, else every fifth one starting at
    ``rotation`` (a test counts it up per group, so that across the groups every item is still used)."""
    if os.environ.get("HA_ENDPOINT_FULL_BUDGETS"):
        return list(items)
    return list(items)[rotation % 5::5]

"""Hypothesis example budgets: the full budget in `make test` (scripts/test.sh sets HA_ENDPOINT_FULL_BUDGETS=1, and
so does CI), a fifth of it (at least 20 examples) in `make test-unit`, which a developer runs after each change. The
same properties are asserted either way; only how many generated examples each one sees differs."""

from __future__ import annotations

import os


def examples(full: int) -> int:
    """The number of examples a property test runs: ``full`` in the full run, else a fifth (at least 20)."""
    if os.environ.get("HA_ENDPOINT_FULL_BUDGETS"):
        return full
    return min(full, max(20, full // 5))

"""A pytest plugin (pyproject.toml's addopts): the test modules' assertion-rewritten bytecode is written to their
``__pycache__`` even where PYTHONDONTWRITEBYTECODE is set (as on this machine and in CI), so that a run reuses what
the last one rewrote. Without it every process of every run (each `make test-unit` worker, each phase of
`make test`) parsed and rewrote every test module again: about 3 of the 6 CPU-seconds a collection of the offline
tiers takes (lab/bench/unit_budget_figures.py measures `make test-unit` whole). The project's own modules are compiled
by `make`'s `_bytecode` step for the same reason."""

import sys

sys.dont_write_bytecode = False

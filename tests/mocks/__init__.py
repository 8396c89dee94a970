"""A cloud-like fake OpenStack for Pulumi mock runs: :class:`FakeCloud` and :func:`run_program`."""

from .cloud import CloudError, FakeCloud
from .harness import Run, run_component, run_program, run_stack

__all__ = ["CloudError", "FakeCloud", "Run", "run_component", "run_program", "run_stack"]

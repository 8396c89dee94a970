"""Policy tests run from the project root: make `policies` and `tests.mocks` importable."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest

from policies import observed


@pytest.fixture(autouse=True)
def _fresh_observations():
    """Each test is its own preview: no HaEndpoint inputs recorded by an earlier one."""
    observed.clear()
    yield
    observed.clear()

import pytest

from policies import observed


@pytest.fixture(autouse=True)
def _fresh_observations():
    """Each test is its own preview: no HaEndpoint inputs recorded by an earlier one."""
    observed.clear()
    yield
    observed.clear()

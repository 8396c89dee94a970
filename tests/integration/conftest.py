"""Integration tests run against the local OpenStack cloud (localcloud/): fixtures from localcloud.testing."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from localcloud.testing import cloud_cleanup, localcloud, os_conn  # noqa: E402,F401


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.integration)

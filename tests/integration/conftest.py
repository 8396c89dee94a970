"""Integration tests run against the local OpenStack cloud (lab/localcloud/): fixtures from localcloud.testing."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from localcloud.dataplane import config as dataplane  # noqa: E402
from localcloud.settings import Paths  # noqa: E402
from localcloud.testing import cloud_cleanup, localcloud, os_conn  # noqa: E402,F401

# The data plane is the local cloud's default; a cloud started with LOCALCLOUD_DATAPLANE=none has none, and then its
# tests are not collected.
collect_ignore = [] if dataplane.enabled(Paths()) else ['test_dataplane_ovn.py', 'test_dataplane_clients.py']


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.integration)

"""Integration tests run against the local OpenStack cloud (localcloud/): fixtures from localcloud.testing."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from localcloud.dataplane import config as dataplane  # noqa: E402
from localcloud.settings import Paths  # noqa: E402
from localcloud.testing import cloud_cleanup, localcloud, os_conn  # noqa: E402,F401

# The data plane is opt-in (LOCALCLOUD_DATAPLANE=ovn localcloud/up) until the dev stack moves to it: its tests are
# collected only against a cloud that has it (`make localcloud-dataplane-test` brings one up).
collect_ignore = [] if dataplane.enabled(Paths()) else ['test_dataplane_ovn.py']


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.integration)

"""Fixtures of the Kubernetes tests: a real CA and client certificate, the kubernetes settings of the dev stack, and
stack configuration marked secret as `pulumi config set --secret` marks it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pulumi.runtime import config as runtime_config

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.mocks import kubernetes as mock_kubernetes  # noqa: E402
from tests.mocks.kubernetes import CERTS  # noqa: E402

mock_kubernetes.install()


@pytest.fixture
def certs() -> dict[str, str]:
    """PEM text of a CA certificate (``ca``), a client certificate it signed (``cert``) and its key (``key``)."""
    return dict(CERTS)


@pytest.fixture
def secret_config():
    """Mark stack configuration keys secret for the next mock runs (what `pulumi config set --secret` records)."""
    def mark(*keys: str) -> None:
        runtime_config.set_all_config(dict(runtime_config.CONFIG.get()), list(keys))

    yield mark
    runtime_config.set_all_config(dict(runtime_config.CONFIG.get()), [])

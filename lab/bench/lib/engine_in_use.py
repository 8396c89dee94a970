"""Which engine build a benchmark runs: the one `scripts/env.sh` finds for this checkout (lab/engine/key.sh), named in the
figures it prints, since a change under lab/engine/ (a provider patch) selects another build."""

from __future__ import annotations

import re
from pathlib import Path


def engine_environment(environment: dict[str, str]) -> dict[str, str]:
    """``environment`` (from ``project_environment()``), checked to hold an engine build for this checkout: without
    one, ``pulumi`` is not on its PATH, and a benchmark would fail later with "No such file or directory"."""
    if not environment.get("HA_ENGINE_BIN"):
        raise SystemExit("no engine build for this checkout (lab/engine/key.sh): run lab/engine/build.sh "
                         "first, or wait for the build in progress")
    return environment


def describe(environment: dict[str, str]) -> str:
    """The engine build's key and the OpenStack provider patches it was built with (its BUILD_INFO)."""
    build = Path(environment["HA_ENGINE_BIN"]).parent
    info = build / "BUILD_INFO"
    text = info.read_text() if info.exists() else ""
    patches = re.findall(r"terraform-provider-openstack \S+ with (\d{4})-[\w.-]+\.patch", text)
    return f"engine {build.name}, OpenStack provider patches {' '.join(patches) or 'none'}"

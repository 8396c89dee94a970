"""The `openstack` command (python-openstackclient) for tests that run what the docs tell a user to paste: the local
cloud does not install it (no package of the cloud needs it). Installed once, with the project's uv, into
$HA_ENDPOINT_CACHE/tools/openstackclient-<version>, and reused."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

VERSION = "10.5.0"
UV_VERSION = "0.9.0"   # the Makefile's UV_VERSION: `make _venv` installed it


def openstack_client_bin() -> Path:
    """The bin directory holding ``openstack``, installed if missing (one install at a time per cache; a half-done
    install, without its ``.complete`` mark, is made again)."""
    tools = Path(os.environ.get("HA_ENDPOINT_CACHE", Path.home() / ".cache" / "ha-endpoint")) / "tools"
    target = tools / f"openstackclient-{VERSION}"
    if (target / ".complete").exists():
        return target / "bin"
    tools.mkdir(parents=True, exist_ok=True)
    uv = tools / f"uv-{UV_VERSION}" / "bin" / "uv"
    with open(tools / f"openstackclient-{VERSION}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / ".complete").exists():
            shutil.rmtree(target, ignore_errors=True)
            subprocess.run([str(uv), "venv", "--quiet", "--python", "python3", "--python-preference", "only-system",
                            str(target)], check=True, timeout=300)
            subprocess.run([str(uv), "pip", "install", "--quiet", f"python-openstackclient=={VERSION}"],
                           env={**os.environ, "VIRTUAL_ENV": str(target)}, check=True, timeout=900)
            (target / ".complete").touch()
    return target / "bin"

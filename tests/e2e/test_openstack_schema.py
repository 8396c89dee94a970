"""The engine's OpenStack plugin speaks the schema of the pulumi-openstack SDK users install (requirements.txt pins it).

lab/engine/openstack builds pulumi-resource-openstack from terraform-provider-openstack v3.4.0 with our own token mapping;
lab/engine/openstack/check_sdk.py compares the schema it generated with the installed SDK for every resource and function
(tokens, properties in and out, shapes, required inputs, secrets, aliases, deprecations, nested types, provider
configuration) and lists each difference; a difference not listed in its KNOWN table, with a reason, fails here. No
cloud needed, only the engine build (reused from the cache).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pulumi_openstack

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lab" / "engine" / "openstack"))

import check_sdk  # noqa: E402


def engine_dir() -> Path:
    build = subprocess.run(["lab/engine/build.sh"], cwd=ROOT, capture_output=True, text=True, timeout=3600)
    assert build.returncode == 0, f"lab/engine/build.sh failed:\n{build.stdout[-3000:]}\n{build.stderr[-3000:]}"
    bindir = subprocess.run(["lab/engine/build.sh", "--bin-dir"], cwd=ROOT, capture_output=True, text=True, check=True)
    return Path(bindir.stdout.strip()).parent


def test_the_plugin_reports_the_version_of_the_installed_sdk():
    assert (engine_dir() / "openstack-plugin-version").read_text().strip() == \
        importlib.metadata.version("pulumi-openstack") == "5.5.3"


def test_the_plugins_schema_matches_the_installed_sdk_for_every_resource_and_function():
    schema = json.loads((engine_dir() / "openstack-schema.json").read_text())
    pkg = os.path.dirname(pulumi_openstack.__file__)
    diffs, comparisons = check_sdk.compare_package(schema, pkg)
    unlisted = {k: v for k, v in diffs.items() if k not in check_sdk.KNOWN}
    stale = sorted(set(check_sdk.KNOWN) - set(diffs))
    print(f"{comparisons} comparisons, {len(schema['resources'])} resources, {len(schema['functions'])} functions, "
          f"{len(diffs)} differences, all listed: {not unlisted}")
    assert comparisons > 1000 and len(schema["resources"]) > 100 and len(schema["functions"]) > 60
    assert not unlisted, "\n".join(f"{k}: {v}" for k, v in sorted(unlisted.items()))
    assert not stale, f"check_sdk.KNOWN lists differences that no longer occur: {stale}"

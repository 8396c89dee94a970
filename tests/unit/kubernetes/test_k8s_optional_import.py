"""pulumi-kubernetes is optional: with it unimportable, `import ha_endpoint`, every other module of the package and
a stack without `ha-endpoint:kubernetes` work; `ha_endpoint.kubernetes` (and a stack that sets the key) says what to
install, as a RunError (no traceback)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

PROGRAM = r'''
import importlib, json, pkgutil, sys
sys.modules["pulumi_kubernetes"] = None  # any import of it now raises ImportError
sys.path.insert(0, ROOT)
import pulumi
import ha_endpoint

imported, stack = [], {}

def walk(package):
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        if info.name.startswith("ha_endpoint.kubernetes"):
            continue
        module = importlib.import_module(info.name)
        imported.append(info.name)
        if info.ispkg:
            walk(module)

walk(ha_endpoint)
importlib.import_module("stacks.endpoint_stack")
from tests.mocks import FakeCloud, run_stack
from tests.mocks.configs import amphora_endpoint
run = run_stack(FakeCloud.dev(), {"endpoint": amphora_endpoint()}, preview=False)
stack["outputs"] = sorted(run.outputs)
from ha_endpoint.core.errors import HaEndpointError
try:
    import ha_endpoint.kubernetes
except ImportError as error:  # still an ImportError: the idiom for an optional dependency keeps working
    stack["import_error"] = [str(error), isinstance(error, pulumi.RunError)]
    stack["root"] = [isinstance(error, HaEndpointError), type(error).__module__ + "." + type(error).__name__]
try:
    run_stack(FakeCloud.dev(), {"endpoint": amphora_endpoint(), "kubernetes": {"credentials": {}}}, preview=True)
except Exception as error:
    stack["stack_error"] = [str(error), isinstance(error, pulumi.RunError)]
print(json.dumps({"imported": imported, "stack": stack,
                  "loaded": sorted(name for name, module in sys.modules.items()
                                   if name.startswith("pulumi_kubernetes") and module is not None)}))
'''

MESSAGE = ("ha_endpoint.kubernetes needs pulumi-kubernetes, which is not installed in this program's environment: "
           "pip install 'ha-endpoint[kubernetes]' (or remove ha-endpoint:kubernetes from the stack's configuration)")


@pytest.fixture(scope="module")
def result() -> dict:
    """What :data:`PROGRAM` reports from a fresh process where pulumi-kubernetes cannot be imported: run once for the
    module's tests, which each read their part of it."""
    done = subprocess.run([sys.executable, "-c", f"ROOT = {str(ROOT)!r}\n" + PROGRAM], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_everything_but_the_kubernetes_package_works_without_pulumi_kubernetes(result):
    assert {"ha_endpoint.resources.endpoint", "ha_endpoint.core.validation", "ha_endpoint.gates.provider"} <= set(
        result["imported"])
    assert result["loaded"] == []
    assert "fqdn" in result["stack"]["outputs"] and "kubeconfig" not in result["stack"]["outputs"]
    assert result["stack"]["import_error"] == [MESSAGE, True]
    assert result["stack"]["stack_error"] == [MESSAGE, True]


def test_the_missing_sdk_error_is_the_package_s_own_and_can_be_caught_by_name(result):
    """Issue 46, finding 4: every exception the package raises is a HaEndpointError, this one too; and it is defined
    where a caller can import it although ha_endpoint.kubernetes cannot be imported."""
    assert result["stack"]["root"] == [True, "ha_endpoint.core.errors.MissingKubernetesSdk"]

"""``scripts/recover.py`` (``make recover``) as a module for the tests: it is a script, not a package module, so it is
loaded from its file, once per process and under one name, by the unit tests of recovery and by the e2e harness
(``PulumiStack.export_after_kill`` repairs a killed update's files as ``make recover`` does)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

NAME = "recover"
PATH = Path(__file__).resolve().parents[1] / "scripts/recover.py"


def load() -> ModuleType:
    """The loaded script (its dataclasses look their module up in ``sys.modules``, so it is registered there)."""
    if NAME not in sys.modules:
        spec = importlib.util.spec_from_file_location(NAME, PATH)
        module = importlib.util.module_from_spec(spec)
        sys.modules[NAME] = module
        spec.loader.exec_module(module)
    return sys.modules[NAME]

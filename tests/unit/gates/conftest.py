"""Readiness unit tests: no cloud, no engine. Makes the repository root importable (``stacks``, ``tests``; ``ha_endpoint`` is installed by ``make _venv``)."""

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[3])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

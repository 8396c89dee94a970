"""What the local cloud's modules compute for an instance with another port offset: the offset is read once, at
import, so the code runs in a fresh interpreter with LOCALCLOUD_PORT_OFFSET set and prints one JSON document."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def at_offset(offset: int, code: str) -> dict:
    """``code`` (which prints one JSON document) run by a fresh interpreter for an instance at ``offset``; its document."""
    env = {**os.environ, 'LOCALCLOUD_PORT_OFFSET': str(offset), 'PYTHONPATH': str(ROOT / 'lab')}
    out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)

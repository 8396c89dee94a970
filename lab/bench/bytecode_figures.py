"""What compiled bytecode saves each Python process of a `pulumi` command, measured side by side in one run.

Every `pulumi preview`/`up` starts Python processes that import the same large packages: the program, the dynamic
providers (the readiness gates) and the policy pack. Where PYTHONDONTWRITEBYTECODE is set (this machine's default
environment sets it) nothing writes .pyc files, so a virtualenv installed without them compiles every module from
source in every process. `make _venv` installs with --compile-bytecode and `make test` runs `make _bytecode`.

Prints, for the imports of each kind of process, the median wall and CPU time of N rounds (interleaved):
  - from source: the .pyc files hidden (PYTHONPYCACHEPREFIX at an empty directory, PYTHONDONTWRITEBYTECODE: nothing
    is written there);
  - compiled: the virtualenv's own .pyc files (`make _bytecode` first);
and their ratio.

Run: .venv/bin/python lab/bench/bytecode_figures.py [--rounds N]   (needs `make _venv`; it runs `make _bytecode` first)
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PYTHON = REPO / ".venv" / "bin" / "python"

IMPORTS = {
    "program": "import pulumi, pulumi_openstack; from pulumi_openstack import loadbalancer, networking, dns, compute; "
               "import ha_endpoint.resources.endpoint",
    "dynamic provider": "import pulumi.dynamic, ha_endpoint.gates.drain, ha_endpoint.gates.cloud",
    "policy pack": "import pulumi_policy, policies.pack",
}


def run_once(code: str, env: dict[str, str], cwd: Path = REPO) -> tuple[float, float]:
    """Wall and CPU seconds of one fresh interpreter importing ``code`` in ``cwd`` (first on its path)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([str(PYTHON), "-c", code], env=env, cwd=cwd, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    subprocess.run(["make", "--no-print-directory", "_bytecode"], cwd=REPO, check=True)
    compiled = dict(os.environ, PYTHONPATH=str(REPO))
    with tempfile.TemporaryDirectory() as empty:
        source = dict(compiled, PYTHONPYCACHEPREFIX=empty, PYTHONDONTWRITEBYTECODE="1")
        print(f"{'process':18} {'from source':>22} {'compiled':>22} {'CPU ratio':>10}")
        for kind, code in IMPORTS.items():
            rows: dict[str, list[tuple[float, float]]] = {"source": [], "compiled": []}
            for _ in range(args.rounds):
                rows["source"].append(run_once(code, source))
                rows["compiled"].append(run_once(code, compiled))
            figures = {name: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r))
                       for name, r in rows.items()}
            (sw, sc), (cw, cc) = figures["source"], figures["compiled"]
            print(f"{kind:18} {sw:6.2f} s wall {sc:5.2f} s CPU {cw:6.2f} s wall {cc:5.2f} s CPU {sc / cc:9.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the imports of each Python process of a `pulumi` command cost, this checkout beside another revision.

    .venv/bin/python lab/bench/import_figures.py --against HEAD~1 [--rounds 12]

Every `pulumi preview`/`up` starts Python processes that import the package before they do anything: the program, the
dynamic providers (the readiness gates) and the policy pack; so do the DNS watcher, the member agent and every test
process. ``make test`` starts about 1200 of them, so what loading the package costs is paid in each. This imports the
same modules (:data:`bench.bytecode_figures.IMPORTS`, the virtualenv's compiled bytecode) from this checkout's files as
they are and from the other revision's (``git archive`` into a temporary directory, ``PYTHONPATH`` first), one fresh
interpreter after another, alternated, ``--rounds`` times each.

Prints, per kind of process, the median CPU seconds (user + system) of each revision's imports and their ratio. CPU,
not wall time: another process on the machine changes it much less.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab")]

from bench.bytecode_figures import IMPORTS, run_once  # noqa: E402
from bench.up_cost_figures import revision_tree, revisions  # noqa: E402


def tree_environment(tree: Path) -> dict[str, str]:
    """The environment that imports ``tree``'s package and lab before the virtualenv's editable install (its policy
    pack is its directory's, where the interpreter runs)."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in (tree / "components", tree / "lab", tree)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", required=True, help="the revision to compare this checkout with (e.g. HEAD~1)")
    parser.add_argument("--rounds", type=int, default=12, help="imports of each revision per kind, alternated")
    args = parser.parse_args(argv)
    revision, here = revisions(args.against)
    subprocess.run(["make", "--no-print-directory", "_bytecode"], cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory(prefix="import-figures-") as scratch:
        tree = revision_tree(revision, Path(scratch) / "tree")
        # compiled as `make _bytecode` compiles this checkout (this machine writes no .pyc on import)
        subprocess.run([sys.executable, "-m", "compileall", "-q", "-j0", "components", "policies", "stacks", "lab"],
                       cwd=tree, check=True, stdout=subprocess.DEVNULL)
        trees = {"this checkout": ROOT, revision: tree}
        print(f"imports of each kind of process, this checkout ({here}) beside {revision}, median CPU of "
              f"{args.rounds} fresh interpreters each, alternated")
        print(f"{'process':18} {'this checkout':>16} {revision:>16} {'ratio':>7}")
        for kind, code in IMPORTS.items():
            cpu: dict[str, list[float]] = {name: [] for name in trees}
            for _ in range(args.rounds):
                for name, tree in trees.items():
                    cpu[name].append(run_once(code, tree_environment(tree), cwd=tree)[1])
            here_s, there_s = (statistics.median(cpu[name]) for name in trees)
            print(f"{kind:18} {here_s * 1000:12.0f} ms {there_s * 1000:12.0f} ms {here_s / there_s:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

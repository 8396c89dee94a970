"""The project's shape: lines per folder, classes per concept, modes, make targets and exception classes.

    .venv/bin/python lab/bench/structure_figures.py

Issue 47 asks for these counts before and after its redesign (on b552ca7: a zone in 10 classes, a listener in 7, 9
enums over 52 keys allowing 192 combinations, 37 make targets, 47 exception classes; the product 13.4k lines against
30.6k of tests, local cloud and bench). Everything is read from the files (Python's ``ast``, the schema, the
Makefile): nothing is imported or run, so the figures are the tree's, whatever is installed.

* lines: non-blank lines of Python (``.py``) per folder; README.md and the docs site's Markdown apart;
* classes per concept: the classes of the product (``components/``, ``policies/``, ``stacks/``) whose name holds the
  concept's word (``Zone``, ``Listener``, ``Member``), each with its module, so a reader sorts the shapes from the
  helpers (a zone's status, a zone's error);
* modes: the schema's enums that choose a behaviour of ours, the combinations they allow and the input keys; the
  enums that spell an Octavia object's own setting (a protocol, a balancing method, a monitor type) apart;
* make targets: the public ones (a ``##`` help text: what ``make help`` lists, from the Makefile and ``mk/*.mk``);
* exception classes: the product's classes that derive from an exception, and their roots (those whose bases are
  Python's own exceptions).
"""

from __future__ import annotations

import ast
import builtins
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("components", "policies", "stacks")
FOLDERS = (*PRODUCT, "tests", "lab", "scripts")
CONCEPTS = ("Zone", "Listener", "Member")
CLOUD_SETTINGS = ("LbMethod", "ListenerProtocol", "MonitorType")
"""Enums that spell a cloud object's own setting, not a mode of ours."""
BUILTIN_EXCEPTIONS = {name for name, value in vars(builtins).items()
                      if isinstance(value, type) and issubclass(value, BaseException)}
SKIPPED = ("__pycache__", ".egg-info", "/build/", "/site/")


def python_files(folder: str) -> list[Path]:
    return sorted(path for path in (ROOT / folder).rglob("*.py") if not any(skip in str(path) for skip in SKIPPED))


def code_lines(path: Path) -> int:
    return sum(1 for line in path.read_text(errors="replace").splitlines() if line.strip())


def classes(folders: tuple[str, ...]) -> list[tuple[str, ast.ClassDef]]:
    """(module path, class) of every class defined in the folders' Python files."""
    found = []
    for folder in folders:
        for path in python_files(folder):
            tree = ast.parse(path.read_text(), filename=str(path))
            found += [(str(path.relative_to(ROOT)), node) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    return found


def base_names(node: ast.ClassDef) -> list[str]:
    return [base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else "?"
            for base in node.bases]


def exception_classes(found: list[tuple[str, ast.ClassDef]]) -> tuple[list[str], list[str]]:
    """The names of the classes that derive from an exception (by name, through the product's own classes), and of
    those among them whose bases are Python's own exceptions (the roots)."""
    bases = {node.name: base_names(node) for _, node in found}
    derived: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, its_bases in bases.items():
            if name not in derived and any(b in BUILTIN_EXCEPTIONS or b in derived for b in its_bases):
                derived.add(name)
                changed = True
    roots = sorted(name for name in derived if all(b in BUILTIN_EXCEPTIONS for b in bases[name]))
    return sorted(derived), roots


def schema_enums() -> tuple[dict[str, int], int]:
    """The schema's enums (name -> how many values) and its input keys (every property of the resource's inputs and
    of the input types they reach)."""
    schema = json.loads((ROOT / "components" / "schema.json").read_text())
    enums = {name.rsplit(":", 1)[-1]: len(spec["enum"]) for name, spec in schema["types"].items() if "enum" in spec}
    keys = sum(len(spec.get("inputProperties", {})) for spec in schema["resources"].values())
    keys += sum(len(spec.get("properties", {})) for name, spec in schema["types"].items()
                if "enum" not in spec and not name.endswith("Outputs"))
    return enums, keys


def make_targets() -> list[str]:
    """The targets ``make help`` lists: those with a ``##`` help text, in the Makefile and the files it includes
    (``mk/*.mk``)."""
    files = [ROOT / "Makefile", *sorted((ROOT / "mk").glob("*.mk"))]
    return [name for path in files
            for name in re.findall(r"^([a-zA-Z0-9][a-zA-Z0-9_-]*):[^=][^\n]*## ", path.read_text(), flags=re.M)]


def main() -> int:
    print("lines of Python (non-blank), per folder:")
    totals = {}
    for folder in FOLDERS:
        totals[folder] = sum(code_lines(path) for path in python_files(folder))
        print(f"  {folder:<12} {totals[folder]:>7}")
    product = sum(totals[folder] for folder in PRODUCT) + code_lines(ROOT / "__main__.py")
    print(f"  product (components, policies, stacks, __main__.py): {product}; "
          f"tests, lab and scripts: {totals['tests'] + totals['lab'] + totals['scripts']}")
    docs = sum(code_lines(path) for path in (ROOT / "docs").rglob("*.md"))
    print(f"  README.md: {len((ROOT / 'README.md').read_text().splitlines())} lines; docs/*.md: {docs} non-blank")

    found = classes(PRODUCT)
    print("\nclasses per concept (product; the name holds the word):")
    for concept in CONCEPTS:
        named = [(module, node.name) for module, node in found if concept in node.name]
        print(f"  {concept.lower()}: {len(named)}")
        for module, name in sorted(named, key=lambda item: (item[1], item[0])):
            print(f"    {name:<28} {module}")

    enums, keys = schema_enums()
    modes = {name: count for name, count in enums.items() if name not in CLOUD_SETTINGS}
    print(f"\nmodes: {len(modes)} enums of ours over {keys} input keys, {math.prod(modes.values())} combinations of "
          f"their values (and {len(enums) - len(modes)} enums of cloud settings)")
    for name, count in sorted(enums.items()):
        print(f"  {name:<24} {count}{'  (a cloud setting)' if name in CLOUD_SETTINGS else ''}")

    targets = make_targets()
    duplicated = [name for name, count in Counter(targets).items() if count > 1]
    print(f"\npublic make targets: {len(targets)} ({' '.join(targets)})" +
          (f"; listed twice: {duplicated}" if duplicated else ""))

    derived, roots = exception_classes(found)
    print(f"\nexception classes: {len(derived)}, roots: {len(roots)} ({', '.join(roots)})")
    print("  " + ", ".join(derived))
    return 0


if __name__ == "__main__":
    sys.exit(main())

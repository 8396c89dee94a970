"""The make targets a user sees are few and listed: every target of the Makefile and mk/*.mk is either public (a `## `
comment on its line, listed by `make help`, at most 15 of them) or a step of those, named with a leading `_`; every
`make <target>` the repository's scripts, tests and documentation tell someone to run names a target that exists."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAKEFILES = [ROOT / "Makefile", *sorted((ROOT / "mk").glob("*.mk"))]
TARGET = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_-]*)\s*:(?![=:])(.*)$")


def targets() -> dict[str, str]:
    """Every explicit target -> the text after its colon (its prerequisites and comment)."""
    found: dict[str, str] = {}
    for makefile in MAKEFILES:
        for line in makefile.read_text().splitlines():
            if (match := TARGET.match(line)) and match.group(1) != ".PHONY":
                found[match.group(1)] = match.group(2)
    return found


def public() -> set[str]:
    return {name for name, rest in targets().items() if not name.startswith("_")}


def test_every_target_is_public_and_described_or_internal_with_a_leading_underscore():
    undescribed = sorted(name for name in public() if "## " not in targets()[name])
    assert not undescribed, f"targets without a `## ` description (make help would not list them): {undescribed}; " \
                            "describe them, or name them with a leading `_` if they are a step of another target"
    described = sorted(name for name, rest in targets().items() if name.startswith("_") and "## " in rest)
    assert not described, f"internal targets described for make help: {described}"


def test_at_most_15_public_targets_and_make_help_lists_each_one():
    # issue 47's limit; issue 52's test-security took the place of test-k8s (a pytest command, also in make test)
    assert len(public()) <= 15, sorted(public())
    listed = subprocess.run(["make", "--no-print-directory", "-s", "help"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout
    shown = {line.split()[1] for line in listed.splitlines() if line.startswith("make ")}
    assert shown == public(), (sorted(shown), sorted(public()))


def test_every_phony_name_has_a_rule():
    phony = {name for makefile in MAKEFILES for line in makefile.read_text().splitlines()
             if line.startswith(".PHONY:") for name in line.split(":", 1)[1].split()}
    assert phony <= set(targets()), sorted(phony - set(targets()))


def test_every_make_command_the_repository_names_is_a_target():
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode()
    named: dict[str, set[str]] = {}
    for name in filter(None, files.split("\0")):
        path = ROOT / name
        if path.suffix not in {".md", ".py", ".sh", ".mk", ".yaml", ".yml", ".toml", ""} or not path.is_file():
            continue
        if "/patches/" in name:
            continue
        text = path.read_text(errors="replace")
        # `make <target>` in backticks, after a shell's `&&` or an environment assignment, or a command line of
        # its own (`make up   # ...`): what someone is told to run
        for target in re.findall(r"(?:`|\$ |&& |=\S+ )make (?:--?[a-z-]+ )*([a-z_][a-z0-9_-]*)", text):
            named.setdefault(target, set()).add(name)
        for target in re.findall(r"^\s*make (?:--?[a-z-]+ )*([a-z_][a-z0-9_-]*)\s*(?:#|$)", text, re.M):
            named.setdefault(target, set()).add(name)
        called = r'(?:run|Popen|call|check_output)\(\["make", (?:"-[-a-z]+", )*"([a-z_][a-z0-9_-]*)"'  # from Python
        for target in re.findall(called, text):
            named.setdefault(target, set()).add(name)
    unknown = {target: sorted(where) for target, where in named.items() if target not in targets()}
    assert not unknown, f"`make <target>` named where no such target exists: {unknown}"

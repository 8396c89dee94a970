"""A backend is one folder and one registry line (issue 49): outside ``backends/<name>/`` and the registry
(``backends/__init__.py``) no module of the package names a registered backend in its code (names, strings, f-strings);
its docstrings and comments may (the ``backend`` key's documented values, where a zone's backend is explained). What a
module needs of a backend it asks the backend for (``Backend`` in ``backends/plugin.py``).

Held: every registered backend but the first one, Octavia (see ``NOT_YET``). Named outside its folder on purpose: the
modules of ``ALLOWED``, each with its reason; an entry that no longer names the backend is refused too, so the list
only shrinks."""

from __future__ import annotations

import ast
import functools
import io
import tokenize
from pathlib import Path

from ha_endpoint import backends
from tests.unit.test_layers import PACKAGE, parse
REGISTRY_MODULE = "backends/__init__.py"
NOT_YET = {"octavia": "the first backend: outside its folder only the core's module of CORE_NOT_YET names it in code "
                      "(besides ALLOWED's); the gates, the member agent, the agents' credentials and the checks of a "
                      "configuration ask the zone's backend (docs/architecture.md, 'What is still Octavia's outside "
                      "the folder')"}
ALLOWED = {
    "keepalived": {
        "backends/octavia/checks.py": "a cloud without a load-balancer service is refused at preview with the fix, "
                                      "which is this backend (issue 49: such a preview names it)",
        "core/outputs.py": "the output key of its members' files, in the schema's type of a zone's outputs (see "
                           "CORE_NOT_YET)",
    },
    "octavia": {
        "backends/keepalived/checks.py": "what the keepalived backend cannot serve on the cloud (a network without "
                                         "port security, a Neutron without allowed address pairs) is refused at "
                                         "preview with the fix, which is this backend",
        "backends/keepalived/rules.py": "what the keepalived backend cannot serve of a configuration (an internal "
                                        "endpoint, a load-balancer setting) is refused with the fix, which is this "
                                        "backend",
    },
}

CORE_NOT_YET = {
    "core/args.py": "the backend key's default value, which is the configuration's contract (components/schema.json "
                    "gives it to every language) and how state recorded before the key existed is read (a zone's facts "
                    "and a gate's inputs are the default backend's; the pack and the gates read them without the "
                    "registry)",
    "core/outputs.py": "the schema's one type of a zone's outputs lists every backend's keys, and the keepalived "
                       "backend's files for its members are the output key `keepalived` (docs/keepalived.md), which "
                       "users read; the schema's descriptions come from this class's own source, so the keys cannot "
                       "be inherited from a class in each backend's folder",
}
"""The modules of ``core/`` that still name a registered backend in code, each with its reason (issue 47: the core names
none); the rules of one backend are asked of it (:class:`ha_endpoint.core.checks.Rules`). Only shrinks."""


def code_tokens(path: Path) -> list[str]:
    """The module's tokens, without its comments and docstrings (every statement that is a string literal alone: a
    module's, class's or function's docstring, or an attribute's)."""
    source = path.read_text()
    spans = [((node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset))
             for node in ast.walk(parse(path)) if isinstance(node, ast.Expr)
             and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)]
    return [token.string for token in tokenize.generate_tokens(io.StringIO(source).readline)
            if token.type != tokenize.COMMENT
            and not (token.type == tokenize.STRING and any(start <= token.start and token.end <= end
                                                           for start, end in spans))]


@functools.lru_cache(maxsize=None)
def _lowered_code_tokens(path: Path, _mtime_ns: int, _size: int) -> tuple[str, ...]:
    """:func:`code_tokens` of a module of the package, lowercased: once per version of the file, not once per backend
    asked about (the tests ask :func:`naming` four times; each tokenized every module again, 0.5-0.6 CPU-s a time)."""
    return tuple(token.lower() for token in code_tokens(path))


def lowered_code_tokens(path: Path) -> tuple[str, ...]:
    stat = path.stat()
    return _lowered_code_tokens(path, stat.st_mtime_ns, stat.st_size)


def naming(name: str) -> list[str]:
    """The package's modules (paths relative to it) whose code names ``name``, outside its folder and the registry."""
    return sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                  if not path.is_relative_to(PACKAGE / "backends" / name)
                  and str(path.relative_to(PACKAGE)) != REGISTRY_MODULE
                  and any(name in token for token in lowered_code_tokens(path)))


def held() -> list[str]:
    return [name for name in backends.REGISTRY if name not in NOT_YET]


def test_a_backend_is_named_in_code_only_in_its_folder_and_the_registry():
    assert held(), "no registered backend is held to its folder"
    assert {name: naming(name) for name in held()} == {name: sorted(ALLOWED.get(name, {})) for name in held()}


def test_the_check_sees_a_name_in_code_and_not_in_a_docstring_or_a_comment(tmp_path):
    module = tmp_path / "example.py"
    module.write_text('"""Serves keepalived zones."""\n# keepalived\nX = 1\n"""keepalived, as an attribute\'s."""\n\n\n'
                      'def f():\n    """keepalived."""\n    return X\n')
    assert not any("keepalived" in token for token in code_tokens(module))
    module.write_text('def f(backend):\n    """Which backend."""\n    return backend == "keepalived"\n')
    assert '"keepalived"' in code_tokens(module)
    module.write_text('def f(zone):\n    return f"zone {zone} has no keepalived VIP"  # a message\n')
    assert any("keepalived" in token for token in code_tokens(module))


def test_a_backend_not_yet_held_is_named_outside_its_folder_only_by_the_core_not_yet_moved():
    """A backend of :data:`NOT_YET` too is named in code, outside its folder and the registry, only by :data:`ALLOWED`'s
    modules and the core's of :data:`CORE_NOT_YET` (issue 47: the gates, the member agent and the agents' credentials
    ask the zone's backend), so what left the gates, ``agent/`` and ``cloud/`` stays out."""
    assert {name: [module for module in naming(name) if not module.startswith("core/")] for name in NOT_YET} == \
        {name: sorted(ALLOWED.get(name, {})) for name in NOT_YET}


def test_the_core_names_no_registered_backend_in_code_but_the_modules_not_yet_moved():
    """No module of ``core/`` names any registered backend in its code beyond :data:`CORE_NOT_YET`, and each of those
    still does (so the list only shrinks)."""
    named = sorted({module for name in backends.REGISTRY for module in naming(name) if module.startswith("core/")})
    assert named == sorted(CORE_NOT_YET)

"""The package's folders are its layers, and no import runs back up one: ``core`` (pure) <- ``cloud`` (asks OpenStack)
<- ``gates`` (the gates' dynamic providers) <- ``watch`` (DNS that follows health, on the gates' client) <- ``agent``
(members that follow Cluster API Machines) <- ``members`` (the member sources, read into one list) <- ``backends``
(what serves a zone, by name) <- ``pipeline`` (arguments to a checked plan) <- ``resources`` (the component) <-
``kubernetes`` (the add-on) <- the package's entry points (``__init__``, ``pulumi_types``, which binds Pulumi's
classes to the core's names for them, ``hosting``, the documented ``args``, and the programs ``python -m`` runs: a
``__main__`` module, e.g. the DNS watcher's, which asks the registered backends how to watch their zones; nothing
imports a program). Imports happen when a module loads, but those of :data:`LAZY`, each with its reason; the one
that runs back up a layer (:data:`UPWARD`) is the gates' run-time question to the backends' registry."""

from __future__ import annotations

import ast
import functools
import gc
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "components" / "ha_endpoint"
LAYERS = ["core", "cloud", "gates", "watch", "agent", "members", "backends", "pipeline", "resources", "kubernetes",
          "top"]
LAZY = {
    ("ha_endpoint", "ha_endpoint.resources.endpoint"):
        "ha_endpoint.HaEndpoint, so that the pack loads the arguments and the contract without the resource code",
    ("ha_endpoint.gates.source", "ha_endpoint.backends"):
        "a gate or drain asks its zone's backend for its member client when it runs: the engine's dynamic-provider "
        "process loads only the provider's module, whose path is in the stacks' state, and the registry is a layer "
        "above the gates (it holds the backends, which declare the gates)",
    ("ha_endpoint.backends.octavia.backend", "ha_endpoint.backends.octavia.serving"):
        "a backend's serve, loaded when a zone is served (backends.plugin.served_when_needed): the registry loads "
        "without the resource code (and pulumi_openstack), so a gate's process that asks it for a member client stays "
        "as light as before",
    ("ha_endpoint.backends.keepalived.backend", "ha_endpoint.backends.keepalived.serving"):
        "as the Octavia backend's serve",
    ("ha_endpoint.backends", "ha_endpoint.backends.octavia.backend"):
        "the registry loads its backends when first asked, not when the package loads: the policy pack imports the "
        "Octavia backend's pure rules (backends/octavia/rules.py) without the backends' preview, resource and client "
        "code (openstacksdk), which would cost every preview's pack a third of a CPU-second",
    ("ha_endpoint.backends", "ha_endpoint.backends.keepalived.backend"): "as the Octavia backend",
    ("ha_endpoint.backends", "ha_endpoint.backends.plugin"):
        "the registry's annotations only (under TYPE_CHECKING), for the same reason",
}
"""The imports inside a function, each with its reason."""
UPWARD = {("ha_endpoint.gates.source", "ha_endpoint.backends")}
"""The imports that run back up a layer: inside a function (:data:`LAZY`), at run time only."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> int:
    part = module.split(".")[1] if module.count(".") and not module.endswith(".__main__") else "top"
    return LAYERS.index(part if part in LAYERS else "top")


def parse(path: Path) -> ast.Module:
    """``path``'s syntax tree, built with the cyclic garbage collector held off. CPython 3.11 keeps one AST
    recursion counter per interpreter: a collection during the tree's construction may run a finalizer that parses
    too (asyncio's "Future exception was never retrieved" log of a mocks test's program formats a traceback, and
    3.11's traceback carets call ``ast.parse``), which resets the counter, and the outer parse fails with
    "SystemError: AST constructor recursion depth mismatch" (seen once in a `make test`, 2026-11-29; a cycle whose
    finalizer parses, collected during a parse, fails it every time)."""
    source = path.read_text()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(source)
    finally:
        if was_enabled:
            gc.enable()


def imports(path: Path) -> list[tuple[str, bool]]:
    """The ha_endpoint modules ``path`` imports, and whether the import is inside a function."""
    stat = path.stat()
    return list(_imports(path, stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=None)
def _imports(path: Path, _mtime_ns: int, _size: int) -> tuple[tuple[str, bool], ...]:
    """:func:`imports`, once per version of the file: three tests read every module's imports."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = parse(path)
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            if base.split(".")[0] != "ha_endpoint":
                continue
            targets = [f"{base}.{alias.name}" if (PACKAGE.parent / f"{base}.{alias.name}".replace(".", "/")).exists()
                       or (PACKAGE.parent / (f"{base}.{alias.name}".replace(".", "/") + ".py")).exists() else base
                       for alias in node.names]
            found += [(target, id(node) not in top) for target in targets]
        elif isinstance(node, ast.Import):
            found += [(alias.name, id(node) not in top) for alias in node.names
                      if alias.name.split(".")[0] == "ha_endpoint"]
    return tuple(found)


def test_no_import_runs_back_up_a_layer():
    """None when a module loads; at run time only the few of :data:`UPWARD`, each inside a function and in
    :data:`LAZY` with its reason."""
    upward = {(module_name(path), target, inside) for path in sorted(PACKAGE.rglob("*.py"))
              for target, inside in imports(path) if layer(target) > layer(module_name(path))}
    assert upward == {(module, target, True) for module, target in UPWARD}
    assert UPWARD <= set(LAZY)


def test_nothing_imports_a_program():
    """A ``__main__`` module is an entry point at the top (it composes the layers below it), so no module of the
    package may import one: a program's imports never reach a layer through it."""
    assert [f"{module_name(path)} imports {target}" for path in sorted(PACKAGE.rglob("*.py"))
            for target, _ in imports(path) if target.endswith(".__main__")] == []


def test_modules_import_what_they_need_when_they_load():
    lazy = {(module_name(path), target) for path in sorted(PACKAGE.rglob("*.py"))
            for target, inside in imports(path) if inside}
    assert lazy == set(LAZY)


def test_the_core_imports_neither_pulumi_nor_openstack():
    """The core is pure: no import of the Pulumi SDK or a Pulumi provider (not even for annotations, nor under
    ``TYPE_CHECKING``), nor of openstacksdk. What it names of Pulumi (an input, an Output, a resource, the engine's
    RunError) it names in its own words (``core/inputs.py``, ``core/errors.py``), bound to Pulumi's classes by the
    package's entry (``ha_endpoint/pulumi_types.py``)."""
    for path in sorted((PACKAGE / "core").rglob("*.py")):
        tree = parse(path)
        names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        names |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        assert not {name for name in names if name.split(".")[0].startswith("pulumi")
                    or name.split(".")[0] == "openstack"}, path


def test_every_exception_of_the_package_has_the_one_root():
    """A caller catches every error of the package with ``HaEndpointError`` (core/errors.py): no class of the package
    derives from a builtin exception alone (an adopted load balancer that is not found was an ``Exception``)."""
    import builtins

    builtin_errors = {name for name, value in vars(builtins).items()
                      if isinstance(value, type) and issubclass(value, BaseException)}
    alone = [f"{module_name(path)}.{node.name}" for path in sorted(PACKAGE.rglob("*.py"))
             for node in ast.walk(parse(path)) if isinstance(node, ast.ClassDef) and node.bases
             and all(isinstance(base, ast.Name) and base.id in builtin_errors for base in node.bases)]
    assert alone == ["ha_endpoint.core.errors.HaEndpointError"]

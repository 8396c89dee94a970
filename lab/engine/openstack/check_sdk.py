#!/usr/bin/env python3
"""Compare the schema of lab/engine/openstack's plugin with the pulumi-openstack Python SDK it claims to serve.

    python3 lab/engine/openstack/check_sdk.py <schema.json> [<pulumi_openstack package dir>]

The package dir defaults to the pulumi_openstack importable by this Python (the project's .venv has the pinned
wheel). The SDK sends and reads properties by their Pulumi (camelCase) names; what it knows is read from its source:
resource and function tokens (resource_modules of __init__.py, pulumi.runtime.invoke), every getter of every
resource, Args, State, Result and nested type class with its shape (list / map / one), required inputs, secret
outputs, aliases, deprecations of tokens and properties, and the provider configuration (config/vars.py: keys and
the OS_* variables they default from). Every resource and function is compared, in both directions.

Each difference has a key (a short string). The run fails (exit 1) on any difference whose key is not in KNOWN,
and on any KNOWN entry that no longer occurs (so the list cannot outlive its reason). Descriptions and examples are
not compared (the plugin is generated without docs).
"""
from __future__ import annotations

import json
import os
import re
import sys

# Differences accepted, each with its reason. Keys as printed by a failing run.
KNOWN: dict[str, str] = {}

DEPRECATED = r'(?:@_utilities\.deprecated\("""(?P<dep>(?:[^"]|"(?!""))*)"""\)\s*\n\s*)?'
GETTER = re.compile(r'@pulumi\.getter(?:\(name="(?P<name>[^"]+)"\))?\s*\n\s*' + DEPRECATED
                    + r'def (?P<py>[a-zA-Z0-9_]+)\(self\)\s*->\s*(?P<ann>.*):\s*$', re.M)
CLASS = re.compile(r'^class ([A-Za-z0-9_]+)(?:\(([^)]*)\))?:', re.M)


def shape(annotation: str) -> str:
    """'list', 'map' or 'one' from a getter's return annotation (Optional/Input/Output wrappers ignored)."""
    a = re.sub(r"^(Optional\[|pulumi\.(Input|Output)\[)+", "", annotation.replace(" ", ""))
    return "list" if a.startswith("Sequence[") else "map" if a.startswith("Mapping[") else "one"


def schema_shape(prop: dict) -> str:
    if prop.get("type") == "array":
        return "list"
    if prop.get("type") == "object" and "additionalProperties" in prop:
        return "map"
    return "one"


class Cls:
    """One class of the SDK: its bases, getters {pulumi name: shape}, python -> pulumi names, deprecated getters."""

    def __init__(self, path: str, bases: str, body: str):
        self.path, self.bases, self.body = path, bases, body
        self.props: dict[str, str] = {}
        self.py_to_pulumi: dict[str, str] = {}
        self.deprecated: set[str] = set()
        for g in GETTER.finditer(body):
            name = g.group("name") or g.group("py")
            self.props[name] = shape(g.group("ann"))
            self.py_to_pulumi[g.group("py")] = name
            if g.group("dep") is not None:
                self.deprecated.add(name)


def read_package(pkg: str):
    files: dict[str, str] = {}
    classes: dict[str, list[Cls]] = {}
    for root, _, names in os.walk(pkg):
        for n in sorted(names):
            if not n.endswith(".py"):
                continue
            path = os.path.join(root, n)
            src = files[path] = open(path, encoding="utf-8").read()
            heads = list(CLASS.finditer(src))
            for i, m in enumerate(heads):
                body = src[m.end(): heads[i + 1].start() if i + 1 < len(heads) else len(src)]
                classes.setdefault(m.group(1), []).append(Cls(path, m.group(2) or "", body))
    return files, classes


def compare_package(schema: dict, pkg: str) -> tuple[dict[str, str], int]:
    """{difference key: detail} between the schema and the SDK package, and the number of comparisons made."""
    files, classes = read_package(pkg)
    init = files[os.path.join(pkg, "__init__.py")]
    modules = json.loads(re.search(r'resource_modules="""(.*?)"""', init, re.S).group(1))
    diffs: dict[str, str] = {}
    count = 0

    def cmp_props(what: str, sdk: dict[str, str], sch: dict) -> None:
        nonlocal count
        count += 1
        for k in sorted(set(sdk) - set(sch)):
            diffs[f"{what}: {k}: only in the SDK"] = "the SDK sends/reads a property the plugin does not know"
        for k in sorted(set(sch) - set(sdk)):
            diffs[f"{what}: {k}: only in the schema"] = "the plugin has a property the SDK cannot set or read"
        for k in sorted(set(sdk) & set(sch)):
            if sdk[k] != schema_shape(sch[k]):
                diffs[f"{what}: {k}: shape"] = f"{sdk[k]} in the SDK, {schema_shape(sch[k])} in the schema"

    def cmp_set(what: str, sdk: set, sch: set) -> None:
        nonlocal count
        count += 1
        if sdk != sch:
            diffs[what] = f"SDK only {sorted(sdk - sch)}, schema only {sorted(sch - sdk)}"

    def one(name: str, mod_dir: str, base: str | None = None) -> Cls | None:
        cands = [c for c in classes.get(name, []) if os.path.dirname(c.path) == mod_dir
                 and (base is None or base in c.bases)]
        return cands[0] if len(cands) == 1 else None

    # Resources.
    sdk_resources = {}
    for mod in modules:
        mod_dir = os.path.join(pkg, *mod["fqn"].split(".")[1:])
        for tok, cls in mod["classes"].items():
            sdk_resources[tok] = (mod_dir, cls)
    sch_resources = schema.get("resources", {})
    for tok in sorted(set(sdk_resources) - set(sch_resources)):
        diffs[f"resource {tok}: only in the SDK"] = "the SDK registers a resource the plugin does not have"
    for tok in sorted(set(sch_resources) - set(sdk_resources)):
        diffs[f"resource {tok}: only in the schema"] = "the plugin has a resource the SDK cannot create"
    for tok in sorted(set(sdk_resources) & set(sch_resources)):
        mod_dir, name = sdk_resources[tok]
        r = sch_resources[tok]
        res = one(name, mod_dir, "CustomResource")
        if res is None:
            diffs[f"resource {tok}: class"] = f"not exactly one class {name}(CustomResource) in {mod_dir}"
            continue
        cmp_props(f"resource {tok} outputs", res.props, r.get("properties", {}))
        args = one(name + "Args", mod_dir)
        if args is not None:
            cmp_props(f"resource {tok} inputs", args.props, r.get("inputProperties", {}))
            req = {args.py_to_pulumi.get(n, args.py_to_pulumi.get(n.rstrip("_"), n))
                   for n in re.findall(r"Missing required property '([^']+)'", res.body)}
            cmp_set(f"resource {tok} required inputs", req, set(r.get("requiredInputs", [])))
        else:
            cmp_props(f"resource {tok} inputs", {}, r.get("inputProperties", {}))
        state = one("_" + name + "State", mod_dir)
        cmp_props(f"resource {tok} state", state.props if state else {},
                  (r.get("stateInputs") or {}).get("properties", {}))
        secrets = set()
        m = re.search(r"additional_secret_outputs=\[([^\]]*)\]", res.body)
        if m:
            secrets = set(re.findall(r'"([^"]+)"', m.group(1)))
        cmp_set(f"resource {tok} secret outputs", secrets,
                {k for k, p in r.get("properties", {}).items() if p.get("secret")})
        cmp_set(f"resource {tok} aliases", set(re.findall(r'pulumi\.Alias\(type_="([^"]+)"\)', res.body)),
                {a.get("type") for a in r.get("aliases", []) if a.get("type")})
        cmp_set(f"resource {tok} deprecated properties", res.deprecated,
                {k for k, p in r.get("properties", {}).items() if "deprecationMessage" in p})
        dep = re.search(r'pulumi\.log\.warn\("""' + re.escape(name) + r' is deprecated: (.*?)"""\)', res.body, re.S)
        cmp_set(f"resource {tok} deprecation", {dep.group(1)} if dep else set(),
                {r["deprecationMessage"]} if r.get("deprecationMessage") else set())

    # Functions: one per file (its plain and _output forms invoke the same token).
    new_codegen = any("pulumi.Input[Optional[Optional[" in src for src in files.values())
    sdk_functions = {}
    for path, src in files.items():
        toks = set(re.findall(r"invoke\('(openstack:[^']+)'", src))
        for tok in toks:
            sdk_functions[tok] = (path, src)
    sch_functions = {k: v for k, v in schema.get("functions", {}).items() if not k.startswith("pulumi:providers:")}
    for tok in sorted(set(sdk_functions) - set(sch_functions)):
        diffs[f"function {tok}: only in the SDK"] = "the SDK invokes a function the plugin does not have"
    for tok in sorted(set(sch_functions) - set(sdk_functions)):
        diffs[f"function {tok}: only in the schema"] = "the plugin has a function the SDK cannot call"
    for tok in sorted(set(sdk_functions) & set(sch_functions)):
        path, src = sdk_functions[tok]
        f = sch_functions[tok]
        ins = {k: "one" for k in re.findall(r"__args__\['([^']+)'\]", src)}
        sch_in = (f.get("inputs") or {}).get("properties", {})
        count += 1
        for k in sorted(set(ins) - set(sch_in)):
            diffs[f"function {tok} inputs: {k}: only in the SDK"] = "the SDK sends an argument the plugin refuses"
        for k in sorted(set(sch_in) - set(ins)):
            diffs[f"function {tok} inputs: {k}: only in the schema"] = "the SDK cannot pass this argument"
        fdef = re.search(r"^def (get_[a-z0-9_]+_output|[a-z0-9_]+_output)\((.*?)\) -> ", src, re.M | re.S)
        if fdef:
            # Required: pulumi.Input[T] and optional pulumi.Input[Optional[T]] (older code generators), or
            # pulumi.Input[Optional[T]] and pulumi.Input[Optional[Optional[T]]] (the newer one, e.g. 5.5.3).
            optional = "pulumi.Input[Optional[Optional[" if new_codegen else "pulumi.Input[Optional["
            py_req = [p.split(":")[0].strip() for p in fdef.group(2).split(",\n")
                      if "pulumi.Input[" in p and optional not in p]
            arg_names = dict(re.findall(r"__args__\['([^']+)'\] = ([a-z0-9_]+)", src))
            cmp_set(f"function {tok} required inputs", {k for k, v in arg_names.items() if v in py_req},
                    set((f.get("inputs") or {}).get("required", [])))
        results = [c for n, cs in classes.items() for c in cs if c.path == path
                   and n.endswith("Result") and not n.startswith("Awaitable")]
        cmp_props(f"function {tok} outputs", results[0].props if results else {},
                  (f.get("outputs") or {}).get("properties", {}))
        dep = re.search(r'pulumi\.log\.warn\("""[a-z0-9_]+ is deprecated: (.*?)"""\)', src, re.S)
        cmp_set(f"function {tok} deprecation", {dep.group(1)} if dep else set(),
                {f["deprecationMessage"]} if f.get("deprecationMessage") else set())

    # Nested object types: outputs.py / _inputs.py classes named like the schema type's last token part.
    types_by_name = {}
    for tok, t in schema.get("types", {}).items():
        types_by_name.setdefault((tok.split(":")[1].split("/")[0], tok.split(":")[-1]), (tok, t))
    seen_types = set()
    for name, cs in classes.items():
        for c in cs:
            fname = os.path.basename(c.path)
            if fname not in ("outputs.py", "_inputs.py"):
                continue
            mod = os.path.basename(os.path.dirname(c.path))
            mod = "index" if mod == "pulumi_openstack" else mod
            if name.endswith("ArgsDict"):
                continue
            base = name[:-4] if name.endswith("Args") and fname == "_inputs.py" else name
            if name.startswith("Get"):
                # A function's nested types: GetXResult (outputs.py) / GetXArgs (_inputs.py) for the type getX.
                base = "g" + base[1:].removesuffix("Result")
            hit = types_by_name.get((mod, base))
            if hit is None:
                diffs[f"type {mod}.{name} ({fname}): only in the SDK"] = "no schema type of that name"
                continue
            seen_types.add(hit[0])
            cmp_props(f"type {hit[0]} ({fname})", c.props, hit[1].get("properties", {}))
            if fname == "_inputs.py":
                init_m = re.search(r"def __init__\(__self__, \*,(.*?)\):", c.body, re.S)
                req = {c.py_to_pulumi.get(n, n) for n in re.findall(r"^\s*([a-z0-9_]+): [^=]*?,?$",
                                                                      init_m.group(1) if init_m else "", re.M)}
                cmp_set(f"type {hit[0]} required fields", req, set(hit[1].get("required", [])))
    for tok in sorted(set(schema.get("types", {})) - seen_types):
        diffs[f"type {tok}: only in the schema"] = "a type the SDK has no class for"

    # Provider configuration: config/vars.py.
    vars_src = files.get(os.path.join(pkg, "config", "vars.py"), "")
    sdk_cfg = dict(re.findall(r"__config__\.get(?:_bool|_int|_object)?\('([A-Za-z0-9]+)'\)(?: or "
                              r"_utilities\.get_env(?:_bool|_int)?\('([A-Z0-9_]+)'\))?", vars_src))
    sch_cfg = (schema.get("config") or {}).get("variables", {})
    cmp_set("config keys", set(sdk_cfg), set(sch_cfg))
    cmp_set("config environment defaults", {f"{k}={v}" for k, v in sdk_cfg.items() if v},
            {f"{k}={e}" for k, p in sch_cfg.items() for e in ((p.get("defaultInfo") or {}).get("environment") or [])})
    return diffs, count


def main(argv: list[str]) -> int:
    schema = json.load(open(argv[1], encoding="utf-8"))
    if len(argv) > 2:
        pkg = argv[2]
    else:
        import pulumi_openstack
        pkg = os.path.dirname(pulumi_openstack.__file__)
    diffs, count = compare_package(schema, pkg)
    unknown = {k: v for k, v in diffs.items() if k not in KNOWN}
    stale = sorted(k for k in KNOWN if k not in diffs)
    for k in sorted(diffs):
        if k in KNOWN:
            print(f"known: {k} ({KNOWN[k]})")
    for k, v in sorted(unknown.items()):
        print(f"DIFFERENCE: {k}: {v}")
    for k in stale:
        print(f"STALE: KNOWN lists '{k}', which no longer differs: remove it")
    print(f"check_sdk: {count} comparisons, {len(diffs)} differences ({len(diffs) - len(unknown)} known), "
          f"{len(unknown)} unlisted, {len(stale)} stale")
    return 1 if unknown or stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Compare the bridge-generated schema of engine/openstack with what a pulumi-openstack Python SDK speaks.

    python3 engine/openstack/check_sdk.py <schema.json> <unpacked pulumi_openstack package dir>

The SDK sends and reads properties by their Pulumi (camelCase) names: @pulumi.getter(name="...") or, without a
name, the Python name itself; function arguments as __args__['...']. For every resource and function token of the
SDK this lists what the schema lacks or has in addition (top-level properties, function inputs and outputs, and the
properties of the nested object types the SDK knows by class name). Exit status 1 if a token the SDK uses is missing
from the schema or a property the SDK sends is unknown to it (additional schema properties are reported only).
"""
import json
import os
import re
import sys

GETTER = re.compile(r'@pulumi\.getter(?:\(name="([^"]+)"\))?\s*\n\s*def ([a-zA-Z0-9_]+)\(self\)\s*->\s*(.*):\s*$', re.M)


def shape(annotation):
    """'list', 'map' or 'one' from a getter's return annotation (Optional/Input/Output wrappers ignored)."""
    a = re.sub(r"^(Optional\[|pulumi\.(Input|Output)\[)+", "", annotation.replace(" ", ""))
    return "list" if a.startswith("Sequence[") else "map" if a.startswith("Mapping[") else "one"


def schema_shape(prop):
    if prop.get("type") == "array":
        return "list"
    if prop.get("type") == "object" and "additionalProperties" in prop:
        return "map"
    return "one"
CLASS = re.compile(r'^class ([A-Za-z0-9_]+)(?:\(([^)]*)\))?:', re.M)


def classes(path):
    """{class name: (bases, set of Pulumi property names of its getters)} for one Python file."""
    src = open(path, encoding="utf-8").read()
    out = {}
    heads = list(CLASS.finditer(src))
    for i, m in enumerate(heads):
        body = src[m.end(): heads[i + 1].start() if i + 1 < len(heads) else len(src)]
        out[m.group(1)] = (m.group(2) or "", {g.group(1) or g.group(2): shape(g.group(3)) for g in GETTER.finditer(body)},
                           body)
    return out


def main(schema_path, pkg):
    schema = json.load(open(schema_path))
    init = open(os.path.join(pkg, "__init__.py"), encoding="utf-8").read()
    modules = json.loads(re.search(r'resource_modules="""(.*?)"""', init, re.S).group(1))
    files = {}
    for root, _, names in os.walk(pkg):
        for n in names:
            if n.endswith(".py"):
                files[os.path.join(root, n)] = classes(os.path.join(root, n))
    by_class = {}
    for path, cls in files.items():
        for name, (bases, props, body) in cls.items():
            by_class.setdefault(name, []).append((path, bases, props, body))

    errors, notes = [], []
    checked = 0

    def compare(what, sdk, sch):
        """sdk: names (set) or {name: shape}; sch: the schema's properties (dict)."""
        nonlocal checked
        checked += 1
        if isinstance(sdk, dict):
            bad = sorted(f"{k} ({v} in the SDK, {schema_shape(sch[k])} in the schema)"
                         for k, v in sdk.items() if k in sch and v != schema_shape(sch[k]))
            if bad:
                errors.append(f"{what}: shapes differ: {bad}")
        sdk, sch = set(sdk), set(sch)
        if sdk - sch:
            errors.append(f"{what}: SDK sends/reads {sorted(sdk - sch)} unknown to the schema")
        if sch - sdk:
            notes.append(f"{what}: schema has {sorted(sch - sdk)} the SDK does not know")

    # Resources.
    for mod in modules:
        for tok, cls in mod["classes"].items():
            if tok not in schema["resources"]:
                errors.append(f"resource {tok}: not in the schema")
                continue
            mod_dir = os.path.join(pkg, *mod["fqn"].split(".")[1:])
            cands = [c for c in by_class.get(cls, []) if os.path.dirname(c[0]) == mod_dir
                     and "CustomResource" in c[1]]
            if len(cands) != 1:
                errors.append(f"resource {tok}: {len(cands)} classes {cls} in {mod_dir}")
                continue
            r = schema["resources"][tok]
            compare(f"resource {tok} (outputs)", cands[0][2], r.get("properties", {}))
            # Inputs: the keyword arguments of the resource's Args class (snake) -> via its getters.
            args = [c for c in by_class.get(cls + "Args", []) if os.path.dirname(c[0]) == mod_dir]
            if args:
                compare(f"resource {tok} (inputs)", args[0][2], r.get("inputProperties", {}))
                # Required inputs: the SDK raises "Missing required property '<python name>'" for each.
                py_to_pulumi = {g.group(2): g.group(1) or g.group(2) for g in GETTER.finditer(args[0][3])}
                sdk_req = {py_to_pulumi.get(n, n)
                           for n in re.findall(r"Missing required property '([^']+)'", cands[0][3])}
                sch_req = set(r.get("requiredInputs", []))
                if sdk_req != sch_req:
                    errors.append(f"resource {tok}: required inputs differ: SDK only {sorted(sdk_req - sch_req)},"
                                  f" schema only {sorted(sch_req - sdk_req)}")

    # Functions.
    for path, cls in files.items():
        src = open(path, encoding="utf-8").read()
        for m in re.finditer(r"invoke\('(openstack:[^']+)'", src):
            tok = m.group(1)
            if tok not in schema["functions"]:
                errors.append(f"function {tok}: not in the schema")
                continue
            f = schema["functions"][tok]
            ins = set(re.findall(r"__args__\['([^']+)'\]", src))
            # Required arguments: in the _output form, pulumi.Input[T] (required) vs pulumi.Input[Optional[T]].
            fdef = re.search(r"^def (get_[a-z0-9_]+_output)\((.*?)\) -> ", src, re.M | re.S)
            if fdef:
                py_req = [p.split(":")[0].strip() for p in fdef.group(2).split(",\n")
                          if "pulumi.Input[" in p and "pulumi.Input[Optional[" not in p]
                arg_names = dict(re.findall(r"__args__\['([^']+)'\] = ([a-z0-9_]+)", src))
                sdk_req = {k for k, v in arg_names.items() if v in py_req}
                sch_req = set((f.get("inputs") or {}).get("required", []))
                if sdk_req != sch_req:
                    errors.append(f"function {tok}: required inputs differ: SDK only {sorted(sdk_req - sch_req)},"
                                  f" schema only {sorted(sch_req - sdk_req)}")
            compare(f"function {tok} (inputs)", ins,
                    (f.get("inputs") or {}).get("properties", {}))
            results = [b for n, b in cls.items() if n.endswith("Result") and not n.startswith("Awaitable")]
            if results:
                compare(f"function {tok} (outputs)", results[0][1],
                        (f.get("outputs") or {}).get("properties", {}))
            break  # one invoke per file (plus its _output form, same token)

    # Nested object types: outputs.py classes named like the schema type's last token part.
    types_by_name = {}
    for tok, t in schema.get("types", {}).items():
        types_by_name.setdefault((tok.split(":")[1].split("/")[0], tok.split(":")[-1]), (tok, t))
    for path, cls in files.items():
        if os.path.basename(path) not in ("outputs.py", "_inputs.py"):
            continue
        mod = os.path.basename(os.path.dirname(path))
        if mod == "pulumi_openstack":
            mod = "index"
        for name, (bases, props, body) in cls.items():
            base = name[:-4] if name.endswith("Args") and os.path.basename(path) == "_inputs.py" else name
            hit = types_by_name.get((mod, base))
            if hit is None:
                if not name.startswith("Get") and not name.endswith("Result"):
                    notes.append(f"type {mod}.{name}: no schema type {mod}/{base}")
                continue
            compare(f"type {hit[0]} ({os.path.basename(path)})", props, hit[1].get("properties", {}))
            if os.path.basename(path) == "_inputs.py":
                # Required fields of an input type: __init__ keyword parameters without a default.
                init = re.search(r"def __init__\(__self__, \*,(.*?)\):", body, re.S)
                py_to_pulumi = {g.group(2): g.group(1) or g.group(2) for g in GETTER.finditer(body)}
                sdk_req = {py_to_pulumi.get(n, n) for n in re.findall(r"^\s*([a-z0-9_]+): [^=]*?,?$",
                                                                     init.group(1) if init else "", re.M)}
                sch_req = set(hit[1].get("required", []))
                if sdk_req != sch_req:
                    errors.append(f"type {hit[0]}: required fields differ: SDK only {sorted(sdk_req - sch_req)},"
                                  f" schema only {sorted(sch_req - sdk_req)}")

    for n in notes:
        print("note:", n)
    for e in errors:
        print("ERROR:", e)
    print(f"check_sdk: {checked} comparisons, {len(errors)} errors, {len(notes)} notes")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

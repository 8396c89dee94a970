"""The configuration page's tables (``docs/configuration.md``): the configuration keys and the outputs, generated from
the component's schema (``components/schema.json``).

The schema is what Pulumi infers from the typed arguments (:mod:`ha_endpoint.core.args`, their docstrings the
descriptions; the outputs' from :class:`ha_endpoint.core.outputs.ZoneOutputs` and the component's annotations) and
what every language's SDK is generated from; the documentation's tables of the configuration keys and of the outputs
are written from it, so the two never say different things. The schema carries no defaults: those come from the same
typed arguments (the value a key takes when it is left out). ``.venv/bin/python scripts/config_table.py`` prints the
tables; ``--write`` puts them into docs/configuration.md between their markers (``make schema`` runs it after
regenerating the schema); tests/unit/test_configuration_page.py fails when the page holds other tables than these.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "components" / "schema.json"
PAGE = ROOT / "docs" / "configuration.md"
ENDPOINT = "haendpoint:index:HaEndpoint"
MARKERS = {
    "inputs": ("<!-- configuration table: generated from components/schema.json by scripts/config_table.py -->",
               "<!-- end of the generated configuration table -->"),
    "outputs": ("<!-- outputs table: generated from components/schema.json by scripts/config_table.py -->",
                "<!-- end of the generated outputs table -->"),
}
"""Where each table sits in the page: (begin, end) markers, by which of the component's properties it lists."""


def default(model: Any, name: str) -> str:
    """The default of the field of ``model`` (a pydantic class of :mod:`ha_endpoint.core.args`) whose alias is
    ``name``, as YAML would write it; empty when it has none."""
    field = next((info for key, info in (model.model_fields.items() if model else ()) if (info.alias or key) == name),
                 None)
    if field is None or field.is_required():
        return ""
    value = field.get_default(call_default_factory=True)
    if value is None or isinstance(value, BaseModel) or value == [] or value == {}:
        return ""
    value = getattr(value, "value", value)
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, list):
        return "`[" + ", ".join(str(item) for item in value) + "]`"
    return f"`{value}`"


def inner_model(model: Any, name: str) -> Any:
    """The pydantic class of the field ``name`` of ``model`` (through Optional, list and dict), if any."""
    field = next((info for key, info in (model.model_fields.items() if model else ()) if (info.alias or key) == name),
                 None)
    stack = [field.annotation] if field is not None else []
    while stack:
        annotation = stack.pop()
        if hasattr(annotation, "model_fields"):
            return annotation
        stack.extend(getattr(annotation, "__args__", ()))
    return None


def rows(schema: dict[str, Any], which: str = "inputs") -> Iterator[tuple[str, str, str, str, str]]:
    """(key, type, required, default, meaning) for every configuration key (``which="inputs"``) or every output
    (``"outputs"``, whose default is always empty), depth first, in the schema's (sorted) order."""
    from ha_endpoint.core.args import EndpointArgs

    types = schema["types"]

    def ref_name(spec: dict[str, Any]) -> str:
        return spec["$ref"].rsplit("/", 1)[-1]

    def kind(spec: dict[str, Any]) -> str:
        if spec.get("$ref", "").startswith("pulumi.json#/"):  # Pulumi's own types (Any)
            return spec["$ref"].rsplit("/", 1)[-1].lower()
        if "$ref" in spec:
            target = types[ref_name(spec)]
            if "enum" in target:
                return " \\| ".join(f"`{item['value']}`" for item in target["enum"])
            return "object"
        if spec.get("type") == "array":
            return f"list of {kind(spec['items'])}"
        if spec.get("type") == "object" and "additionalProperties" in spec:
            return f"map of {kind(spec['additionalProperties'])}"
        return spec.get("type", "any")

    def walk(properties: dict[str, Any], required: list[str], prefix: str,
             model: Any) -> Iterator[tuple[str, str, str, str, str]]:
        for name in sorted(properties):
            spec = properties[name]
            key = f"{prefix}{name}"
            yield (key, kind(spec), "yes" if name in required else "", default(model, name),
                   " ".join(spec.get("description", "").split()))
            inner = spec.get("items") or spec.get("additionalProperties") or spec
            suffix = "[]." if spec.get("type") == "array" else ".<az>." if "additionalProperties" in spec else "."
            if "$ref" in inner and "properties" in types.get(ref_name(inner), {}):
                target = types[ref_name(inner)]
                yield from walk(target["properties"], target.get("required", []), key + suffix,
                                inner_model(model, name))

    endpoint = schema["resources"][ENDPOINT]
    if which == "outputs":
        yield from walk(endpoint["properties"], endpoint.get("required", []), "", None)
    else:
        yield from walk(endpoint["inputProperties"], endpoint.get("requiredInputs", []), "", EndpointArgs)


def table(schema: dict[str, Any], which: str = "inputs") -> str:
    """The markdown table, one row per key (of the configuration, or of the outputs: key, type, meaning)."""
    outputs = which == "outputs"
    lines = ["| key | type | meaning |", "| --- | --- | --- |"] if outputs else \
        ["| key | type | required | default | meaning |", "| --- | --- | --- | --- | --- |"]
    for key, kind, required, value, meaning in rows(schema, which):
        escaped = meaning.replace("|", "\\|")
        lines.append(f"| `{key}` | {kind} | {escaped} |" if outputs else
                     f"| `{key}` | {kind} | {required} | {value} | {escaped} |")
    return "\n".join(lines)


def page_table(text: str, which: str = "inputs") -> str:
    """The table the configuration page holds between the markers of ``which``."""
    begin, end = MARKERS[which]
    return text[text.index(begin) + len(begin):text.index(end)].strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace the tables in docs/configuration.md")
    options = parser.parse_args()
    schema = json.loads(SCHEMA.read_text())
    if not options.write:
        print("\n\n".join(table(schema, which) for which in MARKERS))
        return
    text = PAGE.read_text()
    for which, (begin, end) in MARKERS.items():
        generated = table(schema, which)
        start, stop = text.index(begin) + len(begin), text.index(end)
        text = text[:start] + "\n" + generated + "\n" + text[stop:]
        print(f"{PAGE.relative_to(ROOT)}: {which} table written ({generated.count(chr(10)) - 1} keys)", file=sys.stderr)
    PAGE.write_text(text)


if __name__ == "__main__":
    main()

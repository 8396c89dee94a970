"""pydantic's validation errors, said in the configuration's words: the key, what is wrong, and the fix.

pydantic reports ``String should match pattern '^[a-z0-9]...'`` or ``Input should be a valid integer`` and, for a
``pulumi.Input[str]`` key, one error per branch of the union it tried (text, an awaitable, an Output). A user wrote
YAML: here each error becomes one :class:`Problem` per key, naming the key as it is written in the configuration
(camelCase), what is wrong in the words of YAML (text, a whole number, true or false, a list, a mapping), what was
given, and the fix, with an example. The wording of every error type the arguments can raise is below; anything else
gets a generic message built from the field's own type and description, never pydantic's phrase.
"""

from __future__ import annotations

import ast
import difflib
import enum
import functools
import inspect
import re
import textwrap
import types
import typing
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

import annotated_types
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from .args import (ClusterApiSourceArgs, DnsArgs, EndpointArgs, ListenerArgs, MemberArgs, MemberSourcesArgs, MonitorArgs,
                   ReadinessArgs, ZoneArgs, explain_construction_errors)
from .errors import ConfigError, Problem

_UNION_BRANCH = re.compile(r"^(str|int|float|bool|constrained-str|constrained-int|is-instance\[.*\]|"
                           r"function-(after|before|wrap|plain)\[.*\]|nullable\[.*\]|lax-or-strict\[.*\]|"
                           r"json-or-python\[.*\]|chain\[.*\])$")
"""A pydantic location part that names a branch of a union (``pulumi.Input[str]`` is str | Awaitable | Output), not
a key: one problem per key, whatever branches were tried."""

EXAMPLES: dict[str, str] = {
    "name": "k8s-api", "port": "6443", "memberPort": "6443", "delay": "5", "timeout": "3", "maxRetries": "2",
    "maxRetriesDown": "3", "ttl": "30", "weight": "1", "timeoutSeconds": "600", "pollIntervalSeconds": "1",
    "stablePolls": "2", "drainSeconds": "30", "subnet": "cp-az1", "floatingNetwork": "public",
    "floatingIp": "172.24.4.50", "address": "10.10.1.10", "az": "az1", "dnsZone": "example.test.", "record": "api",
    "path": "/healthz", "expectedCodes": "200", "cloud": "mycloud", "region": "RegionOne", "allowedCidrs":
    "['10.0.0.0/8']", "allowedCidrs[]": "10.0.0.0/8", "tags": "[production]", "tags[]": "production",
    "server": "<server id>", "MemberArgs.port": "<the member's Neutron port id>",
    "MemberArgs.name": "cp-0",
    "certificateRef": "https://barbican.example:9311/v1/containers/<uuid>", "apiPort": "6443",
    "timeoutClientData": "3600000", "timeoutMemberData": "3600000", "timeoutMemberConnect": "5000",
    "timeoutTcpInspect": "0", "cluster": "k8s", "namespace": "default", "kubeconfig": "~/.kube/management.yaml",
    "addressType": "InternalIP",
}
"""An example value per key (YAML), for the fixes (``Model.key`` where a key means something else in another
mapping); a key's default serves where it has none."""

MODEL_EXAMPLES: dict[type, str] = {
    EndpointArgs: "{name: k8s-api, zones: {az1: {subnet: cp-az1}, az2: {subnet: cp-az2}}, listeners: [{port: 6443}], "
                  "members: [...]}",
    ZoneArgs: "{subnet: cp-az1}",
    ListenerArgs: "{port: 6443, protocol: TCP}",
    MonitorArgs: "{type: TCP}",
    MemberArgs: "{name: cp-0, address: 10.10.1.10, az: az1}",
    DnsArgs: "{dnsZone: example.test., record: api}",
    ReadinessArgs: "{timeoutSeconds: 600}",
    MemberSourcesArgs: "{clusterApi: {cluster: k8s}}",
    ClusterApiSourceArgs: "{cluster: k8s, namespace: default}",
}
"""How each kind of settings mapping looks, for the fixes."""

MAP_EXAMPLES: dict[str, str] = {"zones": "zones: {az1: {subnet: cp-az1}, az2: {subnet: cp-az2}}"}

PATTERNS: dict[str, tuple[str, str]] = {
    r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$": (
        "may hold lowercase letters, digits and '-' only, and must start and end with a letter or digit (it "
        "prefixes every resource name)", "lower"),
    r"^[A-Za-z0-9][A-Za-z0-9_.-]*$": (
        "may hold letters, digits, '.', '_' and '-' only, and must start with a letter or digit", "member"),
}
"""The patterns of :mod:`ha_endpoint.core.args`, in words, and how to suggest a fixed value."""


def problems_from_pydantic(error: ValidationError, root: str, model: type[BaseModel] = EndpointArgs,
                           snake: bool = False) -> list[Problem]:
    """One problem per key of ``error`` (raised validating ``model``), each path under ``root``; ``snake``: settings
    are named in snake_case, as Python callers of the argument classes write them."""
    problems: dict[str, Problem] = {}
    for detail in error.errors(include_url=False):
        loc = [part for part in detail["loc"] if not (isinstance(part, str) and _UNION_BRANCH.match(part))]
        is_key = bool(loc) and loc[-1] == "[key]"
        if is_key:  # a map's key of the wrong type: the problem is the map's
            loc = loc[:-2]
        path = root + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
        if path in problems:
            continue
        where = _locate(model, loc)
        where.snake = snake
        problems[path] = Problem(path, _message(detail, where, is_key))
    return list(problems.values())


@dataclass
class _Where:
    """What a location in the arguments holds: the key as written, the field behind it, the type of the value."""

    key: str
    field: Optional[FieldInfo]
    annotation: Any
    owner: Optional[type]
    whole_field: bool
    """True when the value is the field's own (not an item of its list or map): its bounds apply."""
    snake: bool = False
    """True when the caller names settings in snake_case (keywords of the argument classes)."""


def _locate(model: type[BaseModel], loc: list[Any]) -> _Where:
    current: Any = model
    field: Optional[FieldInfo] = None
    owner: Optional[type] = None
    key = "the configuration"
    whole = False
    for part in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, BaseModel) and isinstance(part, str):
            name = _field_name(current, part)
            if name is None:  # an unknown key: the model it was given to
                owner, field, key, whole = current, None, part, False
                current = None
                continue
            owner, field, key, whole = current, current.model_fields[name], part, True
            current = field.annotation
        elif isinstance(part, int) and typing.get_origin(current) in (list, tuple):
            current = (typing.get_args(current) or (Any,))[0]
            key, whole = f"{key}[{part}]", False
        elif typing.get_origin(current) is dict:
            current = (typing.get_args(current) or (Any, Any))[1]
            key, whole = f"{key}.{part}" if key != "the configuration" else str(part), False
        else:
            current = None
    return _Where(key, field, _unwrap(current), owner, whole)


def _field_name(model: type[BaseModel], key: str) -> Optional[str]:
    if key in model.model_fields:
        return key
    return next((name for name, info in model.model_fields.items() if info.alias == key), None)


def _unwrap(annotation: Any) -> Any:
    """``Optional[T]`` -> ``T``; ``pulumi.Input[str]`` (a union with awaitables and Outputs) -> ``str``."""
    for _ in range(4):
        if typing.get_origin(annotation) in (typing.Union, types.UnionType):
            args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
            plain = [arg for arg in args if arg in (str, int, float, bool) or isinstance(arg, type)
                     and issubclass(arg, (BaseModel, enum.Enum))]
            annotation = plain[0] if plain else (args[0] if args else Any)
        elif typing.get_origin(annotation) is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        else:
            break
    return annotation


def _leaf(key: str) -> str:
    """The last key of a path (``listeners[0].port`` -> ``port``), for examples."""
    return re.sub(r"\[\d+\]$", "", key).rsplit(".", 1)[-1]


def _message(detail: Mapping[str, Any], where: _Where, is_key: bool) -> str:
    kind = detail["type"]
    value = detail.get("input")
    key = where.key
    if is_key:
        what = "availability zone names" if _leaf(key) == "zones" else "names"
        return (f"the {what} under {key} must be text, got {_got(value)}; write the name as text, e.g. "
                f"{'az1' if _leaf(key) == 'zones' else 'name'}")
    if kind == "missing":
        return f"{key} is required; add it ({_description(where)})"
    if kind == "extra_forbidden":
        return _unknown_key(where)
    if kind in ("value_error", "assertion_error"):
        message = str(detail["msg"])
        for prefix in ("Value error, ", "Assertion failed, "):
            message = message.removeprefix(prefix)
        return message
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return _not_a_number(where, value, whole=True)
    if kind in ("float_type", "float_parsing", "finite_number"):
        return _not_a_number(where, value, whole=False)
    if kind in ("bool_type", "bool_parsing"):
        return f"{key} must be true or false, got {_got(value)}; write {_leaf(key)}: true or {_leaf(key)}: false"
    if kind in ("string_type", "string_unicode"):
        shown = f"{_leaf(key)}: '{_example(where, str(value))}'" if where.whole_field else \
            f"'{_example(where, str(value))}'"
        return (f"{key} must be text, got {_got(value)}; write it as text (in quotes if YAML would read it as "
                f"something else), e.g. {shown}")
    if kind == "string_too_short":
        optional = "" if where.field is None or where.field.is_required() else ", or remove the key"
        return f"{key} is empty; give a value, e.g. {_leaf(key)}: {_example(where)}{optional}"
    if kind == "string_too_long":
        limit = (detail.get("ctx") or {}).get("max_length")
        return f"{key} is {len(str(value))} characters long, at most {limit} are allowed; shorten it"
    if kind == "string_pattern_mismatch":
        return _pattern(where, str(value), str((detail.get("ctx") or {}).get("pattern", "")))
    if kind in ("enum", "literal_error"):
        return _not_one_of(where, value)
    if kind in ("too_short", "too_long"):
        return _list_length(where, detail)
    if kind in ("list_type", "tuple_type", "set_type"):
        return _not_a_list(where, value)
    if kind in ("dict_type", "mapping_type"):
        example = MAP_EXAMPLES.get(_leaf(key), f"{_leaf(key)}: {{key: value}}")
        return f"{key} must be a mapping (key: value), got {_got(value)}; write it like {example}"
    if kind in ("model_type", "model_attributes_type", "dataclass_type"):
        return _not_a_mapping(where, value)
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        return _out_of_range(where, value)
    return (f"{key} cannot be {_got(value)}: it must be {_expected(where)}; fix the value (see README.md "
            "'Configuration')")


def _description(where: _Where) -> str:
    text = _docstring(where.owner, where.field) if where.owner is not None and where.field is not None else ""
    text = " ".join(text.split())
    first = re.split(r"(?<!e\.g\.)(?<!i\.e\.)(?<=[.;])\s", text, maxsplit=1)[0].rstrip(".;")
    return first[:1].lower() + first[1:] if first else f"see README.md 'Configuration' for {where.key}"


def _docstring(owner: type[BaseModel], field: FieldInfo) -> str:
    """The docstring under ``field``'s attribute in ``owner`` (or the class it inherits it from): what the schema
    and the docs call its description. Read from the source when a message needs it, not when the classes load
    (pydantic's ``use_attribute_docstrings`` parsed every argument class's source in every process that imports
    them, about 50 ms of CPU each: lab/bench/import_figures.py)."""
    name = next((name for name, info in owner.model_fields.items() if info is field), None)
    return next((found[name] for cls in owner.__mro__ if name in (found := _attribute_docstrings(cls))), "")


@functools.cache
def _attribute_docstrings(cls: type) -> dict[str, str]:
    """``cls``'s own annotated attributes -> the string literal right under each (empty when its source is not
    available)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    return {field.target.id: text.value.value for field, text in zip(body, body[1:])
            if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
            and isinstance(text, ast.Expr) and isinstance(text.value, ast.Constant)
            and isinstance(text.value.value, str)}

REMOVED: dict[tuple[type, str], str] = {
    (EndpointArgs, "loadBalancerCreate"): "each zone's load balancer, listeners, pools and health monitors are always "
                                          "created per object (the single-call mode was removed)",
    (EndpointArgs, "memberUpdates"): "every member is its own resource, written and drained on its own (per-member; "
                                     "batch and handover were removed in issue 47). A stack deployed with batch or "
                                     "handover moves first: docs/readiness.md 'memberUpdates (removed)'",
}
"""Keys that were settings once (the model, the camelCase key) -> what happens now instead: a configuration that
still gives one is told to remove it, not to fix its spelling."""


def _removed(where: _Where) -> Optional[str]:
    camel = re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), where.key)
    now = REMOVED.get((where.owner, camel)) if where.owner is not None else None
    return None if now is None else f"{where.key} is no longer a setting: {now}; remove {where.key}"


def _unknown_key(where: _Where) -> str:
    """An unknown key, with the closest known one and the known ones, spelled as the key was: snake_case for a
    Python caller's keyword (``member_placment``), camelCase otherwise (configuration, dicts); a key that was removed
    (:data:`REMOVED`) says so and to remove it."""
    removed = _removed(where)
    if removed is not None:
        return removed
    known = _keys(where.owner, snake=where.snake or "_" in where.key) if where.owner is not None else []
    close = difflib.get_close_matches(where.key, known, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}? Fix" if close else "fix"
    listed = f" (the settings here: {', '.join(known)})" if known else ""
    return f"{where.key} is not a setting here; {hint} its spelling or remove it{listed}"


def _keys(model: type[BaseModel], snake: bool = False) -> list[str]:
    return [name if snake else info.alias or name for name, info in model.model_fields.items()]


def _explain_construction(error: ValidationError, model: type[BaseModel]) -> ConfigError:
    """A typed argument class called with bad keywords (``EndpointArgs(member_placment=...)``): the same problems the
    configuration gets, each under the class's name (``EndpointArgs.member_placment: ... did you mean
    member_placement? ...``)."""
    return ConfigError(problems_from_pydantic(error, model.__name__, model, snake=True))


explain_construction_errors(_explain_construction)


def _got(value: Any) -> str:
    """The given value as the user wrote it, in YAML's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a yes/no value)"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:57] + "..."
        return f"the text '{shown}'" if value else "an empty text"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


def _bounds(where: _Where) -> tuple[Optional[float], Optional[float], bool]:
    """The field's least and greatest value, and whether the least is excluded (``gt``)."""
    low = high = None
    exclusive = False
    if where.field is None or not where.whole_field:
        return None, None, False
    for item in where.field.metadata:
        if isinstance(item, annotated_types.Ge):
            low = item.ge
        elif isinstance(item, annotated_types.Gt):
            low, exclusive = item.gt, True
        elif isinstance(item, annotated_types.Le):
            high = item.le
        elif isinstance(item, annotated_types.Lt):
            high = item.lt
    return low, high, exclusive


def _range_words(where: _Where, whole: bool) -> str:
    low, high, exclusive = _bounds(where)
    if low is None and high is None:
        return ""
    if exclusive and high is not None:
        return f" above {_num(low)} and at most {_num(high)}"
    if low is not None and high is not None:
        return f" from {_num(low)} to {_num(high)}"
    return f" of at least {_num(low)}" if low is not None else f" of at most {_num(high)}"


def _num(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _example(where: _Where, fallback: str = "...") -> str:
    leaf = _leaf(where.key) + ("" if where.whole_field else "[]")
    owned = f"{where.owner.__name__}.{leaf}" if where.owner is not None else leaf
    if owned in EXAMPLES or leaf in EXAMPLES:
        return EXAMPLES.get(owned, EXAMPLES.get(leaf, fallback))
    if where.whole_field and where.field is not None and where.field.default not in (None, ...) and \
            where.field.default is not PydanticUndefined and \
            not isinstance(where.field.default, (list, dict, BaseModel)):
        default = where.field.default
        return str(default.value if isinstance(default, enum.Enum) else default).lower() \
            if isinstance(default, bool) else str(default.value if isinstance(default, enum.Enum) else default)
    return fallback


def _not_a_number(where: _Where, value: Any, whole: bool) -> str:
    key, leaf = where.key, _leaf(where.key)
    what = "a whole number" if whole else "a number"
    head = f"{key} must be {what}{_range_words(where, whole)}, got {_got(value)}"
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+(\.\d+)?\s*", value):
        number = value.strip()
        if whole and "." in number:
            number = str(round(float(number)))
        return f"{head}; write it without quotes: {leaf}: {number}"
    if isinstance(value, float) and whole:
        return f"{head}; write a whole number, e.g. {leaf}: {int(value) or _example(where)}"
    return f"{head}; write the number itself, e.g. {leaf}: {_example(where)}"


def _out_of_range(where: _Where, value: Any) -> str:
    low, high, exclusive = _bounds(where)
    if low is not None and isinstance(value, (int, float)) and (value < low or (exclusive and value == low)):
        side = f"below the least allowed, {_num(low)}" if not exclusive else f"not above {_num(low)}"
    elif high is not None:
        side = f"above the most allowed, {_num(high)}"
    else:
        side = "out of range"
    return (f"{where.key} is {_got(value)}, {side}; give a value{_range_words(where, True)}, e.g. "
            f"{_leaf(where.key)}: {_example(where)}")


def _options(where: _Where) -> list[str]:
    annotation = where.annotation
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return [str(member.value) for member in annotation]
    return []


def _not_one_of(where: _Where, value: Any) -> str:
    options = _options(where)
    listed = ", ".join(options) if options else "the values listed in README.md 'Configuration'"
    head = f"{where.key} is {_got(value)}, which is not one of {listed}"
    if isinstance(value, str):
        spelled = [option for option in options if _squash(option) == _squash(value)]
        if spelled:
            return f"{head}; write it exactly so: {_leaf(where.key)}: {spelled[0]}"
    return f"{head}; use one of them"


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _pattern(where: _Where, value: str, pattern: str) -> str:
    words, style = PATTERNS.get(pattern, ("has characters that are not allowed here", ""))
    suggestion = ""
    if style == "lower":
        fixed = re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", value.lower())).strip("-")
        suggestion = f", e.g. {fixed}" if fixed else ""
    elif style == "member":
        fixed = re.sub(r"[^A-Za-z0-9_.-]", "-", value).lstrip("_.-")
        suggestion = f", e.g. {fixed}" if fixed else ""
    return f"{where.key} is '{value}', but it {words}; rename it{suggestion}"


def _list_length(where: _Where, detail: Mapping[str, Any]) -> str:
    ctx = detail.get("ctx") or {}
    leaf = _leaf(where.key)
    if detail["type"] == "too_short":
        least = ctx.get("min_length", 1)
        example = {"listeners": "listeners: [{port: 6443}]", "allowedCidrs": "allowedCidrs: ['10.0.0.0/8'] (or "
                   "remove the key to admit everyone)"}.get(leaf, f"{leaf}: [...]")
        return f"{where.key} is an empty list; give at least {least}, e.g. {example}"
    return f"{where.key} has {ctx.get('actual_length')} items, at most {ctx.get('max_length')} are allowed; remove some"


def _not_a_list(where: _Where, value: Any) -> str:
    leaf = _leaf(where.key)
    head = f"{where.key} must be a list, got {_got(value)}"
    item = typing.get_args(where.annotation)[0] if typing.get_args(where.annotation) else None
    if isinstance(value, (str, int, float)) and not isinstance(value, bool) and item in (str, int):
        return f"{head}; write it as a list of one: {leaf}: [{value}]"
    if isinstance(item, type) and issubclass(item, BaseModel):
        return f"{head}; write one entry per item, e.g. {leaf}: [{MODEL_EXAMPLES.get(item, '{...}')}]"
    return f"{head}; write it as a list, e.g. {leaf}: {EXAMPLES.get(leaf, '[...]')}"


def _not_a_mapping(where: _Where, value: Any) -> str:
    model = where.annotation if isinstance(where.annotation, type) and issubclass(where.annotation, BaseModel) \
        else None
    example = MODEL_EXAMPLES.get(model, "{key: value}") if model is not None else "{key: value}"
    head = f"{where.key} must be a mapping of settings, got {_got(value)}"
    if not where.whole_field and where.key.endswith("]"):
        return f"{head}; write each entry like {example}"
    if isinstance(value, str) and model is not None:
        required = [info.alias or name for name, info in model.model_fields.items() if info.is_required()]
        if model is MonitorArgs:
            return f"{head}; write it as {_leaf(where.key)}: {{type: {value}}}"
        if len(required) == 1:
            return f"{head}; write it as {_leaf(where.key)}: {{{required[0]}: {value}}}"
    return f"{head}; write it like {_leaf(where.key)}: {example}"


def _expected(where: _Where) -> str:
    annotation = where.annotation
    if annotation is bool:
        return "true or false"
    if annotation is int:
        return "a whole number" + _range_words(where, True)
    if annotation is float:
        return "a number" + _range_words(where, False)
    if annotation is str:
        return "text"
    options = _options(where)
    if options:
        return "one of " + ", ".join(options)
    if typing.get_origin(annotation) in (list, tuple):
        return "a list"
    if typing.get_origin(annotation) is dict or (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return "a mapping of settings"
    return _description(where)


def raw_phrases() -> Iterable[str]:
    """Fragments of pydantic's own wording that must never reach a user (the tests look for them)."""
    return ("Input should be", "String should", "Value error", "valid dictionary", "List should have",
            "Field required", "Extra inputs are not permitted", "is-instance", "constrained-str", "function-after",
            "should match pattern", "[type=", "For further information", "Assertion failed", "unable to interpret")

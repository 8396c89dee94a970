"""Typed arguments and configuration say the same thing (issue 29, finding 2): a misspelt key given to an argument
class (``EndpointArgs(member_placment=...)``) raises the same ConfigError a misspelt key in a configuration mapping
does, naming the key as the caller wrote it, the closest setting in the caller's spelling, and every setting there;
never pydantic's own wording."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from ha_endpoint import ConfigError, EndpointArgs
from ha_endpoint.args import DnsArgs, ListenerArgs, MemberArgs, MonitorArgs, ReadinessArgs, ZoneArgs
from ha_endpoint.core.validation import load_endpoint_args

ZONES = {"az1": {"subnet": "cp-az1"}, "az2": {"subnet": "cp-az2"}}
# each class: the smallest valid keywords (snake_case), and where the class sits in a configuration mapping
MINIMAL = {
    EndpointArgs: ({"name": "k8s-api", "zones": ZONES, "listeners": [{"port": 6443}]}, ()),
    ZoneArgs: ({"subnet": "cp-az1"}, ("zones", "az1")),
    ListenerArgs: ({"port": 6443}, ("listeners", 0)),
    MonitorArgs: ({}, ("listeners", 0, "monitor")),
    MemberArgs: ({"name": "cp-0", "address": "10.10.1.10", "az": "az1"}, ("members", 0)),
    DnsArgs: ({"dns_zone": "example.test.", "record": "api"}, ("dns",)),
    ReadinessArgs: ({}, ("readiness",)),
}
FIELDS = [(model, name) for model in MINIMAL for name in model.model_fields if len(name) >= 4]


def camel(model, name: str) -> str:
    return model.model_fields[name].alias or name


def snake_everywhere(model, text: str) -> str:
    for name in sorted(model.model_fields, key=lambda n: -len(camel(model, n))):
        text = text.replace(camel(model, name), name)
    return text


def config_with(model, key: str, value) -> dict:
    """The dev-like configuration with ``key: value`` added to ``model``'s mapping (camelCase keys)."""
    raw = {"name": "k8s-api", "zones": {az: dict(zone) for az, zone in ZONES.items()}, "listeners": [{"port": 6443}],
           "members": [{"name": "cp-0", "address": "10.10.1.10", "az": "az1"},
                       {"name": "cp-1", "address": "10.10.2.10", "az": "az2"}],
           "dns": {"dnsZone": "example.test.", "record": "api"}, "readiness": {}}
    raw["listeners"][0]["monitor"] = {}
    target = raw
    for part in MINIMAL[model][1]:
        target = target[part]
    target[key] = value
    return raw


def messages(error: ConfigError) -> list[str]:
    return [line.split(": ", 1)[1] for line in str(error).splitlines()[1:]]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(FIELDS), st.data())
def test_a_misspelt_key_reads_the_same_in_both_forms(field, data):
    model, name = field
    drop = data.draw(st.integers(1, len(name) - 1).filter(lambda i: name[i] != "_"))
    typo_snake = name[:drop] + name[drop + 1:]
    alias = camel(model, name)
    position = sum(1 for ch in name[:drop] if ch != "_")   # the same letter dropped from the camelCase key
    typo_camel = alias[:position] + alias[position + 1:] if alias != name else typo_snake
    with pytest.raises(ConfigError) as typed:
        model(**MINIMAL[model][0], **{typo_snake: 1})
    with pytest.raises(ConfigError) as mapped:
        load_endpoint_args(config_with(model, typo_camel, 1))
    (typed_line,) = messages(typed.value)
    (mapped_line,) = [line for line in messages(mapped.value) if line.startswith(f"{typo_camel} is not a setting")]
    assert str(typed.value).splitlines()[1].strip().startswith(f"- {model.__name__}.{typo_snake}: ")
    assert typed_line == snake_everywhere(model, mapped_line).replace(snake_everywhere(model, typo_camel), typo_snake)
    assert "extra_forbidden" not in typed_line and "Extra inputs" not in typed_line


def test_the_readmes_example_typo():
    with pytest.raises(ConfigError) as caught:
        EndpointArgs(name="k8s-api", zones=ZONES, listeners=[ListenerArgs(port=6443)], member_placment="own-zone")
    assert str(caught.value) == (
        "invalid endpoint configuration (1 problem):\n"
        "  - EndpointArgs.member_placment: member_placment is not a setting here; did you mean member_placement? Fix "
        "its spelling or remove it (the settings here: name, backend, load_balancer_provider, floating_network, allowed_cidrs, "
        "zones, listeners, members, member_sources, member_placement, dns, readiness, tags)")


def test_the_removed_load_balancer_create_keyword_is_refused_with_the_fix():
    with pytest.raises(ConfigError) as caught:
        EndpointArgs(name="k8s-api", zones=ZONES, listeners=[ListenerArgs(port=6443)],
                     load_balancer_create="single-call")
    assert str(caught.value) == (
        "invalid endpoint configuration (1 problem):\n"
        "  - EndpointArgs.load_balancer_create: load_balancer_create is no longer a setting: each zone's load "
        "balancer, listeners, pools and health monitors are always created per object (the single-call mode was "
        "removed); remove load_balancer_create")


def test_the_removed_member_updates_keyword_is_refused_with_the_fix():
    with pytest.raises(ConfigError) as caught:
        EndpointArgs(name="k8s-api", zones=ZONES, listeners=[ListenerArgs(port=6443)], member_updates="batch")
    assert str(caught.value).startswith(
        "invalid endpoint configuration (1 problem):\n"
        "  - EndpointArgs.member_updates: member_updates is no longer a setting: every member is its own resource")
    assert str(caught.value).endswith("; remove member_updates")


def test_a_wrong_value_in_a_typed_argument_names_the_key_and_the_fix():
    with pytest.raises(ConfigError) as caught:
        ListenerArgs(port="6443x")
    assert "ListenerArgs.port: port must be a whole number from 1 to 65535, got the text '6443x'" in str(caught.value)


def test_a_programs_endpoint_names_the_arguments_its_program_wrote():
    """A consumer's program has no ``ha-endpoint:endpoint`` key: its problems name ``HaEndpoint('<name>').args``."""
    from tests.mocks import FakeCloud, run_component
    from tests.mocks.configs import amphora_endpoint

    raw = amphora_endpoint()
    raw["members"][0]["az"] = "az9"
    with pytest.raises(ConfigError) as caught:
        run_component(raw, FakeCloud.dev(), preview=True)
    assert str(caught.value).splitlines()[1].startswith(
        "  - HaEndpoint('k8s-api').args.members[0].az: member cp-0 is in zone 'az9', which is not configured")

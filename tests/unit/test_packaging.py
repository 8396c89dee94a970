"""The component as a package other stacks use: the schema other languages see, the provider host's inputs, and a
consumer project that installs this one (issue 12).

- ``components/schema.json`` is what ``pulumi package get-schema ./components`` prints; it must stay what the typed
  arguments infer, so a change to ``ha_endpoint.core.args`` without regenerating it (``make schema``) fails here.
- The provider host (``components/__main__.py``, ``ha_endpoint.hosting``) hands the component integers as integers
  and serves the readiness gates and drains itself (a dynamic provider there would run without this package).
- A scratch consumer project with its own ``components/`` package installs this checkout into a fresh virtualenv
  and builds an endpoint under mocks with ``from ha_endpoint import HaEndpoint``. It installs with uv (pinned in
  requirements.txt, the installer of the project's own virtualenvs): the same PEP 517 build of this checkout by its
  setuptools backend and the same wheels as pip, from uv's cache in seconds (pip downloaded every wheel again: 39-60 s,
  the slowest test of ``make test-unit``).
"""

from __future__ import annotations

import asyncio
import difflib
import json
import os
import runpy
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pulumi.runtime import proto, rpc
from uv import find_uv_bin

from ha_endpoint import HaEndpoint, hosting, load_endpoint_args

from ha_endpoint.core import contract
from ha_endpoint.gates import hosted
from tests.mocks import FakeCloud, run_program
from tests.mocks.configs import amphora_endpoint

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIR = ROOT / "components"
SCHEMA = PACKAGE_DIR / "schema.json"
# Keys of the Go schema's TypeSpec (array items, map values): `pulumi package get-schema` re-marshals the provider's
# schema through Go's PackageSpec, which drops everything else there (the Python host repeats the description) and
# leaves out empty and null values.
TYPE_SPEC_KEYS = {"type", "items", "additionalProperties", "$ref", "oneOf", "discriminator", "plain"}


def canonical(node, type_spec: bool = False):
    """The schema as the CLI prints it, in meaning: TypeSpec positions reduced to their keys, no empty values."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if type_spec and key not in TYPE_SPEC_KEYS:
                continue
            value = canonical(value, type_spec=key in ("items", "additionalProperties"))
            if value not in (None, [], {}):
                out[key] = value
        return out
    if isinstance(node, list):
        return [canonical(item, type_spec=True) if isinstance(item, dict) and "$ref" in item else canonical(item)
                for item in node]
    return node


def test_the_checked_in_schema_is_what_the_typed_arguments_infer():
    inferred = canonical(json.loads(hosting.endpoint_provider().schema))
    checked_in = canonical(json.loads(SCHEMA.read_text()))
    if inferred != checked_in:
        diff = difflib.unified_diff(json.dumps(checked_in, indent=1, sort_keys=True).splitlines(),
                                    json.dumps(inferred, indent=1, sort_keys=True).splitlines(),
                                    "components/schema.json", "inferred from ha_endpoint.core.args", lineterm="")
        pytest.fail("components/schema.json is not what the typed arguments infer; run `make schema` and commit "
                    "it (every language's SDK is generated from it):\n" + "\n".join(list(diff)[:120]))


def test_the_package_serves_the_component_under_its_one_type_token():
    schema = json.loads(SCHEMA.read_text())
    assert schema["name"] == "haendpoint" and list(schema["resources"]) == [contract.ENDPOINT_TYPE]
    endpoint = schema["resources"][contract.ENDPOINT_TYPE]
    assert endpoint["isComponent"] is True
    assert set(endpoint["requiredInputs"]) == {"name", "zones", "listeners"}
    assert {"fqdn", "ports", "addresses", "zones", "membersSecurityGroupId"} <= set(endpoint["properties"])
    # No Union/Literal leaked into the schema: enumerations are named enum types, Outputs allowed where documented.
    assert schema["types"]["haendpoint:index:PublishMode"]["enum"] == [
        {"name": "WHEN_READY", "value": "when-ready", "description": "Once the zone's members are ready."},
        {"name": "BOOTSTRAP", "value": "bootstrap", "description": "Once the zone's load balancer is ACTIVE (for "
         "the first control-plane node, which needs the name first)."}]
    assert "plain" not in schema["types"]["haendpoint:index:ZoneArgs"]["properties"]["subnet"]


def test_numbers_from_other_languages_reach_the_component_as_integers():
    """YAML and TypeScript numbers arrive as floats; the host gives the strict integer fields integers again."""
    provider = hosting.endpoint_provider()
    inputs = provider.map_inputs({
        "name": "yaml-api", "zones": {"az1": {"subnet": "cp-az1"}, "az2": {"subnet": "cp-az2"}},
        "listeners": [{"port": 6443.0, "memberPort": 6443.0, "monitor": {"type": "HTTPS", "delay": 5.0}}],
        "members": [{"name": "cp-0", "az": "az1", "address": "10.10.1.10", "weight": 1.0},
                    {"name": "cp-1", "az": "az2", "address": "10.10.2.10"}],
        "dns": {"dnsZone": "example.test.", "record": "api", "ttl": 30.0},
        "readiness": {"timeoutSeconds": 300.0, "pollIntervalSeconds": 0.5},
    }, provider._component_defs["HaEndpoint"])
    args = load_endpoint_args(inputs, "ha-endpoint:endpoint")
    assert (args.listeners[0].port, args.listeners[0].monitor.delay, args.members[0].weight, args.dns.ttl,
            args.readiness.timeout_seconds) == (6443, 5, 1, 30, 300)
    assert args.readiness.poll_interval_seconds == 0.5
    with pytest.raises(Exception, match="port"):  # a fraction is still no port
        load_endpoint_args(provider.map_inputs({"name": "x", "zones": {"az1": {"subnet": "s"}},
                                                "listeners": [{"port": 6443.5}]},
                                               provider._component_defs["HaEndpoint"]), "x")


def pins(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


CONSUMER_DRIVER = '''
"""Run the consumer's __main__.py under the fake cloud (copied from this project's tests/mocks as fakecloud)."""
import json, runpy, sys
import components
import ha_endpoint
from ha_endpoint import HaEndpoint
from fakecloud.cloud import FakeCloud
from fakecloud.harness import run_program

report = {"components": components.__file__, "components_says": components.WHAT,
          "ha_endpoint": ha_endpoint.__file__, "HaEndpoint": HaEndpoint.__module__}
for mode, preview in (("preview", True), ("up", False)):
    run = run_program(lambda: runpy.run_path("__main__.py", run_name="__main__"), FakeCloud.dev(), preview=preview)
    report[mode] = {"outputs": run.outputs, "types": sorted({r["type"] for r in run.registrations})}
print(json.dumps(report))
'''


def test_a_scratch_consumer_with_its_own_components_package_installs_this_one_and_builds_an_endpoint(tmp_path):
    """A new user's Pulumi project: its own components/ package, the Python example (examples/python, shown by
    docs/usage.md) as its program, this checkout installed from its path into a fresh virtualenv (built as a wheel,
    as `pip install <path to a checkout>` does), with the pins of requirements.txt (pulumi-openstack 5.5.3, what users
    install) as constraints."""
    project = tmp_path / "consumer"
    project.mkdir()
    for name in ("Pulumi.yaml", "__main__.py", "requirements.txt"):
        shutil.copy2(ROOT / "examples" / "python" / name, project / name)
    (project / "components").mkdir()
    (project / "components" / "__init__.py").write_text('WHAT = "the consumer\'s own components package"\n')
    shutil.copytree(ROOT / "tests" / "mocks", project / "fakecloud", ignore=shutil.ignore_patterns("__pycache__"))
    (project / "run_under_mocks.py").write_text(textwrap.dedent(CONSUMER_DRIVER))

    constraints = tmp_path / "constraints.txt"
    constraints.write_text("\n".join(pins(ROOT / "requirements.txt")) + "\n")
    venv = project / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run([find_uv_bin(), "pip", "install", "--quiet", "--python", str(python), "-c", str(constraints),
                              str(ROOT)], capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stderr[-3000:]

    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    installed = {path.name for path in purelib.iterdir()}
    assert "ha_endpoint" in installed and "components" not in installed  # the import name is its own

    run = subprocess.run([str(python), "run_under_mocks.py"], cwd=project, capture_output=True, text=True,
                         timeout=600, env={key: value for key, value in os.environ.items() if key != "PYTHONPATH"})
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert Path(report["components"]) == project / "components" / "__init__.py"
    assert report["components_says"] == "the consumer's own components package"
    assert Path(report["ha_endpoint"]).parent.parent == purelib and report["HaEndpoint"] == "ha_endpoint.resources.endpoint"
    for mode in ("preview", "up"):
        assert report[mode]["outputs"]["fqdn"] == "my-api.example.test."
        assert {contract.ENDPOINT_TYPE, contract.LOADBALANCER_TYPE, contract.MEMBER_TYPE} <= set(report[mode]["types"])
    assert report["preview"]["outputs"]["addresses"] is None  # floating IPs are not known before up
    assert len(report["up"]["outputs"]["addresses"]) == 3


def test_the_host_runs_in_the_virtualenv_its_requirements_describe():
    """PulumiPlugin.yaml's virtualenv is created by the CLI from components/requirements.txt: this project
    (editable) at the pinned versions, without the optional Kubernetes SDK (whose plugin cannot be built here)."""
    import yaml

    plugin = yaml.safe_load((PACKAGE_DIR / "PulumiPlugin.yaml").read_text())
    assert plugin["runtime"]["name"] == "python"
    assert plugin["runtime"]["options"]["virtualenv"] == "../.venv-component"
    requirements = [line.split("#")[0].strip() for line in (PACKAGE_DIR / "requirements.txt").read_text().splitlines()]
    assert {"-c ../requirements.txt", "-e .."} <= set(requirements)
    assert not any("kubernetes" in line for line in requirements)


@pytest.fixture
def in_provider_host():
    """The component as the provider host builds it (ha_endpoint.hosting.serve sets this)."""
    hosted.HOSTED = True
    yield
    hosted.HOSTED = False


def test_in_the_provider_host_gates_are_resources_of_the_package_not_dynamic_ones(in_provider_host):
    """A dynamic provider would be started with the consumer program's Python (a YAML program: python3 on PATH,
    without Pulumi or this package): in the host, gates and drains are the package's own resources."""
    cloud = FakeCloud.dev()
    run_program(lambda: HaEndpoint("k8s-api", {**amphora_endpoint(), "readiness": {"drainSeconds": 5}}), cloud,
                preview=False, config={"openstack:cloud": "localcloud"}, outputs=lambda endpoint: {})
    gates = [r for r in cloud.registrations if r["type"] == "haendpoint:index:MemberReadiness"]
    drains = [r for r in cloud.registrations if r["type"] == "haendpoint:index:MemberDrain"]
    assert len(gates) == 3 and drains
    assert not [r for r in cloud.registrations if r["type"].startswith("pulumi-python:dynamic")]
    for resource in gates + drains:
        assert "__provider" not in resource["inputs"]
        assert resource["inputs"]["cloud"] == "localcloud"  # the stack's, named at construct time


def test_in_the_provider_host_a_backends_own_resources_are_the_packages_and_the_host_serves_them(in_provider_host):
    """The keepalived backend's dynamic resources (the zone's gate, the VIP in a member port's address pairs) are
    named by the backend (``Backend.hosted_types``): in the host they are resources of the package, and the host
    serves each with the dynamic provider's own class."""
    from ha_endpoint.backends.keepalived.pairs import MemberVipProvider
    from ha_endpoint.backends.keepalived.readiness import VipReadinessProvider
    from tests.unit.test_keepalived import cloud_with_members, two_per_zone

    cloud = cloud_with_members()
    run_program(lambda: HaEndpoint("k8s-api", two_per_zone()), cloud, preview=False,
                config={"openstack:cloud": "localcloud"}, outputs=lambda endpoint: {})
    custom = {r["type"] for r in cloud.registrations if r["custom"]}
    assert not {t for t in custom if t.startswith("pulumi-python:dynamic")}
    assert {t for t in custom if t.startswith("haendpoint:")} == {"haendpoint:index:VipReadiness",
                                                                   "haendpoint:index:MemberVip"}
    servicer = hosting.HostServicer(hosting.endpoint_provider(), [], "127.0.0.1:1")
    run_coroutine(servicer.Configure(proto.ConfigureRequest(), FakeContext()))
    served = {type_: type(servicer._resource_provider(f"urn:pulumi:s::p::haendpoint:index:HaEndpoint${type_}::x"))
              for type_ in ("haendpoint:index:VipReadiness", "haendpoint:index:MemberVip")}
    assert served == {"haendpoint:index:VipReadiness": VipReadinessProvider,
                      "haendpoint:index:MemberVip": MemberVipProvider}


def run_coroutine(coroutine):
    """Run a coroutine on a loop of its own: asyncio.run would leave the main thread without the event loop the
    Pulumi mocks of later tests use."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coroutine)
    finally:
        loop.close()


class AbortedCall(Exception):
    pass


class FakeContext:
    async def abort(self, code, details):
        raise AbortedCall(f"{code}: {details}")


def request(kind: str, urn_type: str, **fields):
    urn = f"urn:pulumi:s::p::haendpoint:index:HaEndpoint${urn_type}::x-az1-6443-member-drain"
    structs = {key: run_coroutine(rpc.serialize_properties(value, {})) for key, value in fields.items()
               if isinstance(value, dict)}
    plain = {key: value for key, value in fields.items() if not isinstance(value, dict)}
    return getattr(proto, kind)(urn=urn, **structs, **plain)


def test_the_host_serves_a_drains_lifecycle_with_the_dynamic_providers_own_class():
    servicer = hosting.HostServicer(hosting.endpoint_provider(), [], "127.0.0.1:1")
    context = FakeContext()
    run_coroutine(servicer.Configure(proto.ConfigureRequest(), context))
    drain = {"pool_id": "pool-1", "member_id": "member-1", "drain_seconds": 0, "timeout_seconds": 60,
             "cloud": "localcloud", "region": None, "cloud_source": "stack"}

    checked = run_coroutine(servicer.Check(request("CheckRequest", "haendpoint:index:MemberDrain",
                                                 olds={}, news={**drain, "drain_seconds": -1}), context))
    assert [(f.property, f.reason) for f in checked.failures] == [  # numbers travel as doubles
        ("drain_seconds", "must be a number of seconds >= 0, got -1.0")]
    created = run_coroutine(servicer.Create(request("CreateRequest", "haendpoint:index:MemberDrain",
                                                  properties=drain), context))
    assert created.id == "drain-member-1"
    assert rpc.deserialize_properties(created.properties)["member_id"] == "member-1"
    diff = run_coroutine(servicer.Diff(request("DiffRequest", "haendpoint:index:MemberDrain", id=created.id,
                                             olds=drain, news={**drain, "member_id": "member-2"}), context))
    assert diff.changes == proto.DiffResponse.DIFF_SOME and list(diff.replaces) == ["member_id"]
    with pytest.raises(AbortedCall, match="serves no resource of type haendpoint:index:Nothing"):
        run_coroutine(servicer.Create(request("CreateRequest", "haendpoint:index:Nothing", properties=drain), context))


@pytest.mark.parametrize("example, fence", [("examples/python/__main__.py", "python"),
                                            ("examples/yaml/Pulumi.yaml", "yaml"),
                                            ("examples/typescript/index.ts", "typescript")])
def test_the_docs_show_each_language_example_as_the_file_the_tests_run(example, fence):
    page = (ROOT / "docs" / "usage.md").read_text()
    assert f"```{fence}\n{(ROOT / example).read_text()}```" in page, f"docs/usage.md shows another {example}"


REFERENCED = {"fqdn": "api.example.test.", "ports": [6443.0], "addresses": ["172.24.4.10", "172.24.4.11"],
              "zones": {"az1": {"vipAddress": "10.10.1.100"}, "az2": {"vipAddress": "10.10.2.100"}}}


class CloudWithAnEndpointStack(FakeCloud):
    """The fake cloud, plus the endpoint stack a StackReference reads (numbers as they come back: floats) and the
    CNAME record sets the fake cloud's A-record handler does not take."""

    def new_resource(self, args):
        if args.typ == "pulumi:pulumi:StackReference":
            return args.name, {"name": args.inputs["name"], "outputs": REFERENCED, "secretOutputNames": []}
        if args.typ == "openstack:dns/recordSet:RecordSet" and args.inputs.get("type") == "CNAME":
            self.registrations.append({"type": args.typ, "name": args.name, "inputs": dict(args.inputs),
                                       "custom": True})
            return f"cname-{args.name}", dict(args.inputs)
        return super().new_resource(args)


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_the_stack_reference_example_builds_on_the_referenced_outputs(preview):
    cloud = CloudWithAnEndpointStack.dev()
    cloud.__class__ = CloudWithAnEndpointStack
    run = run_program(lambda: runpy.run_path(str(ROOT / "examples" / "stack-reference" / "__main__.py"),
                                             run_name="__main__"),
                      cloud, preview=preview, config={"endpointStack": "organization/ha-endpoint/dev"})
    assert run.outputs["apiUrl"] == "https://api.example.test:6443"
    assert run.outputs["egress"] == ["10.10.1.100/32:6443", "10.10.2.100/32:6443", "172.24.4.10/32:6443",
                                     "172.24.4.11/32:6443"]
    rules = [r for r in cloud.registrations if r["type"] == "openstack:networking/secGroupRule:SecGroupRule"]
    assert sorted(r["name"] for r in rules) == ["api-clients-az1-vip-6443", "api-clients-az2-vip-6443",
                                                "api-clients-dns-172.24.4.10-6443", "api-clients-dns-172.24.4.11-6443"]
    assert {(r["inputs"]["direction"], r["inputs"]["portRangeMin"]) for r in rules} == {("egress", 6443)}
    alias = next(r for r in cloud.registrations if r["name"] == "api-alias")
    assert alias["inputs"]["records"] == ["api.example.test."] and alias["inputs"]["name"] == "dev.example.test."

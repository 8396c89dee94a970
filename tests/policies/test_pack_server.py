"""The pack as the CLI runs it: ``python policies/`` serves the analyzer on 127.0.0.1, and the engine's calls
(GetAnalyzerInfo, Analyze per resource with its inputs, then AnalyzeStack with the outputs) get the verdicts.

The requests are built from a mock run of the program (``policy_harness``), serialized as the engine sends them
(unknown values as the engine's sentinels)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Iterator

import grpc
import pytest
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc


from policies.rules import RULES
from policy_harness import HarnessRun, run_preview
from tests.mocks.configs import amphora_endpoint

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def analyzer(tmp_path_factory):
    """A running pack (its own process, started from an unrelated directory) and a client for it, shared by the
    module's tests (one process per module and worker: each start imports the pack anew); a test that configures it
    configures it back as it started (an empty configuration: pulumi_policy's initial one) before it ends."""
    with _serving(tmp_path_factory.mktemp("pack")) as stub:
        yield stub


@contextlib.contextmanager
def _serving(cwd: Path) -> Iterator[analyzer_pb2_grpc.AnalyzerStub]:
    """``python policies/`` started in ``cwd``, a client for it while it runs, then stopped."""
    process = subprocess.Popen([sys.executable, str(ROOT / "policies")], cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": ""})
    try:
        port = _first_line(process, timeout=60)
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        grpc.channel_ready_future(channel).result(timeout=30)
        yield analyzer_pb2_grpc.AnalyzerStub(channel)
        channel.close()
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _first_line(process: subprocess.Popen, timeout: float) -> int:
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    if not line or not line[0].strip().isdigit():
        process.kill()
        raise AssertionError(f"the pack did not start: {line!r} {process.stderr.read()}")
    return int(line[0])


def _struct(props: dict) -> struct_pb2.Struct:
    return json_format.ParseDict(props or {}, struct_pb2.Struct())


def _options(parent):
    return analyzer_pb2.AnalyzerResourceOptions(parent=parent or "")


def _preview(stub, run: HarnessRun) -> list[tuple[str, str]]:
    """Call the pack as the engine does for a preview: Analyze each registration, then AnalyzeStack."""
    found = []
    for r in run.registrations:
        response = stub.Analyze(analyzer_pb2.AnalyzeRequest(
            type=r.type, properties=_struct(r.inputs), urn=r.urn, name=r.name, options=_options(r.parent)))
        found += [(d.policyName, d.message) for d in response.diagnostics]
    resources = [analyzer_pb2.AnalyzerResource(
        type=r.type, properties=_struct(r.inputs if r.custom else (r.outputs or {})), urn=r.urn, name=r.name,
        options=_options(r.parent), parent=r.parent or "", dependencies=r.dependencies,
        propertyDependencies={key: analyzer_pb2.AnalyzerPropertyDependencies(urns=urns)
                              for key, urns in r.property_dependencies.items()})
        for r in run.registrations]
    response = stub.AnalyzeStack(analyzer_pb2.AnalyzeStackRequest(resources=resources))
    return found + [(d.policyName, d.message) for d in response.diagnostics]


def test_the_pack_announces_its_policies(analyzer):
    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty())
    assert info.name == "ha-endpoint"
    assert [policy.name for policy in info.policies] == [rule.name for rule in RULES]
    schema = {policy.name: json_format.MessageToDict(policy.configSchema) for policy in info.policies}
    assert schema["ha-endpoint-min-zones"]["properties"]["minZones"]["default"] == 2
    assert schema["ha-endpoint-dns-ttl"]["properties"]["maxTtl"]["default"] == 60
    assert schema["ha-endpoint-member-zones"]["properties"]["minMembersPerZone"]["default"] == 1
    levels = {policy.name: policy.enforcementLevel for policy in info.policies}
    assert levels.pop("ha-endpoint-facts-known-at-preview") == analyzer_pb2.ADVISORY
    assert levels.pop("ha-endpoint-az-independence-advisory") == analyzer_pb2.ADVISORY
    assert set(levels.values()) == {analyzer_pb2.MANDATORY}


def test_the_dev_preview_passes_through_the_analyzer(analyzer):
    assert _preview(analyzer, run_preview(amphora_endpoint())) == []


def test_a_violation_reaches_the_engine_with_the_policy_description(analyzer):
    run = run_preview(amphora_endpoint()).remove("k8s-api-members-sg-tcp-22623-from-10.10.2.0_24")
    assert _preview(analyzer, run) == [(
        "ha-endpoint-member-security-group",
        "The members' security group admits each zone's VIP subnet on every member and health-monitor port.\n"
        "the members' security group k8s-api-members-sg does not admit zone az2's VIP subnet 10.10.2.0/24 on tcp "
        "port 22623 (member port of listener 22623 and health-monitor port of listener 22623); add an ingress rule "
        "for tcp port 22623 from 10.10.2.0/24")]


def test_policy_configuration_from_the_engine_is_applied(analyzer):
    config = {"ha-endpoint-dns-ttl": policy_config(maxTtl=20)}
    analyzer.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig=config))
    try:
        found = _preview(analyzer, run_preview(amphora_endpoint()))
    finally:
        analyzer.Configure(analyzer_pb2.ConfigureAnalyzerRequest())
    assert [name for name, _ in found] == ["ha-endpoint-dns-ttl"] * 4
    assert _preview(analyzer, run_preview(amphora_endpoint())) == []  # configured back: the defaults again


def policy_config(**properties) -> analyzer_pb2.PolicyConfig:
    return analyzer_pb2.PolicyConfig(enforcementLevel=analyzer_pb2.MANDATORY, properties=_struct(properties))



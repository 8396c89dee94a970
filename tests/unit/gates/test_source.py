"""A gate or drain polls and writes through the member client of its zone's backend (ha_endpoint.gates.source), found
in the backends' registry when it runs, by its ``backend`` input: a gate or drain recorded before that input existed
polls through the default backend's, and needs no new wait; a backend without member client is refused naming the
fix; and a gate's process still loads neither the component's resources nor a Pulumi provider's SDK."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ha_endpoint import backends
from ha_endpoint.backends.octavia import status
from ha_endpoint.backends.octavia.status import OctaviaStatusSource
from ha_endpoint.backends.plugin import Backend
from ha_endpoint.core.args import DEFAULT_BACKEND
from ha_endpoint.gates import drain, provider
from ha_endpoint.gates.drain import MemberDrainProvider
from ha_endpoint.gates.inputs import DrainInputs, InputError, ReadinessInputs
from ha_endpoint.gates.provider import MemberReadinessProvider
from ha_endpoint.gates.source import status_source
from ha_endpoint.gates.target import CloudTarget
from gate_fakes import FakeClock, FakeCloud

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def fake(monkeypatch):
    cloud_ = FakeCloud()
    clock = FakeClock()
    monkeypatch.setattr(status, "connect", cloud_.connect)
    for module in (provider, drain):
        monkeypatch.setattr(module, "_now", clock)
        monkeypatch.setattr(module, "_sleep", clock.sleep)
    cloud_.clock = clock
    return cloud_


@pytest.fixture
def double(monkeypatch):
    """A backend registered beside the package's whose member client is the Octavia one, recording where it polls."""
    built: list[tuple[object, object]] = []

    def client(cloud, region):
        built.append((cloud, region))
        return OctaviaStatusSource(cloud, region)

    monkeypatch.setitem(backends.REGISTRY, "double", Backend(name="double", serve=lambda *_: None,
                                                             status_source=client))
    return built


def gate(**overrides):
    return {"loadbalancer_id": "lb-1", "pools": {"api": {"pool_id": "p1", "member_ids": ["p1-m000"]}},
            "require": "online", "timeout_seconds": 30, "poll_interval_seconds": 1.0, "stable_polls": 1,
            "cloud": "c1", "region": None, "cloud_source": "readiness", "__provider": "serialized", **overrides}


def drain_bag(**overrides):
    return {"pool_id": "p1", "member_id": "p1-m000", "drain_seconds": 5, "timeout_seconds": 60, "cloud": "c1",
            "region": None, "cloud_source": "readiness", "__provider": "serialized", **overrides}


def test_a_gate_and_a_drain_poll_through_the_member_client_of_the_backend_they_name(fake, double):
    fake.set_members("p1", 1)
    outs = MemberReadinessProvider().create(gate(backend="double")).outs
    assert outs["ready"] is True and outs["backend"] == "double"
    MemberDrainProvider().delete("drain-p1-m000", drain_bag(backend="double"))
    assert double == [("c1", None), ("c1", None)]
    assert fake.pools["p1"]["p1-m000"][2] == 0 and all(conn.closed for conn in fake.connections)


def test_a_gate_or_drain_recorded_before_the_backend_input_polls_through_the_default_backends_client(fake, double):
    """A bag recorded without ``backend`` (every zone was the default backend's then) reads as the default backend's,
    and ``backend`` recorded anew changes nothing: no new wait, no update of a drain."""
    assert ReadinessInputs.of_bag(gate()).backend == DrainInputs.of_bag(drain_bag()).backend == DEFAULT_BACKEND
    assert ReadinessInputs.of_bag(gate(backend=None)).backend == DEFAULT_BACKEND
    assert isinstance(status_source(DEFAULT_BACKEND, CloudTarget()), OctaviaStatusSource)
    fake.set_members("p1", 1)
    assert MemberReadinessProvider().create(gate()).outs["ready"] is True
    MemberDrainProvider().delete("drain-p1-m000", drain_bag())
    assert double == [] and fake.pools["p1"]["p1-m000"][2] == 0
    recorded = {**gate(), "ready": True, "statuses": {"p1-m000": "ACTIVE/ONLINE"}}
    assert MemberReadinessProvider().diff("id", recorded, gate(backend=DEFAULT_BACKEND)).changes is False
    assert MemberReadinessProvider().diff("id", recorded, gate(backend="double")).changes is False
    assert MemberDrainProvider().diff("drain-p1-m000", drain_bag(), drain_bag(backend=DEFAULT_BACKEND)).changes is False


def test_a_backend_without_member_client_or_an_unknown_one_is_refused_naming_the_fix(fake):
    with pytest.raises(InputError) as caught:
        MemberReadinessProvider().create(gate(backend="keepalived"))
    assert str(caught.value) == (
        "backend: the keepalived backend has no member client (its zones' members are in no pool to poll or drain; "
        "it gates its zones with resources of its own); a MemberReadiness or MemberDrain polls and writes through "
        "the member client of its zone's backend: declare it with the backend that serves its pools (octavia), or "
        "remove it")
    assert caught.value.__traceback__ is not None and caught.value.__cause__ is None
    with pytest.raises(InputError, match=r"^backend: 'f5' names no registered backend; a MemberReadiness or "
                                         r"MemberDrain polls"):
        MemberDrainProvider().delete("drain-p1-m000", drain_bag(backend="f5"))
    assert fake.connections == [] and fake.update_calls == []


@pytest.mark.parametrize("bad", [3, "", True])
def test_a_backend_input_that_is_not_a_name_is_reported_by_check(bad):
    failures = MemberReadinessProvider().check({}, gate(backend=bad)).failures
    assert [(f.property, f.reason) for f in failures] == [
        ("backend", f"must be the name of the zone's backend, got {bad!r}")]


def test_a_gates_process_asks_the_registry_without_loading_the_resources_or_a_provider_sdk():
    """The engine's dynamic-provider process loads the provider's module (its path is in the state); resolving the
    member client loads the registry, not the backends' resource code nor pulumi_openstack."""
    program = ("import json, sys\n"
               "import ha_endpoint.gates.provider, ha_endpoint.gates.drain\n"
               "from ha_endpoint.gates.source import status_source\n"
               "from ha_endpoint.gates.target import CloudTarget\n"
               "source = status_source(sys.argv[1], CloudTarget('c', 'r'))\n"
               "print(json.dumps([type(source).__name__, sorted(name for name in sys.modules if name.startswith("
               "('pulumi_openstack', 'ha_endpoint.resources', 'ha_endpoint.pipeline')) or name.endswith('.serving'))]))\n")
    done = subprocess.run([sys.executable, "-c", program, DEFAULT_BACKEND], capture_output=True, text=True, check=True,
                          cwd=ROOT, env={"PYTHONPATH": str(ROOT / "components"), "PATH": "/usr/bin:/bin"})
    assert json.loads(done.stdout) == ["OctaviaStatusSource", []]


def test_a_keepalived_zones_gate_records_its_own_backend():
    """keepalived's zone gate reuses the gates' inputs (and polls through a client of its own): its bag names its
    backend, not the default."""
    from ha_endpoint.backends.keepalived.readiness import VipReadinessInputs

    assert VipReadinessInputs.of_port("vip-az1").bag()["backend"] == "keepalived"

"""Turn a mock run of the real program into the policy pack's validation arguments.

The program (``__main__.py`` with a stack configuration, against the fake cloud of ``tests/mocks``) runs under a
monitor that records each registration as the engine would receive it: type, name, URN, parent, custom or
component, dependencies, property dependencies and the serialized inputs (unknown values stay the engine's
sentinels, as in a real preview), and each component's registered outputs. From those the harness builds what the
analyzer builds:

* ``Analyze`` (resource policies): every resource with its *inputs*;
* ``AnalyzeStack`` (stack policies): ``PolicyResource`` objects whose props are the resource's *outputs* - for a
  custom resource in preview, its inputs (the provider's preview of a create); for a component, what it passed to
  ``register_outputs`` - with parents, dependencies and property dependencies resolved to resource objects.

Each test can then change one thing in what the program produced (:meth:`HarnessRun.set`,
:meth:`HarnessRun.remove`, ...) and run the pack on it.

A run against the default fake cloud is the same whichever test asks for it (the program, its configuration and a fresh
``FakeCloud.dev()``; nothing else reaches it), so :func:`run_preview` and :func:`run_program_for_pack` with a ``key``
run it once per session and hand each caller a deep copy of what it registered (:func:`_remembered`): the dev
endpoint alone was run 43 times by the policy tests, a third of their mock runs' CPU.
"""

from __future__ import annotations

import contextlib
import copy
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

from google.protobuf import json_format
from pulumi_policy import PolicyCustomTimeouts, PolicyResource, PolicyResourceOptions
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import unknown_checking_proxy

from policy_runner import run_pack
from tests.mocks import harness as mock_harness
from tests.mocks.cloud import FakeCloud


@dataclass
class Registration:
    """One resource as the engine saw it register."""

    type: str
    name: str
    urn: str
    parent: Optional[str]
    custom: bool
    dependencies: list[str]
    property_dependencies: dict[str, list[str]]
    inputs: dict[str, Any]
    outputs: Optional[dict[str, Any]] = None


def _capturing_monitor(captured: list[Registration], by_urn: dict[str, Registration]):
    base = mock_harness.RecordingMonitor

    class PolicyMonitor(base):
        def RegisterResource(self, request):
            response = super().RegisterResource(request)
            registration = Registration(
                type=request.type, name=request.name, urn=response.urn, parent=request.parent or None,
                custom=bool(request.custom), dependencies=list(request.dependencies),
                property_dependencies={key: list(value.urns) for key, value in request.propertyDependencies.items()},
                inputs=deserialize_properties(json_format.MessageToDict(request.object)))
            captured.append(registration)
            by_urn[registration.urn] = registration
            return response

        def RegisterResourceOutputs(self, request):
            registration = by_urn.get(request.urn)
            if registration is not None:
                registration.outputs = deserialize_properties(json_format.MessageToDict(request.outputs))
            return super().RegisterResourceOutputs(request)

    return PolicyMonitor


@contextlib.contextmanager
def _recording(captured: list[Registration]) -> Iterator[None]:
    by_urn: dict[str, Registration] = {}
    original = mock_harness.RecordingMonitor
    mock_harness.RecordingMonitor = _capturing_monitor(captured, by_urn)
    try:
        yield
    finally:
        mock_harness.RecordingMonitor = original


@dataclass
class HarnessRun:
    """The registrations of one mock run, and the pack's verdict on them."""

    registrations: list[Registration]
    stack_outputs: dict[str, Any] = field(default_factory=dict)

    # -- one change at a time ---------------------------------------------------------------------------------------
    def named(self, name: str) -> Registration:
        return next(r for r in self.registrations if r.name == name)

    def set(self, name: str, key: str, value: Any) -> "HarnessRun":
        """Change one input of a resource (and, for a custom resource, its preview output with it)."""
        self.named(name).inputs[key] = value
        return self

    def facts(self) -> dict[str, Any]:
        """The facts the HaEndpoint declared (its ``facts`` output), to read or change in place."""
        endpoint = next(r for r in self.registrations if r.type == "haendpoint:index:HaEndpoint")
        return endpoint.outputs["facts"]

    def set_fact(self, path: str, value: Any) -> "HarnessRun":
        """Change one fact the HaEndpoint declares, e.g. ``members.cp-2.subnetId`` (a dotted path; a part that is a
        number indexes a list)."""
        *parents, last = path.split(".")
        target: Any = self.facts()
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
        return self

    def remove(self, name: str) -> "HarnessRun":
        """Drop a resource the program registered (and every reference to it)."""
        gone = self.named(name)
        self.registrations.remove(gone)
        for registration in self.registrations:
            registration.dependencies = [urn for urn in registration.dependencies if urn != gone.urn]
            for key, urns in registration.property_dependencies.items():
                registration.property_dependencies[key] = [urn for urn in urns if urn != gone.urn]
        return self

    def drop_dependency(self, name: str, on: str) -> "HarnessRun":
        """Make ``name`` no longer depend on ``on`` (neither directly nor through a property)."""
        target = self.named(on).urn
        registration = self.named(name)
        registration.dependencies = [urn for urn in registration.dependencies if urn != target]
        for key, urns in registration.property_dependencies.items():
            registration.property_dependencies[key] = [urn for urn in urns if urn != target]
        return self

    # -- what the analyzer builds ------------------------------------------------------------------------------------
    def stack_resources(self, shared: Optional[dict[int, tuple[Registration, PolicyResource]]] = None
                        ) -> list[PolicyResource]:
        """What AnalyzeStack hands each stack policy. ``shared`` (a dict the caller keeps between calls, for runs whose
        registrations it never changes but by replacing them with changed copies: test_pack_never_crashes): the
        resource of a registration seen before is the same object again (its props, and what the pack cached on
        them), linked anew to this run's other resources."""
        resources: dict[str, PolicyResource] = {}
        for r in self.registrations:
            known = shared.get(id(r)) if shared is not None else None
            if known is not None and known[0] is r:
                resources[r.urn] = known[1]
                continue
            props = r.inputs if r.custom else (r.outputs or {})
            opts = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], r.parent)
            resources[r.urn] = PolicyResource(r.type, unknown_checking_proxy(copy.deepcopy(props)), r.urn, r.name,
                                              opts, None, None, [], {})
            if shared is not None:
                shared[id(r)] = (r, resources[r.urn])
        for r in self.registrations:
            resource = resources[r.urn]
            resource.parent = resources.get(r.parent) if r.parent else None
            resource.dependencies = [resources[urn] for urn in r.dependencies if urn in resources]
            resource.property_dependencies = {
                key: [resources[urn] for urn in urns if urn in resources]
                for key, urns in r.property_dependencies.items()}
        return list(resources.values())

    def resource_inputs(self) -> dict[str, Any]:
        return {r.urn: unknown_checking_proxy(copy.deepcopy(r.inputs)) for r in self.registrations}

    def violations(self, config: Optional[dict[str, dict[str, Any]]] = None) -> list[tuple[str, str]]:
        """(policy, message) for each violation, the pack called as the engine calls it."""
        return run_pack(self.stack_resources(), config, inputs=self.resource_inputs())

    def messages(self, policy: str, config: Optional[dict[str, dict[str, Any]]] = None) -> list[str]:
        return [message for name, message in self.violations(config) if name == policy]


_RUNS: dict[str, HarnessRun] = {}
"""What each keyed run registered (:func:`_remembered`), never handed out itself: only deep copies."""


def _remembered(key: Optional[str], run: Callable[[], HarnessRun]) -> HarnessRun:
    """``run()``, or a deep copy of what it gave the first time under ``key`` in this session (``None``: no key, run
    it). A run that raised is not remembered: the next caller runs it again and sees the same error."""
    if key is None:
        return run()
    if key not in _RUNS:
        _RUNS[key] = run()
    return copy.deepcopy(_RUNS[key])


def run_key(*parts: Any) -> Optional[str]:
    """A key for :func:`_remembered` from what alone decides a run (the program's name, its configuration, preview or
    up), or None when a part is not plain data (e.g. a function given to the program: no key, the run is run)."""
    try:
        return json.dumps(parts, sort_keys=True)
    except (TypeError, ValueError):
        return None


def run_preview(endpoint: dict[str, Any], cloud: Optional[FakeCloud] = None, preview: bool = True) -> HarnessRun:
    """Run ``__main__.py`` with ``ha-endpoint:endpoint`` = ``endpoint`` against the fake cloud (preview by
    default: nothing is created, unknowns stay unknown) and capture what it registers. Against the default cloud
    (``cloud`` None) the run is remembered for the session (a deep copy each time)."""
    def run() -> HarnessRun:
        captured: list[Registration] = []
        with _recording(captured):
            done = mock_harness.run_stack(cloud or FakeCloud.dev(preview=preview), {"endpoint": endpoint},
                                          preview=preview)
        return HarnessRun(captured, done.outputs)

    return _remembered(run_key("__main__.py", endpoint, preview) if cloud is None else None, run)


def run_program_for_pack(program: Any, cloud: FakeCloud, preview: bool = True, key: Optional[str] = None
                         ) -> HarnessRun:
    """Like :func:`run_preview`, for any program (a callable building resources) instead of ``__main__.py``.
    ``key`` (:func:`run_key`): remembered for the session under it; give one only when the program, its arguments
    and a fresh ``cloud`` of one kind alone decide what is registered."""
    def run() -> HarnessRun:
        captured: list[Registration] = []
        with _recording(captured):
            done = mock_harness.run_program(program, cloud, preview=preview, outputs=lambda _: {})
        return HarnessRun(captured, done.outputs)

    return _remembered(key, run)

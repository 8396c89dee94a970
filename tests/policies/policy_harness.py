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
"""

from __future__ import annotations

import contextlib
import copy
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from google.protobuf import json_format
from pulumi_policy import PolicyCustomTimeouts, PolicyResource, PolicyResourceOptions
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import unknown_checking_proxy

from ha_endpoint.core import contract
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
    def stack_resources(self) -> list[PolicyResource]:
        resources: dict[str, PolicyResource] = {}
        for r in self.registrations:
            props = r.inputs if r.custom else (r.outputs or {})
            opts = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], r.parent)
            resources[r.urn] = PolicyResource(r.type, unknown_checking_proxy(copy.deepcopy(props)), r.urn, r.name,
                                              opts, None, None, [], {})
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


def run_preview(endpoint: dict[str, Any], cloud: Optional[FakeCloud] = None, preview: bool = True) -> HarnessRun:
    """Run ``__main__.py`` with ``ha-endpoint:endpoint`` = ``endpoint`` against the fake cloud (preview by
    default: nothing is created, unknowns stay unknown) and capture what it registers."""
    cloud = cloud or FakeCloud.dev(preview=preview)
    captured: list[Registration] = []
    with _recording(captured):
        run = mock_harness.run_stack(cloud, {"endpoint": endpoint}, preview=preview)
    return HarnessRun(captured, run.outputs)


def run_program_for_pack(program: Any, cloud: FakeCloud, preview: bool = True) -> HarnessRun:
    """Like :func:`run_preview`, for any program (a callable building resources) instead of ``__main__.py``."""
    captured: list[Registration] = []
    with _recording(captured):
        run = mock_harness.run_program(program, cloud, preview=preview, outputs=lambda _: {})
    return HarnessRun(captured, run.outputs)


# -- the same stack under loadBalancerCreate: single-call ------------------------------------------------------------

PARTS = (contract.LOADBALANCER_TYPE, contract.LISTENER_TYPE, contract.POOL_TYPE, contract.MONITOR_TYPE)
"""The provider's resources a load balancer tree replaces in its zone."""


def _depending_on(registrations: list[Registration], token: str, prop: str, urn: str) -> list[Registration]:
    return [r for r in registrations if r.type == token and urn in r.property_dependencies.get(prop, [])]


def _tree_inputs(run: HarnessRun, lb: Registration) -> dict[str, Any]:
    """What the component gives a zone's tree: the load balancer's settings and, per listener, its pool and monitor
    (snake_case, as the dynamic resource stores them), the pool's first members too (which the pack ignores)."""
    inputs = lb.inputs
    listeners = []
    for listener in _depending_on(run.registrations, contract.LISTENER_TYPE, "loadbalancerId", lb.urn):
        pool = next(iter(_depending_on(run.registrations, contract.POOL_TYPE, "listenerId", listener.urn)))
        monitors = _depending_on(run.registrations, contract.MONITOR_TYPE, "poolId", pool.urn)
        sets = _depending_on(run.registrations, contract.MEMBER_SET_TYPE, "pool_id", pool.urn)
        monitor = monitors[0].inputs if monitors else None
        listeners.append({
            "name": listener.inputs.get("name"), "description": listener.inputs.get("description"),
            "protocol": listener.inputs.get("protocol"), "protocol_port": listener.inputs.get("protocolPort"),
            "allowed_cidrs": listener.inputs.get("allowedCidrs"),
            "default_tls_container_ref": listener.inputs.get("defaultTlsContainerRef"),
            "pool": {"name": pool.inputs.get("name"), "description": pool.inputs.get("description"),
                     "protocol": pool.inputs.get("protocol"), "lb_method": pool.inputs.get("lbMethod")},
            "monitor": None if monitor is None else {
                "name": monitor.get("name"), "type": monitor.get("type"), "delay": monitor.get("delay"),
                "timeout": monitor.get("timeout"), "max_retries": monitor.get("maxRetries"),
                "max_retries_down": monitor.get("maxRetriesDown"), "url_path": monitor.get("urlPath"),
                "expected_codes": monitor.get("expectedCodes")},
            "members": copy.deepcopy(sets[0].inputs.get("members", [])) if sets else [],
        })
    tags = inputs.get("tags")
    return {"name": inputs.get("name"), "description": inputs.get("description"),
            "vip_subnet_id": inputs.get("vipSubnetId"), "availability_zone": inputs.get("availabilityZone"),
            "loadbalancer_provider": inputs.get("loadbalancerProvider"), "tags": tags,
            "identity_tag": tags[0] if isinstance(tags, list) and tags else None, "listeners": listeners,
            "write_timeout_seconds": 300.0, "cloud": None, "region": None, "cloud_source": "stack"}


def as_trees(run: HarnessRun) -> HarnessRun:
    """``run`` (the provider's resources, members in member sets) as the tree stack: each zone's load balancer,
    listeners, pools and monitors replaced by one LoadBalancerTree under the load balancer's name and parent."""
    registrations = run.registrations
    replaced: dict[str, str] = {}
    trees: dict[str, Registration] = {}
    for lb in (r for r in registrations if r.type == contract.LOADBALANCER_TYPE):
        tree = Registration(contract.TREE_TYPE, lb.name, lb.urn.replace(contract.LOADBALANCER_TYPE, contract.TREE_TYPE),
                            lb.parent, True, list(lb.dependencies), {}, _tree_inputs(run, lb))
        trees[lb.urn] = tree
        replaced[lb.urn] = tree.urn
        for listener in _depending_on(registrations, contract.LISTENER_TYPE, "loadbalancerId", lb.urn):
            replaced[listener.urn] = tree.urn
            for pool in _depending_on(registrations, contract.POOL_TYPE, "listenerId", listener.urn):
                replaced[pool.urn] = tree.urn
                for monitor in _depending_on(registrations, contract.MONITOR_TYPE, "poolId", pool.urn):
                    replaced[monitor.urn] = tree.urn

    def redirect(urns: list[str], own: str) -> list[str]:
        return list(dict.fromkeys(replaced.get(urn, urn) for urn in urns if replaced.get(urn, urn) != own))

    converted = []
    for registration in registrations:
        if registration.urn in trees:
            converted.append(trees[registration.urn])
        elif registration.urn not in replaced:
            copied = copy.deepcopy(registration)
            copied.dependencies = redirect(copied.dependencies, copied.urn)
            copied.property_dependencies = {key: redirect(urns, copied.urn)
                                            for key, urns in copied.property_dependencies.items()}
            converted.append(copied)
    assert not any(r.type in PARTS for r in converted)
    return HarnessRun(converted, run.stack_outputs)

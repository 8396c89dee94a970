"""The resource classes as a program registers them (Pulumi mocks): type token, inputs, and a serialized provider
that is stored in plain text because it holds nothing secret."""

from __future__ import annotations

import pulumi
import pytest
from pulumi.runtime import Mocks, set_mocks

from ha_endpoint.core.contract import READINESS_TYPE


class RecordingMocks(Mocks):
    def __init__(self) -> None:
        self.registered: list = []

    def new_resource(self, args):
        self.registered.append(args)
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args):
        return {}


@pytest.fixture
def mocks():
    recorder = RecordingMocks()
    set_mocks(recorder, preview=False)
    return recorder


@pulumi.runtime.test
def test_readiness_and_drain_register_with_plain_serialized_providers(mocks):
    from ha_endpoint.gates.drain import MemberDrain
    from ha_endpoint.gates.inputs import DrainInputs, ReadinessInputs
    from ha_endpoint.gates.provider import MemberReadiness

    pool_id = pulumi.Output.from_input("pool-1")
    ready = MemberReadiness("ep-az1-ready", ReadinessInputs.declare(
        loadbalancer_id=pulumi.Output.from_input("lb-1"),
        pools={"ep-az1-6443-pool": {"pool_id": pool_id, "member_ids": [pulumi.Output.from_input("m1")],
                                    "monitored": True}},
        require="provisioned",
        timeout_seconds=120,
    ))
    drain = MemberDrain("ep-az1-6443-member-cp1-drain",
                        DrainInputs.declare(pool_id=pool_id, member_id="m1", drain_seconds=10))

    def check(_):
        by_name = {args.name: args for args in mocks.registered}
        readiness = by_name["ep-az1-ready"]
        assert readiness.typ == READINESS_TYPE
        assert readiness.inputs["pools"] == {  # a pool's defaults recorded too (ReadinessInputs.bag)
            "ep-az1-6443-pool": {"pool_id": "pool-1", "member_ids": ["m1"], "monitored": True, "hold_seconds": 0,
                                 "check_seconds": 0}
        }
        assert readiness.inputs["require"] == "provisioned" and readiness.inputs["timeout_seconds"] == 120
        for args in by_name.values():
            assert isinstance(args.inputs["__provider"], str), "not stored as a secret"
        assert by_name["ep-az1-6443-member-cp1-drain"].inputs["drain_seconds"] == 10

    return pulumi.Output.all(ready.urn, drain.urn).apply(check)

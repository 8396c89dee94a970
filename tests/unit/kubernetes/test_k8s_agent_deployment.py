"""The member agent beside a management cluster (AgentDeployment), under mocks with the real pulumi-kubernetes SDK:
two replicas running `python -m ha_endpoint.agent` with a command line its own parser takes, least-privilege RBAC in
the cluster's namespace, a locked-down pod with probes; bad input refused naming the key."""

from __future__ import annotations

import json

import pytest

from ha_endpoint import ConfigError, HaEndpoint
from ha_endpoint.agent.inputs import parse, published_addresses, served_zones
from ha_endpoint.backends.watching import zones_of
from ha_endpoint.kubernetes import AgentDeployment, AgentOptions
from tests.mocks import FakeCloud, resources, run_program
from tests.mocks.configs import amphora_endpoint
from tests.mocks.kubernetes import CLOUDS_YAML, DEPLOYMENT_TYPE, SECRET_TYPE, _object

from test_k8s_access import secret_value  # noqa: E402  (tests/unit/kubernetes is on sys.path)

SA_TYPE = "kubernetes:core/v1:ServiceAccount"
ROLE_TYPE = "kubernetes:rbac.authorization.k8s.io/v1:Role"
BINDING_TYPE = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
for _typ, _kind in ((SA_TYPE, "ServiceAccount"), (ROLE_TYPE, "Role"), (BINDING_TYPE, "RoleBinding")):
    resources.HANDLERS.setdefault(_typ, _object(_kind))
IMAGE = "registry.example.test/ha-endpoint:0.1.0"


def run_agent(**args):
    def program():
        endpoint = HaEndpoint("k8s-api", amphora_endpoint())
        return AgentDeployment("member-agent", endpoint, args.pop("cluster", "prod"), args.pop("clouds_yaml",
                               CLOUDS_YAML), "openstack", args.pop("image", IMAGE), **args)
    return run_program(program, FakeCloud.dev(), preview=False, outputs=lambda agent: {})


def test_two_replicas_run_the_agent_with_exactly_the_rights_it_needs():
    run = run_agent(namespace="capi-prod", options=AgentOptions(drain=15, member_port=((443, 6443),),
                                                                ready_condition="Ready"))
    (deployment,), (role,), (binding,), (secret,) = (run.of_type(t) for t in (DEPLOYMENT_TYPE, ROLE_TYPE,
                                                                              BINDING_TYPE, SECRET_TYPE))
    spec = deployment["inputs"]["spec"]
    assert spec["replicas"] == 2
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    assert pod["serviceAccountName"] == "member-agent" and deployment["inputs"]["metadata"]["namespace"] == "capi-prod"
    args = parse([a.replace("$(POD_NAME)", "member-agent-7d9f") for a in container["args"]])
    assert (args.cluster, args.namespace, args.drain, args.member_port, args.lease, args.listen,
            args.ready_condition) == ("prod", "capi-prod", 15.0, [(443, 6443)], "member-agent", "0.0.0.0", "Ready")
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    rules = {(tuple(r["apiGroups"]), tuple(r["resources"]), tuple(r.get("resourceNames", ()))): sorted(r["verbs"])
             for r in role["inputs"]["rules"]}
    assert rules == {(("cluster.x-k8s.io",), ("machines",), ()): ["get", "list", "patch", "watch"],
                     (("coordination.k8s.io",), ("leases",), ("member-agent",)): ["get", "update"],
                     (("coordination.k8s.io",), ("leases",), ()): ["create"],
                     (("",), ("events",), ()): ["create"]}
    assert role["inputs"]["metadata"]["namespace"] == "capi-prod"
    assert binding["inputs"]["subjects"] == [{"kind": "ServiceAccount", "name": "member-agent",
                                              "namespace": "capi-prod"}]
    outputs = json.loads(secret_value(secret["inputs"]["stringData"])["outputs.json"])
    assert sorted(outputs["zones"]) == ["az1", "az2", "az3"]
    assert all(set(zone) == {"loadbalancerId", "poolIds", "floatingIp", "vipAddress"}
               for zone in outputs["zones"].values())
    assert outputs["fqdn"] == "api.example.test."  # the record a zone leaves before its only member leaves
    backend, read = zones_of(outputs)
    zones = served_zones(read, backend.name, "octavia")  # as the agent reads its Secret
    assert published_addresses(outputs, zones) == {az: zone["floatingIp"] or zone["vipAddress"]
                                                   for az, zone in outputs["zones"].items()}
    assert all(published_addresses(outputs, zones).values())


@pytest.mark.parametrize("args, path, words", [
    ({"cluster": "Prod"}, "AgentDeployment('member-agent').cluster", "should match pattern"),
    ({"address_type": "Hostname"}, "AgentDeployment('member-agent').address_type", "InternalIP"),
    ({"image": " "}, "AgentDeployment('member-agent').image", "there is no published image"),
    ({"options": AgentOptions(drain=0)}, "AgentDeployment('member-agent').options.drain", "above 0"),
    ({"options": AgentOptions(ready_condition="API server")}, "AgentDeployment('member-agent').options.ready_condition",
     "must be a condition type"),
    ({"clouds_yaml": "clouds: {other: {}}"}, "AgentDeployment('member-agent').clouds_yaml", "no entry 'openstack'"),
])
def test_bad_input_is_refused_naming_the_key(args, path, words):
    with pytest.raises(Exception) as raised:
        run_agent(**args)
    error = raised.value
    while not isinstance(error, ConfigError) and error.__cause__ is not None:
        error = error.__cause__
    assert isinstance(error, ConfigError), raised.value
    assert any(p.path == path and words in p.message for p in error.problems), error.problems

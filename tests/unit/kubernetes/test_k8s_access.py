"""The kubeconfig and the Provider of the cluster behind the endpoint, under mocks with the real pulumi-kubernetes
SDK: their content, that they wait for (and depend on) the endpoint's DNS records, and the stack's export."""

from __future__ import annotations

import base64

import pulumi
import pytest
from pulumi.runtime import rpc
import yaml

from ha_endpoint import HaEndpoint

from ha_endpoint.core import contract
from ha_endpoint.kubernetes import ClusterAccess, Credentials, EndpointRef, KubeconfigError, NotPublished
from tests.mocks import FakeCloud, run_program, run_stack
from tests.mocks.configs import amphora_endpoint, unpublishing_endpoint
from tests.mocks.kubernetes import PROVIDER_TYPE, CloudWithStacks

from tests.mocks.kubernetes import CERTS, kubernetes_config

K = "ha-endpoint:kubernetes"


def secret_value(wire: object) -> object:
    """The value of a secret as the engine receives it (the mock monitor keeps the wire form); fails if not secret."""
    assert isinstance(wire, dict) and wire.get(rpc._special_sig_key) == rpc._special_secret_sig, wire
    return wire["value"]


def decode(data: str) -> str:
    return base64.b64decode(data).decode()


def stack(preview: bool, endpoint: dict = None, **kubernetes):
    return run_stack(FakeCloud.dev(), {"endpoint": endpoint or amphora_endpoint(),
                                       "kubernetes": kubernetes_config(**kubernetes)}, preview=preview)


def test_the_stack_exports_a_kubeconfig_for_the_endpoints_name_with_the_clusters_ca_and_the_client(secret_config):
    secret_config(K)
    run = stack(preview=False)
    config = yaml.safe_load(run.outputs["kubeconfig"])
    assert config["current-context"] == "k8s-api"
    (cluster,), (user,), (context,) = config["clusters"], config["users"], config["contexts"]
    assert cluster == {"name": "k8s-api", "cluster": {
        "server": "https://api.example.test:6443",  # the DNS name without its trailing dot, the API listener port
        "certificate-authority-data": cluster["cluster"]["certificate-authority-data"]}}
    assert decode(cluster["cluster"]["certificate-authority-data"]) == CERTS["ca"]
    assert user["name"] == "k8s-api-admin"
    assert decode(user["user"]["client-certificate-data"]) == CERTS["cert"]
    assert decode(user["user"]["client-key-data"]) == CERTS["key"]
    assert context == {"name": "k8s-api", "context": {"cluster": "k8s-api", "user": "k8s-api-admin"}}


def test_in_preview_the_kubeconfig_is_not_known_yet_because_the_records_do_not_exist(secret_config):
    secret_config(K)
    run = stack(preview=True)
    assert "kubeconfig" in run.outputs and run.outputs["kubeconfig"] is None


def test_a_token_a_port_and_names_of_ones_own(secret_config):
    secret_config(K)
    endpoint = amphora_endpoint()
    endpoint["listeners"][1]["port"] = 16443
    run = stack(preview=False, endpoint=endpoint, credentials={"caCertificate": CERTS["ca"], "token": "abc.def"},
                apiPort=16443, clusterName="prod", user="deployer")
    config = yaml.safe_load(run.outputs["kubeconfig"])
    assert config["clusters"][0]["cluster"]["server"] == "https://api.example.test:16443"
    assert config["users"] == [{"name": "deployer", "user": {"token": "abc.def"}}]
    assert config["current-context"] == "prod"


def test_credentials_given_as_base64_as_in_a_kubeconfig_are_taken_as_they_are(secret_config):
    secret_config(K)
    b64 = {key: base64.b64encode(value.encode()).decode() for key, value in CERTS.items()}
    run = stack(preview=False, credentials={"caCertificate": b64["ca"], "clientCertificate": b64["cert"],
                                            "clientKey": b64["key"]})
    config = yaml.safe_load(run.outputs["kubeconfig"])
    assert decode(config["clusters"][0]["cluster"]["certificate-authority-data"]) == CERTS["ca"]
    assert decode(config["users"][0]["user"]["client-key-data"]) == CERTS["key"]


def test_a_stack_without_the_kubernetes_key_exports_no_kubeconfig():
    run = run_stack(FakeCloud.dev(), {"endpoint": amphora_endpoint()}, preview=False)
    assert "kubeconfig" not in run.outputs


# ----- the library: ClusterAccess from an HaEndpoint of the same program, or from a StackReference -----------------

def access_program(endpoint_raw: dict, **access_args):
    holder = {}

    def program():
        endpoint = HaEndpoint(endpoint_raw["name"], endpoint_raw)
        access = ClusterAccess("k8s", endpoint, Credentials(CERTS["ca"], CERTS["cert"], CERTS["key"]),
                               **access_args)
        holder["provider"] = access.provider()
        holder["access"] = access
        return access

    def outputs(access):
        return {"kubeconfig": access.kubeconfig, "server": access.server,
                "secret": pulumi.Output.from_input(access.kubeconfig.is_secret())}

    return program, outputs, holder


def records_urns(run) -> set[str]:
    return {record["urn"] for record in run.of_type(contract.RECORDSET_TYPE)}


@pytest.mark.parametrize("publish", ["when-ready", "bootstrap"])
def test_the_provider_is_built_from_the_kubeconfig_and_depends_on_every_dns_record(publish):
    raw = amphora_endpoint()
    raw["dns"]["publish"] = publish
    program, outputs, _ = access_program(raw)
    run = run_program(program, FakeCloud.dev(), preview=False, outputs=outputs)
    assert run.outputs["secret"] is True
    (provider,) = run.of_type(PROVIDER_TYPE)
    assert provider["name"] == "k8s-k8s"
    assert secret_value(provider["inputs"]["kubeconfig"]) == run.outputs["kubeconfig"]
    assert provider["inputs"]["context"] == "k8s"
    assert len(records_urns(run)) == 4  # the endpoint's record and one per zone (perZoneRecords)
    assert records_urns(run) <= set(provider["dependencies"])
    # ... and the records wait for their zones' gates: readiness (when-ready) or the LB only (bootstrap)
    main = run.named(contract.recordset_name("k8s-api"))
    waits_for = {r["type"] for r in run.registrations if r["urn"] in main["dependencies"]}
    gate = "pulumi-python:dynamic/haendpoint:MemberReadiness" if publish == "when-ready" else contract.LOADBALANCER_TYPE
    assert gate in waits_for and waits_for - {gate} == {contract.FLOATING_IP_ASSOCIATE_TYPE}


def test_the_kubeconfig_is_never_written_when_no_zone_is_ready_under_when_ready():
    cloud = FakeCloud.dev()
    cloud.unready_azs.update({"az1", "az2", "az3"})
    program, outputs, _ = access_program(unpublishing_endpoint(minReadyZones=1))
    with pytest.raises(Exception, match="only 0 of 3 zones are ready"):
        run_program(program, cloud, preview=False, outputs=outputs)
    assert not cloud.kind(PROVIDER_TYPE)


def test_an_api_port_the_endpoint_does_not_listen_on_is_refused_when_the_access_is_built():
    program, outputs, _ = access_program(amphora_endpoint(), api_port=7443)
    with pytest.raises(KubeconfigError, match=r"apiPort: port 7443 is not a listener port of the endpoint "
                                              r"\(6443, 22623\); use one of them"):
        run_program(program, FakeCloud.dev(), preview=False, outputs=outputs)


def test_from_a_stack_reference_the_kubeconfig_waits_for_published_addresses():
    cloud = CloudWithStacks.dev()
    cloud.stack_outputs = {"org/ha-endpoint/prod": {"fqdn": "api.example.test.", "ports": [6443, 22623],
                                                    "addresses": ["172.24.4.100"], "zones": {"az1": {}, "az2": {}}}}

    def program():
        ref = pulumi.StackReference("org/ha-endpoint/prod")
        return ClusterAccess("prod", EndpointRef.from_stack_reference(ref), Credentials(CERTS["ca"], token="t"))

    run = run_program(program, cloud, preview=False, outputs=lambda access: {"kubeconfig": access.kubeconfig})
    config = yaml.safe_load(run.outputs["kubeconfig"])
    assert config["clusters"][0]["cluster"]["server"] == "https://api.example.test:6443"

    cloud.stack_outputs["org/ha-endpoint/prod"]["addresses"] = []
    with pytest.raises(NotPublished, match="api.example.test. publishes no address yet"):
        run_program(program, cloud, preview=False, outputs=lambda access: {"kubeconfig": access.kubeconfig})

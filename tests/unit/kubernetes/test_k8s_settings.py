"""`ha-endpoint:kubernetes` through the whole program: every problem at once, each with its key path and the fix, as
a ConfigError (a RunError: the engine prints no traceback), before anything is registered."""

from __future__ import annotations

import base64

import pytest

from ha_endpoint import ConfigError
from tests.mocks import FakeCloud, run_stack
from tests.mocks.configs import amphora_endpoint
from tests.mocks.kubernetes import CERTS, CLUSTER_API, kubernetes_config

K = "ha-endpoint:kubernetes"
HEAD = "invalid endpoint configuration"


def problems_of(kubernetes: dict, endpoint: dict = None, secret: bool = True, secret_config=None
                ) -> tuple[list, FakeCloud]:
    if secret:
        secret_config(K)
    cloud = FakeCloud.dev()
    with pytest.raises(ConfigError) as error:
        run_stack(cloud, {"endpoint": endpoint or amphora_endpoint(), "kubernetes": kubernetes}, preview=True)
    return [str(problem) for problem in error.value.problems], cloud


def test_field_problems_name_the_key_and_the_fix_and_register_nothing(secret_config):
    raw = kubernetes_config(apiPort=70000, clusterNmae="x")
    raw["credentials"]["caCertificate"] = "not a certificate"
    raw["credentials"]["clientKey"] = CERTS["cert"]  # the wrong file
    problems, cloud = problems_of(raw, secret_config=secret_config)
    assert problems == [
        f"{K}.credentials.caCertificate: a certificate is neither PEM text (-----BEGIN CERTIFICATE-----...) nor "
        "the base64 of PEM text; give the file's content (e.g. the content of ca.crt)",
        f"{K}.credentials.clientKey: a private key holds a PEM CERTIFICATE, not a PRIVATE KEY or RSA PRIVATE KEY "
        "or EC PRIVATE KEY; check that the right file was given",
        f"{K}.apiPort: apiPort is 70000, above the most allowed, 65535; give a value from 1 to 65535, e.g. "
        "apiPort: 6443",
        f"{K}.clusterNmae: clusterNmae is not a setting here; did you mean clusterName? Fix its spelling or remove it "
        "(the settings here: credentials, apiPort, clusterName, user, clusterApi, watcher)",
    ]
    assert cloud.registrations == []


def test_no_credential_value_ever_appears_in_a_message(secret_config):
    key = base64.b64encode(b"-----BEGIN PRIVATE KEY-----\nSECRET-MATERIAL\n").decode()  # cut short
    raw = kubernetes_config()
    raw["credentials"]["clientKey"] = key
    problems, _ = problems_of(raw, secret_config=secret_config)
    assert problems == [f"{K}.credentials.clientKey: a private key is cut short: its -----END PRIVATE KEY----- line "
                        "is missing"]
    assert "SECRET" not in "".join(problems) and key not in "".join(problems)


def test_problems_against_the_endpoint_port_and_dns(secret_config):
    endpoint = amphora_endpoint()
    del endpoint["dns"]
    problems, _ = problems_of(kubernetes_config(apiPort=7443), endpoint, secret_config=secret_config)
    assert problems == [
        f"{K}: the cluster is reached by the endpoint's DNS name, and ha-endpoint:endpoint has no dns; add dns "
        "(dnsZone, record) to it, or remove this key",
        f"{K}.apiPort: port 7443 is not a listener port of the endpoint (6443, 22623); use one of them, or add a "
        "listener for it",
    ]


def test_without_6443_the_api_port_must_be_named(secret_config):
    endpoint = amphora_endpoint()
    endpoint["listeners"][0]["port"] = 16443
    problems, _ = problems_of(kubernetes_config(), endpoint, secret_config=secret_config)
    assert problems == [f"{K}.apiPort: the endpoint listens on 16443, 22623 and none is 6443; say which one serves "
                        "the Kubernetes API (apiPort)"]


@pytest.mark.parametrize("credentials, expected", [
    ({"caCertificate": CERTS["ca"]}, f"{K}.credentials: no client credentials; give clientCertificate and clientKey, "
                                     "or token"),
    ({"caCertificate": CERTS["ca"], "clientCertificate": CERTS["cert"]},
     f"{K}.credentials.clientKey: clientKey is missing; give clientCertificate and clientKey together"),
    ({"caCertificate": CERTS["ca"], "clientCertificate": CERTS["cert"], "clientKey": CERTS["key"], "token": "t"},
     f"{K}.credentials.token: give either a token or clientCertificate and clientKey, not both"),
], ids=["none", "half a pair", "both kinds"])
def test_exactly_one_way_to_authenticate(secret_config, credentials, expected):
    problems, _ = problems_of({"credentials": credentials}, secret_config=secret_config)
    assert problems == [expected]


def test_a_private_key_or_token_in_plain_text_in_the_stack_file_is_refused(secret_config):
    problems, _ = problems_of(kubernetes_config(), secret=False)
    assert problems == [f"{K}.credentials.clientKey: is stored in plain text in the stack's file; store it encrypted: "
                        f"pulumi config set --secret --path '{K}.credentials.clientKey' -- \"$(cat <file>)\""]


def test_cluster_api_problems(secret_config):
    raw = kubernetes_config(clusterApi={"name": "K8s_API", "subnets": ["a", "b", "c"],
                                        "identityRef": {"name": "cloud-config"}})
    problems, _ = problems_of(raw, secret_config=secret_config)
    assert problems == [
        f"{K}.clusterApi.identityRef.cloudName: cloudName is required; add it (the clouds.yaml entry to use)",
        f"{K}.clusterApi.name: 'K8s_API' is not a Kubernetes name: use 1-63 lowercase letters, digits or '-', "
        "starting and ending with a letter or digit",
        f"{K}.clusterApi.subnets: subnets has 3 items, at most 2 are allowed; remove some",
    ]


def test_a_v1beta1_control_plane_ref_is_refused_with_the_group_to_give(secret_config):
    """Cluster v1beta2 references name an API group: a stack file still giving controlPlaneRef.apiVersion is told
    what to write instead (the key would otherwise be reported as merely unknown)."""
    raw = kubernetes_config(clusterApi={**CLUSTER_API, "subnets": [], "controlPlaneRef": {
        "name": "k8s-api-control-plane", "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1"}})
    problems, cloud = problems_of(raw, secret_config=secret_config)
    assert problems == [
        f"{K}.clusterApi.controlPlaneRef: apiVersion is gone: the Cluster is Cluster API v1beta2, whose references "
        "name an API group, not a version; replace apiVersion: controlplane.cluster.x-k8s.io/v1beta1 by apiGroup: "
        "controlplane.cluster.x-k8s.io"]
    assert not cloud.kind("k8s-objects")


def test_per_az_subnets_do_not_fit_capos_cluster_network_so_the_user_says_which(secret_config):
    problems, cloud = problems_of(kubernetes_config(clusterApi=CLUSTER_API), secret_config=secret_config)
    assert problems == [
        f"{K}.clusterApi.subnets: the control-plane nodes are on subnets cp-az1 (az1), cp-az2 (az2), cp-az3 (az3), "
        "and CAPO's OpenStackCluster takes at most one IPv4 and one IPv6 subnet (its machines' default ports); say "
        "which one its machines use by default (subnets: [<id or name>]; per-AZ subnets go in the ports of your "
        "machine templates), or subnets: [] to let CAPO use every subnet of the network"]
    assert not cloud.kind("k8s-objects")


def test_a_value_that_is_no_mapping(secret_config):
    problems, _ = problems_of(["credentials"], secret_config=secret_config)  # type: ignore[arg-type]
    assert problems == [f"{K}: must be a mapping of settings, got list; see README.md 'Kubernetes' for an example"]

"""README's downstream-stack example (examples/kubernetes/__main__.py) runs under mocks against an endpoint stack's
outputs: its kubeconfig names the endpoint, and what it deploys goes through the Provider built from it."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest
import yaml

from tests.mocks import run_program
from tests.mocks.kubernetes import CERTS, NAMESPACE_TYPE, PROVIDER_TYPE, CloudWithStacks

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "kubernetes"
OUTPUTS = {"fqdn": "api.example.test.", "ports": [6443, 22623], "addresses": ["172.24.4.100", "172.24.4.101"],
           "zones": {"az1": {}, "az2": {}}}


def run_example(addresses):
    cloud = CloudWithStacks.dev()
    cloud.stack_outputs = {"org/ha-endpoint/prod": {**OUTPUTS, "addresses": addresses}}
    config = {"endpointStack": "org/ha-endpoint/prod", "caCertificate": CERTS["ca"],
              "clientCertificate": CERTS["cert"], "clientKey": CERTS["key"]}
    return run_program(lambda: runpy.run_path(str(EXAMPLE / "__main__.py"), run_name="__main__"), cloud,
                       preview=False, config=config)


def test_the_example_deploys_through_the_endpoints_kubeconfig():
    run = run_example(OUTPUTS["addresses"])
    assert run.outputs["server"] == "https://api.example.test:6443"
    assert yaml.safe_load(run.outputs["kubeconfig"])["clusters"][0]["cluster"]["server"] == run.outputs["server"]
    assert run.outputs["namespace"] == "apps"
    (provider,), (namespace,) = run.of_type(PROVIDER_TYPE), run.of_type(NAMESPACE_TYPE)
    assert provider["name"] == "workload-k8s"
    assert namespace["provider"].startswith(provider["urn"] + "::")


def test_the_example_stops_while_the_endpoint_publishes_nothing():
    with pytest.raises(Exception, match="api.example.test. publishes no address yet"):
        run_example([])

"""README's downstream-stack example (examples/kubernetes/__main__.py) runs under mocks against an endpoint stack's
outputs: its kubeconfig names the endpoint, and what it deploys goes through the Provider built from it; given an
image, it deploys the DNS watcher of the endpoint stack it reads."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest
import yaml

from ha_endpoint.backends.watching import zones_of
from ha_endpoint.watch.inputs import parse
from tests.mocks import run_program
from tests.mocks.kubernetes import (CERTS, CLOUDS_YAML, CONFIG_MAP_TYPE, DEPLOYMENT_TYPE, NAMESPACE_TYPE,
                                    PROVIDER_TYPE, SECRET_TYPE, CloudWithStacks)

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "kubernetes"
OUTPUTS = {"fqdn": "api.example.test.", "ports": [6443, 22623], "addresses": ["172.24.4.100", "172.24.4.101"],
           "zones": {az: {"loadbalancerId": f"lb-{az}", "poolIds": {"6443": f"pool-{az}-6443",
                                                                "22623": f"pool-{az}-22623"},
                          "floatingIp": address, "ready": True, "published": True}
                     for az, address in (("az1", "172.24.4.100"), ("az2", "172.24.4.101"))}}
WATCHER = {"watcherImage": "registry.example.test/ha-endpoint:0.1.0", "cloudsYaml": CLOUDS_YAML, "cloud": "openstack"}


def run_example(addresses, **more):
    cloud = CloudWithStacks.dev()
    cloud.stack_outputs = {"org/ha-endpoint/prod": {**OUTPUTS, "addresses": addresses}}
    config = {"endpointStack": "org/ha-endpoint/prod", "caCertificate": CERTS["ca"],
              "clientCertificate": CERTS["cert"], "clientKey": CERTS["key"], **more}
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
    assert run.of_type(DEPLOYMENT_TYPE) == [] and "watcher" not in run.outputs  # no image given: no watcher
    (config_map,) = run.of_type(CONFIG_MAP_TYPE)       # what workloads read: the server and the published addresses
    assert config_map["inputs"]["data"] == {"server": "https://api.example.test:6443",
                                            "addresses": ",".join(OUTPUTS["addresses"])}
    assert config_map["provider"].startswith(provider["urn"] + "::")
    assert "pulumi.com/skipAwait" not in str(namespace["inputs"].get("metadata"))   # awaited by default


def test_await_rollout_false_annotates_every_kubernetes_object_skip_await():
    run = run_example(OUTPUTS["addresses"], awaitRollout="false", **WATCHER)
    objects = [*run.of_type(NAMESPACE_TYPE), *run.of_type(CONFIG_MAP_TYPE), *run.of_type(SECRET_TYPE),
               *run.of_type(DEPLOYMENT_TYPE)]
    assert len(objects) == 4
    for found in objects:
        annotations = found["inputs"]["metadata"]["annotations"]
        assert annotations["pulumi.com/skipAwait"] == "true", found
        assert annotations["pulumi.com/deletionPropagationPolicy"] == "background", found


def test_given_an_image_the_example_deploys_the_watcher_of_the_stack_it_reads():
    run = run_example(OUTPUTS["addresses"], **WATCHER)
    (secret,), (deployment,) = run.of_type(SECRET_TYPE), run.of_type(DEPLOYMENT_TYPE)
    assert run.outputs["watcher"] == "dns-watcher"
    (container,) = deployment["inputs"]["spec"]["template"]["spec"]["containers"]
    assert container["image"] == WATCHER["watcherImage"]
    assert parse(container["args"]).stack == "ha-endpoint/prod"
    outputs = json.loads(secret["inputs"]["stringData"]["value"]["outputs.json"])
    assert [(az, zone.loadbalancer_id, zone.address) for az, zone in zones_of(outputs)[1].items()] == [
        ("az1", "lb-az1", "172.24.4.100"), ("az2", "lb-az2", "172.24.4.101")]
    # the default provider's cluster (kubernetes:kubeconfig), not the one behind the endpoint
    assert deployment["provider"] == secret["provider"] == ""


def test_the_example_stops_while_the_endpoint_publishes_nothing():
    with pytest.raises(Exception, match="api.example.test. publishes no address yet"):
        run_example([])

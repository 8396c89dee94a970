"""The Kubernetes page (docs/kubernetes.md) shows what the code does: its configuration example runs (kubeconfig
exported, the Cluster API objects and the watcher's Deployment created), its error example is the message the program
prints, its Python examples are in the file the example test runs; the watcher section's example (docs/operations.md)
runs."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pulumi
import pulumi_kubernetes as k8s
import pytest
import yaml

from ha_endpoint import ConfigError, HaEndpoint
from ha_endpoint.watch.inputs import parse
from tests.mocks import FakeCloud, run_program, run_stack
from tests.mocks.configs import amphora_endpoint
from tests.mocks.kubernetes import (CERTS, CLOUDS_YAML, CLUSTER_TYPE, DEPLOYMENT_TYPE, OPENSTACK_CLUSTER_TYPE,
                                    PROVIDER_TYPE, SECRET_TYPE)

ROOT = Path(__file__).resolve().parents[3]
SECTION = (ROOT / "docs" / "kubernetes.md").read_text()
OPERATIONS = (ROOT / "docs" / "operations.md").read_text()
BLOCKS = re.findall(r"```(yaml|python|)\n(.*?)```", SECTION, re.S)
SECRETS = {"caCertificate": CERTS["ca"], "clientCertificate": CERTS["cert"], "clientKey": CERTS["key"]}


def test_the_configuration_example_exports_a_kubeconfig_and_creates_the_cluster_api_objects(secret_config):
    (example,) = [yaml.safe_load(body)["config"]["ha-endpoint:kubernetes"] for kind, body in BLOCKS
                  if kind == "yaml" and "ha-endpoint:kubernetes:" in body]
    for key, value in example["credentials"].items():  # {secure: ...}: what `pulumi config set --secret` stores
        assert value == {"secure": "..."}
        example["credentials"][key] = SECRETS[key]
    assert example["watcher"]["cloudsYaml"] == {"secure": "..."}
    example["watcher"]["cloudsYaml"] = CLOUDS_YAML
    secret_config("ha-endpoint:kubernetes")
    run = run_stack(FakeCloud.dev(), {"endpoint": amphora_endpoint(), "kubernetes": example}, preview=False)
    assert yaml.safe_load(run.outputs["kubeconfig"])["clusters"][0]["cluster"]["server"] == \
        "https://api.example.test:6443"
    assert len(run.of_type(CLUSTER_TYPE)) == len(run.of_type(OPENSTACK_CLUSTER_TYPE)) == 1
    assert len(run.of_type(DEPLOYMENT_TYPE)) == len(run.of_type(SECRET_TYPE)) == 1


def test_the_error_example_is_what_the_program_prints(secret_config):
    (shown,) = [body for kind, body in BLOCKS if body.startswith("error: invalid endpoint configuration")]
    secret_config("ha-endpoint:kubernetes")
    kubernetes = {"apiPort": 7443, "credentials": {**SECRETS, "token": "abc.def"}}
    with pytest.raises(ConfigError) as error:
        run_stack(FakeCloud.dev(), {"endpoint": amphora_endpoint(), "kubernetes": kubernetes}, preview=True)
    assert shown == f"error: {error.value}\n"


@pytest.mark.parametrize("call", ["ClusterAccess(", "WatcherDeployment("])
def test_the_python_examples_are_in_the_example_file(call):
    (shown,) = [body for kind, body in BLOCKS if kind == "python" and call in body]
    example = (ROOT / "examples" / "kubernetes" / "__main__.py").read_text()
    assert shown in example


def test_the_watcher_sections_example_deploys_the_watcher_with_the_provider_it_is_given():
    section = OPERATIONS[OPERATIONS.index("## DNS that follows health between runs"):]
    (shown,) = re.findall(r"```python\n(.*?)```", section[:section.index("\n## ", 1)], re.S)

    def program():
        names = {"pulumi": pulumi, "endpoint": HaEndpoint("k8s-api", amphora_endpoint()),
                 "config": SimpleNamespace(require_secret=lambda key: pulumi.Output.secret(CLOUDS_YAML)),
                 "management": k8s.Provider("management", kubeconfig="apiVersion: v1\nkind: Config\n")}
        exec(compile(shown, "docs/operations.md", "exec"), names)

    run = run_program(program, FakeCloud.dev(), preview=False, outputs=lambda _: {})
    (deployment,), (management,) = run.of_type(DEPLOYMENT_TYPE), run.of_type(PROVIDER_TYPE)
    assert deployment["provider"].startswith(management["urn"] + "::")
    (container,) = deployment["inputs"]["spec"]["template"]["spec"]["containers"]
    assert parse(container["args"]).unhealthy_polls == 2

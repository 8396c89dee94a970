"""README.md's Kubernetes section shows what the code does: its configuration example runs (kubeconfig exported, the
Cluster API objects created), its error example is the message the program prints, its Python example is the file
the example test runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from ha_endpoint import ConfigError
from tests.mocks import FakeCloud, run_stack
from tests.mocks.configs import amphora_endpoint
from tests.mocks.kubernetes import CERTS, CLUSTER_TYPE, OPENSTACK_CLUSTER_TYPE

ROOT = Path(__file__).resolve().parents[3]
README = (ROOT / "README.md").read_text()
SECTION = README[README.index("## Kubernetes\n"):]
SECTION = SECTION[:SECTION.index("\n## ", 1)]
BLOCKS = re.findall(r"```(yaml|python|)\n(.*?)```", SECTION, re.S)
SECRETS = {"caCertificate": CERTS["ca"], "clientCertificate": CERTS["cert"], "clientKey": CERTS["key"]}


def test_the_configuration_example_exports_a_kubeconfig_and_creates_the_cluster_api_objects(secret_config):
    (example,) = [yaml.safe_load(body)["config"]["ha-endpoint:kubernetes"] for kind, body in BLOCKS
                  if kind == "yaml" and "ha-endpoint:kubernetes:" in body]
    for key, value in example["credentials"].items():  # {secure: ...}: what `pulumi config set --secret` stores
        assert value == {"secure": "..."}
        example["credentials"][key] = SECRETS[key]
    secret_config("ha-endpoint:kubernetes")
    run = run_stack(FakeCloud.dev(), {"endpoint": amphora_endpoint(), "kubernetes": example}, preview=False)
    assert yaml.safe_load(run.outputs["kubeconfig"])["clusters"][0]["cluster"]["server"] == \
        "https://api.example.test:6443"
    assert len(run.of_type(CLUSTER_TYPE)) == len(run.of_type(OPENSTACK_CLUSTER_TYPE)) == 1


def test_the_error_example_is_what_the_program_prints(secret_config):
    (shown,) = [body for kind, body in BLOCKS if body.startswith("error: invalid endpoint configuration")]
    secret_config("ha-endpoint:kubernetes")
    kubernetes = {"apiPort": 7443, "credentials": {**SECRETS, "token": "abc.def"}}
    with pytest.raises(ConfigError) as error:
        run_stack(FakeCloud.dev(), {"endpoint": amphora_endpoint(), "kubernetes": kubernetes}, preview=True)
    assert shown == f"error: {error.value}\n"


def test_the_python_example_is_the_example_file():
    (shown,) = [body for kind, body in BLOCKS if kind == "python" and "ClusterAccess(" in body]
    example = (ROOT / "examples" / "kubernetes" / "__main__.py").read_text()
    assert shown in example

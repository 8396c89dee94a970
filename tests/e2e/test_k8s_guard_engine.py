"""The Kubernetes side under the real engine (no cloud needed): the ControlPlaneEndpointGuard refuses a changed
endpoint at preview with its message, a kubeconfig built from an endpoint's outputs is exported as a secret while
pulumi-kubernetes sits in the program's environment, and the Provider built from it previews with the plugin built
here (lab/engine/build.sh --k8s) although its cluster's name does not resolve (tests/e2e/test_k8s_cluster.py runs that
plugin against a real API server)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import yaml

from tests.e2e.pulumi_cli import PulumiStack
from tests.mocks.kubernetes import CERTS

pytestmark = pytest.mark.e2e

PROGRAM = textwrap.dedent('''
    import pulumi
    from ha_endpoint.kubernetes import ClusterAccess, ControlPlaneEndpointGuard, Credentials, EndpointRef

    config = pulumi.Config()
    host, port = config.require("host"), config.require_int("port")
    guard = ControlPlaneEndpointGuard("guard", cluster=config.get("cluster") or "default/k8s-api", host=host,
                                      port=port, settings="dns.record and apiPort")
    endpoint = EndpointRef(fqdn=host + ".", ports=[port], published=["172.24.4.100"], azs=["az1", "az2"])
    access = ClusterAccess("k8s", endpoint, Credentials(config.require_secret("ca"), token=config.require_secret("token")))
    if config.get_bool("provider"):
        access.provider()
    pulumi.export("kubeconfig", access.kubeconfig)
    pulumi.export("guard", {"host": guard.host, "port": guard.port})
    # a structured key with a value set by `pulumi config set --secret --path`: the whole key counts as secret (what
    # stacks.kubernetes_stack relies on to refuse credentials stored in plain text), the value arrives decrypted
    from pulumi.runtime.config import is_config_secret
    pulumi.export("nested", {"secret": is_config_secret("k8s-guard:kube"),
                             "token": pulumi.Output.secret((config.get_object("kube") or {})["credentials"]["token"]),
                             "plain": is_config_secret("k8s-guard:host")})
''')


def guard_stack(workdir: Path, environment: dict) -> PulumiStack:
    stack = PulumiStack.program(workdir, "k8s-guard", "guard", PROGRAM, environment)
    for key, value in (("ca", CERTS["ca"]), ("token", "abc.def"), ("kube.credentials.token", "nested.token")):
        stack.set_secret(key, value, path=True)
    return stack


def configure(stack: PulumiStack, **values) -> None:
    for key, value in values.items():
        stack.run("config", "set", key, str(value))


def test_a_changed_endpoint_is_refused_at_preview_and_the_kubeconfig_is_a_secret(k8s_engine_environment, tmp_path):
    stack = guard_stack(tmp_path / "guard", k8s_engine_environment)
    try:
        configure(stack, host="api.example.test", port=6443)
        stack.up(policy=False)
        outputs = stack.outputs()
        assert outputs["guard"] == {"host": "api.example.test", "port": 6443}
        assert outputs["nested"] == {"secret": True, "token": "nested.token", "plain": False}
        kubeconfig = yaml.safe_load(outputs["kubeconfig"])
        assert kubeconfig["clusters"][0]["cluster"]["server"] == "https://api.example.test:6443"
        assert kubeconfig["users"][0]["user"] == {"token": "abc.def"}
        shown = json.loads(stack.run("stack", "output", "--json").stdout)
        assert shown["kubeconfig"] == "[secret]"

        configure(stack, host="api2.example.test")
        refused = stack.preview(policy=False, check=False)
        assert refused.returncode != 0
        print("\n".join(line for line in refused.output.splitlines() if "controlPlaneEndpoint" in line))
        text = " ".join(refused.output.split())
        assert ("the Cluster API cluster default/k8s-api was created with controlPlaneEndpoint api.example.test:6443; "
                "this update would change it to api2.example.test:6443. Cluster API never lets controlPlaneEndpoint "
                "change once it is set") in text, refused.output[-3000:]
        assert "Keep dns.record and apiPort as they were (api.example.test:6443)" in text
        assert stack.up(policy=False, check=False).returncode != 0  # `up` stops too, nothing changed
        assert stack.outputs()["guard"] == {"host": "api.example.test", "port": 6443}

        configure(stack, cluster="default/k8s-api-2")  # another cluster may have another endpoint: a replacement
        moved = stack.preview(policy=False)
        assert "replace" in moved.output

        configure(stack, cluster="default/k8s-api", host="api.example.test", provider="true")
        with_provider = stack.preview(policy=False)  # the plugin starts; the cluster is unreachable, not an error
        assert "pulumi:providers:kubernetes" in with_provider.output and "+ 1 to create" in with_provider.output, \
            with_provider.output[-3000:]
    finally:
        configure(stack, provider="false", cluster="default/k8s-api", host="api.example.test")
        stack.destroy(check=False)

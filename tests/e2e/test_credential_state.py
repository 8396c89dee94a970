"""An agent's scoped credential made by a real `pulumi up` (issue 52): the secret Keystone hands back never appears in
plain text in the exported state (nor the stack's passphrase), the credential works and is refused what its access
rules do not allow, and destroy deletes it from Keystone.

The program is the component's own credential part (ha_endpoint.kubernetes.credential.ScopedCredential with the
member agent's calls for one pool), as AgentDeployment builds it, without a Kubernetes cluster to hand it to.
"""

from __future__ import annotations

import json

import openstack
import pytest
import yaml

from tests.e2e.pulumi_cli import PulumiStack

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

POOL_ID = "0f0e0d0c-0b0a-4999-8888-777766665555"  # the rules may name any pool: this one does not exist

PROGRAM = f'''
import pulumi
from ha_endpoint.backends.octavia.access import agent_calls
from ha_endpoint.kubernetes.credential import AGENT_ROLES, CredentialSettings, ScopedCredential


class Root(pulumi.ComponentResource):
    def __init__(self):
        super().__init__("e2e:index:Root", "root")


settings = CredentialSettings.model_validate({{"authUrl": pulumi.Config().require("authUrl")}})
credential = ScopedCredential("cred-e2e-agent", "cred-e2e", "localcloud", settings, AGENT_ROLES,
                              pulumi.Output.from_input(agent_calls(["{POOL_ID}"])), Root(), "issue 52 e2e")
pulumi.export("cloudsYaml", credential.clouds_yaml)
pulumi.export("credentialId", credential.resource.id)
'''


def test_the_credentials_secret_stays_out_of_the_state_and_the_cloud_refuses_it_the_rest(
        tmp_path, pulumi_environment, localcloud, cloud):
    auth_url = yaml.safe_load(open(localcloud.clouds_yaml))["clouds"]["localcloud"]["auth"]["auth_url"]
    stack = PulumiStack.program(tmp_path / "program", "cred-e2e", "cred-e2e", PROGRAM, pulumi_environment)
    stack.run("config", "set", "authUrl", auth_url)
    stack.run("config", "set", "openstack:cloud", pulumi_environment.get("OS_CLOUD", "localcloud"))
    try:
        stack.up(policy=False)
        shown = json.loads(stack.run("stack", "output", "--json", "--show-secrets").stdout)
        entry = yaml.safe_load(shown["cloudsYaml"])["clouds"]["localcloud"]
        secret = entry["auth"]["application_credential_secret"]
        assert len(secret) > 20 and entry["auth_type"] == "v3applicationcredential"
        assert "insecure" not in entry and "verify" not in entry

        exported = json.dumps(stack.export())
        assert secret not in exported  # encrypted in the state, as an output and as the resource's own
        assert stack.env["PULUMI_CONFIG_PASSPHRASE"] not in exported
        plain = json.loads(stack.run("stack", "output", "--json").stdout)
        assert secret not in json.dumps(plain)

        agents_file = tmp_path / "agent-clouds.yaml"  # what the agent's Secret holds
        agents_file.write_text(shown["cloudsYaml"])
        scoped = openstack.connection.Connection(config=openstack.config.OpenStackConfig(
            config_files=[str(agents_file)], load_envvars=False).get_one(cloud="localcloud"))
        assert scoped.load_balancer.get_endpoint()  # the credential authenticates
        with pytest.raises(openstack.exceptions.HttpException) as refused:
            list(scoped.load_balancer.load_balancers())
        assert refused.value.status_code in (401, 403)
    finally:
        stack.destroy(check=False)
    ids = {c.id for c in cloud.identity.application_credentials(user=cloud.current_user_id)}
    assert shown["credentialId"] not in ids

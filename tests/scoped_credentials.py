"""A scoped application credential on the local cloud for a test (issue 52): made by the stack's user with exactly
the rules the component gives an agent (ha_endpoint.cloud.access_rules), written as the clouds.yaml the component
writes (ha_endpoint.kubernetes.credential.clouds_yaml), deleted by the test when it ends."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openstack
import openstack.config

from ha_endpoint.kubernetes.credential import CredentialSettings, clouds_yaml

CLOUD = "agent"


@dataclass(frozen=True)
class Scoped:
    id: str
    clouds_yaml: Path
    """The agent's clouds.yaml, one entry :data:`CLOUD`."""

    def connect(self) -> Any:
        config = openstack.config.OpenStackConfig(config_files=[str(self.clouds_yaml)],
                                                  load_envvars=False).get_one(cloud=CLOUD)
        return openstack.connection.Connection(config=config)


def make(stack: Any, name: str, rules: list[dict], roles: tuple[str, ...], directory: Path) -> Scoped:
    """A credential of ``stack``'s user (an openstacksdk connection with a password) carrying ``rules`` and
    ``roles``; its clouds.yaml in ``directory``."""
    credential = stack.identity.create_application_credential(
        user=stack.current_user_id, name=name, roles=[{"name": role} for role in roles], unrestricted=False,
        access_rules=rules)
    path = Path(directory) / f"{name}.clouds.yaml"
    path.write_text(clouds_yaml(CLOUD, CredentialSettings(auth_url=stack.config.auth["auth_url"],
                                                          region=stack.config.region_name), credential.id,
                                credential.secret))
    path.chmod(0o600)
    return Scoped(credential.id, path)


def delete(stack: Any, scoped: Scoped) -> None:
    stack.identity.delete_application_credential(stack.current_user_id, scoped.id, ignore_missing=True)

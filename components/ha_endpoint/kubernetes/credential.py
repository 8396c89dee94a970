"""An agent's own OpenStack credential: a Keystone application credential made by the stack, restricted by access
rules to exactly the calls that agent makes on this endpoint's objects (:mod:`ha_endpoint.cloud.access_rules`, and
the backend's own: ``Backend.agent``, ``Watched.reads``), with the least role, handed to the agent as the clouds.yaml
of its Secret (docs/security.md).

    credential=CredentialSettings(auth_url="https://keystone.example:5000/v3", rotation=0)

Rotation: raise ``rotation`` by one. The credential's Keystone name carries the rotation and a digest of its rules,
so a new one is created (Keystone names are unique per user) while the old one still works; the agent's Secret,
named by the program, is replaced by one holding the new credential, the Deployment naming it rolls its pods onto it
(Pulumi waits for the rollout), and only then is the old credential deleted (``delete_before_replace`` false: the
replacement order of every resource Pulumi replaces). A change of the rules (a replaced pool or load balancer) makes a
new credential the same way.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping, Optional

import pulumi
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from ..core.errors import Problem
from ..core.messages import problems_from_pydantic

APPLICATION_CREDENTIAL_TYPE = "openstack:identity/applicationCredential:ApplicationCredential"
AGENT_ROLES = ("load-balancer_member",)
"""The member agent's least role: Octavia's policies ask for load-balancer_member to read or write a member, with or
without its new defaults (Keystone's member is not enough: 403; reader is an observer's)."""
WATCHER_ROLES = ("member", "load-balancer_member")
"""The DNS watcher's: Octavia reads (load-balancer_member: no load-balancer_observer role on a default cloud) and
Designate's recordset update (member)."""


class CredentialSettings(BaseModel):
    """The agent's own application credential (made by the stack with the default OpenStack provider's user)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True,
                              str_strip_whitespace=True, use_attribute_docstrings=True)

    auth_url: str
    """Keystone's URL as the agent reaches it (e.g. https://keystone.example:5000/v3)."""
    region: Optional[str] = None
    """The OpenStack region the agent uses (clouds.yaml region_name)."""
    rotation: int = Field(0, ge=0, strict=True)
    """Raise by one to rotate the credential: a new one is made and handed over before the old one is deleted."""
    roles: Optional[list[str]] = Field(None, min_length=1)
    """The roles the credential carries (a subset of the user's on the project); default: the agent's least roles
    (member agent: load-balancer_member; DNS watcher: member and load-balancer_member)."""
    cacert: Optional[str] = None
    """A CA bundle path inside the agent's image, when Keystone's certificate is not signed by a public CA."""

    @field_validator("auth_url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.startswith(("https://", "http://")) or "://" == value[-3:]:
            raise ValueError("is not a URL; give Keystone's URL, e.g. https://keystone.example:5000/v3")
        return value

    @field_validator("roles")
    @classmethod
    def _roles(cls, value: Optional[list[str]]) -> Optional[list[str]]:
        if value is not None and any(not role.strip() for role in value):
            raise ValueError("has an empty role name; give role names, e.g. [member]")
        return value


def credential_name(base: str, rotation: int, rules: list[dict[str, str]]) -> str:
    """The Keystone name: ``base``, the rotation and a digest of the rules (a change of either is a new name)."""
    digest = hashlib.sha256(json.dumps(rules, sort_keys=True).encode()).hexdigest()[:8]
    return f"{base}-r{rotation}-{digest}"


def clouds_yaml(cloud: str, settings: CredentialSettings, credential_id: str, secret: str) -> str:
    """The agent's clouds.yaml: one entry ``cloud`` authenticating with the application credential (TLS verified)."""
    entry: dict[str, Any] = {
        "auth_type": "v3applicationcredential",
        "auth": {"auth_url": settings.auth_url, "application_credential_id": credential_id,
                 "application_credential_secret": secret},
        "identity_api_version": 3,
        **({"region_name": settings.region} if settings.region else {}),
        **({"cacert": settings.cacert} if settings.cacert else {}),
    }
    return yaml.safe_dump({"clouds": {cloud: entry}}, sort_keys=True)


class ScopedCredential:
    """The application credential of one agent (a child of ``parent``) and the clouds.yaml holding it (a secret
    Output). ``calls`` is resolved from the endpoint's objects (an Output of the list of :class:`Call`)."""

    def __init__(self, name: str, base: str, cloud: str, settings: CredentialSettings, least_roles: tuple[str, ...],
                 calls: pulumi.Output, parent: pulumi.Resource, describe: str):
        import pulumi_openstack as openstack  # only a stack that makes a credential needs it here

        rules = calls.apply(lambda found: [call.rule() for call in found])
        self.resource = openstack.identity.ApplicationCredential(
            name,
            name=rules.apply(lambda found: credential_name(base, settings.rotation, found)),
            description=describe,
            roles=list(settings.roles or least_roles),
            unrestricted=False,
            access_rules=rules,
            opts=pulumi.ResourceOptions(parent=parent, delete_before_replace=False))
        self.clouds_yaml = pulumi.Output.secret(pulumi.Output.all(self.resource.id, self.resource.secret).apply(
            lambda values: clouds_yaml(cloud, settings, values[0], values[1] or "")))


def credential_problems(clouds_yaml: Any, credential: Any, root: str, snake: bool = True
                        ) -> tuple[Optional[CredentialSettings], list[Problem]]:
    """The agent's ``credential`` settings (parsed from a mapping) and every problem with them and ``clouds_yaml``:
    exactly one of the two is given."""
    clouds_key, credential_key = ("clouds_yaml", "credential") if snake else ("cloudsYaml", "credential")
    if (clouds_yaml is None) == (credential is None):
        why = ("give one of them, not both: credential makes the agent its own scoped credential, clouds_yaml gives "
               "it credentials made elsewhere" if credential is not None else
               "neither is given; give credential (the agent's own application credential, e.g. {authUrl: "
               "https://keystone.example:5000/v3}) or clouds_yaml")
        return None, [Problem(f"{root}.{credential_key}", why.replace("clouds_yaml", clouds_key))]
    if credential is None or isinstance(credential, CredentialSettings):
        return credential, []
    if not isinstance(credential, Mapping):
        return None, [Problem(f"{root}.{credential_key}", f"must be a mapping of settings (authUrl, rotation, ...), "
                                                          f"got {type(credential).__name__}")]
    try:
        return CredentialSettings.model_validate(dict(credential)), []
    except ValidationError as error:
        return None, problems_from_pydantic(error, f"{root}.{credential_key}", CredentialSettings)

"""The agents' scoped credentials under mocks (issue 52, docs/security.md): with ``credential`` the component makes
each agent its own Keystone application credential (access rules: exactly the agent's calls on this endpoint's
pools, load balancers and record; not unrestricted; the least roles), hands it to the agent in the clouds.yaml of
its Secret (a secret, ``v3applicationcredential``), and a rotation makes a new one (another name) before the old
one goes. Bad input is refused naming the key."""

from __future__ import annotations

import pytest
import yaml

from ha_endpoint import ConfigError, HaEndpoint
from ha_endpoint.backends.keepalived.watched import vip_ports
from ha_endpoint.backends.octavia.access import RecordAccess, agent_calls, watcher_reads, zones_objects
from ha_endpoint.cloud.access_rules import port_reads, record_calls, split_record_id
from ha_endpoint.kubernetes import AgentDeployment, CredentialSettings, WatcherDeployment
from ha_endpoint.kubernetes.credential import (AGENT_ROLES, APPLICATION_CREDENTIAL_TYPE, WATCHER_ROLES,
                                               clouds_yaml, credential_name)
from tests.mocks import FakeCloud, resources, run_program, run_stack
from tests.mocks.configs import amphora_endpoint
from tests.mocks.kubernetes import CLOUDS_YAML, SECRET_TYPE, kubernetes_config, watcher_config

from test_k8s_access import secret_value  # noqa: E402  (tests/unit/kubernetes is on sys.path)
from test_k8s_agent_deployment import IMAGE  # noqa: E402  (registers the RBAC kinds' handlers)

KEYSTONE = "https://keystone.example.test:5000/v3"


def _application_credential(cloud, name: str, inputs: dict) -> dict:
    return {} if cloud.preview else {"secret": f"generated-secret-of-{name}"}


resources.HANDLERS.setdefault(APPLICATION_CREDENTIAL_TYPE, _application_credential)


def run(kind: str, **args):
    def program():
        endpoint = HaEndpoint("k8s-api", amphora_endpoint())
        clouds = args.pop("clouds_yaml", None)
        if kind == "agent":
            return AgentDeployment("member-agent", endpoint, "prod", clouds, "openstack", IMAGE, **args)
        return WatcherDeployment("dns-watcher", endpoint, clouds, "openstack", IMAGE, **args)
    return run_program(program, FakeCloud.dev(), preview=False, outputs=lambda _: {})


def _pool_ids(run_) -> list[str]:
    return sorted(run_.cloud.kind("openstack:loadbalancer/pool:Pool"))


@pytest.mark.parametrize("kind", ["agent", "watcher"])
def test_each_agent_gets_its_own_credential_allowed_only_its_calls(kind):
    done = run(kind, credential=CredentialSettings(auth_url=KEYSTONE, region="RegionOne"))
    (credential,) = done.of_type(APPLICATION_CREDENTIAL_TYPE)
    inputs = credential["inputs"]
    assert inputs["unrestricted"] is False
    assert inputs["roles"] == list(AGENT_ROLES if kind == "agent" else WATCHER_ROLES)
    pools = _pool_ids(done)
    assert len(pools) == 6  # one per listener (2) and AZ (3)
    rules = inputs["accessRules"]
    lbs = sorted(done.cloud.kind("openstack:loadbalancer/loadBalancer:LoadBalancer"))
    (record_id,) = [rid for rid, state in done.cloud.kind("openstack:dns/recordSet:RecordSet").items()
                    if state.get("name") == "api.example.test."]
    if kind == "agent":  # its pools' members, and its record (a zone leaves DNS before its only member leaves)
        assert rules == [call.rule() for call in agent_calls(pools, record=RecordAccess(
            tuple(lbs), *split_record_id(record_id)))]
    else:
        assert rules == [call.rule() for call in watcher_reads(lbs) + record_calls(*split_record_id(record_id))]
        assert not [rule for rule in rules if "/pools/" in rule["path"]]  # a zone's health is its status tree
    assert {r["service"] for r in rules} == {"load-balancer", "dns"}
    assert [r["path"] for r in rules if r["service"] == "dns" and r["method"] != "GET"] == [
        f"/v2/zones/{zone or '*'}/recordsets/{recordset or '*'}" for zone, recordset in [split_record_id(record_id)]]
    assert all(rule["path"].split("/pools/")[1].split("/")[0] in pools for rule in rules if "/pools/" in rule["path"])
    assert not any(rule["method"] == "DELETE" and "/members/" not in rule["path"] for rule in rules)
    (secret,) = done.of_type(SECRET_TYPE)
    clouds = yaml.safe_load(secret_value(secret["inputs"]["stringData"])["clouds.yaml"])
    entry = clouds["clouds"]["openstack"]
    assert entry["auth_type"] == "v3applicationcredential"
    assert entry["auth"]["application_credential_id"] == credential["id"]
    assert entry["auth"]["application_credential_secret"].startswith("generated-secret-of-")
    assert "password" not in entry["auth"] and "verify" not in entry and "insecure" not in entry
    assert entry["region_name"] == "RegionOne"


def test_a_rotation_is_a_new_credential_made_before_the_old_one_goes():
    first, second = (run("agent", credential={"authUrl": KEYSTONE, "rotation": n}).of_type(
        APPLICATION_CREDENTIAL_TYPE)[0] for n in (0, 1))
    assert first["inputs"]["name"] != second["inputs"]["name"]
    assert "-r1-" in second["inputs"]["name"]
    assert second["delete_before_replace"] is False
    assert len(first["inputs"]["accessRules"]) == len(second["inputs"]["accessRules"])


def test_a_change_of_the_rules_is_a_new_name():
    rules = [call.rule() for call in agent_calls(["p1"])]
    assert credential_name("s-a", 0, rules) != credential_name("s-a", 0, [call.rule() for call in agent_calls(["p2"])])
    assert credential_name("s-a", 0, rules) == credential_name("s-a", 0, list(rules))


def test_the_clouds_yaml_verifies_tls():
    text = clouds_yaml("c", CredentialSettings(auth_url=KEYSTONE, cacert="/etc/ssl/ca.pem"), "id", "s")
    entry = yaml.safe_load(text)["clouds"]["c"]
    assert entry["cacert"] == "/etc/ssl/ca.pem" and "verify" not in entry and "insecure" not in entry


def test_the_zones_output_gives_the_load_balancers_and_pools():
    zones = {"az1": {"loadbalancerId": "lb1", "poolIds": {"6443": "p1", "443": "p2"}}, "az2": {"loadbalancerId": "lb2",
                                                                                            "poolIds": {"6443": "p3"}}}
    assert zones_objects(zones) == (["lb1", "lb2"], ["p1", "p2", "p3"])
    assert split_record_id("z/r") == ("z", "r") and split_record_id("r") == (None, None)


def test_a_keepalived_zone_gives_the_watcher_its_vip_port_to_read_and_nothing_else():
    """A keepalived zone has a VIP port and no load balancer: the watcher's credential may read that port by id (the
    in-cluster watcher polls it), no other port, and nothing of Octavia for it; an Octavia zone's VIP port is not
    read (its load balancer is)."""
    zones = {"az1": {"vipPortId": "port1", "floatingIp": "172.24.4.11"},
             "az2": {"loadbalancerId": "lb2", "poolIds": {"6443": "p3"}, "vipPortId": "lb2-port"}}
    assert vip_ports(zones) == ["port1"] and zones_objects(zones) == (["lb2"], ["p3"])
    rules = [call.rule() for call in watcher_reads(zones_objects(zones)[0]) + port_reads(vip_ports(zones))
             + record_calls("z", "r")]
    assert {"service": "network", "method": "GET", "path": "/v2.0/ports/port1"} in rules
    assert [rule for rule in rules if rule["service"] == "network"] == [
        {"service": "network", "method": "GET", "path": "/v2.0/ports/port1"}]


def _config_error(kind: str, **args) -> ConfigError:
    with pytest.raises(Exception) as raised:
        run(kind, **args)
    error = raised.value
    while not isinstance(error, ConfigError) and error.__cause__ is not None:
        error = error.__cause__
    assert isinstance(error, ConfigError), raised.value
    return error


@pytest.mark.parametrize("kind, root", [("agent", "AgentDeployment('member-agent')"),
                                        ("watcher", "WatcherDeployment('dns-watcher')")])
@pytest.mark.parametrize("args, key, words", [
    ({"credential": {"authUrl": "keystone:5000"}}, "credential.authUrl", "is not a URL"),
    ({"credential": {"authUrl": KEYSTONE, "rotation": -1}}, "credential.rotation", "below the least allowed, 0"),
    ({"credential": {"authUrl": KEYSTONE, "rotation": "2"}}, "credential.rotation", "whole number"),
    ({"credential": {"authUrl": KEYSTONE, "roles": []}}, "credential.roles", "at least 1"),
    ({"credential": {"authUrl": KEYSTONE, "secret": "x"}}, "credential.secret", "not a setting here"),
    ({"credential": {"authUrl": KEYSTONE}, "clouds_yaml": CLOUDS_YAML}, "credential", "not both"),
    ({}, "credential", "neither is given"),
])
def test_bad_credential_settings_are_refused_naming_the_key(kind, root, args, key, words):
    error = _config_error(kind, **args)
    assert any(p.path == f"{root}.{key}" and words in p.message for p in error.problems), error.problems


def _stack(fake, secret_config, **watcher):
    secret_config("ha-endpoint:kubernetes")
    config = watcher_config(**watcher)
    config.pop("cloudsYaml")
    return run_stack(fake, {"endpoint": amphora_endpoint(), "kubernetes": kubernetes_config(watcher=config)})


def test_the_stack_setting_makes_the_watcher_its_credential(secret_config):
    done = _stack(FakeCloud.dev(), secret_config, credential={"authUrl": KEYSTONE, "rotation": 2})
    (credential,) = done.of_type(APPLICATION_CREDENTIAL_TYPE)
    assert "-r2-" in credential["inputs"]["name"] and credential["inputs"]["unrestricted"] is False


def test_the_stack_setting_problems_name_the_key(secret_config):
    cloud = FakeCloud.dev()
    with pytest.raises(ConfigError) as error:
        _stack(cloud, secret_config, credential={"authUrl": KEYSTONE, "rotation": -1})
    assert [p.path for p in error.value.problems] == ["ha-endpoint:kubernetes.watcher.credential.rotation"]
    with pytest.raises(ConfigError) as error:
        _stack(cloud, secret_config)
    assert [p.path for p in error.value.problems] == ["ha-endpoint:kubernetes.watcher.credential"]
    assert cloud.registrations == []


def _plain(value):
    """``value`` with every secret (the engine's wire form) replaced by a marker: what the state shows in plain text."""
    from pulumi.runtime import rpc  # noqa: PLC0415

    if isinstance(value, dict):
        if value.get(rpc._special_sig_key) == rpc._special_secret_sig:
            return "[secret]"
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@pytest.mark.parametrize("kind", ["agent", "watcher"])
def test_the_credential_secret_is_never_plain_text_in_what_the_engine_records(kind):
    import json  # noqa: PLC0415

    done = run(kind, credential={"authUrl": KEYSTONE})
    # the inputs the program sends (the credential's own secret output is marked secret by pulumi-openstack:
    # additional_secret_outputs=["secret"])
    plain = json.dumps(_plain([r.get("inputs") for r in done.registrations]), default=str)
    assert "generated-secret-of-" not in plain and "application_credential_secret" not in plain
    assert "[secret]" in plain

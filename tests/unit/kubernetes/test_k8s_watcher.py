"""The DNS watcher beside a Kubernetes cluster (WatcherDeployment), under mocks with the real pulumi-kubernetes SDK:
the Deployment runs `python -m ha_endpoint.watch` with a command line its own parser takes, on the Secret holding the
clouds.yaml and the outputs it reads; one pod at a time; the user's provider; bad input refused naming the key."""

from __future__ import annotations

import json

import pulumi
import pulumi_kubernetes as k8s
import pytest

from ha_endpoint import ConfigError, HaEndpoint
from ha_endpoint.kubernetes import EndpointRef, WatcherDeployment, WatchOptions
from ha_endpoint.kubernetes.watcher_manifests import DEFAULT_RESOURCES, grace_seconds, watcher_args
from ha_endpoint.backends.watching import zones_of
from ha_endpoint.watch.inputs import parse
from tests.mocks import FakeCloud, run_program, run_stack
from tests.mocks.configs import amphora_endpoint
from tests.mocks.kubernetes import (CLOUDS_YAML, DEPLOYMENT_TYPE, PROVIDER_TYPE, SECRET_TYPE, CloudWithStacks,
                                    kubernetes_config, watcher_config)

from test_k8s_access import secret_value  # noqa: E402  (tests/unit/kubernetes is on sys.path)

K = "ha-endpoint:kubernetes"
WATCHER_TYPE = "haendpoint:kubernetes:WatcherDeployment"
IMAGE = "registry.example.test/ha-endpoint:0.1.0"
PROD = {"fqdn": "api.example.test.", "ports": [6443], "addresses": ["172.24.4.100", "172.24.4.101"],
        "zones": {az: {"loadbalancerId": f"lb-{az}", "poolIds": {"6443": f"pool-{az}"}, "floatingIp": address,
                       "vipAddress": f"10.0.{n}.5", "ready": True, "published": True, "gate": "readiness"}
                  for n, (az, address) in enumerate([("az1", "172.24.4.100"), ("az2", "172.24.4.101")])}}


def watcher_program(opts=None, **args):
    def program():
        endpoint = HaEndpoint("k8s-api", amphora_endpoint())
        return WatcherDeployment("dns-watcher", endpoint, args.pop("clouds_yaml", CLOUDS_YAML), "openstack",
                                 args.pop("image", IMAGE), opts=opts, **args)
    return program


def run_watcher(**args):
    return run_program(watcher_program(**args), FakeCloud.dev(), preview=False, outputs=lambda watcher: {})


def container(deployment: dict) -> dict:
    (found,) = deployment["inputs"]["spec"]["template"]["spec"]["containers"]
    return found


def test_the_deployment_runs_the_watcher_on_the_secret_one_pod_at_a_time():
    run = run_watcher(namespace="ops", options=WatchOptions(interval=2, unhealthy_polls=2, dry_run=True))
    (secret,), (deployment,) = run.of_type(SECRET_TYPE), run.of_type(DEPLOYMENT_TYPE)
    spec = deployment["inputs"]["spec"]
    assert spec["replicas"] == 1 and spec["strategy"] == {"type": "Recreate"}
    assert deployment["delete_before_replace"]  # a replaced Deployment is gone before the new one starts
    assert deployment["inputs"]["metadata"]["name"] == "dns-watcher"
    assert deployment["inputs"]["metadata"]["namespace"] == secret["inputs"]["metadata"]["namespace"] == "ops"
    watcher = container(deployment)
    assert watcher["image"] == IMAGE
    assert watcher["command"] == ["python", "-m", "ha_endpoint.watch"]
    args = parse(watcher["args"])  # the watcher's own parser takes the command line
    assert (args.outputs, args.stack) == ("/etc/ha-endpoint/outputs.json", "ha-endpoint/dev")
    assert (args.interval, args.unhealthy_polls, args.healthy_polls, args.dry_run, args.no_reach) == (
        2.0, 2, 3, True, False)
    env = {item["name"]: item["value"] for item in watcher["env"]}
    assert env["OS_CLIENT_CONFIG_FILE"] == "/etc/ha-endpoint/clouds.yaml" and env["OS_CLOUD"] == "openstack"
    pod = spec["template"]["spec"]
    (mounted,) = [volume for volume in pod["volumes"] if "secret" in volume]
    # the Secret is named by the program: a change of either file makes a new one, and the pod restarts on it
    assert "name" not in secret["inputs"]["metadata"]
    assert mounted["secret"]["secretName"] == secret["state"]["metadata"]["name"]
    assert {"name": mounted["name"], "mountPath": "/etc/ha-endpoint", "readOnly": True} in watcher["volumeMounts"]
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
    assert watcher["securityContext"]["readOnlyRootFilesystem"] is True
    assert watcher["securityContext"]["allowPrivilegeEscalation"] is False
    assert pod["automountServiceAccountToken"] is False  # it never calls the Kubernetes API
    assert set(watcher["resources"]) == {"requests", "limits"}
    assert pod["terminationGracePeriodSeconds"] >= 6 * args.connect_timeout  # a poll under way may finish


def test_the_secret_holds_the_clouds_yaml_and_what_the_watcher_reads_of_the_outputs():
    run = run_watcher()
    (secret,) = run.of_type(SECRET_TYPE)
    files = secret_value(secret["inputs"]["stringData"])  # a secret in the engine's hands (and the state)
    assert files["clouds.yaml"] == CLOUDS_YAML
    outputs = json.loads(files["outputs.json"])
    backend, zones = zones_of(outputs)
    lbs = {r["inputs"]["availabilityZone"]: r["id"] for r in run.of_type("openstack:loadbalancer/loadBalancer:"
                                                                          "LoadBalancer")}
    assert outputs["fqdn"] == "api.example.test."
    assert {az: backend.watched.owner_id(zone) for az, zone in zones.items()} == lbs
    # each zone's address is the floating IP the cloud gave that zone (allocation order is the engine's, not ours)
    fips = {r["name"]: r["state"]["address"] for r in run.of_type("openstack:networking/floatingIp:FloatingIp")}
    assert {az: zone.address for az, zone in zones.items()} == {az: fips[f"k8s-api-{az}-fip"] for az in lbs}
    assert sorted(zone.address for zone in zones.values()) == ["172.24.4.100", "172.24.4.101", "172.24.4.102"]
    assert all(set(zone) == {"loadbalancerId", "poolIds", "floatingIp", "vipAddress"}  # not what changes per run
               for zone in outputs["zones"].values())
    assert "ports" not in outputs  # an Octavia endpoint's Secret as before keepalived zones were watched


def test_a_keepalived_endpoint_is_watched_in_the_cluster_by_its_vip_ports():
    """The keepalived backend's endpoint (Pulumi.keepalived.yaml): the Secret's outputs carry each zone's VIP port and
    the endpoint's ports, and the watcher's own parsing finds every zone a keepalived one (it read only Octavia's
    before, and refused to start)."""
    from tests.unit.test_keepalived import cloud_with_members, two_per_zone

    def program():
        return WatcherDeployment("dns-watcher", HaEndpoint("k8s-api", two_per_zone()), CLOUDS_YAML, "openstack", IMAGE)
    run = run_program(program, cloud_with_members(), preview=False, outputs=lambda watcher: {})
    (secret,) = run.of_type(SECRET_TYPE)
    outputs = json.loads(secret_value(secret["inputs"]["stringData"])["outputs.json"])
    backend, zones = zones_of(outputs)
    assert (backend.name, sorted(zones)) == ("keepalived", ["az1", "az2", "az3"])
    assert all(backend.watched.owner_id(zone) == outputs["zones"][az]["vipPortId"] and zone.vip_port_id
               for az, zone in zones.items())
    assert outputs["ports"] == [6443]
    assert set(outputs["zones"]["az1"]) == {"vipPortId", "floatingIp", "vipAddress"}  # not the members' configuration


def test_children_are_the_components_and_go_to_the_provider_the_user_gives():
    def program():
        management = k8s.Provider("management", kubeconfig="apiVersion: v1\nkind: Config\n")
        return watcher_program(opts=pulumi.ResourceOptions(providers=[management]))()

    run = run_program(program, FakeCloud.dev(), preview=False, outputs=lambda watcher: {})
    (component,), (management,) = run.of_type(WATCHER_TYPE), run.of_type(PROVIDER_TYPE)
    for typ in (SECRET_TYPE, DEPLOYMENT_TYPE):
        (child,) = run.of_type(typ)
        assert child["parent"] == component["urn"]
        assert child["provider"].startswith(management["urn"] + "::")


def test_bad_input_is_refused_naming_the_key_before_anything_is_registered():
    cloud = FakeCloud.dev()
    program = watcher_program(namespace="Ops", image=" ", clouds_yaml=CLOUDS_YAML.replace("openstack:", "other:"),
                              options=WatchOptions(interval=0, unhealthy_polls=0, healthy_polls=-1,
                                                   connect_timeout=-2))
    with pytest.raises(ConfigError) as error:
        run_program(program, cloud, preview=True, outputs=lambda watcher: {})
    w = "WatcherDeployment('dns-watcher')"
    assert [str(problem) for problem in error.value.problems] == [
        f"{w}.namespace: 'Ops' is not a Kubernetes name: use 1-63 lowercase letters, digits or '-', starting and "
        "ending with a letter or digit",
        f"{w}.image: is empty; give an image with Python and this package installed (pip install ha-endpoint): "
        "there is no published image",
        f"{w}.interval: must be a number of seconds above 0, e.g. 5 (got 0)",
        f"{w}.unhealthy_polls: must be a whole number of polls, at least 1, e.g. 3 (got 0)",
        f"{w}.healthy_polls: must be a whole number of polls, at least 1, e.g. 3 (got -1)",
        f"{w}.connect_timeout: must be a number of seconds above 0, e.g. 5 (got -2)",
        f"{w}.clouds_yaml: has no entry 'openstack' (it has 'other'); give the cloud that is in it, or add that entry",
    ]
    assert not run_types(cloud) & {WATCHER_TYPE, SECRET_TYPE, DEPLOYMENT_TYPE}


def run_types(cloud) -> set:
    return {registration["type"] for registration in cloud.registrations}


def test_a_stack_the_endpoint_is_not_is_refused():
    with pytest.raises(ConfigError, match=r"\.stack: the endpoint is stack ha-endpoint/dev's, not ha-endpoint/prod's"):
        run_watcher(stack="org/ha-endpoint/prod")


def from_stack_reference(**args):
    cloud = CloudWithStacks.dev()
    cloud.stack_outputs = {"org/ha-endpoint/prod": PROD}

    def program():
        endpoint = EndpointRef.from_stack_reference(pulumi.StackReference("org/ha-endpoint/prod"))
        return WatcherDeployment("dns-watcher", endpoint, pulumi.Output.secret(CLOUDS_YAML), "openstack", IMAGE,
                                 **args)

    return run_program(program, cloud, preview=False, outputs=lambda watcher: {})


def test_from_a_stack_reference_the_stack_is_the_one_it_reads():
    run = from_stack_reference(stack="org/ha-endpoint/prod")
    (secret,), (deployment,) = run.of_type(SECRET_TYPE), run.of_type(DEPLOYMENT_TYPE)
    assert parse(container(deployment)["args"]).stack == "ha-endpoint/prod"
    outputs = json.loads(secret_value(secret["inputs"]["stringData"])["outputs.json"])
    _, zones = zones_of(outputs)
    assert [(az, zone.loadbalancer_id, zone.pool_ids, zone.address) for az, zone in zones.items()] == [
        ("az1", "lb-az1", {"6443": "pool-az1"}, "172.24.4.100"), ("az2", "lb-az2", {"6443": "pool-az2"}, "172.24.4.101")]


def test_from_a_stack_reference_without_the_stack_the_error_says_to_give_it():
    with pytest.raises(ConfigError, match=r"WatcherDeployment\('dns-watcher'\)\.stack: the endpoint comes from a "
                                          r"StackReference.*give stack='<project>/<stack>'"):
        from_stack_reference()


OPTIONS = WatchOptions(interval=0.5, unhealthy_polls=4, healthy_polls=6, connect_timeout=1.5, no_reach=True,
                       dry_run=True, region="RegionTwo")


@pytest.mark.parametrize("options", [WatchOptions(), OPTIONS], ids=["defaults", "every-option"])
def test_every_argument_built_is_one_the_watcher_takes_with_its_value(options):
    args = vars(parse(watcher_args("ha-endpoint/dev", options)))
    defaults = vars(parse(["--outputs", "-"]))
    for option in ("interval", "unhealthy_polls", "healthy_polls", "connect_timeout", "no_reach", "dry_run", "region"):
        given = getattr(options, option)
        assert args[option] == (defaults[option] if given is None else given), option


def test_the_grace_lets_a_poll_under_way_end():
    assert grace_seconds(WatchOptions()) == 20 + 6 * 2
    assert grace_seconds(WatchOptions(connect_timeout=5)) == 20 + 6 * 5
    assert grace_seconds(WatchOptions(no_reach=True)) == 20  # no connects
    assert DEFAULT_RESOURCES["limits"]["memory"] == "256Mi"


def stack(fake, secret_config=None, preview=False, **watcher):
    if secret_config:
        secret_config(K)
    return run_stack(fake, {"endpoint": amphora_endpoint(),
                            "kubernetes": kubernetes_config(watcher=watcher_config(**watcher))}, preview=preview)


def test_a_preview_shows_the_deployment_and_its_command_line(secret_config):
    run = stack(FakeCloud.dev(), secret_config, preview=True)  # the endpoint's objects do not exist yet: the files are unknown
    (deployment,) = run.of_type(DEPLOYMENT_TYPE)
    assert deployment["inputs"]["spec"]["strategy"] == {"type": "Recreate"}
    assert parse(container(deployment)["args"]).stack == "ha-endpoint/dev"


def test_the_stack_deploys_the_watcher_from_its_settings(secret_config):
    run = stack(FakeCloud.dev(), secret_config, namespace="ops", interval=2, noReach=True)
    (component,), (deployment,) = run.of_type(WATCHER_TYPE), run.of_type(DEPLOYMENT_TYPE)
    assert component["name"] == deployment["inputs"]["metadata"]["name"] == "k8s-api-watcher"
    args = parse(container(deployment)["args"])
    assert (args.stack, args.interval, args.no_reach) == ("ha-endpoint/dev", 2.0, True)
    assert deployment["provider"] == "" and run.of_type(PROVIDER_TYPE) == []  # the default provider, as clusterApi's
    (secret,) = run.of_type(SECRET_TYPE)
    assert secret_value(secret["inputs"]["stringData"])["clouds.yaml"] == CLOUDS_YAML.strip()


def test_the_stack_settings_problems_name_the_key(secret_config):
    cloud = FakeCloud.dev()
    with pytest.raises(ConfigError) as error:
        stack(cloud, secret_config, interval=-1, healthyPolls=0, cloud="prod", name="Watcher")
    assert [str(problem) for problem in error.value.problems] == [
        f"{K}.watcher.name: 'Watcher' is not a Kubernetes name: use 1-63 lowercase letters, digits or '-', starting "
        "and ending with a letter or digit",
        f"{K}.watcher.interval: must be a number of seconds above 0, e.g. 5 (got -1)",
        f"{K}.watcher.healthyPolls: must be a whole number of polls, at least 1, e.g. 3 (got 0)",
        f"{K}.watcher.cloudsYaml: has no entry 'prod' (it has 'openstack'); give the cloud that is in it, or add that "
        "entry",
    ]
    assert cloud.registrations == []


def test_a_clouds_yaml_in_plain_text_in_the_stack_file_is_refused():
    with pytest.raises(ConfigError) as error:
        stack(FakeCloud.dev())  # no secret_config: the key is not encrypted
    assert f"{K}.watcher.cloudsYaml: is stored in plain text in the stack's file; store it encrypted: pulumi config " \
           f"set --secret --path '{K}.watcher.cloudsYaml' -- \"$(cat clouds.yaml)\"" in map(str, error.value.problems)

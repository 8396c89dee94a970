"""The endpoint's whole life under the real Pulumi engine, against the local OpenStack cloud.

One stack goes through the steps a platform team goes through, in order: preview with the policy pack, up, a second
stack building on its outputs (examples/stack-reference, issue 12), a no-op preview and refresh, a rollout that
replaces every member, removing a zone (the name answering throughout; the second stack follows, then is destroyed
first), a bad config, an update killed mid-way and recovered, an update killed during a load balancer's replacement and
recovered with the old zone serving, renaming the DNS record (the old name answering until the new one does), and
destroy. Each step checks the cloud itself (openstacksdk, the cloud's DNS server named), not
only what Pulumi says.
"""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest

from localcloud.dns import query as dns_query
from localcloud.testing import Cleanup, recordsets_of_every_zone
from tests.e2e.cloud_checks import (NameSampler, RolloutSampler, loadbalancers_named, online_members_by_pool,
                                    pools_of, recordset_addresses, resolve_a)
from tests.e2e.pulumi_cli import REPO, PulumiStack, read_events

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

ENDPOINT = "e2e-api"
ZONES = ("az1", "az2", "az3")
FQDN = f"{ENDPOINT}.example.test."


RENAMED = f"{ENDPOINT}-v2"
CLIENTS_STACK = f"{ENDPOINT}-clients"
"""The second stack (examples/stack-reference): a security group of its own with egress to every published address and
every zone's VIP on every listener port, and a CNAME ``<its stack name>.example.test.`` to the endpoint's name."""
ALIAS = f"{CLIENTS_STACK}.example.test."
SECOND_AZ1_SUBNET = f"{ENDPOINT}-cp-az1-b"


def endpoint_config(byo_floating_ip: str, member_host: int = 10, zones=ZONES, ttl: int = 30, record: str = ENDPOINT,
                    az1_subnet: str = "cp-az1") -> dict:
    """The dev stack's shape under its own name, with a floating IP the user brought for az3 (az1's VIP on
    ``az1_subnet``, its members on cp-az1 all the same)."""
    zone_index = {"az1": 1, "az2": 2, "az3": 3}
    config = {
        "name": ENDPOINT,
        "loadBalancerProvider": "amphora",
        "floatingNetwork": "public",
        "allowedCidrs": ["0.0.0.0/0"],
        "zones": {zone: {"subnet": f"cp-{zone}", **({"floatingIp": byo_floating_ip} if zone == "az3" else {})}
                  for zone in zones},
        "listeners": [
            {"port": 6443, "monitor": {"type": "HTTPS", "path": "/readyz", "delay": 5, "timeout": 3}},
            {"port": 22623, "monitor": {"type": "TCP"}},
        ],
        "members": [{"name": f"cp-{zone}-{member_host}", "address": f"10.10.{zone_index[zone]}.{member_host}",
                     "az": zone} for zone in zones],
        "dns": {"dnsZone": "example.test.", "record": record, "ttl": ttl, "publish": "when-ready"},
        "readiness": {"timeoutSeconds": 300, "require": "online"},
    }
    if az1_subnet != "cp-az1":
        config["zones"]["az1"]["subnet"] = az1_subnet
        for member in config["members"]:
            if member["az"] == "az1":
                member["subnet"] = "cp-az1"
    return config


@pytest.fixture(scope="module")
def swept(localcloud):
    """Whatever an earlier, aborted run of this module left in the cloud (names and descriptions start with the
    endpoint name) is deleted first, so that this run starts from a clean cloud."""
    sweep = Cleanup(localcloud)
    sweep.prefix = ENDPOINT
    leftovers = sweep.run()
    assert not leftovers, leftovers


@pytest.fixture(scope="module")
def byo_floating_ip(cloud_admin, swept):
    """A floating IP the user allocated themselves: the stack may associate it, never delete it."""
    public = cloud_admin.network.find_network("public", ignore_missing=False)
    project = cloud_admin.identity.find_project("ha-endpoint", ignore_missing=False)
    address = cloud_admin.network.create_ip(floating_network_id=public.id, project_id=project.id,
                                            description=f"{ENDPOINT}-byo: brought by the user")
    yield address
    cloud_admin.network.delete_ip(address, ignore_missing=True)


def snapshot(conn) -> dict[str, set[str]]:
    """The ids of the objects a stack could leave behind."""
    return {
        "ports": {port.id for port in conn.network.ports()},
        "floating_ips": {ip.id for ip in conn.network.ips()},
        "security_groups": {group.id for group in conn.network.security_groups()},
        "load_balancers": {lb.id for lb in conn.load_balancer.load_balancers()},
        "recordsets": {recordset.id for _, recordset in recordsets_of_every_zone(conn)},
    }


@pytest.fixture(scope="module")
def second_az1_subnet(localcloud, cloud, swept):
    """A second subnet in az1 (on a network of its own, hinted to az1), behind the same router: moving az1's VIP there
    replaces its load balancer (Octavia cannot move a VIP). Not on az1's seeded network: a server another test boots
    there meanwhile would get an address from either subnet. Torn down after the stack is destroyed."""
    router = localcloud.seed["router_id"]
    network = cloud.network.find_network(f"{SECOND_AZ1_SUBNET}-net") or cloud.network.create_network(
        name=f"{SECOND_AZ1_SUBNET}-net", availability_zone_hints=["az1"])
    subnet = cloud.network.find_subnet(SECOND_AZ1_SUBNET) or cloud.network.create_subnet(
        name=SECOND_AZ1_SUBNET, network_id=network.id, ip_version=4, cidr="10.10.11.0/24", gateway_ip="10.10.11.1")
    if not list(cloud.network.ports(device_id=router, fixed_ips=f"subnet_id={subnet.id}")):
        cloud.network.add_interface_to_router(router, subnet_id=subnet.id)
    yield subnet
    cloud.network.remove_interface_from_router(router, subnet_id=subnet.id)
    cloud.network.delete_subnet(subnet, ignore_missing=True)
    cloud.network.delete_network(network, ignore_missing=True)


@pytest.fixture(scope="module")
def cloud_before_stack(cloud, byo_floating_ip, second_az1_subnet):
    return snapshot(cloud)


@pytest.fixture(scope="module")
def stack(tmp_path_factory, pulumi_environment, byo_floating_ip, cloud_before_stack):
    workdir = tmp_path_factory.mktemp("e2e-project")
    instance = PulumiStack.create(workdir, "e2e", pulumi_environment)
    instance.write_config(endpoint_config(byo_floating_ip.floating_ip_address))
    yield instance
    instance.destroy(check=False)


@pytest.fixture(scope="module")
def clients(tmp_path_factory, pulumi_environment, stack):
    """examples/stack-reference in a copy, reading this module's stack through a StackReference (its backend)."""
    workdir = tmp_path_factory.mktemp("e2e-clients")
    for name in ("Pulumi.yaml", "__main__.py", "requirements.txt"):
        shutil.copy2(REPO / "examples" / "stack-reference" / name, workdir / name)
    (workdir / "venv").symlink_to(REPO / ".venv")  # pulumi + pulumi-openstack, as its requirements.txt asks
    instance = PulumiStack(workdir, CLIENTS_STACK, pulumi_environment, backend=stack.backend)
    instance.run("stack", "init", CLIENTS_STACK, "--non-interactive")
    instance.run("config", "set", "endpointStack", f"organization/ha-endpoint/{stack.stack}")
    instance.run("config", "set", "openstack:cloud", pulumi_environment.get("OS_CLOUD", "localcloud"))
    yield instance
    instance.destroy(check=False)


def zone_outputs(stack: PulumiStack) -> dict:
    return stack.outputs()["zones"]


def egress_targets(cloud, group_id: str) -> set[tuple[str, int]]:
    """The second stack's group's TCP egress rules: (address/32, port)."""
    return {(rule.remote_ip_prefix, rule.port_range_min) for rule in cloud.network.security_group_rules(
        security_group_id=group_id, direction="egress") if rule.remote_ip_prefix and rule.protocol == "tcp"}


def expected_targets(outputs: dict) -> set[tuple[str, int]]:
    """What the second stack must admit: every published address and every zone's VIP, on every listener port."""
    addresses = set(outputs["addresses"]) | {zone["vipAddress"] for zone in outputs["zones"].values()}
    return {(f"{address}/32", port) for address in addresses for port in outputs["ports"]}


def test_1_preview_with_policy_pack_plans_every_zone_and_reports_no_violation(stack):
    result = stack.preview()
    for zone in ZONES:
        assert f"{ENDPOINT}-{zone}-lb" in result.stdout
    assert "Policy Violations" not in result.output
    assert "mandatory" not in result.output


def test_2_up_builds_each_zone_in_its_az_and_publishes_exactly_the_ready_addresses(stack, cloud, byo_floating_ip):
    stack.up()
    outputs = stack.outputs()
    zones = outputs["zones"]
    assert set(zones) == set(ZONES)
    for zone in ZONES:
        lb = cloud.load_balancer.get_load_balancer(zones[zone]["loadbalancerId"])
        subnet = cloud.network.find_subnet(f"cp-{zone}", ignore_missing=False)
        assert (lb.availability_zone, lb.vip_subnet_id, lb.provisioning_status) == (zone, subnet.id, "ACTIVE")
        assert sorted(listener.protocol_port
                      for listener in cloud.load_balancer.listeners(load_balancer_id=lb.id)) == [6443, 22623]
        pools = pools_of(cloud, lb.id)
        assert len(pools) == 2 and all(pool.health_monitor_id for pool in pools)
        assert set(online_members_by_pool(cloud, lb.id).values()) == {1}
        fip = next(cloud.network.ips(floating_ip_address=zones[zone]["floatingIp"]))
        assert fip.port_id == lb.vip_port_id
    assert zones["az3"]["floatingIp"] == byo_floating_ip.floating_ip_address
    published = {zones[zone]["floatingIp"] for zone in ZONES}
    assert set(outputs["addresses"]) == published
    assert resolve_a(FQDN) == published


def test_2b_a_second_stack_builds_on_the_endpoint_stacks_outputs(stack, clients, cloud):
    """Issue 12: examples/stack-reference reads the stack's outputs (the rules are planned at preview: the reference is
    read then) and builds its egress rules and CNAME on them."""
    published = stack.outputs()
    preview = clients.preview(policy=False)
    assert "api-clients-dns-" in preview.stdout
    clients.up(policy=False)
    outputs = clients.outputs()
    assert outputs["apiUrl"] == f"https://{FQDN.rstrip('.')}:6443"
    assert outputs["alias"] == ALIAS
    assert egress_targets(cloud, outputs["clientsSecurityGroupId"]) == expected_targets(published)
    assert set(dns_query.ask(ALIAS, "CNAME").records) == {FQDN}


def test_3_second_preview_and_refresh_find_nothing_to_change(stack):
    stack.preview("--expect-no-changes")
    stack.refresh("--expect-no-changes")


def test_4_replacing_every_member_never_leaves_a_zone_without_an_online_member(stack, cloud, byo_floating_ip):
    zones = zone_outputs(stack)
    address_zone = {zones[zone]["floatingIp"]: zone for zone in ZONES}
    stack.write_config(endpoint_config(byo_floating_ip.floating_ip_address, member_host=20))
    with RolloutSampler(cloud, ENDPOINT, ZONES, "example.test.", FQDN, address_zone) as sampler:
        stack.up()
    assert sampler.samples, sampler.errors
    assert {zone: sampler.min_online(zone) for zone in ZONES} == {zone: 1 for zone in ZONES}
    assert sampler.published_without_online() == []
    for zone in ZONES:
        lb_id = zone_outputs(stack)[zone]["loadbalancerId"]
        addresses = {member.address for pool in pools_of(cloud, lb_id) for member in cloud.load_balancer.members(pool.id)}
        assert addresses == {f"10.10.{ZONES.index(zone) + 1}.20"}


def test_5_removing_a_zone_unpublishes_it_before_deleting_its_lb_and_nothing_else(stack, cloud, byo_floating_ip,
                                                                                  tmp_path):
    before = zone_outputs(stack)
    stack.write_config(endpoint_config(byo_floating_ip.floating_ip_address, member_host=20, zones=("az1", "az2"),
                                       ttl=20))
    event_log = tmp_path / "remove-zone.jsonl"
    with NameSampler([FQDN]) as names:  # the record's addresses and TTL change in place: the name always answers
        stack.up("--event-log", str(event_log))
    assert names.samples and names.unanswered() == [], (names.unanswered(), names.errors)
    steps = [(event["resourcePreEvent"]["metadata"]["op"],
              event["resourcePreEvent"]["metadata"]["urn"].rsplit("::", 1)[1])
             for event in read_events(event_log) if "resourcePreEvent" in event]
    changed = {(op, name) for op, name in steps if op not in ("same", "read")}
    deleted = {name for op, name in changed if op == "delete"}
    assert f"{ENDPOINT}-az3-lb" in deleted
    assert not {name for name in deleted if "-az1-" in name or "-az2-" in name}
    zone_rules = f"-from-10.10.3.0_24"
    assert all(name == f"{ENDPOINT}-az3" or f"{ENDPOINT}-az3-" in name
               or (name.startswith(f"{ENDPOINT}-members-sg-") and name.endswith(zone_rules)) for name in deleted), deleted
    assert not {name for op, name in changed if op in ("replace", "create-replacement", "delete-replaced")}
    order = [name for op, name in steps if (op, name) in {("update", f"{ENDPOINT}-dns"),
                                                          ("delete", f"{ENDPOINT}-az3-lb")}]
    assert order == [f"{ENDPOINT}-dns", f"{ENDPOINT}-az3-lb"], order
    assert not loadbalancers_named(cloud, f"{ENDPOINT}-az3-")
    assert resolve_a(FQDN) == {before["az1"]["floatingIp"], before["az2"]["floatingIp"]}
    zone = cloud.dns.find_zone("example.test.", ignore_missing=False)
    assert [rs.ttl for rs in cloud.dns.recordsets(zone, name=FQDN)] == [20]
    byo = cloud.network.get_ip(byo_floating_ip.id)
    assert byo.port_id is None, "the user's floating IP is released from the deleted LB, not deleted"


def test_5b_the_second_stack_follows_the_lost_zone_and_is_destroyed_first(stack, clients, cloud):
    """Its next `up` admits the zones left and no more; destroyed before the endpoint (as a consumer must be), it
    leaves neither its group nor its CNAME."""
    published = stack.outputs()
    clients.up(policy=False)
    group_id = clients.outputs()["clientsSecurityGroupId"]
    assert egress_targets(cloud, group_id) == expected_targets(published)
    clients.destroy()
    assert cloud.network.find_security_group(group_id) is None
    assert set(dns_query.ask(ALIAS, "CNAME").records) == set()


def test_6_bad_config_fails_preview_with_the_message_and_creates_nothing(stack, byo_floating_ip):
    resources_before = stack.resources()
    broken = endpoint_config(byo_floating_ip.floating_ip_address, member_host=20, zones=("az1", "az2"))
    broken["members"][0]["az"] = "az9"
    stack.write_config(broken)
    result = stack.preview(check=False)
    assert result.returncode != 0
    assert ("ha-endpoint:endpoint.members[0].az: member cp-az1-20 is in zone 'az9', which is not configured"
            in result.output)
    assert "Traceback" not in result.output
    assert stack.resources() == resources_before
    stack.write_config(endpoint_config(byo_floating_ip.floating_ip_address, member_host=20, zones=("az1", "az2")))


def test_7_an_update_killed_mid_way_is_recovered_by_rerunning_without_orphans(stack, cloud, byo_floating_ip,
                                                                              tmp_path):
    stack.write_config(endpoint_config(byo_floating_ip.floating_ip_address, member_host=20))
    event_log = tmp_path / "killed.jsonl"
    process = stack.spawn_up(event_log)
    deadline = time.monotonic() + 300
    started = lambda: any(event.get("resourcePreEvent", {}).get("metadata", {}).get("urn", "").endswith(
        f"::{ENDPOINT}-az3-6443-listener") for event in read_events(event_log))
    while not started() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert process.poll() is None, f"the update ended before it could be interrupted:\n{process.stdout.read()}"
    PulumiStack.kill(process)
    interrupted = stack.export_after_kill()["deployment"].get("pending_operations") or []
    assert interrupted, "the kill left no pending operation: nothing was interrupted"
    recovered = subprocess.run([str(REPO / ".venv/bin/python"), str(REPO / "scripts/recover.py"), "--stack", stack.stack,
                                "--cwd", str(stack.workdir)], env=stack.env, capture_output=True, text=True)
    assert recovered.returncode == 0, recovered.stdout + recovered.stderr
    assert "is consistent again" in recovered.stdout, recovered.stdout
    rerun = stack.up()
    assert rerun.returncode == 0
    assert len(loadbalancers_named(cloud, f"{ENDPOINT}-az3-lb")) == 1
    az3 = loadbalancers_named(cloud, f"{ENDPOINT}-az3-lb")[0]
    assert sorted(listener.protocol_port
                  for listener in cloud.load_balancer.listeners(load_balancer_id=az3.id)) == [6443, 22623]
    assert len([ip for ip in cloud.network.ips() if (ip.description or "").startswith(f"{ENDPOINT}-az3-fip:")]) <= 1
    stack.preview("--expect-no-changes")
    zones = zone_outputs(stack)
    assert resolve_a(FQDN) == {zones[zone]["floatingIp"] for zone in ZONES}


def test_8_an_update_killed_during_a_load_balancer_replacement_is_recovered_with_the_old_zone_serving(
        stack, cloud, byo_floating_ip, second_az1_subnet, faults, tmp_path):
    """Issue 21, finding 1, under the real engine: az1's VIP moves to another subnet, so its load balancer is replaced
    create-before-delete, the new one named like the serving one. The new one's create is held in flight by the
    Octavia API (it never reaches Octavia) while `pulumi up` is killed: recovery finds the serving load balancer by
    that name and this stack's identity, sees that the state records it, and leaves it alone (it used to delete it,
    cascade). The zone keeps serving; the rerun finishes the replacement."""
    outputs = zone_outputs(stack)
    serving = outputs["az1"]["loadbalancerId"]
    stack.write_config(endpoint_config(byo_floating_ip.floating_ip_address, member_host=20,
                                       az1_subnet=SECOND_AZ1_SUBNET))
    injected = time.time()
    faults.octavia_api_unavailable(600, 503, method="POST", path="/lbaas/loadbalancers", body=f"{ENDPOINT}-az1-lb",
                                   hold=20)  # this stack's az1 load balancer only: other stacks are not harmed
    try:
        process = stack.spawn_up(tmp_path / "killed-replacement.jsonl")
        deadline = time.monotonic() + 300
        while not faults.octavia_api_held_requests(injected) and process.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        assert process.poll() is None, f"the update ended before the create was held:\n{process.stdout.read()}"
        PulumiStack.kill(process)
        while not faults.octavia_api_faulted_requests(injected) and time.monotonic() < deadline:
            time.sleep(0.2)  # the held create is answered 503 and dropped: it never reached Octavia
    finally:
        faults.octavia_api_available()
    pending = [op["resource"]["urn"] for op in stack.export_after_kill()["deployment"].get("pending_operations") or []]
    assert any(urn.endswith(f"::{ENDPOINT}-az1-lb") for urn in pending), pending
    assert [lb.id for lb in loadbalancers_named(cloud, f"{ENDPOINT}-az1-lb")] == [serving]
    recovered = subprocess.run([str(REPO / ".venv/bin/python"), str(REPO / "scripts/recover.py"), "--stack", stack.stack,
                                "--cwd", str(stack.workdir)], env=stack.env, capture_output=True, text=True)
    assert recovered.returncode == 0, recovered.stdout + recovered.stderr
    assert f"{ENDPOINT}-az1-lb: {serving} carries its name but is recorded in the state (live): left alone" in \
        recovered.stdout, recovered.stdout
    lb = cloud.load_balancer.get_load_balancer(serving)  # still there, still serving, still published
    assert (lb.provisioning_status, lb.operating_status) == ("ACTIVE", "ONLINE")
    assert set(online_members_by_pool(cloud, serving).values()) == {1}
    assert outputs["az1"]["floatingIp"] in resolve_a(FQDN)
    address_zone = {zone["floatingIp"]: az for az, zone in outputs.items()}
    with RolloutSampler(cloud, ENDPOINT, ZONES, "example.test.", FQDN, address_zone) as sampler:
        stack.up()  # the replacement is made before the serving load balancer is deleted
    assert sampler.samples, sampler.errors
    assert sampler.min_online("az1") == 1 and sampler.published_without_online() == []
    (replaced,) = loadbalancers_named(cloud, f"{ENDPOINT}-az1-lb")
    assert replaced.id != serving and replaced.vip_subnet_id == second_az1_subnet.id
    assert set(online_members_by_pool(cloud, replaced.id).values()) == {1}
    stack.preview("--expect-no-changes")


def test_9_renaming_the_record_creates_the_new_name_before_the_old_one_goes(stack, cloud, byo_floating_ip):
    """Issue 21, finding 5: a record whose name changes is replaced create-first (no 409: the names differ), so that
    some name answers at every moment and the old one until the new one does."""
    renamed = f"{RENAMED}.example.test."
    stack.write_config(endpoint_config(byo_floating_ip.floating_ip_address, member_host=20,
                                       az1_subnet=SECOND_AZ1_SUBNET, record=RENAMED))
    with NameSampler([FQDN, renamed]) as names:
        stack.up()
    assert names.samples and not names.errors, names.errors
    assert names.unanswered() == [], "neither name answered at these times"
    assert names.first_answer(renamed) is not None and names.first_answer(renamed) <= names.last_answer(FQDN), \
        "the old name stopped answering before the new one answered"
    published = {zone["floatingIp"] for zone in zone_outputs(stack).values()}
    assert resolve_a(renamed) == published and resolve_a(FQDN) == set()


def test_10_destroy_leaves_nothing_of_the_stack_but_the_users_floating_ip(stack, cloud, byo_floating_ip,
                                                                         cloud_before_stack):
    lb_ids = {r["id"] for r in stack.resources() if r["type"] == "openstack:loadbalancer/loadBalancer:LoadBalancer"}
    stack.destroy()
    assert loadbalancers_named(cloud, ENDPOINT) == []
    left = {kind: ids - cloud_before_stack[kind] for kind, ids in snapshot(cloud).items()}
    # Other stacks may come and go in the same project meanwhile: what is left must not be this stack's.
    ours = {
        "ports": {p.id for p in cloud.network.ports() if p.id in left["ports"]
                  and any(p.name == f"octavia-lb-{lb}" for lb in lb_ids)},
        "floating_ips": {ip.id for ip in cloud.network.ips() if ip.id in left["floating_ips"]
                         and (ip.description or "").startswith(ENDPOINT)},
        "security_groups": {g.id for g in cloud.network.security_groups() if g.id in left["security_groups"]
                            and g.name.startswith(ENDPOINT)},
        "load_balancers": {lb.id for lb in cloud.load_balancer.load_balancers() if lb.id in left["load_balancers"]
                           and lb.name.startswith(ENDPOINT)},
        "recordsets": {rs.id for _, rs in recordsets_of_every_zone(cloud)
                       if rs.id in left["recordsets"] and ENDPOINT in rs.name},
    }
    assert ours == {kind: set() for kind in ours}, "the destroyed stack left objects behind"
    assert recordset_addresses(cloud, "example.test.", FQDN) == set()
    assert recordset_addresses(cloud, "example.test.", f"{RENAMED}.example.test.") == set()
    assert cloud.network.get_ip(byo_floating_ip.id).port_id is None
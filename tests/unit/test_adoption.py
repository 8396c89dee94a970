"""zones.<az>.adopt: an existing load balancer tree and its floating IP taken over through Pulumi's import option
(docs/adoption.md), never replaced or moved without allowReplacement, and never deleted by the stack."""

from __future__ import annotations

import pytest

from ha_endpoint import CloudLookupError, ConfigError
from ha_endpoint.core import contract
from ha_endpoint.core.cloud_facts import AdoptedListener
from tests.mocks import FakeCloud, run_component
from tests.mocks.adopted import capo_lb
from tests.mocks.configs import amphora_endpoint

ROOT = "HaEndpoint('k8s-api').args"


def adopting(**adopt) -> dict:
    raw = amphora_endpoint()
    raw["zones"]["az1"]["adopt"] = {"loadBalancer": "capo-kubeapi", **adopt}
    return raw


def refusals(raw: dict, cloud: FakeCloud, error: type = ConfigError) -> list:
    """The problems a preview of ``raw`` on ``cloud`` stops at."""
    with pytest.raises(error) as caught:
        run_component(raw, cloud, preview=True)
    return caught.value.problems


def imported(run) -> dict[str, tuple[str, bool]]:
    """Resource name -> (import id, retained) of every imported resource."""
    return {r["name"]: (r["import_id"], r["retain_on_delete"]) for r in run.registrations if r.get("import_id")}


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_the_adopted_tree_and_floating_ip_are_imported_and_retained(preview):
    cloud = FakeCloud.dev(preview=preview)
    fip_id = capo_lb(cloud).floating_ip.id
    run = run_component(adopting(), cloud, preview=preview)
    assert imported(run) == {
        "k8s-api-az1-lb": ("lb-1", True),
        "k8s-api-az1-6443-listener": ("listener-1", True),
        "k8s-api-az1-6443-pool": ("pool-1", True),
        "k8s-api-az1-6443-monitor": ("monitor-1", True),
        "k8s-api-az1-6443-member-10.10.1.10": ("pool-1/member-1", True),
        "k8s-api-az1-fip-assoc": (fip_id, True),
    }
    # the adopted objects get the stack's identity (the update that follows the import writes it) and keep their
    # names (CAPO finds its objects by name); what had no name gets the endpoint's
    lb = run.named("k8s-api-az1-lb")["inputs"]
    assert "ha-endpoint:stack=ha-endpoint/dev" in lb["tags"] and lb["name"] == "capo-kubeapi"
    assert "[ha-endpoint ha-endpoint/dev k8s-api-az1-lb]" in lb["description"]
    assert run.named("k8s-api-az1-6443-member-10.10.1.10")["inputs"]["name"] == "capo-control-plane-0"
    # ... except the adopted member, taken as it is: an update without its admin state would make the ovn provider
    # report it NO_MONITOR, and the gate would wait out its timeout on a member that serves
    assert run.named("k8s-api-az1-6443-member-10.10.1.10")["ignore_changes"] == ["name", "tags"]
    assert run.named("k8s-api-az2-6443-member-10.10.2.10")["ignore_changes"] == []
    assert run.named("k8s-api-az1-6443-listener")["inputs"]["name"] == "k8s-api-az1-6443-listener"
    # the adopted floating IP is brought, never allocated (so never deleted); the other zones allocate theirs
    assert sorted(r["name"] for r in run.of_type(contract.FLOATING_IP_TYPE)) == ["k8s-api-az2-fip", "k8s-api-az3-fip"]
    # the adopted member is never drained when the zone goes: it is left serving
    assert run.named("k8s-api-az1-6443-member-10.10.1.10-drain")["retain_on_delete"]
    assert not run.named("k8s-api-az2-6443-member-10.10.2.10-drain")["retain_on_delete"]


def test_objects_the_adopted_load_balancer_lacks_are_created_not_imported():
    cloud = FakeCloud.dev()
    capo_lb(cloud)
    run = run_component(adopting(), cloud)
    assert "k8s-api-az1-22623-listener" not in imported(run)  # CAPO's load balancer has no 22623 listener: created
    assert run.named("k8s-api-az1-22623-listener")["id"]
    assert not any(name.startswith(("k8s-api-az2", "k8s-api-az3")) for name in imported(run))


def test_a_load_balancer_that_does_not_exist_is_refused_naming_the_key():
    cloud = FakeCloud.dev()
    problems = refusals(adopting(), cloud, CloudLookupError)
    assert [str(problem) for problem in problems] == [
        f"{ROOT}.zones.az1.adopt.loadBalancer: no load balancer 'capo-kubeapi' was found (openstack loadbalancer "
        "list); give the name or id of an existing one"]
    assert not [r for r in cloud.registrations if r["custom"]], "nothing is created"


def test_a_different_vip_subnet_would_replace_the_load_balancer_and_is_refused():
    cloud = FakeCloud.dev()
    capo_lb(cloud, vip_subnet_id=cloud.subnet_id("cp-extra"))
    problems = refusals(adopting(), cloud)
    problems = [str(problem) for problem in problems]
    assert len(problems) == 1 and problems[0].startswith(f"{ROOT}.zones.az1.subnet: adopting load balancer "
                                                         "capo-kubeapi (lb-1) in zone az1 would replace it")
    assert f"set subnet: {cloud.subnet_id('cp-extra')}" in problems[0]
    assert "zones.az1.adopt.allowReplacement: true" in problems[0]
    assert not [r for r in cloud.registrations if r["custom"]], "nothing is created"


def test_allow_replacement_builds_a_new_load_balancer_and_moves_only_the_floating_ip():
    cloud = FakeCloud.dev()
    found = capo_lb(cloud, provider="ovn", availability_zone=None)
    run = run_component(adopting(allowReplacement=True), cloud)
    assert imported(run) == {"k8s-api-az1-fip-assoc": (found.floating_ip.id, True)}
    vip_port = run.named("k8s-api-az1-lb")["state"]["vipPortId"]
    assert vip_port != found.vip_port_id and cloud.floating_ips[found.floating_ip.id].port_id == vip_port


def test_a_listener_of_another_protocol_or_a_monitor_of_another_type_is_refused():
    cloud = FakeCloud.dev()
    capo_lb(cloud, listeners=(AdoptedListener("listener-1", 6443, "HTTPS", "pool-1", "HTTPS", "monitor-1", "TCP"),))
    problems = refusals(adopting(), cloud)
    assert [problem.path for problem in problems] == [f"{ROOT}.listeners[0].protocol"]
    assert "set protocol: HTTPS" in str(problems[0])
    capo_lb(cloud, listeners=(AdoptedListener("listener-1", 6443, "TCP", "pool-1", "TCP", "monitor-1", "TCP"),))
    problems = refusals(adopting(), cloud)
    assert [str(problem) for problem in problems] == [
        f"{ROOT}.listeners[0].monitor.type: load balancer capo-kubeapi (lb-1)'s health monitor on port 6443 is TCP, "
        "and the endpoint's is HTTPS: Octavia cannot change a monitor's type, and a pool holds one monitor; set "
        "monitor.type: TCP"]


def test_a_floating_ip_given_beside_the_adopted_one_would_move_it_and_is_refused():
    cloud = FakeCloud.dev()
    capo_lb(cloud)
    raw = adopting()
    raw["zones"]["az1"]["floatingIp"] = "172.24.4.51"
    cloud.bring_floating_ip(cloud.network_id("public"), "172.24.4.51")
    problems = refusals(raw, cloud)
    assert [str(problem) for problem in problems] == [
        f"{ROOT}.zones.az1.floatingIp: load balancer capo-kubeapi (lb-1) serves floating IP 172.24.4.50, and "
        "floatingIp 172.24.4.51 would take its place (its clients lose the address); remove floatingIp: the adopted "
        "zone keeps 172.24.4.50"]


def test_the_record_that_publishes_the_adopted_address_is_taken_over_and_any_other_is_refused():
    cloud = FakeCloud.dev()
    capo_lb(cloud)
    zone_id = next(iter(cloud.dns_zones))
    cloud.foreign_records[(zone_id, "api.example.test.")] = ("rs-1", ("172.24.4.50",))
    run = run_component(adopting(), cloud, preview=True)
    assert imported(run)["k8s-api-dns"] == (f"{zone_id}/rs-1", True)
    cloud = FakeCloud.dev()
    capo_lb(cloud)
    cloud.foreign_records[(zone_id, "api.example.test.")] = ("rs-1", ("172.24.4.50", "192.0.2.7"))
    with pytest.raises(ConfigError, match=r"dns\.record: api\.example\.test\. is published already by a record set "
                                          r"ha-endpoint did not make"):
        run_component(adopting(), cloud, preview=True)


def test_one_load_balancer_adopted_by_two_zones_or_by_another_backend_is_refused():
    raw = adopting()
    raw["zones"]["az2"]["adopt"] = {"loadBalancer": "capo-kubeapi"}
    problems = refusals(raw, FakeCloud.dev())
    assert [str(problem) for problem in problems] == [
        f"{ROOT}.zones.az2.adopt.loadBalancer: load balancer 'capo-kubeapi' is already adopted by zone az1; one load "
        "balancer serves one zone: remove adopt from zone az2"]
    raw = adopting(allowReplacement="yes")
    with pytest.raises(ConfigError, match=r"zones\.az1\.adopt\.allowReplacement"):
        run_component(raw, FakeCloud.dev(), preview=True)


def test_the_adopted_zone_alone_is_the_way_back_and_any_other_single_zone_is_refused():
    cloud = FakeCloud.dev()
    capo_lb(cloud)
    raw = adopting()
    for az in ("az2", "az3"):
        del raw["zones"][az]
    raw["members"] = [member for member in raw["members"] if member["az"] == "az1"]
    run = run_component(raw, cloud, preview=True)
    assert [r["name"] for r in run.of_type(contract.LOADBALANCER_TYPE)] == ["k8s-api-az1-lb"]
    del raw["zones"]["az1"]["adopt"]
    with pytest.raises(ConfigError, match=r"zones: 1 zone\(s\) given \(az1\); an HA endpoint needs at least 2"):
        run_component(raw, FakeCloud.dev(), preview=True)


def test_the_taken_over_record_stays_adopted_once_it_publishes_every_zone():
    """A later run finds the record publishing all three zones; its description says it was taken over, so it is
    still imported and retained (the way back leaves it publishing the adopted address)."""
    from ha_endpoint.core.cloud_facts import ADOPTED_RECORD_TEXT

    cloud = FakeCloud.dev()
    capo_lb(cloud)
    zone_id = next(iter(cloud.dns_zones))
    cloud.foreign_records[(zone_id, "api.example.test.")] = ("rs-1", ("172.24.4.50",))
    run = run_component(adopting(), cloud)
    record = run.named("k8s-api-dns")
    assert record["inputs"]["description"].startswith(ADOPTED_RECORD_TEXT) and record["retain_on_delete"]
    state = cloud.kind(contract.RECORDSET_TYPE)["rs-1"]
    cloud.foreign_records[(zone_id, "api.example.test.")] = ("rs-1", tuple(sorted(state["records"])))
    cloud.registrations.clear()
    run = run_component(adopting(), cloud, preview=True)
    assert imported(run)["k8s-api-dns"] == (f"{zone_id}/rs-1", True)


def test_the_tree_read_from_the_cloud_holds_only_the_adopted_load_balancers_listeners():
    """openstacksdk lists every listener of the project when its filter keyword is wrong (``loadbalancer_id`` is
    dropped without a word: measured on the local cloud, where `make test` adopted the dev stack's listener beside
    it). The reading asks with the right keyword and keeps only listeners that name the load balancer."""
    from types import SimpleNamespace

    from ha_endpoint.backends.octavia.adopted_tree import read_tree

    def listener(lid, lb, port):
        return SimpleNamespace(id=lid, load_balancers=[{"id": lb}], protocol_port=port, protocol="TCP",
                               default_pool_id=None, name=f"{lid}-name")

    everyone = [listener("other-6443", "other-lb", 6443), listener("capo-6443", "capo-lb", 6443)]

    class LoadBalancer:
        def find_load_balancer(self, ref, ignore_missing):
            return SimpleNamespace(id="capo-lb", name=ref, vip_port_id="vip", vip_subnet_id="subnet",
                                   vip_address="10.10.1.5", provider="ovn", availability_zone=None)

        def listeners(self, **query):   # as openstacksdk: its own keyword filters, any other is ignored
            wanted = query.get("load_balancer_id")
            return [item for item in everyone if wanted is None or item.load_balancers[0]["id"] == wanted]

    conn = SimpleNamespace(load_balancer=LoadBalancer(), network=SimpleNamespace(ips=lambda port_id: []))
    tree = read_tree(conn, "capo-kubeapi")
    assert [found.id for found in tree.listeners] == ["capo-6443"]
    everyone.reverse()
    LoadBalancer.listeners = lambda self, **query: everyone   # a cloud that filters nothing
    assert [found.id for found in read_tree(conn, "capo-kubeapi").listeners] == ["capo-6443"]

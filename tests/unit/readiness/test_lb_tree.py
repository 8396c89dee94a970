"""LoadBalancerTree (loadBalancerCreate: single-call) against a stateful Octavia (octavia_tree_fake, served through the
real OctaviaTreeSource): what a user notices of its create, update, diff, refresh and delete, and the member set's
wait for the members the tree's create wrote (the ``unseen`` rule of ha_endpoint.readiness.reconcile)."""

from __future__ import annotations

import copy

import pytest

from ha_endpoint.core import contract
from ha_endpoint.readiness import cloud, lb_tree, member_set
from ha_endpoint.readiness.errors import FetchFailed, TreeError, TreeNotOurs
from ha_endpoint.readiness.lb_tree import CHILDREN_GRACE_SECONDS, LoadBalancerTreeProvider
from ha_endpoint.readiness.member_set import MemberSetProvider
from ha_endpoint.readiness.tree_inputs import CREATE_TOKEN_PREFIX
from octavia_batch_fake import BatchOctavia
from octavia_tree_fake import TreeOctavia
from readiness_fakes import FakeClock

IDENTITY = "ha-endpoint:stack=ha-endpoint/dev"
TAGS = ["production", IDENTITY]
API = ["10.10.1.10", "10.10.1.11", "10.10.1.12"]


@pytest.fixture
def octavia(monkeypatch):
    clock = FakeClock()
    fake = TreeOctavia(clock)
    monkeypatch.setattr(cloud, "connect", fake.connect)
    monkeypatch.setattr(lb_tree, "_now", clock)
    monkeypatch.setattr(lb_tree, "_sleep", clock.sleep)
    return fake


def pool_name(port):
    return f"ep-az1-{port}-pool"


def listener(port, monitor="TCP", addresses=API, delay=5, lb_method="ROUND_ROBIN", **overrides):
    entry = {
        "name": f"ep-az1-{port}", "description": f"HA endpoint ep: port {port}", "protocol": "TCP",
        "protocol_port": port, "allowed_cidrs": ["10.0.0.0/8", "192.168.0.0/16"], "default_tls_container_ref": None,
        "pool": {"name": pool_name(port), "description": f"members of port {port}", "protocol": "TCP",
                 "lb_method": lb_method},
        "monitor": None if monitor is None else {
            "name": f"ep-az1-{port}-monitor", "type": monitor, "delay": delay, "timeout": 3, "max_retries": 3,
            "max_retries_down": 3,
            **({"url_path": "/readyz", "expected_codes": "200"} if monitor in ("HTTP", "HTTPS") else {})},
        "members": [{"name": f"n-{a}", "address": a, "protocol_port": port, "weight": 1} for a in addresses],
        "member_tag": contract.member_set_tag(pool_name(port))}
    entry.update(overrides)
    return entry


def bag(listeners=None, **overrides):
    props = {"name": "ep-az1-lb", "description": "HA endpoint ep: load balancer of zone az1",
             "vip_subnet_id": "subnet-1", "availability_zone": "az1", "loadbalancer_provider": "amphora",
             "tags": list(TAGS), "identity_tag": IDENTITY,
             "listeners": listeners if listeners is not None else [listener(6443), listener(22623, "HTTP")],
             "write_timeout_seconds": 300, "cloud": None, "region": None, "cloud_source": "stack", "__provider": "x"}
    props.update(overrides)
    return props


def engine(value):
    """A bag as the dynamic-provider host hands it over: no null values in any object (the engine stores none, and
    deserializing drops them)."""
    if isinstance(value, dict):
        return {key: engine(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [engine(item) for item in value]
    return value


def create(props):
    """A create as the engine runs it: (id, the state it stores)."""
    result = LoadBalancerTreeProvider().create(engine(props))
    return result.id, engine({**result.outs, "__provider": "x"})


def update(lb_id, olds, news):
    news = engine(news)
    diff = LoadBalancerTreeProvider().diff(lb_id, olds, news)
    assert diff.changes and not diff.replaces, diff
    return engine({**LoadBalancerTreeProvider().update(lb_id, olds, news).outs, "__provider": "x"})


def refresh(lb_id, olds):
    read = LoadBalancerTreeProvider().read(lb_id, olds)
    return read.id, engine({**read.outs, "__provider": "x"})


def diff(olds, news, lb_id="lb"):
    return LoadBalancerTreeProvider().diff(lb_id, olds, engine(news))


# ----- create ------------------------------------------------------------------------------------------------------

def test_a_create_posts_the_whole_tree_in_one_call_and_returns_once_octavia_lists_it_active(octavia):
    lb_id, state = create(bag())
    posts = octavia.calls("POST")
    assert len(posts) == 1 and not octavia.calls("PUT") and not octavia.calls("DELETE")
    body = posts[0][2]["loadbalancer"]
    assert body["vip_subnet_id"] == "subnet-1" and body["availability_zone"] == "az1" and body["provider"] == "amphora"
    token = state["create_token"]
    assert token.startswith(CREATE_TOKEN_PREFIX) and set(body["tags"]) == {*TAGS, token}
    by_port = {entry["protocol_port"]: entry for entry in body["listeners"]}
    assert set(by_port) == {6443, 22623}
    for port, entry in by_port.items():
        assert set(entry["tags"]) == set(TAGS)
        pool = entry["default_pool"]
        assert pool["name"] == pool_name(port) and set(pool["tags"]) == set(TAGS)
        assert pool["healthmonitor"]["name"] == f"ep-az1-{port}-monitor"
        assert {(m["address"], m["protocol_port"]) for m in pool["members"]} == {(a, port) for a in API}
        assert all(set(m["tags"]) == {*TAGS, contract.member_set_tag(pool_name(port))} for m in pool["members"])
    assert by_port[22623]["default_pool"]["healthmonitor"]["url_path"] == "/readyz"
    # the outputs name what Octavia made, by port
    assert list(octavia.load_balancers()) == [lb_id]
    for kind, output in (("listener", "listener_ids"), ("pool", "pool_ids"), ("healthmonitor", "monitor_ids")):
        made = octavia.under(lb_id, kind)
        assert sorted(state[output].values()) == sorted(found["id"] for found in made)
        assert set(state[output]) == {"6443", "22623"}
    listeners = {found["id"]: found for found in octavia.under(lb_id, "listener")}
    assert listeners[state["listener_ids"]["6443"]]["protocol_port"] == 6443
    assert listeners[state["listener_ids"]["6443"]]["default_pool_id"] == state["pool_ids"]["6443"]
    # returned once everything is ACTIVE, not before
    assert octavia.clock.now >= octavia.create_seconds
    assert state["provisioning_status"] == "ACTIVE" and state["vip_port_id"] == f"port-{lb_id}"
    assert all(found["provisioning_status"] == "ACTIVE" for kind in ("listener", "pool", "healthmonitor")
               for found in octavia.under(lb_id, kind))
    assert state["last_change"]["writes"] == 1
    assert all(conn.closed for conn in octavia.connections)


def test_the_state_of_a_create_shows_no_change_at_the_next_preview(octavia):
    lb_id, state = create(bag())
    result = diff(state, bag(), lb_id)
    assert not result.changes and not result.replaces


@pytest.mark.parametrize("lost", ["504", "timeout"])
def test_a_post_whose_answer_is_lost_finds_the_load_balancer_it_made_instead_of_posting_another(octavia, lost):
    octavia.lost_posts = [lost]
    lb_id, state = create(bag())
    assert len(octavia.calls("POST")) == 1
    assert list(octavia.load_balancers()) == [lb_id]
    assert state["create_token"] in octavia.load_balancers()[lb_id]["tags"]
    assert set(state["pool_ids"]) == {"6443", "22623"}


def test_a_post_refused_before_anything_was_made_is_posted_again(octavia):
    octavia.refuse_posts = [503]
    lb_id, _ = create(bag())
    assert len(octavia.calls("POST")) == 2 and list(octavia.load_balancers()) == [lb_id]


def test_a_post_the_provider_does_not_implement_fails_at_once_leaving_nothing(octavia):
    octavia.refuse_posts = [501]
    with pytest.raises(FetchFailed) as caught:
        create(bag())
    assert "501" in str(caught.value)
    assert len(octavia.calls("POST")) == 1 and not octavia.load_balancers()


def test_children_left_pending_create_fail_the_create_and_the_load_balancer_is_deleted_again(octavia):
    """Octavia 11's amphora driver: the load balancer ACTIVE, its listeners, pools and monitors PENDING_CREATE for good."""
    octavia.stuck_children = True
    with pytest.raises(TreeError) as caught:
        create(bag())
    message = str(caught.value)
    assert "loadBalancerCreate: per-object" in message and "PENDING_CREATE" in message
    assert "nothing is left behind" in message
    assert octavia.clock.now >= octavia.create_seconds + CHILDREN_GRACE_SECONDS
    assert len(octavia.calls("POST")) == 1 and len(octavia.calls("DELETE")) == 1
    assert not octavia.load_balancers() and not any(octavia.objects[kind] for kind in octavia.objects)


def test_a_load_balancer_going_to_error_fails_the_create_and_is_deleted_again(octavia):
    octavia.create_error = True
    with pytest.raises(TreeError) as caught:
        create(bag())
    message = str(caught.value)
    assert "ERROR" in message and "nothing is left behind" in message
    assert len(octavia.calls("DELETE")) == 1 and not octavia.load_balancers()


# ----- update ------------------------------------------------------------------------------------------------------

def test_a_monitor_delay_change_is_one_put_to_that_monitor_applied_before_the_update_returns(octavia):
    lb_id, olds = create(bag())
    start = octavia.clock.now
    state = update(lb_id, olds, bag([listener(6443, delay=10), listener(22623, "HTTP")]))
    puts = octavia.calls("PUT")
    monitor_id = olds["monitor_ids"]["6443"]
    assert [(path, body["healthmonitor"]["delay"]) for _, path, body, _ in puts] == [
        (f"/lbaas/healthmonitors/{monitor_id}", 10)]
    assert octavia.objects["healthmonitor"][monitor_id]["delay"] == 10
    assert octavia.clock.now - start >= octavia.apply_seconds  # waited until Octavia applied it
    assert octavia.load_balancers()[lb_id]["provisioning_status"] == "ACTIVE"
    assert state["provisioning_status"] == "ACTIVE" and state["live"]["monitors"]["6443"]["delay"] == 10
    assert state["monitor_ids"] == olds["monitor_ids"] and state["last_change"]["writes"] == 1
    assert not diff(state, bag([listener(6443, delay=10), listener(22623, "HTTP")]), lb_id).changes


def test_several_changes_are_one_put_each_each_applied_before_the_next(octavia):
    lb_id, olds = create(bag())
    update(lb_id, olds, bag([listener(6443, lb_method="LEAST_CONNECTIONS"), listener(22623, "HTTP")],
                            description="moved"))
    puts = [path for _, path, _, _ in octavia.calls("PUT")]
    assert sorted(puts) == sorted([f"/lbaas/loadbalancers/{lb_id}", f"/lbaas/pools/{olds['pool_ids']['6443']}"])
    assert not octavia.refused  # each write waited for the one before
    assert octavia.load_balancers()[lb_id]["description"] == "moved"
    assert octavia.objects["pool"][olds["pool_ids"]["6443"]]["lb_algorithm"] == "LEAST_CONNECTIONS"
    # the load balancer's tags keep the create's token
    assert olds["create_token"] in octavia.load_balancers()[lb_id]["tags"]


def test_a_409_while_another_write_is_applied_is_retried(octavia):
    lb_id, olds = create(bag())
    octavia.busy(lb_id, 10.0)
    start = octavia.clock.now
    update(lb_id, olds, bag([listener(6443, delay=10), listener(22623, "HTTP")]))
    assert octavia.refused and all(what == "PUT" for _, what, _ in octavia.refused)
    assert octavia.clock.now - start >= 10.0
    assert octavia.objects["healthmonitor"][olds["monitor_ids"]["6443"]]["delay"] == 10


def test_an_update_writes_no_member(octavia):
    lb_id, olds = create(bag())
    before = copy.deepcopy(octavia.members)
    update(lb_id, olds, bag([listener(6443, delay=10, addresses=API[:1]), listener(22623, "HTTP")]))
    assert octavia.members == before
    assert all("/members" not in path for _, path, _, _ in octavia.calls("PUT"))


# ----- diff --------------------------------------------------------------------------------------------------------

def test_nothing_changed_is_no_change_with_nulls_dropped_anywhere(octavia):
    props = bag([listener(6443, None), listener(22623, "HTTP")], availability_zone=None, loadbalancer_provider=None)
    lb_id, state = create(props)
    assert "availability_zone" not in state and "monitor" not in state["listeners"][0]
    result = diff(state, props, lb_id)
    assert not result.changes and not result.replaces
    # news that still hold the nulls (a host that keeps them) are no change either
    result = LoadBalancerTreeProvider().diff(lb_id, state, props)
    assert not result.replaces


@pytest.mark.parametrize("change, replaces", [
    (dict(vip_subnet_id="subnet-2"), ["vip_subnet_id"]),
    (dict(availability_zone="az2"), ["availability_zone"]),
    (dict(listeners=[listener(6443), listener(22623, "HTTP"), listener(443)]), ["listeners"]),
    (dict(listeners=[listener(6443)]), ["listeners"]),
    (dict(listeners=[listener(6443, "HTTP"), listener(22623, "HTTP")]), ["listeners"]),
    (dict(listeners=[listener(6443, None), listener(22623, "HTTP")]), ["listeners"]),
    (dict(listeners=[listener(6443, protocol="HTTP"), listener(22623, "HTTP")]), ["listeners"]),
])
def test_what_cannot_change_in_place_is_a_new_tree_created_before_the_old_one_is_deleted(octavia, change,
                                                                                         replaces):
    lb_id, state = create(bag())
    result = diff(state, bag(**change), lb_id)
    assert result.changes and result.replaces == replaces and result.delete_before_replace is False


@pytest.mark.parametrize("change", [
    dict(listeners=[listener(6443, delay=10), listener(22623, "HTTP")]),
    dict(description="another"),
    dict(tags=[*TAGS, "team-a"]),
    dict(listeners=[listener(6443, allowed_cidrs=["0.0.0.0/0"]), listener(22623, "HTTP")]),
])
def test_what_can_change_in_place_is_an_update(octavia, change):
    lb_id, state = create(bag())
    result = diff(state, bag(**change), lb_id)
    assert result.changes and not result.replaces


def test_a_change_of_the_members_alone_is_no_change_of_the_tree(octavia):
    lb_id, state = create(bag())
    news = bag([listener(6443, addresses=["10.10.1.99"]), listener(22623, "HTTP", addresses=API[:2])])
    result = diff(state, news, lb_id)
    assert not result.changes and not result.replaces


def test_a_new_member_whose_address_is_unknown_at_preview_is_no_change_of_the_tree(octavia):
    """A member added with its port in the same update: its address is unknown at preview."""
    from ha_endpoint.readiness.provider import UNKNOWN
    lb_id, state = create(bag())
    news = bag([listener(6443, addresses=[*API, UNKNOWN]), listener(22623, "HTTP")])
    result = diff(state, news, lb_id)
    assert not result.changes and not result.replaces
    news = bag([listener(6443, addresses=[*API, UNKNOWN], delay=10), listener(22623, "HTTP")])
    result = diff(state, news, lb_id)
    assert result.changes and not result.replaces


@pytest.mark.parametrize("kind", ["listener", "pool", "healthmonitor"])
def test_an_object_gone_at_the_last_refresh_makes_a_new_tree(octavia, kind):
    lb_id, state = create(bag())
    ids = {"listener": "listener_ids", "pool": "pool_ids", "healthmonitor": "monitor_ids"}[kind]
    octavia.remove(kind, state[ids]["6443"])
    read_id, refreshed = refresh(lb_id, state)
    assert read_id == lb_id and "6443" not in refreshed[ids]
    result = diff(refreshed, bag(), lb_id)
    assert result.changes and result.replaces == ["listeners"] and result.delete_before_replace is False


def test_drift_found_by_a_refresh_is_a_change_and_the_update_puts_it_back(octavia):
    lb_id, state = create(bag())
    octavia.out_of_band("loadbalancer", lb_id, description="changed by hand")
    _, refreshed = refresh(lb_id, state)
    assert refreshed["live"]["lb"]["description"] == "changed by hand"
    result = diff(refreshed, bag(), lb_id)
    assert result.changes and not result.replaces
    update(lb_id, refreshed, bag())
    assert [path for _, path, _, _ in octavia.calls("PUT")] == [f"/lbaas/loadbalancers/{lb_id}"]
    assert octavia.load_balancers()[lb_id]["description"] == bag()["description"]


def test_drift_of_a_monitor_found_by_a_refresh_is_a_change(octavia):
    lb_id, state = create(bag())
    octavia.out_of_band("healthmonitor", state["monitor_ids"]["22623"], expected_codes="200-299")
    _, refreshed = refresh(lb_id, state)
    assert diff(refreshed, bag(), lb_id).changes


# ----- read --------------------------------------------------------------------------------------------------------

def test_a_load_balancer_gone_reads_as_gone(octavia):
    lb_id, state = create(bag())
    LoadBalancerTreeProvider().delete(lb_id, state)
    read = LoadBalancerTreeProvider().read(lb_id, state)
    assert read.id == ""


def test_a_read_reports_what_octavia_lists_now_and_keeps_the_last_change(octavia):
    lb_id, state = create(bag())
    octavia.out_of_band("listener", state["listener_ids"]["6443"], allowed_cidrs=["0.0.0.0/0"])
    read_id, refreshed = refresh(lb_id, state)
    assert read_id == lb_id
    assert refreshed["live"]["listeners"]["6443"]["allowed_cidrs"] == ["0.0.0.0/0"]
    assert refreshed["listener_ids"] == state["listener_ids"] and refreshed["pool_ids"] == state["pool_ids"]
    assert refreshed["last_change"] == state["last_change"]
    assert not octavia.calls("PUT") and len(octavia.calls("POST")) == 1


def test_a_listing_that_ignores_the_load_balancer_filter_never_mixes_in_another_trees_objects(octavia):
    a_id, a_state = create(bag())
    b_id, b_state = create(bag(name="ep-az2-lb", availability_zone="az2"))
    octavia.applies_lb_filter = False
    _, refreshed = refresh(a_id, a_state)
    for ids in ("listener_ids", "pool_ids", "monitor_ids"):
        assert refreshed[ids] == a_state[ids]
    assert not diff(refreshed, bag(), a_id).changes
    LoadBalancerTreeProvider().delete(a_id, refreshed)
    assert list(octavia.load_balancers()) == [b_id]
    assert sorted(found["id"] for found in octavia.under(b_id, "listener")) == sorted(b_state["listener_ids"].values())


# ----- delete ------------------------------------------------------------------------------------------------------

def test_a_delete_is_one_cascade_delete_waited_for_until_the_load_balancer_is_gone(octavia):
    lb_id, state = create(bag())
    start = octavia.clock.now
    LoadBalancerTreeProvider().delete(lb_id, state)
    deletes = octavia.calls("DELETE")
    assert [(path, params) for _, path, _, params in deletes] == [
        (f"/lbaas/loadbalancers/{lb_id}", {"cascade": "true"})]
    assert octavia.clock.now - start >= octavia.delete_seconds
    assert not octavia.load_balancers() and not octavia.objects["listener"] and not octavia.members


def test_deleting_a_tree_whose_load_balancer_is_gone_already_is_fine(octavia):
    lb_id, state = create(bag())
    LoadBalancerTreeProvider().delete(lb_id, state)
    LoadBalancerTreeProvider().delete(lb_id, state)
    assert len(octavia.calls("DELETE")) == 1


def test_a_delete_while_the_load_balancer_is_pending_update_waits_for_it(octavia):
    lb_id, state = create(bag())
    octavia.busy(lb_id, 8.0)
    LoadBalancerTreeProvider().delete(lb_id, state)
    assert not octavia.load_balancers()


def refused(octavia, lb_id, state):
    with pytest.raises(TreeNotOurs) as caught:
        LoadBalancerTreeProvider().delete(lb_id, state)
    assert not octavia.calls("DELETE") and lb_id in octavia.load_balancers()
    assert "Nothing was deleted" in str(caught.value)
    return str(caught.value)


def test_a_delete_refuses_a_load_balancer_without_the_stacks_tag(octavia):
    lb_id, state = create(bag())
    octavia.out_of_band("loadbalancer", lb_id, tags=["production", state["create_token"]])
    assert "the load balancer itself" in refused(octavia, lb_id, state)


def test_a_delete_refuses_a_load_balancer_without_the_creates_token(octavia):
    lb_id, state = create(bag())
    octavia.out_of_band("loadbalancer", lb_id, tags=list(TAGS))
    assert "the load balancer itself" in refused(octavia, lb_id, state)


def test_a_delete_refuses_a_pool_holding_a_member_that_is_not_the_stacks(octavia):
    lb_id, state = create(bag())
    stranger = octavia.add_member(state["pool_ids"]["22623"], "10.20.0.5", port=22623, tags=["someone-else"])
    assert stranger in refused(octavia, lb_id, state)


def test_a_delete_refuses_a_listener_neither_recorded_nor_tagged(octavia):
    lb_id, state = create(bag())
    theirs = octavia.add_listener(lb_id, 9000, tags=["someone-else"])
    assert theirs in refused(octavia, lb_id, state)


def test_a_delete_takes_an_unrecorded_listener_that_carries_the_stacks_tag(octavia):
    lb_id, state = create(bag())
    octavia.add_listener(lb_id, 9000, tags=[IDENTITY])
    LoadBalancerTreeProvider().delete(lb_id, state)
    assert not octavia.load_balancers()


# ----- the member set's wait for the members the tree created ------------------------------------------------------

SET_POOL = "ep-az1-6443-pool"
SET_TAG = contract.member_set_tag(SET_POOL)


@pytest.fixture
def pool(monkeypatch):
    clock = FakeClock()
    fake = BatchOctavia(clock, ovn_early_online=True)
    fake.add_pool("p1")
    monkeypatch.setattr(cloud, "connect", fake.connect)
    monkeypatch.setattr(member_set, "_now", clock)
    monkeypatch.setattr(member_set, "_sleep", clock.sleep)
    return fake


def set_bag(addresses, **overrides):
    props = {"loadbalancer_id": "lb-1", "pool_id": "p1", "pool_name": SET_POOL,
             "members": [{"name": f"n-{a}", "address": a, "protocol_port": 6443, "weight": 1} for a in addresses],
             "tags": list(TAGS), "identity_tag": IDENTITY, "monitored": True, "hold_seconds": 20,
             "require": "online", "timeout_seconds": 600, "poll_interval_seconds": 1.0, "stable_polls": 2,
             "on_not_ready": "fail", "dead_after_seconds": 60, "drain_seconds": 0, "write_timeout_seconds": 300,
             "cloud": None, "region": None, "cloud_source": "stack", "__provider": "x"}
    props.update(overrides)
    return props


def tree_created(pool, addresses, online_at=None):
    """Members as the tree's create leaves them: carrying the set's tag, recorded by no member set."""
    ids = [pool.add_member("p1", a, name=f"n-{a}", tags=[*TAGS, SET_TAG],
                           status=("ACTIVE", "ONLINE" if online_at is None else "OFFLINE")) for a in addresses]
    if online_at is not None:
        for member in pool.pools["p1"].values():
            member.online_at = online_at
    return ids


def test_the_sets_first_reconcile_waits_for_and_holds_the_members_the_tree_created_writing_nothing(pool):
    ids = tree_created(pool, API, online_at=5.0)
    state = MemberSetProvider().create(set_bag(API)).outs
    assert not pool.puts and not pool.member_updates  # the tree wrote them: nothing to write
    assert sorted(state["owned_ids"]) == sorted(ids)
    assert set(state["statuses"].values()) == {"ACTIVE/ONLINE"}
    assert pool.clock.now >= 5.0 + 20  # waited until they served, then held them hold_seconds


def test_members_online_at_once_are_still_held_the_hold(pool):
    """The ovn provider's early ONLINE: a member the set never saw ready counts only after the hold."""
    tree_created(pool, API)
    MemberSetProvider().create(set_bag(API))
    assert not pool.puts and pool.clock.now >= 20


def test_members_the_set_recorded_already_are_not_waited_for_again(pool):
    tree_created(pool, API)
    olds = {**MemberSetProvider().create(set_bag(API)).outs, "__provider": "x"}
    start = pool.clock.now
    MemberSetProvider().update("id", olds, set_bag(API, hold_seconds=30))
    assert not pool.puts and pool.clock.now - start < 1.0

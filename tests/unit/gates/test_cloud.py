"""The openstacksdk side, through the real SDK over loopback HTTP: one listing per pool whatever its size, and
every failure mapped to retry, re-authenticate or report."""

from __future__ import annotations

import json

import pytest
import requests
from keystoneauth1 import exceptions as ks_exc
from openstack import exceptions as os_exc

from ha_endpoint.backends.octavia import status
from ha_endpoint.cloud.connection import Category, classify, describe
from ha_endpoint.cloud.errors import AuthExpired, TransientFetchError
from ha_endpoint.backends.octavia.status import OctaviaStatusSource
from ha_endpoint.gates.errors import AuthFailed, FetchFailed, ReadinessTimeout
from ha_endpoint.gates.model import PoolExpectation
from ha_endpoint.gates.waiter import WaitSpec, wait_for_members
from ha_endpoint.watch.decide import Health
from ha_endpoint.core.outputs import ZoneOutputs
from ha_endpoint.watch.observe import zone_health
from keystone_http_fake import FakeKeystoneHTTP
from octavia_http_fake import PROXY_PAGE, FakeOctaviaHTTP
from gate_fakes import FakeClock, http_error

# openstacksdk's own deprecation notices about its internals, not about this code.
pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")


@pytest.fixture
def api(monkeypatch):
    with FakeOctaviaHTTP() as fake:
        monkeypatch.setattr(status, "connect", fake.connect)
        yield fake


@pytest.mark.parametrize("count", [3, 30, 300])
def test_one_api_call_per_pool_per_poll_whatever_the_number_of_members(api, count):
    ids = api.add_members("pool-1", count, oper="OFFLINE")
    source = OctaviaStatusSource()
    clock = FakeClock()
    polls = 5

    def bring_online_two_polls_before_the_last(pool_id):  # ready in 2 consecutive polls (the default) at the last
        if len(api.member_listings()) == polls - 2:
            for member in api.pools["pool-1"].values():
                member[1] = "ONLINE"
        return source.fetch_pool(pool_id)

    result = wait_for_members(
        WaitSpec("lb-1", (PoolExpectation("pool-1", tuple(ids), True),)),
        fetch_pool=bring_online_two_polls_before_the_last, fetch_load_balancer=source.fetch_load_balancer,
        clock=clock, sleep=clock.sleep,
    )
    assert result.polls == polls
    assert len(api.member_listings()) == polls, "one GET per pool per poll"
    assert result.api_calls / result.polls == 1


def test_pagination_is_followed_only_when_octavia_paginates(api):
    api.add_members("big", 2500)
    statuses = OctaviaStatusSource().fetch_pool("big")
    assert len(statuses) == 2500
    assert len(api.member_listings()) == 3


def test_statuses_come_from_the_listing(api):
    api.add_members("p", 1, prov="PENDING_CREATE", oper="OFFLINE")
    api.lbs["lb-1"] = ["PENDING_UPDATE", "ONLINE"]
    source = OctaviaStatusSource()
    assert [s.label for s in source.fetch_pool("p")] == ["PENDING_CREATE/OFFLINE"]
    assert source.fetch_load_balancer("lb-1").label == "PENDING_UPDATE/ONLINE"


@pytest.mark.parametrize("status, expected", [(409, TransientFetchError), (500, TransientFetchError),
                                              (503, TransientFetchError), (401, AuthExpired)])
def test_http_failures_map_to_retry_or_reauthenticate(api, status, expected):
    api.add_members("p", 1)
    api.failures.append(status)
    with pytest.raises(expected) as caught:
        OctaviaStatusSource().fetch_pool("p")
    assert caught.value.reason.startswith(f"HTTP {status}")


def test_a_missing_pool_is_reported_not_retried(api):
    with pytest.raises(FetchFailed, match=r"^listing the members of pool gone failed: HTTP 404"):
        OctaviaStatusSource().fetch_pool("gone")


def test_the_dns_watcher_reads_a_zone_in_one_request_whatever_the_number_of_its_pools(api):
    """The watcher's poll of a zone is its load balancer's status tree (one GET), not a fetch of the load balancer
    and a listing per pool; a pool no longer in it, the load balancer gone, or Octavia failing are told apart."""
    api.add_members("p1", 2)
    api.add_members("p2", 1, oper="OFFLINE")
    api.lb_pools["lb-1"] = ["p1", "p2"]
    source = OctaviaStatusSource()
    zone = ZoneOutputs(loadbalancer_id="lb-1", pool_ids={"6443": "p1", "22623": "p2"})
    assert zone_health(source, zone, None) == Health(False, "no ONLINE member in pool 22623 (ACTIVE/OFFLINE)")
    assert len(api.requests) == 1 and api.requests[0].endswith("/lbaas/loadbalancers/lb-1/status")
    api.pools["p2"]["p2-m0000"][1] = "ONLINE"
    assert zone_health(source, zone, None) == Health(True, "members ONLINE 1/1 2/2")  # pools 22623, 6443
    api.lbs["lb-1"] = ["ERROR", "ONLINE"]
    assert zone_health(source, zone, None) == Health(False, "load balancer lb-1 is ERROR/ONLINE")
    api.lbs["lb-1"] = ["ACTIVE", "ONLINE"]
    api.lb_pools["lb-1"] = ["p1"]
    assert zone_health(source, zone, None) == Health(False, "pool 22623 (p2) is gone from load balancer lb-1")
    assert zone_health(source, ZoneOutputs(loadbalancer_id="lb-2", pool_ids={"6443": "p3"}), None) == \
        Health(False, "load balancer lb-2 is gone")
    api.failures.append(503)
    assert zone_health(source, zone, None) is None, "an Octavia failure gives no verdict"
    assert len(api.requests) == 6


def test_connection_refused_is_transient(api):
    api.add_members("p", 1)
    source = OctaviaStatusSource()
    source.fetch_pool("p")
    api.stop()
    with pytest.raises(TransientFetchError, match="ConnectFailure"):
        source.fetch_pool("p")


def test_drain_member_retries_nothing_itself_and_reports_a_gone_member(api):
    (member,) = api.add_members("p", 1)
    source = OctaviaStatusSource()
    api.failures.append(409)
    with pytest.raises(TransientFetchError, match=r"^HTTP 409 Conflict"):
        source.drain_member("p", member)
    assert source.drain_member("p", member) is True
    assert api.pools["p"][member][2] == 0
    assert source.drain_member("p", "gone") is False


@pytest.mark.parametrize("admin_down, written", [(False, {"weight": 0}),
                                                 (True, {"weight": 0, "admin_state_up": False})])
def test_drain_member_writes_weight_0_and_the_admin_state_only_when_asked(api, admin_down, written):
    """Amphora drains on weight 0 and the member stays up; the ovn provider ignores the weight, so its drains also
    set the admin state down (ha_endpoint.core.predicates.drains_admin_down)."""
    (member,) = api.add_members("p", 1)
    assert OctaviaStatusSource().drain_member("p", member, admin_down=admin_down) is True
    assert api.member_updates[-1] == {"member": member, **written}


def test_reauth_builds_a_new_connection(monkeypatch):
    built = []

    class Conn:
        session = type("S", (), {"get_token": staticmethod(lambda: "t")})()

        def close(self):
            built.append("closed")

    monkeypatch.setattr(status, "connect", lambda name=None: built.append(name) or Conn())
    source = OctaviaStatusSource("mycloud")
    source._connection()
    source.reauth()
    assert built == ["mycloud", "closed", "mycloud"]


@pytest.mark.parametrize("exc, category", [
    (http_error(409, os_exc.ConflictException), Category.TRANSIENT),
    (http_error(429), Category.TRANSIENT),
    (http_error(502), Category.TRANSIENT),
    (http_error(401), Category.AUTH),
    (http_error(403, os_exc.ForbiddenException), Category.TERMINAL),
    (http_error(404, os_exc.NotFoundException), Category.TERMINAL),
    (http_error(400, os_exc.BadRequestException), Category.TERMINAL),
    (ks_exc.ConnectFailure("refused"), Category.TRANSIENT),
    (ks_exc.ConnectTimeout("slow"), Category.TRANSIENT),
    (ks_exc.ServiceUnavailable(), Category.TRANSIENT),
    (ks_exc.Unauthorized(), Category.AUTH),
    (ks_exc.NotFound(), Category.AUTH),  # keystone: "Failed to validate token" while re-authenticating
    (ks_exc.Conflict(), Category.TRANSIENT),
    (ks_exc.SSLError("bad cert"), Category.TERMINAL),
    (requests.ConnectionError("reset"), Category.TRANSIENT),
    (requests.ReadTimeout("read"), Category.TRANSIENT),
    (os_exc.ConfigException("cloud mycloud was not found"), Category.TERMINAL),
    (ValueError("bug"), Category.TERMINAL),
    # Keystone unreachable with an unversioned auth_url, or a service restarting: it cannot be discovered
    (ks_exc.DiscoveryFailure("Could not find versioned identity endpoints"), Category.TRANSIENT),
    # a proxy's HTML page with status 200: requests', the standard library's and keystoneauth's wording of it
    (requests.exceptions.JSONDecodeError("Expecting value", PROXY_PAGE, 0), Category.TRANSIENT),
    (json.JSONDecodeError("Expecting value", PROXY_PAGE, 0), Category.TRANSIENT),
    (ks_exc.InvalidResponse(None), Category.TRANSIENT),
    (os_exc.SDKException("Error getting load-balancer endpoint"), Category.TRANSIENT),
    (os_exc.ServiceDiscoveryException("no version document"), Category.TRANSIENT),
    (os_exc.InvalidResponse("bad body"), Category.TRANSIENT),
    (OSError(104, "Connection reset by peer"), Category.TRANSIENT),
    (ConnectionResetError(104, "Connection reset by peer"), Category.TRANSIENT),
    (TimeoutError("timed out"), Category.TRANSIENT),
    # retrying cannot fix these: configuration, a missing endpoint, malformed requests, local files, TLS
    (os_exc.EndpointNotFound("no load-balancer endpoint"), Category.TERMINAL),
    (os_exc.ServiceDisabledException("load-balancer is disabled"), Category.TERMINAL),
    (os_exc.InvalidRequest("bad"), Category.TERMINAL),
    (requests.exceptions.MissingSchema("no scheme"), Category.TERMINAL),
    (requests.exceptions.SSLError("bad cert"), Category.TERMINAL),
    (FileNotFoundError(2, "No such file or directory", "/etc/ssl/cloud-ca.pem"), Category.TERMINAL),
    (PermissionError(13, "Permission denied", "clouds.yaml"), Category.TERMINAL),
])
def test_classify(exc, category):
    assert classify(exc) is category


def test_describe_is_one_short_line():
    exc = http_error(409, os_exc.ConflictException, "Load Balancer lb-1 is immutable\n and cannot be updated.")
    assert describe(exc) == "HTTP 409 Conflict: Load Balancer lb-1 is immutable and cannot be updated."
    assert describe(ks_exc.ConnectFailure("x" * 500)).endswith("...")
    assert len(describe(ks_exc.ConnectFailure("x" * 500))) == 300


def test_describe_says_what_a_proxy_answered_instead_of_json():
    exc = requests.exceptions.JSONDecodeError("Expecting value", PROXY_PAGE, 0)
    assert describe(exc) == (
        "JSONDecodeError: the answer is not JSON (a proxy's page?): "
        "'<html><body><h1>Maintenance</h1>Back soon.</body></html>'"
    )


def test_an_html_page_with_status_200_is_transient_and_reported_if_it_lasts(api):
    (member,) = api.add_members("p", 1)
    api.failures.extend(["html", "html"])
    source = OctaviaStatusSource()
    with pytest.raises(TransientFetchError) as caught:
        source.fetch_pool("p")
    assert caught.value.reason == (
        "JSONDecodeError: the answer is not JSON (a proxy's page?): "
        "'<html><body><h1>Maintenance</h1>Back soon.</body></html>'"
    )
    clock = FakeClock()
    result = wait_for_members(WaitSpec("lb-1", (PoolExpectation("p", (member,), True),)), fetch_pool=source.fetch_pool,
                              fetch_load_balancer=source.fetch_load_balancer, clock=clock, sleep=clock.sleep)
    assert result.transient_errors == 1 and result.polls == 2
    api.failures.extend(["html"] * 10)
    with pytest.raises(ReadinessTimeout) as timeout:
        wait_for_members(WaitSpec("lb-1", (PoolExpectation("p", (member,), True),), timeout_seconds=3),
                         fetch_pool=source.fetch_pool, fetch_load_balancer=lambda _: None, clock=clock,
                         sleep=clock.sleep)
    assert str(timeout.value).endswith(
        "Status fetches were still failing at the deadline (4 transient errors retried, last: JSONDecodeError: the "
        "answer is not JSON (a proxy's page?): '<html><body><h1>Maintenance</h1>Back soon.</body></html>')."
    )


@pytest.fixture
def cloud_api(monkeypatch):
    """The fake Octavia behind a fake Keystone whose catalog lists it: real keystoneauth authentication."""
    with FakeOctaviaHTTP() as octavia, FakeKeystoneHTTP(octavia.url) as keystone:
        monkeypatch.setattr(status, "connect", keystone.connect)
        yield octavia, keystone


@pytest.mark.parametrize("status, keystone_says", [
    (401, "HTTP 401 Unauthorized: The request you have made requires authentication."),
    (404, "HTTP 404 Not Found: Could not find project: ha-endpoint."),
])
def test_a_refused_re_authentication_is_a_precise_error_with_a_fix(cloud_api, status, keystone_says):
    octavia, keystone = cloud_api
    (member,) = octavia.add_members("p", 1, oper="OFFLINE")
    source = OctaviaStatusSource()
    source.fetch_pool("p")
    octavia.failures.append(401)  # the token is rejected ...
    keystone.answers.extend([status, status])  # ... and Keystone refuses a new one (keystoneauth asks, then we do)
    clock = FakeClock()
    with pytest.raises(AuthFailed) as caught:
        wait_for_members(WaitSpec("lb-1", (PoolExpectation("p", (member,), True),)), fetch_pool=source.fetch_pool,
                         fetch_load_balancer=source.fetch_load_balancer, reauth=source.reauth, clock=clock,
                         sleep=clock.sleep)
    assert str(caught.value) == (
        f"load balancer lb-1: the cloud refused to re-authenticate ({keystone_says}); check the clouds.yaml entry "
        "the stack uses (openstack:cloud, "
        "readiness.cloud or OS_CLOUD): the password or application credential, the project and domain names, and "
        "that the user still has the member and load-balancer_member roles in the project; then run `pulumi up` "
        "again"
    )
    assert keystone.token_requests == 3 and clock.now == 0


def test_keystone_unreachable_during_re_authentication_is_retried_until_it_is_back(cloud_api, monkeypatch):
    """With an unversioned auth_url keystoneauth must discover Keystone's versions first: unreachable, that is a
    DiscoveryFailure (not a connection error), and it is as transient as one."""
    octavia, keystone = cloud_api
    assert not keystone.versioned_auth_url
    (member,) = octavia.add_members("p", 1)
    source = OctaviaStatusSource()
    source.fetch_pool("p")
    octavia.failures.append(401)
    keystone.stop()
    with pytest.raises(TransientFetchError) as caught:
        source.reauth()
    assert caught.value.reason.startswith(
        f"DiscoveryFailure (the service did not answer): ConnectFailure: Unable to establish connection to "
        f"{keystone.base_url}"
    )
    clock = FakeClock()

    def sleep(seconds):  # Keystone comes back while the waiter waits out the backoff
        clock.sleep(seconds)
        if not keystone.running:
            keystone.start()

    result = wait_for_members(WaitSpec("lb-1", (PoolExpectation("p", (member,), True),)), fetch_pool=source.fetch_pool,
                              fetch_load_balancer=source.fetch_load_balancer, reauth=source.reauth, clock=clock,
                              sleep=sleep)
    # keystoneauth itself re-authenticates after the 401 and meets the DiscoveryFailure: one transient error, then
    # Keystone is back and the member is ready in two consecutive polls
    assert result.transient_errors == 1 and result.polls == 2 and clock.sleeps == [1.0, 1.0]

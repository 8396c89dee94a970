"""The openstacksdk side, through the real SDK over loopback HTTP: one listing per pool whatever its size, and
every failure mapped to retry, re-authenticate or report."""

from __future__ import annotations

import pytest
import requests
from keystoneauth1 import exceptions as ks_exc
from openstack import exceptions as os_exc

from ha_endpoint.readiness import cloud
from ha_endpoint.readiness.cloud import Category, OctaviaStatusSource, classify, describe
from ha_endpoint.readiness.errors import AuthExpired, FetchFailed, TransientFetchError
from ha_endpoint.readiness.model import PoolExpectation
from ha_endpoint.readiness.waiter import WaitSpec, wait_for_members
from octavia_http_fake import FakeOctaviaHTTP
from readiness_fakes import FakeClock, http_error

# openstacksdk's own deprecation notices about its internals, not about this code.
pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")


@pytest.fixture
def api(monkeypatch):
    with FakeOctaviaHTTP() as fake:
        monkeypatch.setattr(cloud, "connect", fake.connect)
        yield fake


@pytest.mark.parametrize("count", [3, 30, 300])
def test_one_api_call_per_pool_per_poll_whatever_the_number_of_members(api, count):
    ids = api.add_members("pool-1", count, oper="OFFLINE")
    source = OctaviaStatusSource()
    clock = FakeClock()
    polls = 5

    def bring_online_at_last_poll(pool_id):
        if len(api.member_listings()) == polls - 1:
            for member in api.pools["pool-1"].values():
                member[1] = "ONLINE"
        return source.fetch_pool(pool_id)

    result = wait_for_members(
        WaitSpec("lb-1", (PoolExpectation("pool-1", tuple(ids), True),)),
        fetch_pool=bring_online_at_last_poll, fetch_load_balancer=source.fetch_load_balancer,
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


def test_connection_refused_is_transient(api):
    api.add_members("p", 1)
    source = OctaviaStatusSource()
    source.fetch_pool("p")
    api.stop()
    with pytest.raises(TransientFetchError, match="ConnectFailure"):
        source.fetch_pool("p")


def test_set_member_weight_retries_nothing_itself_and_reports_a_gone_member(api):
    (member,) = api.add_members("p", 1)
    source = OctaviaStatusSource()
    api.failures.append(409)
    with pytest.raises(TransientFetchError, match=r"^HTTP 409 Conflict"):
        source.set_member_weight("p", member, 0)
    assert source.set_member_weight("p", member, 0) is True
    assert api.pools["p"][member][2] == 0
    assert source.set_member_weight("p", "gone", 0) is False


def test_reauth_builds_a_new_connection(monkeypatch):
    built = []

    class Conn:
        session = type("S", (), {"get_token": staticmethod(lambda: "t")})()

        def close(self):
            built.append("closed")

    monkeypatch.setattr(cloud, "connect", lambda name=None: built.append(name) or Conn())
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
])
def test_classify(exc, category):
    assert classify(exc) is category


def test_describe_is_one_short_line():
    exc = http_error(409, os_exc.ConflictException, "Load Balancer lb-1 is immutable\n and cannot be updated.")
    assert describe(exc) == "HTTP 409 Conflict: Load Balancer lb-1 is immutable and cannot be updated."
    assert describe(ks_exc.ConnectFailure("x" * 500)).endswith("...")
    assert len(describe(ks_exc.ConnectFailure("x" * 500))) == 300

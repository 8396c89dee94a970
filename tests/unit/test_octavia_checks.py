"""What only Octavia's answers tell, asked at preview (ha_endpoint.backends.octavia.checks, and the DNS zone's records: ha_endpoint.cloud.catalog): its availability zones and the
key manager's certificates; a cloud that cannot be asked is a warning (Octavia judges at `up`), never a crash, and a
bug is never such a warning; the DNS zone's record sets, retried, then the preview fails."""

from __future__ import annotations

import asyncio

import keystoneauth1.exceptions as ks_exc
import openstack.exceptions as os_exc
from types import SimpleNamespace

import pytest
import requests

from ha_endpoint import CloudLookupError
from ha_endpoint.cloud import catalog as preview_catalog
from ha_endpoint.cloud import lookups
from ha_endpoint.cloud.connection import describe
from ha_endpoint.backends.octavia import checks as octavia_checks
from ha_endpoint.backends.octavia.checks import OpenStackOctaviaCatalog
from ha_endpoint.cloud.catalog import CatalogUnavailable, OpenStackCatalog
from ha_endpoint.core import contract
from ha_endpoint.core.plan import PollTarget
from tests.mocks import CloudError, FakeCloud, run_component
from tests.mocks.configs import amphora_endpoint
from tests.unit.gates.gate_fakes import http_error

CERTIFICATE = "https://barbican.example:9311/v1/containers/0b7d2c1e-7c52-4f3a-9b1e-3d2f6a8c9e10"


def terminated(raw: dict) -> dict:
    raw["listeners"][0].update(protocol="TERMINATED_HTTPS", certificateRef=CERTIFICATE,
                               monitor={"type": "HTTP", "path": "/readyz"})
    return raw


@pytest.fixture
def warnings(monkeypatch):
    said: list[str] = []
    monkeypatch.setattr("pulumi.log.warn", lambda message, *args, **kwargs: said.append(message))
    return said


def test_a_cloud_that_cannot_be_asked_is_a_warning_and_octavia_judges_at_up(warnings):
    cloud = FakeCloud.dev()
    cloud.catalog_error = "HTTP 403 Forbidden: policy does not allow availability-zone:get_all"
    run = run_component(terminated(amphora_endpoint()), cloud, preview=True)
    assert run.registrations
    assert [warning for warning in warnings if "could not be checked" in warning] == [
        "HaEndpoint('k8s-api').args.zones: Octavia's availability zones could not be checked at preview (HTTP 403 "
        "Forbidden: policy does not allow availability-zone:get_all); Octavia refuses an unknown one when the load "
        "balancers are created",
        "HaEndpoint('k8s-api').args.listeners[0].certificateRef: the certificate could not be checked at preview (HTTP 403 "
        "Forbidden: policy does not allow availability-zone:get_all); Octavia refuses the listener if it cannot load "
        "it"]
    with pytest.raises(CloudError, match="could not retrieve certificate"):  # ... and Octavia does, at up
        run_component(terminated(amphora_endpoint()), cloud, preview=False)


def test_a_certificate_the_key_manager_holds_reaches_the_listener():
    cloud = FakeCloud.dev()
    cloud.certificates.add(CERTIFICATE)
    run = run_component(terminated(amphora_endpoint()), cloud, preview=False)
    listeners = [r for r in run.registrations if r["name"].endswith("-6443-listener")]
    assert len(listeners) == 3 and {r["inputs"]["defaultTlsContainerRef"] for r in listeners} == {CERTIFICATE}
    assert {r["inputs"]["protocol"] for r in listeners} == {"TERMINATED_HTTPS"}
    pools = [r for r in run.registrations if r["name"].endswith("-6443-pool")]
    assert {r["inputs"]["protocol"] for r in pools} == {"HTTP"}  # TLS ends at the load balancer


def test_every_unknown_zone_is_named_at_once_and_nothing_is_registered():
    cloud = FakeCloud.dev()
    cloud.azs -= {"az2", "az3"}
    with pytest.raises(CloudLookupError) as caught:
        run_component(amphora_endpoint(), cloud, preview=True)
    assert [problem.path for problem in caught.value.problems] == ["HaEndpoint('k8s-api').args.zones.az2",
                                                                   "HaEndpoint('k8s-api').args.zones.az3"]
    assert cloud.registrations == []


def test_the_real_catalog_says_why_it_cannot_ask_without_touching_a_network(tmp_path, monkeypatch):
    with pytest.raises(CatalogUnavailable, match="set readiness.cloud"):
        OpenStackOctaviaCatalog().octavia_azs(PollTarget(None, None, "provider"))
    empty = tmp_path / "clouds.yaml"
    empty.write_text("clouds: {}\n")
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(empty))
    # a clouds.yaml without the cloud is not the cloud failing (issue 46, finding 2): refused naming the key, never a
    # warning
    with pytest.raises(CloudLookupError, match="readiness.cloud: cloud 'nowhere' could not be used from clouds.yaml"):
        OpenStackOctaviaCatalog().octavia_azs(PollTarget("nowhere", None, "readiness"))


def test_a_default_provider_whose_cloud_the_component_was_not_told_is_never_guessed_from_os_cloud(monkeypatch):
    """OS_CLOUD may name another cloud than the stack's provider: its AZs could refuse a valid configuration."""
    monkeypatch.setenv("OS_CLOUD", "some-other-cloud")
    with pytest.raises(CatalogUnavailable, match="pass cloud= and region= to HaEndpoint"):
        OpenStackOctaviaCatalog().octavia_azs(PollTarget(None, None, "stack"))


# Issue 21, finding 2: every question the plain flow asks Octavia is asked in the Output flow too, once the values are
# known. Each case: the same configuration refused with the same problems whether the value the check reads (or, for
# the AZ checks, whose key is always plain, another input) is given plainly or as an Output; and as an Output, no load
# balancer is created.
def _with_outputs(raw: dict, wrap: str) -> dict:
    import pulumi

    if wrap == "certificateRef":
        raw["listeners"][0]["certificateRef"] = pulumi.Output.from_input(raw["listeners"][0]["certificateRef"])
    else:
        raw["zones"]["az1"]["subnet"] = pulumi.Output.from_input(raw["zones"]["az1"]["subnet"])
    return raw


def _no_key_manager(cloud: FakeCloud) -> None:
    cloud.key_manager = False


CHECKS = {
    "a certificate the key manager does not hold": (terminated, lambda cloud: None, "certificateRef"),
    "a cloud without a key manager": (terminated, _no_key_manager, "certificateRef"),
    "an availability zone Octavia does not know": (lambda raw: raw, lambda cloud: cloud.azs.discard("az2"), "subnet"),
    "an availability zone Octavia has disabled": (lambda raw: raw, lambda cloud: cloud.disabled_azs.add("az3"),
                                                  "subnet"),
}


@pytest.mark.parametrize("case", sorted(CHECKS))
@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_both_flows_refuse_what_octavia_would_refuse_with_the_same_problems(case, preview):
    shape, fault, wrap = CHECKS[case]

    def refused(raw: dict) -> tuple[list[str], FakeCloud]:
        cloud = FakeCloud.dev()
        fault(cloud)
        with pytest.raises(CloudLookupError) as caught:
            run_component(raw, cloud, preview=preview)
        assert not cloud.kind(contract.LOADBALANCER_TYPE), "a load balancer was created"
        return [str(problem) for problem in caught.value.problems], cloud

    plain, _ = refused(shape(amphora_endpoint()))
    deferred, _ = refused(_with_outputs(shape(amphora_endpoint()), wrap))
    assert plain and deferred == plain


# Issue 46, finding 2: one rule (ha_endpoint.cloud.connection.cloud_failure) decides what the preview checks may warn
# about: the cloud's answer with an HTTP status, or a call that got no answer (connection refused, timeout, TLS).
# Anything else -- a bug of ours, an SDK that changed -- is raised as itself, with its traceback, never "could not be
# checked".
class _Stub:
    """An openstacksdk connection whose every service call raises ``error``."""

    def __init__(self, error: BaseException) -> None:
        def fail(*args, **kwargs):
            raise error

        class Service:
            def __getattr__(self, name):
                return fail

        self.load_balancer = self.key_manager = self.dns = Service()


def _catalog(error: BaseException) -> tuple[OpenStackOctaviaCatalog, PollTarget]:
    catalog, target = OpenStackOctaviaCatalog(), PollTarget("mycloud", None, "readiness")
    catalog._connections[(target.cloud, target.region)] = _Stub(error)
    return catalog, target


CLOUD_FAILURES = {
    "403": lambda: http_error(403, os_exc.ForbiddenException, "policy does not allow availability-zone:get_all"),
    "503": lambda: http_error(503),
    "connection refused": lambda: ks_exc.ConnectFailure("Unable to establish connection to https://octavia:9876"),
    "timeout": lambda: requests.exceptions.ReadTimeout("read timed out (20 s)"),
    "tls": lambda: ks_exc.SSLError("certificate verify failed"),
}
BUGS = {
    "AttributeError": lambda: AttributeError("'NoneType' object has no attribute 'is_enabled'"),
    "TypeError": lambda: TypeError("availability_zones() got an unexpected keyword argument"),
    "KeyError": lambda: KeyError("name"),
    "an SDK's own error without a status": lambda: os_exc.SDKException("Unexpected resource attribute"),
}
WARNED = {
    "availability zones": lambda catalog, target: catalog.octavia_azs(target),
    "certificate": lambda catalog, target: catalog.certificate(target, CERTIFICATE),
}
QUESTIONS = {  # the members down are retried, then fail the preview (below), as the records are
    **WARNED,
    "members down": lambda catalog, target: catalog.members_down(target, "ha-endpoint:stack=p/s", {"ep-az1-6443-pool"}),
}


@pytest.mark.parametrize("question", sorted(WARNED))
@pytest.mark.parametrize("failure", sorted(CLOUD_FAILURES))
def test_a_cloud_that_fails_the_question_is_a_warning(question, failure):
    error = CLOUD_FAILURES[failure]()
    catalog, target = _catalog(error)
    with pytest.raises(CatalogUnavailable) as caught:
        QUESTIONS[question](catalog, target)
    assert str(caught.value) == describe(error)


@pytest.mark.parametrize("question", sorted(QUESTIONS))
@pytest.mark.parametrize("bug", sorted(BUGS))
def test_a_bug_while_asking_is_raised_as_itself_never_could_not_be_checked(question, bug):
    error = BUGS[bug]()
    catalog, target = _catalog(error)
    with pytest.raises(type(error)) as caught:
        QUESTIONS[question](catalog, target)
    assert caught.value is error and not isinstance(caught.value, CatalogUnavailable)


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_a_bug_while_connecting_is_raised_as_itself(monkeypatch, bug):
    error = BUGS[bug]()

    def connect(*args, **kwargs):
        raise error

    monkeypatch.setattr("ha_endpoint.cloud.catalog.connect", connect)
    with pytest.raises(type(error)) as caught:
        OpenStackOctaviaCatalog().octavia_azs(PollTarget("mycloud", None, "readiness"))
    assert caught.value is error


def test_a_cloud_failure_while_connecting_is_a_warning(monkeypatch):
    def connect(*args, **kwargs):
        raise ks_exc.ConnectFailure("Unable to establish connection to https://keystone:5000")

    monkeypatch.setattr("ha_endpoint.cloud.catalog.connect", connect)
    with pytest.raises(CatalogUnavailable, match="ConnectFailure: Unable to establish connection"):
        OpenStackOctaviaCatalog().octavia_azs(PollTarget("mycloud", None, "readiness"))


@pytest.mark.parametrize("error, reported", [
    (Exception("invoke of openstack:networking/getSubnet:getSubnet failed: 403 Forbidden"), True),  # Pulumi's invoke
    (http_error(404, os_exc.NotFoundException), True),
    (ks_exc.ConnectFailure("refused"), True),
    (requests.exceptions.ConnectTimeout("slow"), True),
    (requests.exceptions.SSLError("bad cert"), True),
    (ConnectionResetError(104, "Connection reset by peer"), True),
    (AttributeError("x"), False),
    (KeyError("x"), False),
    (os_exc.SDKException("changed"), False),
    (os_exc.ConfigException("Cloud nowhere was not found."), False),
])
def test_one_rule_sorts_cloud_failures_from_everything_else(error, reported):
    """The preview checks and the lookups (a failed provider invoke is a bare Exception) go through the same rule."""
    from ha_endpoint.cloud.connection import cloud_failure

    assert cloud_failure(error) is reported

    async def lookup():
        raise error

    attempt = lambda: asyncio.run(lookups._attempt("endpoint.zones.az1.subnet", "subnet 'cp-az1'",  # noqa: E731
                                                   "fix its name", lookup))
    if reported:
        assert attempt()[1] is not None
    else:
        with pytest.raises(type(error)):
            attempt()


# Issue 46, finding 3, on the real catalog: a failed listing of the DNS zone's record sets is retried, then fails; it
# is never "not known" (None), which changes how every record is replaced. None stays for what is not a failure.
class _Recordsets:
    """A DNS service whose listing fails with ``errors`` (one per call), then answers."""

    def __init__(self, errors: list) -> None:
        self.errors, self.calls = list(errors), 0

    def recordsets(self, zone_id):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return [SimpleNamespace(name="api.example.com.", type="A", description="ha-endpoint/dev k8s-api-dns"),
                SimpleNamespace(name="example.com.", type="SOA", description=None)]


def _records_catalog(errors: list) -> tuple[_Recordsets, PollTarget, list[float]]:
    catalog, target = OpenStackCatalog(), PollTarget("mycloud", None, "readiness")
    dns = _Recordsets(errors)
    catalog._connections[(target.cloud, target.region)] = SimpleNamespace(dns=dns)
    preview_catalog._CATALOG.append(catalog)
    return dns, target, [0.0]


@pytest.fixture
def records():
    yield _records_catalog
    del preview_catalog._CATALOG[:]


def _published(target, now, **kwargs):
    return preview_catalog.published_records(target, "zone-id", clock=lambda: now[0],
                                            sleep=lambda seconds: now.__setitem__(0, now[0] + seconds), **kwargs)


def test_the_records_are_read_again_after_a_transient_failure(records):
    dns, target, now = records([http_error(503), ks_exc.ConnectFailure("refused")])
    assert _published(target, now) == {"api.example.com.": "ha-endpoint/dev k8s-api-dns"}
    assert dns.calls == 3


@pytest.mark.parametrize("error, calls", [(http_error(503), None), (http_error(403, os_exc.ForbiddenException), 1),
                                          (ks_exc.SSLError("certificate verify failed"), 1)])
def test_records_that_cannot_be_read_fail_never_read_as_not_known(records, error, calls):
    dns, target, now = records([error] * 1000)
    with pytest.raises(preview_catalog.RecordsUnreadable):
        _published(target, now, timeout_seconds=30)
    assert dns.calls == calls if calls else dns.calls > 1


def test_records_not_known_without_a_failure_are_none():
    """The zone not known yet (an Output) or no cloud to ask: nothing failed, every record is replaced delete-first."""
    assert preview_catalog.published_records(PollTarget("mycloud", None, "readiness"), None) is None
    assert preview_catalog.published_records(PollTarget(None, None, "provider"), "zone-id") is None
    assert preview_catalog.published_records(PollTarget(None, None, "stack"), "zone-id") is None


@pytest.mark.parametrize("source, key", [("readiness", "readiness.cloud"), ("stack", "openstack:cloud")])
def test_a_cloud_clouds_yaml_does_not_name_is_refused_naming_the_key_without_a_traceback(monkeypatch, source, key):
    """The user's configuration, neither the cloud's failure (a warning) nor a bug (a traceback)."""
    import pulumi

    def connect(*args, **kwargs):
        raise os_exc.ConfigException("Cloud nowhere was not found.")

    monkeypatch.setattr("ha_endpoint.cloud.catalog.connect", connect)
    with pytest.raises(CloudLookupError) as caught:
        OpenStackOctaviaCatalog().octavia_azs(PollTarget("nowhere", None, source))
    assert isinstance(caught.value, pulumi.RunError)
    assert f"{key}: cloud 'nowhere' could not be used from clouds.yaml" in str(caught.value)


def test_a_cloud_without_a_load_balancer_service_is_refused_at_preview_not_warned_about(warnings):
    """A cloud whose catalog has no Octavia: every zone's load balancer would fail at up; the preview says so."""
    from ha_endpoint.backends.octavia.checks import check_octavia
    from ha_endpoint.cloud.catalog import use_catalog

    catalog, target = _catalog(os_exc.EndpointNotFound("public endpoint for load-balancer service not found"))
    args = SimpleNamespace(load_balancer_provider="amphora", zones={"az1": None, "az2": None}, listeners=[])
    with use_catalog(catalog):
        problems = check_octavia(args, target, "ha-endpoint:endpoint", "ha-endpoint:stack=p/s")
    assert [problem.path for problem in problems] == ["ha-endpoint:endpoint.zones"]
    assert "no load-balancer service (Octavia)" in problems[0].message and not warnings
    assert "set backend: keepalived" in problems[0].message  # the backend for clouds without Octavia


def test_the_real_catalog_names_the_members_its_pools_list_admin_down():
    """Issue 46, the way back (ha_endpoint.backends.octavia.checks.members_put_back_from): one listing of the stack's
    pools by its identity tag, one of each wanted pool's members."""
    asked = []

    class LoadBalancer:
        def pools(self, **query):
            asked.append(("pools", query))
            return [SimpleNamespace(id="p1", name="ep-az1-6443-pool"), SimpleNamespace(id="p9", name="other-pool")]

        def members(self, pool_id):
            asked.append(("members", pool_id))
            return [SimpleNamespace(name="cp-0", is_admin_state_up=True),
                    SimpleNamespace(name="cp-3", is_admin_state_up=False)]

    catalog, target = OpenStackOctaviaCatalog(), PollTarget("mycloud", None, "readiness")
    catalog._connections[(target.cloud, target.region)] = SimpleNamespace(load_balancer=LoadBalancer())
    assert catalog.members_down(target, "ha-endpoint:stack=p/s", {"ep-az1-6443-pool"}) == {("ep-az1-6443-pool",
                                                                                              "cp-3")}
    assert asked == [("pools", {"tags": "ha-endpoint:stack=p/s"}), ("members", "p1")]


def _ovn_monitored():
    from ha_endpoint.core.validation import load_endpoint_args

    raw = amphora_endpoint()
    raw["loadBalancerProvider"] = "ovn"
    for listener in raw["listeners"]:
        listener["monitor"] = {"type": "TCP"}
    return load_endpoint_args(raw)


class _Pools:
    """A load-balancer service whose listing fails with ``errors`` (one per call), then lists cp-3 admin down."""

    def __init__(self, errors: list) -> None:
        self.errors, self.calls = list(errors), 0

    def pools(self, **query):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return [SimpleNamespace(id="p1", name="k8s-api-az1-6443-pool")]

    def members(self, pool_id):
        return [SimpleNamespace(name="cp-3", is_admin_state_up=False)]


def _members_down(errors: list, **kwargs):
    catalog, target = OpenStackOctaviaCatalog(), PollTarget("mycloud", None, "readiness")
    pools = _Pools(errors)
    catalog._connections[(target.cloud, target.region)] = SimpleNamespace(load_balancer=pools)
    now = [0.0]
    with preview_catalog.use_catalog(catalog):
        answer = octavia_checks.members_put_back_from(
            _ovn_monitored(), target, "ha-endpoint:stack=p/s", "root", clock=lambda: now[0],
            sleep=lambda seconds: now.__setitem__(0, now[0] + seconds), **kwargs)
    return answer, pools


def test_members_down_are_read_again_after_a_transient_failure():
    """Issue 46 finding 3's rule for the put-back lookup: a transient failure is retried, never a changed plan."""
    answer, pools = _members_down([http_error(503), ks_exc.ConnectFailure("refused")])
    assert answer == frozenset({("k8s-api-az1-6443-pool", "cp-3")}) and pools.calls == 3


@pytest.mark.parametrize("error", [http_error(503), http_error(403, os_exc.ForbiddenException),
                                   ks_exc.SSLError("certificate verify failed")])
def test_members_down_that_cannot_be_read_fail_the_preview_naming_the_members(error, warnings):
    """Retried (503) or not worth retrying (403, TLS), a listing that still fails is a problem at ``<root>.members``:
    without it a member put back would be planned as an admin-up update the ovn provider never serves."""
    with pytest.raises(octavia_checks.MembersUnreadable) as caught:
        _members_down([error] * 1000, timeout_seconds=30)
    assert "could not be read at preview" in str(caught.value) and not warnings
    catalog, target = OpenStackOctaviaCatalog(), PollTarget("mycloud", None, "readiness")
    catalog._connections[(target.cloud, target.region)] = SimpleNamespace(load_balancer=_Pools([error] * 1000))
    with preview_catalog.use_catalog(catalog), pytest.MonkeyPatch.context() as patch:
        patch.setattr(octavia_checks, "READ_RETRY_SECONDS", 0.0)
        found = octavia_checks.preview(_ovn_monitored(), target, "root", "t", None)
    assert [problem.path for problem in found.problems] == ["root.members"] and found.members_down == frozenset()


def test_members_down_without_a_cloud_to_ask_are_a_warning_and_not_known(warnings):
    """Nothing to ask (the provider is explicit and readiness.cloud unset): a warning naming the way out, None."""
    args = _ovn_monitored()
    with preview_catalog.use_catalog(OpenStackOctaviaCatalog()):
        assert octavia_checks.members_put_back_from(args, PollTarget(None, None, "provider"), "t", "root") is None
    assert len(warnings) == 1 and warnings[0].startswith("root.members: the members the load balancers list "
                                                         "administratively down could not be read at preview")
"""What only Octavia's answers tell, asked at preview (ha_endpoint.cloud.octavia_checks): its availability zones and the
key manager's certificates; a cloud that cannot be asked is a warning (Octavia judges at `up`), never a crash."""

from __future__ import annotations

import pytest

from ha_endpoint import CloudLookupError
from ha_endpoint.cloud.octavia_checks import CatalogUnavailable, OpenStackCatalog
from ha_endpoint.core import contract
from ha_endpoint.core.plan import PollTarget
from tests.mocks import CloudError, FakeCloud, run_component
from tests.mocks.configs import amphora_endpoint

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
    assert warnings == [
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
        OpenStackCatalog().octavia_azs(PollTarget(None, None, "provider"))
    empty = tmp_path / "clouds.yaml"
    empty.write_text("clouds: {}\n")
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(empty))
    with pytest.raises(CatalogUnavailable, match="nowhere"):
        OpenStackCatalog().octavia_azs(PollTarget("nowhere", None, "readiness"))


def test_a_default_provider_whose_cloud_the_component_was_not_told_is_never_guessed_from_os_cloud(monkeypatch):
    """OS_CLOUD may name another cloud than the stack's provider: its AZs could refuse a valid configuration."""
    monkeypatch.setenv("OS_CLOUD", "some-other-cloud")
    with pytest.raises(CatalogUnavailable, match="pass cloud= and region= to HaEndpoint"):
        OpenStackCatalog().octavia_azs(PollTarget(None, None, "stack"))


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

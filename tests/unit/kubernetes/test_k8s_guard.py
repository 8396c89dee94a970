"""ControlPlaneEndpointGuard's provider, method by method (as the engine calls them): a changed host or port of the
same cluster is refused at check (preview), with a message that says why and what to do; the rest passes."""

from __future__ import annotations

import dill
import pytest
from pulumi.output import Unknown

from ha_endpoint.kubernetes.guard import (UNKNOWN_WIRE, ControlPlaneEndpointGuardProvider, EndpointChangeRefused,
                                          refusal)

PROVIDER = ControlPlaneEndpointGuardProvider()
SETTINGS = "ha-endpoint:endpoint.dns (dnsZone, record) and ha-endpoint:kubernetes.apiPort"
OLD = {"cluster": "default/k8s-api", "host": "api.example.test", "port": 6443.0, "settings": SETTINGS,
       "__provider": "serialized"}


def news(**changes) -> dict:
    return {**OLD, **changes}


def failures(olds: dict, new: dict) -> list[tuple[str, str]]:
    return [(failure.property, failure.reason) for failure in PROVIDER.check(olds, new).failures]


def test_a_first_create_and_an_unchanged_endpoint_pass():
    assert failures({}, news()) == []
    assert failures(OLD, news()) == []
    assert PROVIDER.check(OLD, news()).inputs == news()


def test_a_new_host_for_the_same_cluster_is_refused_with_the_reason_and_what_to_do():
    (found,) = failures(OLD, news(host="api2.example.test"))
    assert found == ("host", refusal("default/k8s-api", ("api.example.test", 6443), ("api2.example.test", 6443),
                                     SETTINGS))
    message = found[1]
    assert "created with controlPlaneEndpoint api.example.test:6443" in message
    assert "would change it to api2.example.test:6443" in message
    assert "Cluster API never lets controlPlaneEndpoint change once it is set" in message
    assert f"Keep {SETTINGS} as they were (api.example.test:6443)" in message
    assert "create a new cluster under a new clusterApi name" in message


def test_a_new_port_is_refused_on_the_port():
    (found,) = failures(OLD, news(port=16443))
    assert found[0] == "port" and "would change it to api.example.test:16443" in found[1]


def test_another_cluster_may_have_another_endpoint():
    assert failures(OLD, news(cluster="default/k8s-api-2", host="api2.example.test")) == []


@pytest.mark.parametrize("unknown", [Unknown(), UNKNOWN_WIRE], ids=["Unknown", "wire"])
def test_values_unknown_at_preview_are_not_judged(unknown):
    assert failures(OLD, news(host=unknown)) == []
    assert failures(OLD, news(port=unknown)) == []


def test_malformed_inputs_are_reported():
    assert failures({}, news(host="api.example.test.", port=0, cluster="k8s-api")) == [
        ("host", "must be a DNS name without a trailing dot, got 'api.example.test.'"),
        ("port", "must be a port number 1..65535, got 0"),
        ("cluster", "must be '<namespace>/<name>', got 'k8s-api'"),
    ]


def test_diff_updates_the_settings_text_replaces_for_another_cluster_and_refuses_a_new_endpoint():
    same = PROVIDER.diff("id", OLD, news())
    assert (same.changes, same.replaces) == (False, [])
    reworded = PROVIDER.diff("id", OLD, news(settings="the endpoint's name"))
    assert (reworded.changes, reworded.replaces) == (True, [])
    other = PROVIDER.diff("id", OLD, news(cluster="prod/k8s-api", host="api2.example.test"))
    assert (other.changes, other.replaces) == (True, ["cluster"])
    with pytest.raises(EndpointChangeRefused, match="would change it to api.example.test:7443"):
        PROVIDER.diff("id", OLD, news(port=7443))


def test_create_records_the_inputs_without_the_serialized_provider_and_makes_no_call():
    created = PROVIDER.create(news())
    assert created.id.startswith("guard-")
    assert created.outs == {"cluster": "default/k8s-api", "host": "api.example.test", "port": 6443,
                            "settings": SETTINGS}
    assert PROVIDER.read(created.id, news()).outs == created.outs
    assert PROVIDER.delete(created.id, created.outs) is None


def test_the_provider_pickles_to_a_reference_to_its_class():
    blob = dill.dumps(PROVIDER, recurse=True)
    assert b"ha_endpoint.kubernetes.guard" in blob and len(blob) < 300

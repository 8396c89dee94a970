"""Bad input is refused by a real `pulumi preview` (the engine, the Python language host, the real local cloud),
before anything exists: one configuration per kind of refusal, each failing with its key and fix, no traceback,
nothing in the stack. The corpus (tests/unit/corpus) holds every case under mocks; these prove the same path under
the engine, including the checks that ask the cloud itself at preview (Octavia's availability zones through
openstacksdk, the key manager for certificates)."""

from __future__ import annotations

import pytest

from tests.e2e.pulumi_cli import PulumiStack
from tests.mocks.configs import amphora_endpoint

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

KEY = "ha-endpoint:endpoint"
CERTIFICATE = "https://barbican.example:9311/v1/containers/0b7d2c1e-7c52-4f3a-9b1e-3d2f6a8c9e10"


def dev() -> dict:
    endpoint = amphora_endpoint()
    return {**endpoint, "name": "prr-api", "dns": {**endpoint["dns"], "record": "prr"}}


def boolean_port(raw: dict) -> None:
    raw["listeners"][0]["port"] = True


def unknown_octavia_az(raw: dict) -> None:
    raw["zones"]["az9"] = raw["zones"].pop("az3")
    raw["members"][2]["az"] = "az9"


def certificate_without_key_manager(raw: dict) -> None:
    raw["listeners"][0].update(protocol="TERMINATED_HTTPS", certificateRef=CERTIFICATE,
                               monitor={"type": "HTTP", "path": "/readyz"})


def per_zone_record_too_long(raw: dict) -> None:
    raw["dns"]["record"] = "kubernetes-api-server-endpoint-of-the-production-cluster-xyz"


def member_at_the_gateway(raw: dict) -> None:
    raw["members"][0]["address"] = "10.10.1.1"


CASES = {
    "boolean port": (boolean_port, "listeners[0].port: port must be a whole number from 1 to 65535, got true (a yes/no "
                                   "value); write the number itself, e.g. port: 6443"),
    "unknown Octavia AZ": (unknown_octavia_az, "zones.az9: Octavia has no availability zone 'az9'"),
    "certificate, no key manager": (certificate_without_key_manager,
                                    "listeners[0].certificateRef: the cloud has no key manager (Barbican) in its "
                                    "catalog"),
    "per-zone record too long": (per_zone_record_too_long,
                                 "dns.record: zone az1's record would be kubernetes-api-server-endpoint-of-the-"
                                 "production-cluster-xyz-az1.example.test., which Designate refuses"),
    "member at the gateway": (member_at_the_gateway, "members[0].address: member cp-0's address 10.10.1.1 is the "
                                                     "gateway of the subnet"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_real_preview_refuses_it_with_the_key_and_the_fix(case, pulumi_environment, tmp_path):
    change, expected = CASES[case]
    raw = dev()
    change(raw)
    stack = PulumiStack.create(tmp_path / "prr", "prr-preview", pulumi_environment)
    stack.write_config(raw)
    result = stack.preview(check=False)
    assert result.returncode != 0
    assert f"{KEY}.{expected}" in " ".join(result.output.split()), result.output[-3000:]
    assert "Traceback" not in result.output
    assert stack.resources() == []


@pytest.mark.parametrize("description, owner", [
    ("k8s-api [ha-endpoint ha-endpoint/prod prr-api-dns]", "the endpoint of stack ha-endpoint/prod (its record set "
                                                           "prr-api-dns)"),
    ("made by hand", "a record set ha-endpoint did not make"),
], ids=["another stack's endpoint", "by hand"])
def test_a_name_published_already_is_refused_by_a_real_preview_naming_its_owner(description, owner, cloud,
                                                                                 pulumi_environment, tmp_path):
    """Issue 29, finding 1: the name is Designate's (one A record set per name), held by another owner: refused at
    preview, naming the owner from the record set's description and the fix; nothing in the stack, the record kept."""
    zone = cloud.dns.find_zone("example.test.", ignore_missing=False)
    taken = cloud.dns.create_recordset(zone, name="prr.example.test.", type="A", records=["192.0.2.10"], ttl=30,
                                       description=description)
    try:
        stack = PulumiStack.create(tmp_path / "prr", "prr-taken", pulumi_environment)
        stack.write_config(dev())
        result = stack.preview(check=False)
        text = " ".join(result.output.split())
        assert result.returncode != 0
        assert f"{KEY}.dns.record: prr.example.test. is published already by {owner}" in text, result.output[-3000:]
        assert "give dns.record a name of its own" in text
        assert "Traceback" not in result.output
        assert stack.resources() == []
        assert cloud.dns.get_recordset(taken, zone).records == ["192.0.2.10"]
    finally:
        cloud.dns.delete_recordset(taken, zone, ignore_missing=True)

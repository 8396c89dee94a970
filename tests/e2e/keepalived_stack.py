"""Pulumi.keepalived.yaml's endpoint for the e2e tests that preview or deploy it under names of their own, and a
Neutron port per member where the members are plain ports the test makes (no server, no keepalived)."""

from __future__ import annotations

import copy

import yaml

from tests.e2e.pulumi_cli import REPO


def keepalived_endpoint(name: str, record: str) -> dict:
    """Pulumi.keepalived.yaml's endpoint, named ``name`` and published as ``record``."""
    raw = yaml.safe_load((REPO / "Pulumi.keepalived.yaml").read_text())["config"]["ha-endpoint:endpoint"]
    return {**copy.deepcopy(raw), "name": name, "dns": {**raw["dns"], "record": record}}


def make_member_ports(conn, cleanup) -> dict:
    """A port per member of Pulumi.keepalived.yaml on its zone's subnet (Neutron allocates the addresses), added to
    ``cleanup`` (a :class:`localcloud.testing.Cleanup`): member name -> port."""
    ports = {}
    for member in keepalived_endpoint("any", "any")["members"]:
        subnet = conn.network.find_subnet(f"cp-{member['az']}", ignore_missing=False)
        ports[member["name"]] = cleanup.add("port", conn.network.create_port(
            network_id=subnet.network_id, name=cleanup.name(member["name"]), fixed_ips=[{"subnet_id": subnet.id}]))
    return ports


def at_member_ports(raw: dict, ports: dict) -> dict:
    """``raw`` with each member at its port's address."""
    for member in raw["members"]:
        member["address"] = ports[member["name"]].fixed_ips[0]["ip_address"]
    return raw

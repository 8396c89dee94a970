"""A hand-built stack shaped like the component's output for the dev config, for the rules' pure tests.

Every resource is a real ``pulumi_policy.PolicyResource`` with plain-dict properties, parents, dependencies and
property dependencies, as the engine would show them at preview (floating IP addresses unknown). The mock-run
harness (``policy_harness.py``) checks the same rules on what the program really registers.
"""

from __future__ import annotations

import copy
from typing import Any, Optional

from pulumi_policy import PolicyCustomTimeouts, PolicyResource, PolicyResourceOptions
from pulumi_policy.proxy import UNKNOWN_ARRAY_VALUE, UNKNOWN_STRING_VALUE, unknown_checking_proxy

from ha_endpoint import contract

STACK = "dev"
PROJECT = "ha-endpoint"
EP = "k8s-api"
ZONES = ("az1", "az2", "az3")
PORTS = (6443, 22623)


def dev_facts() -> dict[str, Any]:
    return {
        "name": EP,
        "provider": "amphora",
        "memberPlacement": "own-zone",
        "tags": [],
        "allowedCidrs": ["0.0.0.0/0"],
        "zones": {
            az: {"az": az, "subnetId": f"subnet-{az}", "subnetCidr": f"10.10.{i}.0/24", "networkId": "net-cp",
                 "routerIds": ["router-cp"]}
            for i, az in enumerate(ZONES, start=1)
        },
        "members": [
            {"name": f"cp-{i - 1}", "zone": az, "address": f"10.10.{i}.10", "subnetId": f"subnet-{az}",
             "subnetCidr": f"10.10.{i}.0/24", "networkId": "net-cp", "routerIds": ["router-cp"]}
            for i, az in enumerate(ZONES, start=1)
        ],
        "listeners": [
            {"port": 6443, "memberPort": 6443, "protocol": "TCP", "lbMethod": "ROUND_ROBIN",
             "monitorType": "HTTPS", "monitorPort": 6443},
            {"port": 22623, "memberPort": 22623, "protocol": "TCP", "lbMethod": "ROUND_ROBIN",
             "monitorType": "TCP", "monitorPort": 22623},
        ],
        "dns": {"zone": "example.test.", "record": "api", "ttl": 30, "publish": "when-ready",
                "perZoneRecords": True},
    }


class Stack:
    """Registers PolicyResources in order, with URNs built like the engine's."""

    def __init__(self, stack: str = STACK) -> None:
        self.stack = stack
        self.resources: list[PolicyResource] = []

    def add(self, token: str, name: str, props: Optional[dict[str, Any]] = None, parent: Optional[Any] = None,
            deps: Optional[list[Any]] = None, pdeps: Optional[dict[str, list[Any]]] = None) -> PolicyResource:
        qualified = token if parent is None else f"{_qualified(parent.urn)}${token}"
        urn = f"urn:pulumi:{self.stack}::{PROJECT}::{qualified}::{name}"
        opts = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [],
                                     parent.urn if parent is not None else None)
        pdeps = dict(pdeps or {})
        all_deps = list(deps or [])
        for values in pdeps.values():
            all_deps.extend(value for value in values if value not in all_deps)
        resource = PolicyResource(token, unknown_checking_proxy(props or {}), urn, name, opts, None, parent, all_deps, pdeps)
        self.resources.append(resource)
        return resource

    def named(self, name: str) -> PolicyResource:
        return next(resource for resource in self.resources if resource.name == name)

    def remove(self, name: str) -> None:
        gone = self.named(name)
        self.resources.remove(gone)
        for resource in self.resources:
            resource.dependencies[:] = [d for d in resource.dependencies if d is not gone]
            for key, values in resource.property_dependencies.items():
                values[:] = [d for d in values if d is not gone]


def _qualified(urn: str) -> str:
    return urn.split("::")[2]


def dev_stack(facts: Optional[dict[str, Any]] = None, stack: str = STACK) -> Stack:
    """The compliant baseline: what the component registers for Pulumi.dev.yaml (preview: FIP addresses unknown)."""
    facts = copy.deepcopy(facts or dev_facts())
    s = Stack(stack)
    root = s.add("pulumi:pulumi:Stack", f"{PROJECT}-{stack}")
    ep = s.add(contract.ENDPOINT_TYPE, EP, facts, root)
    vip_sg = s.add(contract.SECGROUP_TYPE, contract.vip_secgroup_name(EP), {"name": contract.vip_secgroup_name(EP)}, ep)
    members_sg = s.add(contract.SECGROUP_TYPE, contract.members_secgroup_name(EP),
                       {"name": contract.members_secgroup_name(EP)}, ep)
    for listener in facts["listeners"]:
        for cidr in facts["allowedCidrs"]:
            s.add(contract.SECGROUP_RULE_TYPE, f"{contract.vip_secgroup_name(EP)}-tcp-{listener['port']}-{cidr}",
                  {"direction": "ingress", "ethertype": "IPv4", "protocol": "tcp", "portRangeMin": listener["port"],
                   "portRangeMax": listener["port"], "remoteIpPrefix": cidr,
                   "securityGroupId": UNKNOWN_STRING_VALUE}, ep, pdeps={"securityGroupId": [vip_sg]})
        for key, zone in facts["zones"].items():
            s.add(contract.SECGROUP_RULE_TYPE, f"{contract.members_secgroup_name(EP)}-tcp-{listener['memberPort']}-{key}",
                  {"direction": "ingress", "ethertype": "IPv4", "protocol": "tcp",
                   "portRangeMin": listener["memberPort"], "portRangeMax": listener["memberPort"],
                   "remoteIpPrefix": zone["subnetCidr"], "securityGroupId": UNKNOWN_STRING_VALUE},
                  ep, pdeps={"securityGroupId": [members_sg]})
    fips, gates = {}, {}
    for key, zone in facts["zones"].items():
        zc = s.add(contract.ZONE_TYPE, contract.zone_component_name(EP, key), {}, ep)
        lb = s.add(contract.LOADBALANCER_TYPE, contract.loadbalancer_name(EP, key),
                   {"availabilityZone": zone["az"], "vipSubnetId": zone.get("subnetId", f"subnet-{key}"),
                    "loadbalancerProvider": facts["provider"], "tags": list(facts["tags"]),
                    "securityGroupIds": UNKNOWN_ARRAY_VALUE}, zc, pdeps={"securityGroupIds": [vip_sg]})
        pools = []
        for listener in facts["listeners"]:
            port = listener["port"]
            li = s.add(contract.LISTENER_TYPE, contract.listener_name(EP, key, port),
                       {"loadbalancerId": UNKNOWN_STRING_VALUE, "protocol": listener["protocol"],
                        "protocolPort": port, "allowedCidrs": list(facts["allowedCidrs"])},
                       zc, pdeps={"loadbalancerId": [lb]})
            pool = s.add(contract.POOL_TYPE, contract.pool_name(EP, key, port),
                         {"listenerId": UNKNOWN_STRING_VALUE, "protocol": listener["protocol"],
                          "lbMethod": listener["lbMethod"]}, zc, pdeps={"listenerId": [li]})
            pools.append(pool)
            if listener.get("monitorType"):
                s.add(contract.MONITOR_TYPE, contract.monitor_name(EP, key, port),
                      {"poolId": UNKNOWN_STRING_VALUE, "type": listener["monitorType"], "delay": 5, "timeout": 3,
                       "maxRetries": 2}, zc, pdeps={"poolId": [pool]})
            for member in facts["members"]:
                if facts["memberPlacement"] == "own-zone" and member["zone"] != key:
                    continue
                s.add(contract.MEMBER_TYPE, contract.member_name(EP, key, port, member["address"]),
                      {"poolId": UNKNOWN_STRING_VALUE, "address": member["address"], "subnetId": member["subnetId"],
                       "protocolPort": listener["memberPort"], "monitorPort": listener["monitorPort"],
                       "weight": 1}, zc, pdeps={"poolId": [pool]})
        fips[key] = s.add(contract.FLOATING_IP_TYPE, contract.floating_ip_name(EP, key),
                          {"pool": "public", "address": UNKNOWN_STRING_VALUE}, zc)
        s.add(contract.FLOATING_IP_ASSOCIATE_TYPE, contract.floating_ip_association_name(EP, key),
              {"floatingIp": UNKNOWN_STRING_VALUE, "portId": UNKNOWN_STRING_VALUE}, zc,
              pdeps={"floatingIp": [fips[key]], "portId": [lb]})
        gates[key] = s.add(contract.READINESS_TYPE if hasattr(contract, "READINESS_TYPE")
                           else "pulumi-python:dynamic:Resource", contract.readiness_name(EP, key),
                           {"poolIds": UNKNOWN_ARRAY_VALUE}, zc, pdeps={"poolIds": pools})
    dns = facts["dns"]
    if dns:
        s.add(contract.RECORDSET_TYPE, contract.recordset_name(EP),
              {"zoneId": "zone-example-test", "name": f"{dns['record']}.{dns['zone']}", "type": "A",
               "ttl": dns["ttl"], "records": UNKNOWN_ARRAY_VALUE}, ep,
              deps=list(gates.values()), pdeps={"records": list(fips.values())})
        if dns.get("perZoneRecords"):
            for key in facts["zones"]:
                s.add(contract.RECORDSET_TYPE, contract.zone_recordset_name(EP, key),
                      {"zoneId": "zone-example-test", "name": f"{dns['record']}-{key}.{dns['zone']}", "type": "A",
                       "ttl": dns["ttl"], "records": UNKNOWN_ARRAY_VALUE}, ep,
                      deps=[gates[key]], pdeps={"records": [fips[key]]})
    return s

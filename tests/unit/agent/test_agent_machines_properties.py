"""Issue 52, untrusted input: Machine annotations, labels and status are written by people and controllers the agent
does not trust. Whatever a Machine holds (huge strings, wrong types, addresses outside any zone, zone names that are no
zone's), :func:`ha_endpoint.agent.machines.members_from_machines` never raises, serves only well-formed members, and
reports every Machine it does not serve as a problem with a short message (values shown truncated)."""

from __future__ import annotations

import ipaddress
import re

from hypothesis import given, settings, strategies as st

from ha_endpoint.agent.machines import MAINTENANCE_ANNOTATION, MachineSource, members_from_machines
from tests.budget import examples

SOURCE = MachineSource(cluster="prod", namespace="default")
LABELS = {"cluster.x-k8s.io/cluster-name": "prod", "cluster.x-k8s.io/control-plane": ""}

junk = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) |
                    st.text(max_size=300), lambda inner: st.lists(inner, max_size=4) |
                    st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=8)
# well-formed values most of the time, so that most Machines are nearly servable and one bad field decides
good_name = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,18}[a-z0-9])?", fullmatch=True)
names = st.one_of(good_name, good_name, good_name, st.text(max_size=300), junk)
good_zone = st.sampled_from(["az1", "az2", "az3"])
zones = st.one_of(good_zone, good_zone, good_zone, st.text(max_size=300), junk)
addresses = st.one_of(st.ip_addresses().map(str), st.ip_addresses().map(str), st.text(max_size=80), junk)
address_lists = st.one_of(
    st.lists(st.fixed_dictionaries({"type": st.sampled_from(["InternalIP", "ExternalIP", "Hostname"]) | junk,
                                     "address": addresses}), max_size=4),
    st.lists(st.fixed_dictionaries({"type": st.just("InternalIP"), "address": addresses}), max_size=40), junk)
annotations = st.one_of(st.dictionaries(st.sampled_from([MAINTENANCE_ANNOTATION, "other"]),
                                        st.text(max_size=400) | junk, max_size=2), junk)
hostile = st.fixed_dictionaries({
    "metadata": st.fixed_dictionaries({"name": names, "labels": st.just(LABELS), "annotations": annotations}),
    "spec": st.fixed_dictionaries({"failureDomain": zones}),
    "status": st.fixed_dictionaries({"addresses": address_lists}),
})
entry = st.fixed_dictionaries({"type": st.sampled_from(["InternalIP", "ExternalIP", "Hostname"]),
                               "address": st.ip_addresses().map(str)})
servable = st.fixed_dictionaries({  # what a Machine of a working cluster holds: several addresses of several types
    "metadata": st.fixed_dictionaries({"name": good_name, "labels": st.just(LABELS), "annotations": st.dictionaries(
        st.just(MAINTENANCE_ANNOTATION), st.text(max_size=40), max_size=1)}),
    "spec": st.fixed_dictionaries({"failureDomain": good_zone}),
    "status": st.fixed_dictionaries({"addresses": st.lists(entry, min_size=1, max_size=4)}),
})
machines = st.one_of(servable, servable, hostile, hostile.map(lambda m: {**m, "spec": "junk"}), junk)


@settings(max_examples=examples(500), deadline=None)
@given(st.lists(machines, max_size=6))
def test_whatever_a_machine_holds_only_well_formed_members_are_served_and_the_rest_is_reported(found):
    members, problems = members_from_machines(found, SOURCE)
    for member in members:
        assert re.fullmatch(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?", member.name) and len(member.name) <= 253
        assert isinstance(member.az, str) and 0 < len(member.az) <= 255
        assert str(ipaddress.ip_address(member.address)) == member.address
        assert member.enabled is (member.maintenance_reason is None)
    assert len({member.name for member in members}) == len(members)
    for problem in problems:
        assert len(problem.message) <= 600 and len(problem.path) <= 600, problem
    for member in members:  # nothing guessed: each value is the Machine's own
        assert any(isinstance(machine, dict) and machine["metadata"]["name"] == member.name
                   and machine["spec"].get("failureDomain") == member.az
                   and any(isinstance(entry, dict) and entry.get("type") == "InternalIP"
                           and _ip(entry.get("address")) == member.address for entry in machine["status"]["addresses"])
                   for machine in found if _shaped(machine)), member
    candidates = [machine for machine in found if not isinstance(machine, dict) or isinstance(machine.get("metadata"),
                                                                                              dict)]
    served = {member.name for member in members}
    unserved = [machine for machine in candidates if not (isinstance(machine, dict) and
                                                          isinstance(machine["metadata"].get("name"), str)
                                                          and machine["metadata"]["name"] in served)]
    assert not unserved or problems, "a Machine that is not served is reported"


def _shaped(machine) -> bool:
    return isinstance(machine, dict) and isinstance(machine.get("spec"), dict) and \
        isinstance(machine.get("status"), dict) and isinstance(machine["status"].get("addresses"), list)


def _ip(value):
    if not isinstance(value, str):  # an integer is an address to ipaddress, never to a Machine's status
        return None
    try:
        return ipaddress.ip_address(value).compressed
    except ValueError:
        return None

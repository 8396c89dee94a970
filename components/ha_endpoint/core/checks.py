"""The checks that need the cloud facts, run before the planner (which only plans): every problem at once.

:func:`check_cloud_facts` judges the arguments against what the lookups found (:mod:`ha_endpoint.core.cloud_facts`): a
member's server in another AZ, an address outside its subnet or one the cloud reserves, a member subnet the zone's load
balancer cannot reach, a brought floating IP on another network or in use elsewhere, IP versions that do not match, a
DNS name another endpoint (or anyone) publishes already. (A
layout where one AZ's loss takes another zone down for certain is judged on the declared facts, by the pipeline's last
step: :mod:`ha_endpoint.pipeline`.) Values not known yet (Outputs of resources declared beside the component) are
skipped here and judged once known (:mod:`ha_endpoint.pipeline`). Every rule is a shared predicate
(:mod:`ha_endpoint.core.predicates`) where the policy pack decides the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from . import contract, predicates
from .args import EndpointArgs
from .cloud_facts import CloudFacts, MemberSpec
from .errors import Problem
from .identity import UNNAMED_STACK, StackIdentity, parse_description
from .inputs import plain


def no_cloud_facts_rules(args: EndpointArgs, facts: Any, members: Any, root: str) -> list[Problem]:
    """The cloud-facts rules of a backend that has none of its own."""
    return []


def no_configuration_rules(args: EndpointArgs, root: str) -> list[Problem]:
    """The configuration rules of a backend that has none of its own."""
    return []


@dataclass(frozen=True)
class Rules:
    """A backend's own rules, as the checks of a configuration (:func:`ha_endpoint.core.validation.check_endpoint_args`)
    and of the cloud facts (:func:`check_cloud_facts`) ask them of the backend it names
    (:attr:`ha_endpoint.backends.plugin.Backend.rules`): its rules of the configuration and of the cloud facts, and its
    words for the rules every backend shares. The defaults are a backend's that has no rules of its own, whose words every
    backend could say (a configuration loaded without the registry is held to these)."""

    cloud_facts: Callable[[EndpointArgs, Any, Any, str], list[Problem]] = no_cloud_facts_rules
    """``cloud_facts(args, facts, members, root)``: what the backend refuses that only the cloud facts reveal
    (:class:`ha_endpoint.core.cloud_facts.CloudFacts`, the members resolved on them), after the shared checks
    (:func:`ha_endpoint.core.checks.check_cloud_facts`)."""
    configuration: Callable[[EndpointArgs, str], Iterable[Problem]] = no_configuration_rules
    """``configuration(args, root)``: what the backend refuses of a configuration that names it without asking the
    cloud (its listeners, ``<root>.listeners[i]``, its members, the keys it has no use for), with the rules over
    several fields, after the listeners' rules every backend shares
    (:func:`ha_endpoint.core.validation.check_endpoint_args`); asked once for the whole configuration, so its
    arguments visit the backend's module once, and before the cloud is asked anything."""
    one_ip_version: str = "a zone's VIP admits clients of its own IP version only"
    """Why the allowed CIDRs are of one IP version, the one of the zones' VIPs."""
    other_ip_version: str = "a CIDR of another IP version than its VIP's admits none of the clients"
    """Why the default allowed CIDR does not fit a zone's VIP of another IP version."""
    needs_monitor: str = ("without a health monitor nothing tells a member that serves from one that does not, so "
                          "readiness would be blind")
    """Why a listener needs a health monitor (``monitor: null`` is refused)."""
    needs_certificate: str = "it terminates TLS with it"
    """Why a TERMINATED_HTTPS listener needs a certificate reference."""
    reserved_addresses: tuple[tuple[str, str], ...] = ()
    """(address, what it is) of each address the backend refuses as a member's, e.g. a metadata service's."""


NO_RULES = Rules()
"""The rules of a backend that has none of its own (or of a configuration whose backend is not registered)."""


def check_cloud_facts(args: EndpointArgs, facts: CloudFacts, members: tuple[MemberSpec, ...], root: str,
                      identity: StackIdentity = UNNAMED_STACK, rules: Rules = NO_RULES) -> list[Problem]:
    """Every problem of ``args`` and their ``members`` (resolved on the facts:
    :func:`ha_endpoint.core.cloud_facts.resolve_members`) that only the cloud ``facts`` reveal and every backend
    refuses, in a stable order (``identity``: the stack whose records are this endpoint's own; ``rules``: the
    backend's, whose words say why; its own checks of the facts, :attr:`Rules.cloud_facts`, follow these)."""
    return [*_placement_problems(args, facts, members, root), *_refused_by_the_cloud(facts, members, root, rules),
            *_cidr_versions(args, facts, root, rules), *_floating_ip_versions(args, facts, root),
            *_names_taken(args, facts, root, identity)]


def _names_taken(args: EndpointArgs, facts: CloudFacts, root: str, identity: StackIdentity) -> list[Problem]:
    """Each DNS name of the endpoint that the zone holds already as another owner's A record set: Designate keeps one
    record set per name and type, so the endpoint's would be refused with 409 after its load balancers are built."""
    dns = args.dns
    if dns is None or facts.published is None or not plain(dns.record, dns.dns_zone):
        return []
    names = [("record", contract.recordset_name(args.name), f"{dns.record}.{dns.dns_zone}")]
    if dns.per_zone_records:
        names += [(f"perZoneRecords ({az})", contract.zone_recordset_name(args.name, az),
                   f"{contract.zone_record_label(dns.record, az)}.{dns.dns_zone}") for az in sorted(args.zones)]
    problems = []
    for key, resource, name in names:
        if name not in facts.published:
            continue
        if key == "record" and facts.adopted_record is not None:
            continue  # the adopted load balancers' own record: the endpoint's record takes it over
        owner = _owner(facts.published[name], identity, resource)
        if owner is None:
            continue
        problems.append(Problem(f"{root}.dns.record",
                                f"{name} is published already by {owner}; Designate keeps one A record set per "
                                f"name, so this endpoint's {key} would be refused (409 Duplicate RecordSet) after "
                                f"its load balancers are built; give dns.record a name of its own (e.g. "
                                f"record: {dns.record}-2), or remove that record set first"))
    return problems


def _owner(description: Optional[str], identity: StackIdentity, resource: str) -> Optional[str]:
    """Who holds a record set, in words (None: this endpoint itself, which replaces it in place)."""
    found = parse_description(description)
    if found is None:
        return "a record set ha-endpoint did not make (openstack recordset list <zone>)"
    owner, name = found
    if owner == identity and name == resource:
        return None
    if owner == identity:
        return f"another endpoint of this stack ({owner.project}/{owner.stack}, its record set {name})"
    return f"the endpoint of stack {owner.project}/{owner.stack} (its record set {name})"


def _placement_problems(args: EndpointArgs, facts: CloudFacts, members: tuple[MemberSpec, ...],
                        root: str) -> list[Problem]:
    """Problems that need the cloud facts: a server in another AZ, addresses vs subnets, reachability, floating IP
    networks."""
    problems: list[Problem] = []
    for member in members:
        subnet, path, server = member.subnet, f"{root}.{member.path}", member.server
        if server is not None and plain(server.az) and server.az != member.az:
            problems.append(Problem(f"{path}.az",
                                    f"member {member.name} is configured in zone {member.az}, but its server "
                                    f"{server.name} runs in availability zone {server.az or '(none)'}; set az: "
                                    f"{server.az or '<its AZ>'} (a key of zones), or give a server that runs in "
                                    f"{member.az}"))
        address = member.address
        if subnet is None or not plain(address, subnet.cidr, subnet.network_id, subnet.router_ids):
            continue
        if not predicates.address_in_subnet(address, subnet.cidr):
            problems.append(Problem(f"{path}.address",
                                    f"address {address} of member {member.name} is outside its subnet "
                                    f"{subnet.name} ({subnet.cidr}); fix the address, or set "
                                    f"{_subnet_key(member)} to the subnet the address is on"))
            continue
        for az in member.zones:
            vip = facts.subnets.get(args.zones[az].subnet)
            if vip is not None and plain(vip.network_id, vip.router_ids) and \
                    not predicates.subnets_reach(vip.network_id, vip.router_ids, subnet.network_id,
                                                 subnet.router_ids):
                problems.append(Problem(f"{path}.subnet",
                                        f"member {member.name} on subnet {subnet.name} ({subnet.cidr}) is not "
                                        f"reachable from zone {az}'s load balancer on subnet {vip.name}: they are "
                                        "on different networks with no common router; attach both subnets to one "
                                        "router, or use a member subnet on the zone's network"))
    for az, zone in sorted(args.zones.items()):
        vip = facts.subnets.get(zone.subnet)
        if vip is not None and args.floating_network is None and args.dns is not None and plain(vip.ip_version) \
                and vip.ip_version != 4:
            problems.append(Problem(f"{root}.zones.{az}.subnet",
                                    f"subnet {vip.name} is IPv{vip.ip_version}; an internal endpoint publishes its "
                                    "VIPs as A records, so give an IPv4 subnet"))
        brought = facts.floating_ips.get(az)
        if brought is not None and not plain(brought.port, brought.network_id):
            continue
        adopted = facts.adopted.get(az)
        if brought is not None and brought.port is not None and not brought.port.ours and \
                not zone.take_over_floating_ip and not (adopted is not None and brought.port.id == adopted.vip_port_id):
            port = brought.port
            problems.append(Problem(f"{root}.zones.{az}.floatingIp",
                                    f"floating IP {brought.address} is associated with port {port.id} (device "
                                    f"{port.device_id or '-'}, owner {port.device_owner or '-'}); the endpoint would "
                                    "move it there and take that service down. Bring a free floating IP, or set "
                                    f"zones.{az}.takeOverFloatingIp: true to move it on purpose"))
        if brought is not None and facts.floating_network_id and plain(facts.floating_network_id) and \
                brought.network_id != facts.floating_network_id:
            problems.append(Problem(f"{root}.zones.{az}.floatingIp",
                                    f"floating IP {brought.address} belongs to network {brought.network_id}, not to "
                                    f"floatingNetwork {args.floating_network}; bring an address of "
                                    f"{args.floating_network} or change floatingNetwork"))
    return problems


def _refused_by_the_cloud(facts: CloudFacts, members: tuple[MemberSpec, ...], root: str,
                          rules: Rules) -> list[Problem]:
    """What the cloud would refuse that only the looked-up facts reveal: a member address that is its subnet's
    network, broadcast or gateway address, or one the backend reserves (:attr:`Rules.reserved_addresses`)."""
    reserved = dict(rules.reserved_addresses)
    problems: list[Problem] = []
    for member in members:
        subnet = member.subnet  # the address as given (a server's is its own subnet's by construction)
        if subnet is None or not member.address_given or not plain(subnet.cidr, subnet.gateway_ip):
            continue
        problem = predicates.member_address_problem(member.address, subnet.cidr, subnet.gateway_ip, reserved)
        if problem:
            problems.append(Problem(f"{root}.{member.path}.address",
                                    f"member {member.name}'s address {problem}; give the address of the member's "
                                    f"server on subnet {subnet.name} ({subnet.cidr})"))
    return problems


def _floating_ip_versions(args: EndpointArgs, facts: CloudFacts, root: str) -> list[Problem]:
    """A floating IP (IPv4) for a VIP on an IPv6 subnet, which Neutron refuses to associate."""
    problems: list[Problem] = []
    for az, zone in sorted(args.zones.items()):
        vip = facts.subnets.get(zone.subnet) if plain(zone.subnet) else None
        if vip is None or not plain(vip.ip_version):
            continue
        if args.floating_network is not None and vip.ip_version != 4:
            problems.append(Problem(f"{root}.zones.{az}.subnet",
                                    f"subnet {vip.name} ({vip.cidr}) is IPv{vip.ip_version}, and floating IPs are "
                                    "IPv4: Neutron cannot associate one with the zone's VIP; give an IPv4 subnet, "
                                    "or remove floatingNetwork for an internal endpoint"))
    return problems


def _cidr_versions(args: EndpointArgs, facts: CloudFacts, root: str, rules: Rules) -> list[Problem]:
    """Each allowed CIDR of another IP version than some zone's VIP: one problem per CIDR, naming those zones."""
    vips = {az: facts.subnets.get(zone.subnet) for az, zone in sorted(args.zones.items()) if plain(zone.subnet)}
    vips = {az: vip for az, vip in vips.items() if vip is not None and plain(vip.ip_version, vip.name, vip.cidr)}
    problems = []
    for index, cidr in enumerate(args.allowed_cidrs):
        others = {az: vip for az, vip in vips.items() if predicates.ip_version_problem(cidr, vip.ip_version)}
        if not others:
            continue
        version = next(iter(others.values())).ip_version
        plural = len(others) > 1
        vips = (f"the VIP subnet{'s' if plural else ''} of zone{'s' if plural else ''} " +
                ", ".join(f"{az} ({vip.name}, {vip.cidr})" for az, vip in others.items()) +
                f" {'are' if plural else 'is'} IPv{version}")
        given = predicates.parse_network(cidr)
        if "allowed_cidrs" in args.model_fields_set:
            problems.append(Problem(f"{root}.allowedCidrs[{index}]",
                                    f"{cidr} is an IPv{given.version} network, but {vips}: {rules.one_ip_version}; "
                                    f"list IPv{version} client networks only (one endpoint serves one IP version)"))
        else:
            everyone = "::/0" if version == 6 else "0.0.0.0/0"
            problems.append(Problem(f"{root}.allowedCidrs",
                                    f"allowedCidrs defaults to {cidr} (IPv{given.version}), but {vips}: "
                                    f"{rules.other_ip_version}; set allowedCidrs to the IPv{version} client networks "
                                    f"(e.g. ['{everyone}'])"))
    return problems


def _subnet_key(member: MemberSpec) -> str:
    """The key that sets ``member``'s subnet: a static member's own ``subnet``; the Machines' of a zone for a member
    of ``memberSources.clusterApi`` (the member agent's: ``--member-subnet <zone>=<subnet id>``)."""
    if member.source == "clusterApi":
        return f"memberSources.clusterApi.subnets.{member.az}"
    return f"{member.path}.subnet"


def notices(args: EndpointArgs, root: str) -> list[Problem]:
    """What the component allows but a user should know (warnings, not problems: each a :class:`Problem`, the key it
    is about, what it means and how to change it; :class:`ha_endpoint.HaEndpoint` says each once, as a warning on
    itself, :attr:`ha_endpoint.core.plan.EndpointPlan.notices`), in a stable order: former key names first; a
    backend's own follow (:attr:`ha_endpoint.backends.plugin.Backend.notices`)."""
    return [Problem(root, notice) for notice in args._former_keys] + open_to_everyone(args, root)


def open_to_everyone(args: EndpointArgs, root: str) -> list[Problem]:
    """The API open to every address: ``allowedCidrs`` (by default ``0.0.0.0/0``) holds the whole internet. Allowed
    (a dev endpoint reached from anywhere), refused by the policy pack in a production stack only; said once."""
    everyone = [(index, cidr) for index, cidr in enumerate(args.allowed_cidrs) if predicates.admits_everyone(cidr)]
    if not everyone:
        return []
    given = "allowed_cidrs" in args.model_fields_set
    path = f"{root}.allowedCidrs" + (f"[{everyone[0][0]}]" if given else "")
    cidrs = " and ".join(cidr for _, cidr in everyone) + ("" if given else " (the default)")
    ports = sorted({listener.port for listener in args.listeners})
    reach = "every address on the internet, through the floating IPs" if args.floating_network is not None else \
        "every address that can reach the VIP subnets"
    several = len(ports) > 1
    return [Problem(path, f"the endpoint's listener {'ports' if several else 'port'} "
                          f"({', '.join(str(port) for port in ports)}) "
                          f"{'admit' if several else 'admits'} {cidrs}: {reach}; set allowedCidrs to the client "
                          "networks that need the endpoint (e.g. allowedCidrs: ['10.0.0.0/8']). The policy pack refuses "
                          "it in a production stack")]

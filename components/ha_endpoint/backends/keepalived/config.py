"""What runs on the members: keepalived's configuration per member, as a file, a cloud-init fragment and a static pod.

Pure: no cloud, no resource. One ``vrrp_instance`` per zone the member serves (its own zone under ``memberPlacement:
own-zone``), the zone's members in name order with distinct priorities (the first highest), unicast advertisements
to every other member of the zone, and a track script that checks the member's own listener.

Unicast, not multicast: VRRP multicasts to 224.0.0.18. Whether ML2/OVN delivers that depends on the logical switch's
multicast settings, which the cloud's operator chooses (Neutron's ``[DEFAULT] igmp_snooping_enable`` sets OVN's
``mcast_snoop`` and, with it, whether unregistered multicast is flooded), so a user cannot rely on it; and Neutron's
port security admits a packet only if a security-group rule does. Unicast advertisements are ordinary IP packets
(protocol 112) between fixed addresses of one network: delivered on every ML2 driver, and admitted by one rule per
peer address, which the backend creates. So each member advertises from its own address (``unicast_src_ip``) to every
other member of the zone (``unicast_peer``): on the local cloud (ML2/OVN) the VIP moved between the two nodes of a
zone this way (docs/keepalived.md).

Timing (the issue's goal: the VIP moves within 3 s after its holder's listener stops): ``advert_int 1``; the track
script runs every second with a 1 s timeout, ``fall 2`` (two failed checks in a row, 1-2 s after the listener stops)
and ``rise 2``. A failed script puts the instance in FAULT, keepalived sends a priority-0 advertisement and the next
member takes the VIP at once (it does not wait for the 3 x advert_int master-down timer): at most ~3 s. A holder
that dies altogether is replaced after the master-down interval (3 x advert_int + skew, ~3.6 s).

``nopreempt`` (every instance starts ``state BACKUP``, which it requires): a member whose listener comes back, or
whose keepalived restarts, stays BACKUP even with the higher priority, so the VIP does not switch a second time; the
priorities decide who takes the VIP when nobody holds it. Measured on the local cloud: the fail-back by preemption
failed a request in 3 of 4 runs (a ~1 s gap), with nopreempt none in 4 (docs/keepalived.md).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Optional

import yaml

ADVERT_INT = 1
"""Seconds between VRRP advertisements."""
CHECK_INTERVAL = 1
"""Seconds between two runs of the track script."""
CHECK_FALL = 2
"""Failed checks in a row before the member gives the VIP up."""
CHECK_RISE = 2
"""Good checks in a row before the member may hold the VIP again."""
GARP_REFRESH = 5
"""Seconds between the holder's repeated gratuitous ARPs."""
TOP_PRIORITY = 150
PRIORITY_STEP = 10
DEFAULT_INTERFACE = "eth0"
CONFIG_PATH = "/etc/keepalived/keepalived.conf"
IMAGE = "docker.io/osixia/keepalived:2.0.20"
"""The image of the static pod (any image with keepalived and curl; set yours in the manifest)."""


@dataclass(frozen=True)
class ZoneVrrp:
    """One zone as its members' keepalived sees it."""

    endpoint: str
    az: str
    vip: str
    router_id: int
    members: tuple[tuple[str, str], ...]
    """(member name, address), in name order: the first has the highest priority."""
    check_port: int
    check_path: Optional[str] = "/readyz"
    """The path the track script asks over HTTPS; None: a TCP connect to the port."""

    @property
    def instance(self) -> str:
        return f"{self.endpoint}_{self.az}".replace("-", "_")

    def priority(self, member: str) -> int:
        names = [name for name, _ in self.members]
        return TOP_PRIORITY - PRIORITY_STEP * names.index(member)


def router_id(endpoint: str, zone_index: int) -> int:
    """The zone's virtual_router_id (1-255): distinct for the zones of one endpoint (zones may share one network),
    offset by the endpoint's name so that two endpoints on one network are unlikely to collide (unicast peers keep a
    collision harmless: the advertisements only reach the zone's own members)."""
    return (zlib.crc32(endpoint.encode()) % 200 + zone_index) % 255 + 1


def zone_index(az: str) -> int:
    """The zone's place among its endpoint's zones, from its name (``az3`` -> 2; else 0): each zone of an endpoint
    gets its own virtual_router_id."""
    digits = "".join(ch for ch in az if ch.isdigit())
    return int(digits) - 1 if digits else 0


def zone_vrrp(endpoint: str, az: str, vip: str, members: list[tuple[str, str]], protocol: str,
              check_port: int) -> ZoneVrrp:
    """The zone as keepalived sees it: ``members`` (name, address) in service in the zone, the tracked listener's
    protocol and member port (asked over HTTPS at /readyz for an ``HTTPS`` listener, else a TCP connect)."""
    return ZoneVrrp(endpoint, az, vip, router_id(endpoint, zone_index(az)), tuple(sorted(members)), check_port,
                    "/readyz" if protocol == "HTTPS" else None)


def member_files(zone: ZoneVrrp) -> dict[str, dict]:
    """Per member of the zone: its keepalived configuration, cloud-init fragment, static pod, kubeadm files and
    priority (the zone's ``keepalived`` output)."""
    outputs = {}
    for name, address in zone.members:
        text = render(name, address, [zone])
        pod = static_pod(name, text)
        outputs[name] = {"config": text, "cloud_init": cloud_init(text), "static_pod": pod,
                         "kubeadm_files": kubeadm_files(text, pod), "priority": zone.priority(name)}
    return outputs


def check_command(zone: ZoneVrrp) -> str:
    """The track script: the member's own listener, on its loopback address."""
    if zone.check_path is None:
        return f"/bin/bash -c '</dev/tcp/127.0.0.1/{zone.check_port}'"
    return f"/usr/bin/curl -fsk --max-time 1 -o /dev/null https://127.0.0.1:{zone.check_port}{zone.check_path}"


def render(member: str, address: str, zones: list[ZoneVrrp], interface: str = DEFAULT_INTERFACE) -> str:
    """keepalived.conf of ``member`` (at ``address``) for every zone in ``zones`` it is a member of."""
    lines = ["global_defs {", f"    router_id {member}", "    script_user root", "    enable_script_security",
             "    vrrp_garp_master_delay 1", "    vrrp_garp_master_repeat 3",
             # the holder repeats its gratuitous ARPs: OVN learns a virtual port's holder from them, and forgets it
             # when the VIP leaves the port's allowed address pairs even for a moment
             f"    vrrp_garp_master_refresh {GARP_REFRESH}", "}", ""]
    served = [zone for zone in zones if member in dict(zone.members)]
    for zone in served:
        lines += [f"vrrp_script check_{zone.instance} {{", f'    script "{check_command(zone)}"',
                  f"    interval {CHECK_INTERVAL}", "    timeout 1", f"    fall {CHECK_FALL}", f"    rise {CHECK_RISE}",
                  "}", ""]
    for zone in served:
        peers = [peer for name, peer in zone.members if name != member]
        # every member starts BACKUP (nopreempt needs it), and nopreempt: a member whose listener answers again
        # leaves the VIP where it is, rather than take it back with a second switch (measured, docs/keepalived.md)
        lines += [f"vrrp_instance {zone.instance} {{", "    state BACKUP", "    nopreempt",
                  f"    interface {interface}", f"    virtual_router_id {zone.router_id}",
                  f"    priority {zone.priority(member)}",
                  f"    advert_int {ADVERT_INT}", f"    unicast_src_ip {address}",
                  # a zone of one member has no peer to advertise to (an empty block is keepalived's error)
                  *(["    unicast_peer {", *[f"        {peer}" for peer in peers], "    }"] if peers else []),
                  "    virtual_ipaddress {",
                  f"        {zone.vip}/32 dev {interface}", "    }", "    track_script {",
                  f"        check_{zone.instance}", "    }", "}", ""]
    return "\n".join(lines)


def cloud_init(config: str) -> str:
    """A cloud-init fragment (``#cloud-config``) that installs keepalived and curl and runs ``config``."""
    body = {"packages": ["keepalived", "curl"],
            "write_files": [{"path": CONFIG_PATH, "permissions": "0640", "owner": "root:root", "content": config}],
            "runcmd": [["systemctl", "enable", "--now", "keepalived"], ["systemctl", "restart", "keepalived"]]}
    return "#cloud-config\n" + yaml.safe_dump(body, sort_keys=False, default_flow_style=False)


def static_pod(member: str, config: str, image: str = IMAGE) -> str:
    """A static pod manifest (``/etc/kubernetes/manifests/keepalived.yaml``) running keepalived with ``config`` on a
    kubeadm node: host network, NET_ADMIN/NET_RAW/NET_BROADCAST, the configuration from the host (write it with the
    KubeadmControlPlane's ``files``: :func:`kubeadm_files`)."""
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "keepalived", "namespace": "kube-system", "labels": {"app": "keepalived"}},
           "spec": {"hostNetwork": True, "priorityClassName": "system-node-critical",
                    "containers": [{
                        "name": "keepalived", "image": image,
                        "args": ["--dont-fork", "--log-console", "--use-file", CONFIG_PATH],
                        "command": ["/usr/sbin/keepalived"],
                        "securityContext": {"capabilities": {"add": ["NET_ADMIN", "NET_RAW", "NET_BROADCAST"]}},
                        "volumeMounts": [{"name": "config", "mountPath": CONFIG_PATH, "readOnly": True}]}],
                    "volumes": [{"name": "config", "hostPath": {"path": CONFIG_PATH, "type": "File"}}]}}
    return yaml.safe_dump(pod, sort_keys=False)


def kubeadm_files(config: str, manifest: str) -> list[dict]:
    """The KubeadmControlPlane ``spec.kubeadmConfigSpec.files`` entries that put both on a node."""
    return [{"path": CONFIG_PATH, "owner": "root:root", "permissions": "0640", "content": config},
            {"path": "/etc/kubernetes/manifests/keepalived.yaml", "owner": "root:root", "permissions": "0644",
             "content": manifest}]

"""VipReadiness: a zone's readiness under keepalived, created (or updated) once a member holds the zone's VIP and
answers on it.

The gate is the Octavia backend's (:mod:`ha_endpoint.gates.provider`: the same inputs, the same waiter, stable
polls, deadline, dead zone, ``on_not_ready``, the same outputs), waiting for one "member": the VIP port, in one "pool"
(the VIP port too). Only the status source differs (:class:`VipStatusSource`), and what it reports:

* provisioning ``ACTIVE`` once the VIP port exists (the ``provisioned`` requirement, bootstrap publication); a VIP port
  deleted behind the stack's back is gone (the waiter's ``MemberGone``).
* operating ``ONLINE`` when the zone serves. With ``probe`` addresses (the zone's floating IP, which the machine
  running Pulumi reaches): a TCP connection to every listener port of each of them is accepted, i.e. a member holds
  the VIP and its listener answers. Without (an internal endpoint, whose VIP the runner may not reach): the cloud's
  view, the VIP port's ``binding:host_id``: under ML2/OVN a port whose address is in other ports' allowed address pairs
  is an OVN virtual port, which ovn-controller claims on the chassis of the member that answers ARP for it (its
  ``virtual_parent``), and Neutron's OVN driver records that host on the port (its ``status`` stays DOWN). Measured on
  the local cloud (Neutron Zed): both stay when the holder gives the VIP up, so this view proves that a member
  claimed the VIP once, not that one holds it now (docs/keepalived.md).
"""

from __future__ import annotations

import socket
from typing import Any, Mapping, Optional

import pulumi
from pulumi.dynamic import DiffResult

from ...cloud.connection import connect
from ...gates import hosted
from ...gates.cloud import translated
from ...gates.errors import ReadinessError
from ...gates.inputs import PoolInputs, ReadinessInputs
from ...gates.model import ACTIVE, LoadBalancerStatus, MemberStatus
from ...gates.provider import (OUTPUT_NAMES, MemberReadinessProvider, _now, _sleep, not_ready_outputs, outputs,
                                   zone_not_ready)
from ...gates.target import CloudTarget, resolve
from ...gates.waiter import wait_for_members
from .checks import NAME

TYPE_NAME = "VipReadiness"
CONNECT_SECONDS = 2.0


def answers(address: str, port: int, timeout: float = CONNECT_SECONDS) -> bool:
    """Whether ``address:port`` accepts a TCP connection within ``timeout``."""
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except OSError:
        return False


class VipStatusSource:
    """The VIP port's statuses as the waiter reads a pool's members (one ``GET /v2.0/ports/{id}`` per poll)."""

    def __init__(self, target: CloudTarget, probe: list[str], ports: list[int]) -> None:
        self.target, self.probe, self.ports = target, probe, ports
        self._conn: Any = None

    def _connection(self) -> Any:
        if self._conn is None:
            with translated("building the OpenStack connection (OS_CLOUD / clouds.yaml)"):
                self._conn = connect(self.target.cloud, self.target.region)
        return self._conn

    def _port(self, port_id: str) -> Optional[Any]:
        with translated(f"reading VIP port {port_id}"):
            return self._connection().network.find_port(port_id, ignore_missing=True)

    def held(self, port: Any) -> bool:
        if self.probe:
            return all(answers(address, listener) for address in self.probe for listener in self.ports)
        return bool(port.binding_host_id)

    def fetch_pool(self, port_id: str) -> list[MemberStatus]:
        port = self._port(port_id)
        if port is None:
            return []
        return [MemberStatus(port_id, ACTIVE, "ONLINE" if self.held(port) else "OFFLINE")]

    def fetch_load_balancer(self, port_id: str) -> LoadBalancerStatus:
        port = self._port(port_id)
        host = (port.binding_host_id or "no host") if port is not None else "gone"
        return LoadBalancerStatus(port_id, str(port.status) if port is not None else "DELETED", host)

    def reauth(self) -> None:
        self.close()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class VipReadinessInputs(ReadinessInputs):
    """The gate's inputs (:class:`ha_endpoint.gates.inputs.ReadinessInputs`: one "pool" of one "member", the VIP
    port) and where the zone is probed: ``probe`` (the addresses, e.g. the zone's floating IP; none: the cloud's view)
    and ``listener_ports``."""

    probe: Optional[list[str]] = None
    listener_ports: Optional[list[int]] = None

    @classmethod
    def of_port(cls, vip_port_id: pulumi.Input[str], **values: Any) -> "VipReadinessInputs":
        """The inputs that wait for the VIP port ``vip_port_id`` (the other inputs as ``values``), recorded as this
        backend's (``backend``)."""
        vip = PoolInputs.declare(pool_id=vip_port_id, member_ids=[vip_port_id], monitored=True)
        return cls.declare(loadbalancer_id=vip_port_id, pools={"vip": vip}, backend=NAME, **values)


def wait_and_record(props: Mapping[str, Any], stack: CloudTarget) -> dict[str, Any]:
    """The gate's wait (as :func:`ha_endpoint.gates.provider.wait_and_record`) over the VIP port."""
    inputs = VipReadinessInputs.of_bag(props)
    source = VipStatusSource(resolve(props, stack), inputs.probe or [], inputs.listener_ports or [])
    try:
        result = wait_for_members(inputs.wait_spec(), fetch_pool=source.fetch_pool,
                                  fetch_load_balancer=source.fetch_load_balancer, reauth=source.reauth,
                                  clock=_now, sleep=_sleep)
        return outputs(props, result)
    except ReadinessError as exc:
        if inputs.unpublishes and zone_not_ready(exc):
            return not_ready_outputs(props, exc)
        raise
    finally:
        source.close()


class VipReadinessProvider(MemberReadinessProvider):
    """The CRUD of :class:`VipReadiness`: the zone gate's, with this backend's wait; a change of probe is a new
    verdict too."""

    inputs = VipReadinessInputs
    wait = staticmethod(wait_and_record)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        result = super().diff(_id, olds, news)
        changed = result.changes or olds.get("probe") != news.get("probe")
        return DiffResult(changes=changed, replaces=[], delete_before_replace=False)


class VipReadiness(pulumi.dynamic.Resource, module="haendpoint", name=TYPE_NAME):
    """A keepalived zone's readiness gate (named ``contract.readiness_name``): exists once a member holds the VIP and
    answers. Outputs as :class:`ha_endpoint.gates.provider.MemberReadiness`'s."""

    ready: pulumi.Output[bool]
    statuses: pulumi.Output[dict]
    waited_seconds: pulumi.Output[float]
    not_ready_reason: pulumi.Output[Optional[str]]

    def __init__(self, name: str, inputs: VipReadinessInputs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        """``inputs``: :meth:`VipReadinessInputs.of_port`."""
        props = inputs.bag()
        props.update({key: None for key in OUTPUT_NAMES})
        hosted.register(self, VipReadinessProvider(), TYPE_NAME, name, props, opts)

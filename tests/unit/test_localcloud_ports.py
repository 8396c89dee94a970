"""The local cloud refuses to start on ports another process holds (lab/localcloud/ports.py): a second cloud left
running on the same port set took OVN's database ports and every Nova server went to ERROR."""

from __future__ import annotations

import os
import socket
import sys
import time

from localcloud import ports

PORTS = {"keystone": 5000, "ovn-nb": 6641, "octavia-health": 5555}
PARENTS = {101: 100, 100: 1, 201: 200, 200: 1, 1: None}


def test_ports_held_by_this_clouds_processes_or_their_workers_pass():
    assert ports.foreign({5000: {100, 101}, 6641: {101}}, {100}, PARENTS.get, PORTS) == []


def test_a_port_another_process_holds_is_named_with_its_service_and_pid():
    assert ports.foreign({5000: {100}, 6641: {201}}, {100}, PARENTS.get, PORTS) == [("ovn-nb", 6641, 201)]


def test_a_udp_only_port_is_not_checked_over_tcp():
    assert ports.foreign({5555: {201}}, set(), PARENTS.get, PORTS) == []


def test_a_parent_loop_ends():
    assert ports.foreign({5000: {7}}, set(), {7: 8, 8: 7}.get, PORTS) == [("keystone", 5000, 7)]


def test_the_listening_process_of_a_real_socket_is_found():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        assert os.getpid() in ports.listening_pids([port]).get(port, set())
        assert ports.parent_pid(os.getpid()) == os.getppid()
        assert ports.foreign(ports.listening_pids([port]), set(), ports.parent_pid, {"keystone": port}) == [
            ("keystone", port, os.getpid())]


def test_the_clouds_make_test_runs_take_ports_apart_and_below_the_ephemeral_range():
    """Clouds at offsets 0, 5000 and 10000 (scripts/test.sh's lanes): no port in Linux's ephemeral range (an outgoing
    connection held RabbitMQ's distribution port 35672 once and the third cloud did not start) and none shared."""
    from localcloud.settings import BASE_PORTS
    ports = [port + offset for offset in (0, 5000, 10000) for port in BASE_PORTS.values()]
    assert max(ports) < 32768
    assert len(set(ports)) == len(ports)


def test_up_restarts_a_running_service_that_does_not_listen_where_this_checkout_says(tmp_path, monkeypatch):
    """A cloud left running by an older checkout: a service listening elsewhere (RabbitMQ's distribution port moved)
    is stopped so that `up` starts it anew; one listening where it should is left alone."""
    from localcloud import ctl, procs, services
    from localcloud.settings import Paths

    p = Paths(tmp_path)
    p.makedirs()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = f"import socket, time; s = socket.socket(); s.bind(('127.0.0.1', {port})); s.listen(); time.sleep(60)"
    pid = procs.start("svc", [sys.executable, "-c", code, "stale-ports-test"], p.pidfile("svc"), p.log("svc"))
    try:
        deadline = time.monotonic() + 10
        while port not in ports.listening_pids([port]) and time.monotonic() < deadline:
            time.sleep(0.05)
        for listened, kept in ((port, True), (port + 1, False)):
            service = services.Service("svc", [], "stale-ports-test", [("tcp", listened)])
            monkeypatch.setattr(services, "table", lambda _p, service=service: {"svc": service})
            ctl.stale_ports(p)
            assert bool(procs.alive(p.pidfile("svc"), "stale-ports-test")) is kept
    finally:
        procs.stop(p.pidfile("svc"), "stale-ports-test", timeout=5)
        os.waitpid(pid, os.WNOHANG)

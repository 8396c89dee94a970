"""Data-plane faults (mixed into localcloud.faults.Faults; standard library only, run as root).

- member-down <server> / member-up <server>: stop / start again the member server in the Nova server's namespace
  (a real member failure: OVN's health checks take it out, its port stays up). The reconciler leaves a member
  held down alone (<run>/members/<port>.down). On a node of localcloud.k8s (<port>.hosted) it is the node's
  kube-apiserver that stops and starts again (its etcd member keeps running).
- az-down <az> / az-up <az>: stop / start again the AZ's chassis (its ovn-controller and ovs-vswitchd; the switch
  database stays, so every member's port is back with it): every member of the AZ is cut off, and the AZ's gateway
  role moves away (BFD between the gateway chassis).
"""
import time

from .. import procs
from ..settings import AZS
from . import members, ovn
from .config import DPPaths


class DataPlaneFaults:
    paths = None  # set by Faults

    def _member(self, server: str) -> tuple[str, dict]:
        found = [(port, m) for port, m in members.recorded(self.paths).items()
                 if m and server in (m['name'], m['server_id'], port)]
        if not found:
            names = sorted(m['name'] for m in members.recorded(self.paths).values() if m)
            raise LookupError(f'no data-plane member for server {server!r}; members: {", ".join(names) or "none"} '
                              f'(a Nova server on cp-az1..3 becomes one within a second of ACTIVE)')
        if len(found) > 1:
            raise LookupError(f'server {server!r} has {len(found)} ports; name one port id of '
                              f'{", ".join(p for p, _ in found)}')
        return found[0]

    def is_data_plane_member(self, server: str) -> bool:
        try:
            self._member(server)
            return True
        except LookupError:
            return False

    def server_down(self, server: str) -> dict:
        """Stop the member server of `server` (name, id or port id) and keep it down until server_up."""
        port, m = self._member(server)
        d = DPPaths(self.paths)
        if members.hosted_marker(d, port).exists():      # a node of localcloud.k8s: its API server stops
            from ..k8s import oncloud
            done = oncloud.node_down(members.hosted_marker(d, port))
            return {'server': m['name'], 'port': port, 'az': m['az'], 'ip': m['ip'], **done, 'at': time.time()}
        members.down_marker(d, port).write_text(time.strftime('%F %T\n'))
        pid = procs.alive(members.pidfile(d, port), members.SERVER_MARKER)
        procs.stop(members.pidfile(d, port), members.SERVER_MARKER, timeout=3)
        return {'server': m['name'], 'port': port, 'az': m['az'], 'ip': m['ip'], 'stopped_pid': pid,
                'at': time.time()}

    def server_up(self, server: str) -> dict:
        port, m = self._member(server)
        if members.hosted_marker(DPPaths(self.paths), port).exists():
            from ..k8s import oncloud
            done = oncloud.node_up(members.hosted_marker(DPPaths(self.paths), port))
            return {'server': m['name'], 'port': port, 'az': m['az'], 'ip': m['ip'], **done, 'at': time.time()}
        members.down_marker(DPPaths(self.paths), port).unlink(missing_ok=True)
        pid = members.serve(self.paths, m)
        return {'server': m['name'], 'port': port, 'az': m['az'], 'ip': m['ip'], 'pid': pid, 'at': time.time()}

    def _az(self, az: str) -> str:
        if az not in AZS:
            raise ValueError(f'unknown AZ {az!r}; one of {", ".join(AZS)}')
        return az

    def az_down(self, az: str) -> dict:
        """Stop the AZ's chassis (ovn-controller, ovs-vswitchd)."""
        ovn.held_down(self.paths, self._az(az)).write_text(time.strftime('%F %T\n'))
        return {'az': az, 'stopped': ovn.stop_chassis(self.paths, az, keep_db=True), 'at': time.time()}

    def az_up(self, az: str) -> dict:
        started = ovn.start_chassis(self.paths, self._az(az), lambda msg: None)
        ovn.held_down(self.paths, az).unlink(missing_ok=True)
        members.plug_zone(self.paths, az)
        return {'az': az, 'started': started, 'at': time.time()}

    def data_plane_clear(self) -> None:
        """Every member server running again and every chassis up (part of `lab/localcloud/fault clear`)."""
        d = DPPaths(self.paths)
        if not d.run.is_dir():
            return
        for az, c in ovn.chassis_status(self.paths).items():
            if not c['up'] and c['pids']['ovsdb']:
                self.az_up(az)
        for port, m in members.recorded(self.paths).items():
            if m and members.down_marker(d, port).exists():
                self.server_up(port)

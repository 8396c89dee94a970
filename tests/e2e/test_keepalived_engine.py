"""The keepalived backend end to end, as a user runs it: ``STACK=keepalived make up`` (``scripts/stack.sh up``) on
``Pulumi.keepalived.yaml`` from nothing, the name answering from every zone, a zone's VIP moving when keepalived on its
holder stops, and ``make down`` leaving nothing.

What the user notices, checked here:

* ``up`` completes from nothing and prints the curl line: the nodes start keepalived while ``up`` runs
  (``keepalived_nodes follow``), the zones' gates wait for a member to hold the VIP and answer through the floating
  IP, and after ``up`` every node runs exactly the configuration the component output (the ``start`` check says
  "already" for each);
* the curl line answers, and through the name each published address reaches its own zone's members;
* keepalived stopped on az1's holder: a probe asking the zone's address every 0.1 s gets its answers from the zone's
  other node afterwards, and no failover client looping over the name (tests/e2e/failover.py) loses a request in the
  end (their table, the gap and the failed requests are printed, not asserted);
* az2 lost (keepalived stopped on both its nodes) with the DNS watcher running at its defaults: its address leaves
  DNS and comes back once they run again, the watcher acting on az2 alone (the clients' table and the times printed);
* ``down``: no VIP port, VRRP group, floating IP or A record of the stack left, the member ports without the VIP in
  their allowed address pairs, no keepalived left running.

The stack uses the dev stack's names (``k8s-api``, ``api.example.test.``), makes the second node of each zone and stops
keepalived on a node: a cloud of its own (marker ``own_cloud``, as the README walk; tests/schedule.py). It runs the
project's tracked files from a copy (``pulumi stack select --create`` writes a salt into ``Pulumi.keepalived.yaml``)
with a file backend of its own.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from localcloud.dataplane import keepalived_nodes
from localcloud.settings import PORT_OFFSET
from tests.e2e import failover
from tests.e2e.cloud_checks import published
from tests.e2e.pulumi_cli import REPO

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.own_cloud]  # never the user's (first) cloud

ENDPOINT, FQDN, PORT = "k8s-api", "api.example.test.", 6443
LOOP_SECONDS, ZONE_LOOP_SECONDS, LOSE_AT = 20.0, 40.0, 5.0
"""The failover clients loop 20 s over the name while az1's holder stops, 40 s while az2 is lost; each 5 s in."""
ZONES = {"az1": ("cp-0", "cp-3"), "az2": ("cp-1", "cp-4"), "az3": ("cp-2", "cp-5")}


def _checkout(root: Path) -> Path:
    """This work tree's tracked files, with its virtualenv linked and no encryption salt in the stack's file."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in files.decode().split("\0"):
        if name and (REPO / name).is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, root / name)
    (root / ".venv").symlink_to(REPO / ".venv")
    stack_file = root / "Pulumi.keepalived.yaml"  # a local run's salt (another passphrase's) would refuse ours
    stack_file.write_text("".join(line for line in stack_file.read_text().splitlines(keepends=True)
                                  if not line.startswith("encryptionsalt:")))
    return root


def _stack(checkout: Path, environment: dict[str, str], action: str, timeout: float = 1200) -> str:
    started = time.monotonic()
    done = subprocess.run(["scripts/stack.sh", action], cwd=checkout, env=environment, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    output = done.stdout + done.stderr
    print(f"STACK=keepalived scripts/stack.sh {action}: exit {done.returncode} in {time.monotonic() - started:.0f} s")
    assert done.returncode == 0, f"scripts/stack.sh {action} failed ({done.returncode}):\n{output[-6000:]}"
    return output


def _curl(address: str, timeout: float = 1.0) -> str:
    """What the member answering through the name at ``address`` says (``<member> <az>``), or why nothing did."""
    done = subprocess.run(["curl", "-sk", "--max-time", str(timeout), "--resolve",
                           f"{FQDN.rstrip('.')}:{PORT}:{address}", f"https://{FQDN.rstrip('.')}:{PORT}/"],
                          capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else f"failed(curl {done.returncode})"


def _holder(vip: str) -> str:
    """The member whose node holds ``vip`` now."""
    holding = [addresses for addresses in keepalived_nodes.holders().values() if f"{vip}/32" in addresses]
    assert len(holding) == 1, f"{vip} held by {len(holding)} nodes: {keepalived_nodes.holders()}"
    return next(name for name, address in _member_addresses().items()
                if any(entry.split("/")[0] == address for entry in holding[0]))


def _member_addresses() -> dict[str, str]:
    args = keepalived_nodes.stack_args(REPO / "Pulumi.keepalived.yaml")
    return {member.name: member.address for member in args.members}


def _left(cloud, outputs: dict) -> list[str]:
    """What of the stack is still in the cloud."""
    left = [f"port {port.name}" for port in cloud.network.ports() if port.name.startswith(f"{ENDPOINT}-")]
    left += [f"security group {group.name}" for group in cloud.network.security_groups()
             if group.name.startswith(f"{ENDPOINT}-")]
    addresses = {zone.get("floatingIp") for zone in outputs["zones"].values()}
    left += [f"floating IP {ip.floating_ip_address}" for ip in cloud.network.ips()
             if ip.floating_ip_address in addresses]
    left += [f"A record {FQDN} {address}" for address in published(cloud, FQDN)]
    vips = {zone["vipAddress"] for zone in outputs["zones"].values()}
    addresses_of = _member_addresses()
    for port in cloud.network.ports():
        ips = {ip["ip_address"] for ip in port.fixed_ips}
        pairs = {pair["ip_address"] for pair in port.allowed_address_pairs or []}
        if ips & set(addresses_of.values()) and pairs & vips:
            left += [f"VIP pair on member port {port.id} ({sorted(ips)})"]
    left += [f"keepalived of {path.stem}" for path in keepalived_nodes._dir().glob("cp-*.pid")
             if not path.stem.endswith((".main", ".vrrp"))]
    return left


def test_keepalived_stack_up_failover_and_down(tmp_path, localcloud, pulumi_environment, cloud):
    checkout = _checkout(tmp_path / "checkout")
    (tmp_path / "state").mkdir()
    environment = {key: value for key, value in pulumi_environment.items() if not key.startswith("PYTEST_")}
    environment.update(STACK="keepalived", PULUMI_BACKEND_URL=f"file://{tmp_path / 'state'}",
                       PULUMI_CONFIG_PASSPHRASE="e2e-only-passphrase", HA_ENDPOINT_STATE=str(localcloud.paths.root),
                       LOCALCLOUD_PORT_OFFSET=str(PORT_OFFSET))
    outputs: dict = {"zones": {}}
    try:
        up = _stack(checkout, environment, "up")
        outputs = json.loads(_stack(checkout, environment, "outputs"))
        # the nodes started while `up` ran, and run what the component output
        for az, (first, second) in ZONES.items():
            for member in (first, second):
                assert re.search(rf"follow: {az} {member}: keepalived pid \d+", up), up[-4000:]
                assert f"{az} {member}: keepalived runs with this configuration already" in up, up[-4000:]
        floating = {az: outputs["zones"][az]["floatingIp"] for az in ZONES}
        assert set(outputs["addresses"]) == set(floating.values()), outputs
        assert published(cloud, FQDN) == set(floating.values())
        curl = next(line.strip() for line in up.splitlines() if line.strip().startswith("curl "))
        answer = subprocess.run(["bash", "-c", curl], capture_output=True, text=True, timeout=30).stdout.strip()
        assert answer.split()[:1] and answer.split()[0] in sum(ZONES.values(), ()), (curl, answer)
        for az, address in floating.items():
            assert _curl(address, 3).split()[1:] == [az], (az, address, _curl(address, 3))

        # az1: keepalived stopped on its holder, while the failover clients loop over the name (tests/e2e/failover.py:
        # curl, Go's net/http, requests, with their defaults and bounded) and a probe asks az1's address every 0.1 s
        # (a new connection each time, 1 s timeout)
        vip = outputs["zones"]["az1"]["vipAddress"]
        holder = _holder(vip)
        other = next(member for member in ZONES["az1"] if member != holder)
        cache = Path(os.environ.get("HA_ENDPOINT_CACHE", Path.home() / ".cache" / "ha-endpoint"))
        loop = failover.Loop(f"https://{FQDN.rstrip('.')}:{PORT}/", failover.dns_server(),
                             failover.build_go_client(cache), duration=LOOP_SECONDS, interval=0.2).start()
        log: list[tuple[float, str]] = []
        stop = threading.Event()

        def probe() -> None:
            while not stop.is_set():
                started = time.monotonic()
                log.append((started, _curl(floating["az1"]).split()[0]))
                time.sleep(max(0.0, 0.1 - (time.monotonic() - started)))

        thread = threading.Thread(target=probe)
        thread.start()
        time.sleep(max(0.0, LOSE_AT - loop.now()))
        t0, lost_at = time.monotonic(), loop.now()
        assert keepalived_nodes.stop_one(holder)
        loop.finish()
        stop.set()
        thread.join()
        rows = [dict(row, way=f"az1 holder ({holder}) keepalived stopped", watcher=False)
                for row in loop.rows(lost_at)]
        after = [(t - t0, who) for t, who in log if t >= t0]
        failed = [t for t, who in after if who.startswith("failed")]
        last_old = max((t for t, who in after if who == holder), default=0.0)
        first_new = min((t for t, who in after if who == other), default=None)
        print(failover.table(rows))
        print(f"az1's address, every 0.1 s: keepalived stopped on {holder} at t = 0; last answer from it "
              f"t = {last_old:.2f} s, first from {other} t = "
              f"{'never' if first_new is None else f'{first_new:.2f} s'}; {len(failed)} of {len(after)} failed")
        assert {who for t, who in log if t < t0 and not who.startswith("failed")} == {holder}, log
        assert first_new is not None and after[-1][1] == other, after
        assert _holder(vip) == other
        assert [row["client"] for row in rows if row["lost"]] == [], failover.table(rows)
        # keepalived back on the first node (nopreempt: it leaves the VIP with the other node)
        keepalived_nodes.start(outputs)

        # az2 lost: keepalived stopped on both its nodes while the watcher runs (its defaults) and the clients loop
        watcher = failover.watch(SimpleNamespace(stack="keepalived", env=environment), outputs)
        assert "watching " in watcher.first_lines, failover.stop_watching(watcher)
        fqdn = FQDN.rstrip(".")
        loop = failover.Loop(f"https://{fqdn}:{PORT}/", failover.dns_server(),
                             failover.build_go_client(cache), duration=ZONE_LOOP_SECONDS).start()
        time.sleep(max(0.0, LOSE_AT - loop.now()))
        lost_at = loop.now()
        for member in ZONES["az2"]:
            keepalived_nodes.stop_one(member)
        left = None
        while loop.now() < ZONE_LOOP_SECONDS:
            if left is None and floating["az2"] not in failover.resolve(fqdn, failover.dns_server()):
                left = loop.now() - lost_at
            time.sleep(0.25)
        loop.finish()
        zone_rows = [dict(row, way="az2 lost (both nodes' keepalived stopped)", watcher=True)
                     for row in loop.rows(lost_at)]
        restored = time.monotonic()
        keepalived_nodes.start(outputs)
        back = None
        while back is None and time.monotonic() - restored < 90:
            if floating["az2"] in failover.resolve(fqdn, failover.dns_server()):
                back = time.monotonic() - restored
            time.sleep(0.25)
        log = failover.stop_watching(watcher)
        print(failover.table(zone_rows))
        print(f"az2's address left DNS {'never' if left is None else f'{left:.1f} s'} after its nodes stopped, came "
              f"back {'never' if back is None else f'{back:.1f} s'} after they started again")
        print(log)
        assert left is not None and back is not None, log
        assert failover.watcher_actions(log) and all("az2" in line for line in failover.watcher_actions(log)), log
    except BaseException:
        subprocess.run(["scripts/stack.sh", "down"], cwd=checkout, env=environment, timeout=1200)  # then the failure
        raise
    down = _stack(checkout, environment, "down")
    assert "stopped cp-0" in down and "stopped cp-5" in down, down[-3000:]
    assert _left(cloud, outputs) == []

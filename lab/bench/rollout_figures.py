"""A full control-plane rollout behind the endpoint, with the member agent and without it (issue 48, item 4).

On the shared local cloud's data plane: a Kubernetes control plane (lab/localcloud/k8s: etcd + kube-apiserver v1.34.4)
on Nova servers of its own (`ro-0`..`ro-8`, three per AZ on k8s-net at 10.10.10.31-39, each in its data-plane
network namespace, as lab/localcloud/k8s/oncloud.py hands a node over), this project's endpoint in front of them (a real
`pulumi up` of the component: one Octavia ovn load balancer + floating IP per AZ, one Designate name), a management
cluster on 127.0.0.1 (one etcd + one kube-apiserver) serving Cluster API v1.14.2's Machine CRD, and two clients
looping a read of the `default` Namespace as the cluster's admin (tests/e2e/rollout.py `REQUEST`) through the
endpoint's DNS name: kubectl (a new process per request) and client-go (one clientset,
kept connections), as the failover tests run them (tests/e2e/k8s_clients.py).

Cluster API's controllers are NOT run here: this script drives KubeadmControlPlane's documented rollout sequence
itself, three times (one machine per AZ):
  1. a new Machine in the zone (labels cluster-name + control-plane, failureDomain, status.addresses) and its API
     server started on a new Nova server of that zone; KCP waits until it is ready, and (as KCP does once the
     kube-apiserver pod is ready) sets the Machine's `APIServerPodHealthy` condition True when its /readyz answers;
  2. the old Machine deleted: the Machine controller keeps its finalizer while any
     `pre-drain.delete.hook.machine.cluster.x-k8s.io/*` annotation is on it (tests/e2e/management.py's
     `delete_as_cluster_api`), then goes on;
  3. KCP's `pre-terminate.../kcp-cleanup` removes the machine's etcd member, after which its API server stops
     serving: here its kube-apiserver is stopped (SIGTERM); KCP moves on once the Machine is gone.
Cases:
  - static: today's behaviour, the stack's `members[]` are the first three nodes, no agent (no hook: the deletion
    goes on at once). Expected: the API goes down once the third old machine is gone.
  - agent: then, on the same stack (its static members, gen 0, whose API servers the static case stopped, stay in
    the pools OFFLINE), one `python -m ha_endpoint.agent` process joins gen 1's Machines and keeps the members
    following them (its hook holds each deletion until its member is drained and gone) while gen 1 -> gen 2.
The machinery (nodes, management cluster, KCP's sequence, the agent, the samples, the rows) is tests/e2e/rollout.py,
which tests/e2e/test_k8s_rollout.py asserts the agent case with (in `make test`).

What differs from a real KCP rollout: etcd is not rolled (three etcd members stay on the first three nodes for the
whole run, every API server talks to them; KCP adds an etcd member per new machine and removes the old one's);
"ready" is the new kube-apiserver's /readyz (KCP waits for the Node and etcd member too); the static case's deletion
has no drain/hook; one agent replica (the e2e test covers the two-replica take-over).

Run (6-7 min measured; a cloud of its own, see docs/agent.md; `lab/localcloud/up` starts it if needed):
    .venv/bin/python lab/bench/rollout_figures.py [--drain 10] [--tail 30] [--keep]
In the agent case the agent's members are sampled from Octavia every 0.5 s; the summary prints the new members'
states (admin state, provisioning/operating status) as they changed.
The last line is one JSON object: {"agent": {"requests", "failed", "longest_gap_s"}, "static": {...}} (totals over
the clients; longest_gap_s: the longest of the clients' times without an answer).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab")]

from localcloud.dataplane import client_ns, nodes  # noqa: E402
from localcloud.k8s import cluster  # noqa: E402
from localcloud.k8s import stack as k8s_stack  # noqa: E402
from localcloud.settings import AZS  # noqa: E402
from tests.e2e.rollout import (PORT, REQUEST, Management, MemberStates, agent_events, clean_up,  # noqa: E402
                               endpoint_kubeconfig, log, measured, prepare_nodes, published, rollout, shown, start_agent, stop_agent, table,
                               totals, wait_for)

def first(events, test, after: float = float("-inf")):
    return next((at for at, what in events if at >= after and test(what)), None)


def timelines(steps: list[dict], events: list[tuple[float, str]], states: list, monitor: dict,
              drain: float) -> tuple[list[str], dict]:
    """Per replaced machine, where the time went (seconds): the new machine's, from its API server answering to
    the agent counting its member as capacity; the old machine's, from its deletion to our hook's release."""
    detection = monitor["delay"] * monitor["maxRetries"]
    lines, figures = [], {"capacity_beyond_detection_s": [], "hook_released_s": [], "hook_after_zone_check_s": []}

    def at(value, origin):
        return "-" if value is None else f"{value - origin:.1f}"

    for step in steps:
        new, old, answered, deleted = step["new"], step["old"], step["answered"], step["deleted"]
        member_states = [(t, what) for t, name, what in states if name == new]
        created = first(events, lambda w: w.startswith(f"Machine {new}: member ") and " created in " in w)
        call = next((re.search(r"call took ([\d.]+) s", w).group(1) for t, w in events if t == created), "?")
        active = first(member_states, lambda w: "ACTIVE/" in w)
        online = first(member_states, lambda w: w.endswith("ACTIVE/ONLINE"))
        counted = first(events, lambda w: w.startswith(f"Machine {new}: status serving"))
        beyond = None if counted is None else counted - answered - detection
        figures["capacity_beyond_detection_s"].append(None if beyond is None else round(beyond, 1))
        lines.append(f"  agent {step['az']} {new} (s after its API server answered): condition True patched "
                     f"{at(step['patched'], answered)}, member created {at(created, answered)} (the call {call} s), "
                     f"ACTIVE {at(active, answered)}, ONLINE {at(online, answered)} (Octavia sampled every 0.5 s), "
                     f"counted {at(counted, answered)} (the script saw it "
                     f"{step['counted'].get(new, '-')}); health monitor detection {detection:g} s (delay "
                     f"{monitor['delay']} x maxRetries {monitor['maxRetries']}); counted beyond it: "
                     f"{'-' if beyond is None else f'{beyond:.1f}'} s (goal 10: "
                     f"{'met' if beyond is not None and beyond <= 10 else 'NOT met'})")
        seen = first(events, lambda w: w.startswith(f"Machine {old}: status draining"), deleted - 1)
        drained = first(events, lambda w: w.startswith(f"member {old} (") and "drained (admin down" in w, deleted)
        removed = first(events, lambda w: w.startswith(f"member {old} (") and ": deleted (listener" in w, deleted)
        gone = first([(t, w) for t, name, w in states if name == old], lambda w: w == "gone", deleted)
        released = first(events, lambda w: w.startswith(f"Machine {old}: hook released"), deleted)
        zone_ok = None if online is None else max(online, deleted)
        after_zone = None if released is None or zone_ok is None else released - zone_ok
        figures["hook_released_s"].append(None if released is None else round(released - deleted, 1))
        figures["hook_after_zone_check_s"].append(None if after_zone is None else round(after_zone, 1))
        total = None if released is None else released - deleted
        lines.append(f"  agent {step['az']} {old} (s after its deletion): seen deleting {at(seen, deleted)}, "
                     f"{new} ONLINE {at(online, deleted)}, admin down (zone check passed, drain starts) "
                     f"{at(drained, deleted)}, member deleted {at(removed, deleted)} (drain {drain:g} s), gone "
                     f"{at(gone, deleted)}, hook released {at(released, deleted)} (the script saw it "
                     f"{at(step['seen_released'], deleted)}); goal drain + 10 = {drain + 10:g}: "
                     f"{'met' if total is not None and total <= drain + 10 else 'NOT met'}; from the zone check "
                     f"allowing it ({new} ONLINE or the deletion, the later): "
                     f"{'-' if after_zone is None else f'{after_zone:.1f}'} s")
    return lines, figures


def scraped(port: int) -> str:
    """The agent's passes: how many, how long on average (its /metrics)."""
    import urllib.request
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    except OSError as error:
        return f"metrics not read: {error}"
    value = {m.group(1): float(m.group(2)) for m in re.finditer(
        r"^(ha_endpoint_agent_reconcile_seconds_(?:sum|count)|ha_endpoint_agent_errors_total\{[^}]*\}) "
        r"([\d.e+-]+)$", text, re.M)}
    count = value.get("ha_endpoint_agent_reconcile_seconds_count", 0)
    errors = ", ".join(f"{k.split('{')[1][:-1]} {v:g}" for k, v in value.items() if k.startswith("ha_endpoint_agent_errors"))
    return (f"{count:.0f} passes, {value.get('ha_endpoint_agent_reconcile_seconds_sum', 0) / max(count, 1):.2f} s "
            f"each on average; errors: {errors or 'none'}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--drain", type=float, default=10.0, help="the agent's --drain (seconds)")
    parser.add_argument("--tail", type=float, default=30.0, help="seconds the clients loop after the rollout")
    parser.add_argument("--keep", action="store_true", help="leave the cluster, servers and stack running")
    args = parser.parse_args(argv)

    from localcloud.testing import ensure_up
    from tests.e2e import failover
    from tests.e2e.k8s_clients import K8S_CLIENTS, K8sClients, build_client_go
    from tests.e2e.pulumi_cli import PulumiStack, project_environment

    started = time.monotonic()
    cloud = ensure_up()
    subprocess.run([str(ROOT / "lab" / "engine" / "build.sh")], cwd=ROOT, check=True, capture_output=True, timeout=3600)
    bins = cluster.binaries()
    cache = Path(os.environ.get("HA_ENDPOINT_CACHE", Path.home() / ".cache" / "ha-endpoint"))
    client_go = build_client_go(cache)
    work = Path(tempfile.mkdtemp(prefix="rollout-"))
    endpoint = f"rollout-{uuid.uuid4().hex[:4]}"
    config = k8s_stack.endpoint_config(name=endpoint, record=endpoint)
    fqdn = k8s_stack.fqdn(config)
    log(f"work dir {work}; endpoint {endpoint}, name {fqdn}")

    environment = {**project_environment(), "OS_CLIENT_CONFIG_FILE": cloud.clouds_yaml, "OS_CLOUD": "localcloud"}
    etcd = everything = mgmt = stack = agent = agent_log = None
    passes = ""
    rows: list[dict] = []
    notes: list[str] = []
    states: list = []
    try:
        etcd, everything, found = prepare_nodes(cloud.paths, fqdn)
        log(f"nodes: {', '.join(f'{n.name}={n.address}' for n in everything.nodes)}")
        up = cluster.up(etcd, bins)            # gen 0: etcd members + API servers
        log(f"gen 0 (etcd + API servers) ready in {up.seconds:.1f} s")
        mgmt = Management(work / "mgmt", bins)
        log("management cluster ready, Machine CRD (Cluster API v1.14.2) established")
        for i, az in enumerate(AZS):
            mgmt.api.add_machine(f"cp-0-{i}", az, everything.nodes[i].address)

        kubeconfig = endpoint_kubeconfig(everything, fqdn, work / "endpoint.kubeconfig")

        # --- static: today's members[] (gen 0), no agent
        static = {**config, "members": [{"name": f"ro-{i}", "address": everything.nodes[i].address, "az": az,
                                         "subnet": nodes.KUBERNETES.network[1]} for i, az in enumerate(AZS)]}
        stack = PulumiStack.create(work / "stack", "rollout", environment)
        stack.write_config(static)
        done = stack.up(policy=False)
        log(f"static stack up in {done.seconds:.1f} s")
        addresses = {z["floatingIp"] for z in stack.outputs()["zones"].values()}
        wait_for(lambda: set(published(fqdn)) == addresses, "the name lists every zone", 120)

        with client_ns.client_namespace(cloud.paths) as namespace:
            clients = K8sClients(kubeconfig, namespace.name, bins.kubectl, client_go, REQUEST)

            def loop():
                return failover.Loop(f"https://{fqdn}:{PORT}/", failover.dns_server(), failover.build_go_client(cache),
                                     3600, clients=K8S_CLIENTS, k8s=clients)

            marks: list = []
            static_rows, static_steps = measured(
                "static", loop, lambda: rollout("static", mgmt, etcd, everything, bins, 0, 1, marks), args.tail)
            rows += static_rows
            log(f"static done: {totals(static_rows)}")

            # --- agent: the agent joins gen 1's Machines to the pools (beside the stack's static members, gen 0,
            # whose API servers are gone: OFFLINE), then gen 1 -> gen 2. No `up` between: memberSources.clusterApi
            # cannot name the members' subnet (k8s-subnet, not the zones' VIP subnets), see the module's docstring
            outputs = stack.outputs()
            (work / "outputs.json").write_text(json.dumps(outputs))
            agent_log = work / "agent.log"
            agent, metrics_port = start_agent(cloud, mgmt, work / "outputs.json", args.drain, agent_log)
            log(f"agent started (PID {agent.pid}, log {agent_log})")
            wait_for(lambda: all(mgmt.serving(f"cp-1-{i}") for i in range(3)), "gen 1 served by the agent", 240)
            log("agent: gen 1's members serving (the stack's static members, gen 0, stay in the pools, OFFLINE)")
            addresses = {z["floatingIp"] for z in outputs["zones"].values()}
            wait_for(lambda: set(published(fqdn)) == addresses, "the name lists every zone", 120)
            log("agent: gen 1's members serving in every zone")
            sampler = MemberStates(cloud.conn, {pool: az for az, zone in outputs["zones"].items()
                                                for pool in zone["poolIds"].values()}).start()
            try:
                agent_rows, agent_steps = measured(
                    "agent", loop, lambda: rollout("agent", mgmt, etcd, everything, bins, 1, 2, marks), args.tail)
            finally:
                sampler.stop()
            states = sampler.changes
            passes = scraped(metrics_port)
            rows += agent_rows
            log(f"agent done: {totals(agent_rows)}")
    finally:
        stop_agent(agent)
        if not args.keep:
            clean_up(cloud, stack, everything, mgmt)
    if not rows:
        return 1
    print(f"\nrollout figures {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: 3 of 3 control-plane machines "
          f"replaced per case, KCP's sequence driven by this script (Cluster API's controllers not run); agent "
          f"--drain {args.drain:g}; clients loop /readyz through {fqdn} every 0.5 s; {args.tail:g} s after the last "
          f"step; {time.monotonic() - started:.0f} s in all")
    for case, steps in (("static", static_steps), ("agent", agent_steps)):
        for step in steps:
            print(f"  {case} {step['az']}: {step['new']} ready {step['new_ready_s']} s after start, {step['old']} "
                  f"released {step['hook_released_s']} s after its deletion, step {step['step_s']} s"
                  + (f"; counted as capacity {step['counted'][step['new']]} s after its API server answered"
                     if step["new"] in step["counted"] else ""))
    for case in ("static", "agent"):
        case_rows = [r for r in rows if r["case"] == case]
        began = case_rows[0]["began"]
        events = [(at - began, what) for at, what in marks if at >= began]
        if case == "static":
            events = [e for e in events if e[0] < case_rows[0]["began"] + 3600 and "cp-2-" not in e[1]
                      and "cp-1-" not in e[1] or "cp-1-" in e[1] and "ready" in e[1]]
        failures = case_rows[0]["failures"]
        print(f"  {case}: failed requests (s since the clients started, client, error): "
              + ("; ".join(f"{t:.1f} {c} {shown(e)}" for t, c, e in failures[:8]) or "none")
              + (f"; ... {len(failures) - 8} more" if len(failures) > 8 else ""))
        if case == "agent":
            print("  agent: steps (s since the clients started): "
                  + "; ".join(f"{t:.1f} {what}" for t, what in events if t >= 0))
            print("  agent: new members' states as Octavia listed them (s since the clients started): "
                  + "; ".join(f"{at - began:.1f} {name} {what}" for at, name, what in states
                              if at >= began and name.startswith("cp-2-")))
    if agent_log is not None and agent_steps:
        lines, figures = timelines(agent_steps, agent_events(agent_log), states, config["listeners"][0]["monitor"],
                                   args.drain)
        print("  agent: where the time went, per machine (s); the agent's log lines to the millisecond, Octavia as "
              "this script sampled it")
        print("\n".join(lines))
        print(f"  agent: {passes}")
        print(f"  agent: per machine {json.dumps(figures)}")
    print(table(rows))
    result = {"agent": totals([r for r in rows if r["case"] == "agent"]),
              "static": totals([r for r in rows if r["case"] == "static"])}
    goal = result["agent"]["failed"] == 0 and result["static"]["failed"] > 0
    print(f"goal ({'met' if goal else 'NOT met'}): with the agent no request failed, without it the API went down")
    print(json.dumps(result))
    return 0 if goal else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

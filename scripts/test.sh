#!/usr/bin/env bash
# `make test`: every test, as fast as this 2-core machine allows, and where the time went.
#
# 1. Set-up, the independent parts at once: the project's virtualenvs, the Pulumi engine (Go builds, cached in
#    $HA_ENDPOINT_CACHE/engine), the Kubernetes parts (lab/engine/build.sh --k8s) and the local cloud (apt packages on a
#    fresh machine, then its start), then the Cluster API CRDs and the documentation site's strict build (`make docs`:
#    a broken link, anchor or nav entry fails the run at its end, not the set-up). Each part's time is printed.
# 2. The tests that share the cloud peacefully, on HA_ENDPOINT_TEST_WORKERS pytest-xdist workers (default 3: the
#    end-to-end tests mostly wait for the cloud), one test file per worker at a time (--dist loadfile: a module's
#    stack fixtures stay in one process), the longest file first as the last run timed it (tests/schedule.py).
# 3. The tests marked `exclusive` (they stop Keystone, make the whole Octavia API answer 503, freeze Octavia's
#    worker, stop an AZ's chassis, run a Kubernetes control plane...), alone on a cloud, in lanes of whole test files
#    split by the last run's times (tests/schedule.py lanes): lane 1 on the first cloud once step 2 is done; lanes
#    2 and 3 (HA_ENDPOINT_TEST_CLOUDS=3, the default) each on a local cloud instance of its own, started once the
#    first is up and run beside step 2, so their faults reach no other test: lane 2's state
#    $HA_ENDPOINT_CACHE/localcloud-exclusive (ports +5000, public network 172.24.9.0/24), lane 3's
#    localcloud-exclusive3 (+10000, 172.24.14.0/24). =2: lanes 1 and 2 (measured 1425 s against 1336 s with three,
#    2026-11-27); =1: lane 1 only. Lanes 2.. then take shared files (none exclusive or `first_cloud`) that the last
#    run's times say fit before the parallel phase ends, which leaves them out (tests/schedule.py spread): the 2 cores
#    stay busy to the end.
#    The first cloud is the user's: `make up` keeps the dev stack there, and the suite passes beside it (`.ci/run`
#    keeps it up through `make test`). The test files marked `own_cloud` (the README walk, which creates the dev
#    stack's own names and stops its node cp-1; the Kubernetes endpoint, which starts and stops the cloud's cluster
#    that `STACK=k8s make up` uses) run as exclusive ones in lanes 2.. only, never in lane 1; with =1 they run in
#    lane 1, where the walk is skipped, saying why, if the README's endpoints exist.
#    The offline tiers (unit, policies) run once step 2 is done: on one worker beside lane 1, on two if it has none.
# 4. One summary: test time per tier (tests/tiers.py), set-up and phase wall times, then `total: N passed, N failed`.
# Arguments are passed to both pytest runs (e.g. `scripts/test.sh -x`).
set -uo pipefail
cd "$(dirname "$0")/.."
export HA_ENDPOINT_CACHE=${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}
export PULUMI_SKIP_UPDATE_CHECK=true
# One `make test` at a time per cache: two would start, reset and stop the same local clouds under each other (seen
# when a CI run began while another clone's run still had the clouds: the second one's ovsdb found its socket taken).
# The lock is the kernel's (flock), so it also holds between containers that share the cache directory.
mkdir -p "$HA_ENDPOINT_CACHE"
exec 9>"$HA_ENDPOINT_CACHE/make-test.lock"
if ! flock -n 9; then
    echo "make test: another make test is using the local clouds of $HA_ENDPOINT_CACHE; waiting for it to end" >&2
    flock 9
fi
# empty: a fifth of the Hypothesis budgets (tests/budget.py); `make test-budgets` runs the full ones (CI: after this)
export HA_ENDPOINT_FULL_BUDGETS=${HA_ENDPOINT_FULL_BUDGETS:-}
workers=${HA_ENDPOINT_TEST_WORKERS:-3}
clouds=${HA_ENDPOINT_TEST_CLOUDS:-3}
case "$clouds" in 1|2|3) ;; *) echo "make test: HA_ENDPOINT_TEST_CLOUDS=$clouds: 1, 2 or 3" >&2; exit 2 ;; esac
lanes=$clouds                      # exclusive lanes: lane 1 on the first cloud after step 2, lane N on cloud N
lane_env() {  # lane_env <lane>: the environment of exclusive lane <lane>'s own cloud (lane 2: localcloud-exclusive, +5000)
    local suffix=""; [ "$1" -gt 2 ] && suffix=$1
    echo "HA_ENDPOINT_STATE=$HA_ENDPOINT_CACHE/localcloud-exclusive$suffix LOCALCLOUD_PORT_OFFSET=$((5000 * ($1 - 1)))"
}
parallel_record=$HA_ENDPOINT_CACHE/test-parallel-seconds   # the last parallel phase's wall time: when lane 1 starts
logs=$(mktemp -d)
export HA_ENDPOINT_TIMINGS=$logs/timings.jsonl
: >"$HA_ENDPOINT_TIMINGS"
setup_lines=()
busy_jiffies() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8 + $9; exit}' /proc/stat; }  # all cores, since boot
busy_start=$(busy_jiffies)
started=$(date +%s.%N)

elapsed() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN{printf "%.0f", e-s}'; }

# step <name> <command...>: run in the background, its output to $logs/<name>.log, its time to $logs/<name>.time
step() {
    local name=$1; shift
    ( t=$(date +%s.%N); "$@" >"$logs/$name.log" 2>&1; rc=$?; echo "$(elapsed "$t") $rc" >"$logs/$name.time"; exit $rc ) &
}

failed_checks=()
finish_check() {  # finish_check <name> <pid>: like finish_step, but a failure fails the run at its end, not the set-up
    local name=$1 pid=$2
    if ! wait "$pid"; then
        echo "make test: '$name' failed (the tests go on; the run fails at its end); its last lines ($logs/$name.log):" >&2
        tail -40 "$logs/$name.log" >&2
        failed_checks+=("$name")
    fi
    read -r seconds _ <"$logs/$name.time"
    setup_lines+=("$name ${seconds} s")
}

finish_step() {  # finish_step <name> <pid>: wait, print its tail on failure, record its time
    local name=$1 pid=$2
    if ! wait "$pid"; then
        echo "make test: set-up step '$name' failed; its last lines ($logs/$name.log):" >&2
        tail -40 "$logs/$name.log" >&2
        exit 1
    fi
    read -r seconds _ <"$logs/$name.time"
    setup_lines+=("$name ${seconds} s")
}

echo "make test: set-up (virtualenv, engine, local cloud at once; logs in $logs)"
step venv make --no-print-directory _venv _component-venv; venv_pid=$!
# The engine and its tools for the other languages (the YAML and TypeScript consumers' tests), then the opt-in patched
# OpenStack plugin that tests/e2e/test_cloud_faults.py swaps in for its provider-wait faults (lab/engine/README.md):
# all while the cloud installs and starts.
step engine sh -c 'lab/engine/build.sh --tools >/dev/null && lab/engine/build.sh --part openstack-patched'; engine_pid=$!
# The Kubernetes parts (etcd, kube-apiserver + kubectl, the pulumi-kubernetes plugin) for the e2e Kubernetes tests,
# beside the engine (a lock of their own): on a cold machine their compiles fill the cores while the cloud installs.
step k8s lab/engine/build.sh --k8s; k8s_pid=$!
step cloud make --no-print-directory localcloud; cloud_pid=$!
finish_step venv "$venv_pid"
step crds make --no-print-directory _capi-crds; crds_pid=$!
step bytecode make --no-print-directory _bytecode; bytecode_pid=$!   # every Python process loads compiled modules
step docs make --no-print-directory docs DOCS_SITE="$logs/site"; docs_pid=$!   # mkdocs build --strict (~3 s)
finish_step crds "$crds_pid"
finish_step bytecode "$bytecode_pid"
finish_check docs "$docs_pid"
finish_step engine "$engine_pid"
# The Kubernetes parts are not waited for here: the tests that need them ask lab/engine/build.sh --k8s in their fixture,
# which waits for this build under its lock, and the others start meanwhile (a cold machine: kube-apiserver's compile
# took minutes on 2 cores, 2026-12-02). Its time and any failure are reported at the end (finish_check).
finish_step cloud "$cloud_pid"
# What each cloud holds beyond its seed (lab/localcloud/leftovers.py: an interrupted run's endpoints cost CPU in every
# test), in the background; printed before the summary.
leftovers() {  # leftovers <label>: the cloud of HA_ENDPOINT_STATE
    .venv/bin/python -m localcloud.leftovers "$1" >"$logs/leftovers-$1" 2>&1 ||
        echo "$1: not listed (lab/localcloud/leftovers.py failed: $(tail -1 "$logs/leftovers-$1"))" >"$logs/leftovers-$1"
}
leftovers "the first cloud" &
# The exclusive lanes' own clouds (lanes 2..): started after the first (one apt install), awaited later; which test
# files each lane runs (the exclusive tests' files, split by the last run's times; lane 1 starts after step 2).
lane_clouds_were_running=()
for lane in $(seq 2 "$lanes"); do
    # shellcheck disable=SC2046
    env $(lane_env "$lane") lab/localcloud/status >/dev/null 2>&1 && lane_clouds_were_running+=("$lane")
    # shellcheck disable=SC2046
    step "cloud$lane" env $(lane_env "$lane") lab/localcloud/up
done
# The last parallel phase: its wall time (when lane 1 starts) and how many tests it ran at once (its tests' seconds
# over its wall time: how much shared work lanes 2.. can take over, tests/schedule.py spread).
read -r parallel_wall parallel_width _ 2>/dev/null <"$parallel_record"
HA_ENDPOINT_TIMINGS= HA_ENDPOINT_SCHEDULE_KINDS=$logs/kinds .venv/bin/python -m pytest --collect-only -q \
    -m "integration or e2e" -p no:cacheprovider tests/integration tests/e2e >/dev/null 2>&1
.venv/bin/python -m tests.schedule lanes "$lanes" --first-after "${parallel_wall:-900}" --kinds "$logs/kinds" \
    --width "${parallel_width:-0}" >"$logs/lanes"
awk -v n="$lanes" 'NR <= n { printf "make test: exclusive lane %d: %s s expected, %s\n", NR, $1, ($2 == "" ? "no test" : substr($0, length($1) + 2)) }
    $1 == "moved" { printf "make test: lane %d then takes shared files: %s s expected, %s\n", $2, $3, substr($0, length($1 $2 $3) + 4) }' "$logs/lanes"
grep -E '^\s+[a-z-]+: .*: [0-9.]+ s' "$logs/engine.log" | sed 's/^/  engine part (as built) /' || true
setup_seconds=$(elapsed "$started")

status=0
phase() {  # phase <label> <pytest args...>
    local label=$1; shift
    local t; t=$(date +%s.%N)
    echo "make test: $label"
    HA_ENDPOINT_PHASE=$label .venv/bin/python -m pytest "$@"
    local rc=$?
    [ "$rc" -eq 5 ] && rc=0   # no test selected in this phase
    [ "$rc" -ne 0 ] && status=$rc
    echo "make test: $label took $(elapsed "$t") s"
}
lane_files() {  # lane_files <lane>: the array `files`, the exclusive test files of that lane
    read -r -a files < <(awk -v lane="$1" 'NR == lane { $1 = ""; print }' "$logs/lanes")
}
moved_files() {  # moved_files [<lane>]: the array `moved`, the shared files that lane (or any lane) takes
    read -r -a moved < <(awk -v lane="${1:-}" '$1 == "moved" && (lane == "" || $2 == lane) {
        for (i = 4; i <= NF; i++) printf "%s ", $i } END { print "" }' "$logs/lanes")
}
lane_label() { if [ "$lanes" -gt 1 ]; then echo "exclusive lane $1"; else echo exclusive; fi; }
# Lanes 2.. on their own clouds, beside the parallel phase: each once its cloud is up (its step's time file), its
# output printed at the end.
lane_pids=()
for lane in $(seq 2 "$lanes"); do
    (
        status=0
        while [ ! -f "$logs/cloud$lane.time" ]; do sleep 1; done
        read -r _ rc <"$logs/cloud$lane.time"
        if [ "$rc" -ne 0 ]; then
            echo "make test: set-up step 'cloud$lane' failed; its last lines ($logs/cloud$lane.log):"; tail -40 "$logs/cloud$lane.log"
            exit 1
        fi
        lane_files "$lane"
        moved_files "$lane"
        # shellcheck disable=SC2046
        export $(lane_env "$lane")
        leftovers "lane $lane's cloud" &
        [ "${#files[@]}" -gt 0 ] && phase "$(lane_label "$lane")" -q -m exclusive "$@" "${files[@]}"
        [ "${#moved[@]}" -gt 0 ] && phase "$(lane_label "$lane") (shared files)" -q \
            -m "not exclusive and (integration or e2e)" "$@" "${moved[@]}"
        exit $status
    ) >"$logs/exclusive$lane.log" 2>&1 &
    lane_pids+=($!)
done
moved_files
ignored=()
for file in "${moved[@]}"; do ignored+=("--ignore=$file"); done
t=$(date +%s.%N)
phase parallel -q -n "$workers" --dist loadfile -m "not exclusive and (integration or e2e)" "${ignored[@]}" "$@"
# Recorded only for the whole suite: a run given pytest arguments (`scripts/test.sh -k ...`) runs a part of it, and its
# wall time would make the next whole run's lanes take too little shared work.
[ "$#" -eq 0 ] && .venv/bin/python - "$HA_ENDPOINT_TIMINGS" "$(elapsed "$t")" >"$parallel_record.tmp" <<'EOF' &&
import json, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
run = next(r for r in reversed(runs) if r["phase"] == "parallel")
print(sys.argv[2], f"{sum(run['tiers'].values()) / max(run['wall'], 1.0):.2f}")
EOF
    mv "$parallel_record.tmp" "$parallel_record"
# Lane 1 on the first cloud, now that no other test uses it, beside the offline tiers (unit, policies: no cloud, no
# engine; their output printed after the lanes'): on one worker beside lane 1, on both cores when lane 1 has no test
# (the other lanes have mostly ended by now: 161 s on one worker, 2026-11-27). Started with the shared tests instead,
# they slowed those as much as they saved at the end (1349 s against 1336 s, 2026-11-27).
lane_files 1
# The offline tiers' folders only, as `make test-unit` runs them (tests/integration and tests/e2e mark all of theirs).
offline_workers=(-n 2)
[ "${#files[@]}" -gt 0 ] && offline_workers=()
( status=0; phase offline -q "${offline_workers[@]}" -m "not integration and not e2e" "$@" tests/unit tests/policies \
      >"$logs/offline.log" 2>&1
  exit $status ) &
offline_pid=$!
if [ "${#files[@]}" -gt 0 ]; then
    phase "$(lane_label 1)" -q -m exclusive "$@" "${files[@]}"
fi
for lane in $(seq 2 "$lanes"); do
    wait "${lane_pids[$((lane - 2))]}" || status=1
    cat "$logs/exclusive$lane.log"
    read -r seconds _ <"$logs/cloud$lane.time" && setup_lines+=("cloud$lane ${seconds} s, beside the tests")
    if [[ " ${lane_clouds_were_running[*]} " != *" $lane "* ]]; then
        # shellcheck disable=SC2046
        env $(lane_env "$lane") lab/localcloud/down >/dev/null 2>&1 || true
    fi
done
wait "$offline_pid" || status=1
cat "$logs/offline.log"
finish_check k8s "$k8s_pid"

wait  # the leftovers reports
cat "$logs"/leftovers-* 2>/dev/null | sed '/^$/d; s/^/make test: /'
# The CPU-seconds every core spent busy during the run (user, nice, system, irq, softirq, steal; not idle or iowait)
# Every run's per-test times are kept (the last 20 runs): one JSON line per pytest phase, "tests": id -> seconds,
# "failures": id -> the failed test's report
mkdir -p "$HA_ENDPOINT_CACHE/test-runs"
export HA_ENDPOINT_TEST_RUNS=$HA_ENDPOINT_CACHE/test-runs/$(date -u +%Y%m%dT%H%M%SZ).jsonl
cp "$HA_ENDPOINT_TIMINGS" "$HA_ENDPOINT_TEST_RUNS"
ls -1t "$HA_ENDPOINT_CACHE"/test-runs/*.jsonl | tail -n +21 | xargs -r rm -f
# A failed run's logs (set-up, phases, leftovers) are kept beside its record, the last 3: CI's printed output can be lost
if [ "$status" -ne 0 ] || [ "${#failed_checks[@]}" -gt 0 ]; then
    mkdir -p "${HA_ENDPOINT_TEST_RUNS%.jsonl}-logs" && cp "$logs"/*.log "$logs"/leftovers-* "${HA_ENDPOINT_TEST_RUNS%.jsonl}-logs/" 2>/dev/null
    ls -1td "$HA_ENDPOINT_CACHE"/test-runs/*-logs | tail -n +4 | xargs -r rm -rf
fi
busy_seconds=$(awk -v s="$busy_start" -v e="$(busy_jiffies)" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.0f", (e-s)/hz}')
.venv/bin/python - "$HA_ENDPOINT_TIMINGS" "$setup_seconds" "$(elapsed "$started")" "$busy_seconds" \
    "${setup_lines[@]}" <<'EOF'
import json, os, sys
from collections import defaultdict

sys.path.insert(0, ".")
from tests.tiers import format_tiers, slowest

path, setup, total, busy, *steps = sys.argv[1:]
tiers, outcomes, phases, tests = defaultdict(float), defaultdict(int), [], {}
for line in open(path):
    run = json.loads(line)
    phases.append(f"{run['phase']} {run['wall']:.0f} s")
    tests.update(run.get("tests", {}))
    for tier, seconds in run["tiers"].items():
        tiers[tier] += seconds
    for outcome, count in run["outcomes"].items():
        outcomes[outcome] += count
print(f"make test: set-up {setup} s ({', '.join(steps)}); tests {', '.join(phases)}; whole run {total} s")
print(f"make test: time per tier (test time, summed over workers): {format_tiers(tiers)}")
print(f"make test: the machine's cores were busy for {busy} CPU-seconds ({float(busy) / max(float(total), 1.0):.2f} "
      "cores on average): the suite keeps them busy, so its wall time follows this figure and the machine's speed")
print("make test: the slowest ten tests (set-up, call and tear-down; every test's time is in "
      f"{os.environ.get('HA_ENDPOINT_TEST_RUNS', 'the run record')}):")
for nodeid, seconds in slowest(tests):
    print(f"  {seconds:7.1f} s  {nodeid}")
extra = "".join(f", {outcomes[key]} {key}" for key in ("skipped",) if outcomes.get(key))
print(f"total: {outcomes.get('passed', 0)} passed, {outcomes.get('failed', 0)} failed{extra}")
EOF
if [ "${#failed_checks[@]}" -gt 0 ]; then
    echo "make test: failed beside the tests: ${failed_checks[*]} (its output is above, in the set-up)" >&2
    status=1
fi
exit $status

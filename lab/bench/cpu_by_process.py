"""What a command's run costs the machine's cores, by kind of process (issue 53: what the suite's time is made of).

    .venv/bin/python lab/bench/cpu_by_process.py -- make test
    .venv/bin/python lab/bench/cpu_by_process.py --top 30 -- bash .ci/run

The suite keeps both cores busy, so its wall time follows the CPU it costs; this says whose CPU that is: the local
clouds' services (Neutron, the uwsgi APIs, MariaDB, OVN...), our side (the Pulumi CLI, the programs, dynamic
providers and policy packs, the tests themselves) or the Kubernetes control plane. It turns on Linux process
accounting (acct(2), as root) into a file of its own for the command's run, then reads the records: every process
that ended meanwhile, with its user + system CPU seconds. A process still running at the end (a cloud the command
leaves up) is not recorded: the line "not recorded" is the machine's CPU (/proc/stat) less the recorded. Accounting
is one switch for the whole machine: anything else's processes ending meanwhile count too, so run it on a machine
otherwise idle, and nothing else may use process accounting meanwhile (it is turned off at the end).

Prints one row per kind (CPU seconds, share, processes) and, with --top N, the N costliest process names.
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import os
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "lab")]

from bench.lib.machine import machine_cpu_seconds  # noqa: E402

RECORD = struct.Struct("<BBHIIIIIIfHHHHHHHH16s")
"""struct acct_v3 (linux/acct.h): flag, version, tty, exitcode, uid, gid, pid, ppid, btime, etime, utime, stime,
mem, io, rw, minflt, majflt, swaps, comm; utime and stime in comp_t units of AHZ (100) ticks."""
AHZ = 100.0

KINDS = (
    # (label, names matched whole, name prefixes): the first that matches
    ("the Pulumi CLI (Go)", ("pulumi",), ()),
    ("provider plugins", (), ("pulumi-resource",)),
    ("language hosts, analyzers", (), ("pulumi-language", "pulumi-analyzer")),
    ("Python of the venv: tests, programs, dynamic providers, policy packs",
     ("python",), ("event_engine", "grpc_", "lifeguard", "resolver", "default-executo", "timer_manager")),
    ("OpenStack: Neutron", (), ("neutron",)),
    ("OpenStack: uwsgi APIs (Keystone, Octavia's API, Placement)", ("uwsgi",), ()),
    ("OpenStack: Octavia's daemons", (), ("octavia",)),
    ("OpenStack: Nova", (), ("nova",)),
    ("OpenStack: Designate", (), ("designate",)),
    ("system python3: the lab's daemons (member servers, heartbeat), Swift, Glance", ("python3",),
     ("swift", "glance")),
    ("MariaDB", ("mariadbd", "mysqld"), ()),
    ("RabbitMQ", ("beam.smp", "erl_child_setup", "epmd", "inet_gethost"), ("1_", "2_", "3_", "4_", "10_")),
    ("OVS, OVN", (), ("ovs-", "ovn-", "ovsdb", "ovn_", "urcu", "handler", "revalidator", "pmd", "stopwatch")),
    ("BIND", ("named", "rndc"), ("isc-",)),
    ("Kubernetes (etcd, kube-apiserver, kubectl)", ("etcd", "kubectl"), ("kube-",)),
    ("test clients (curl, dig, Go clients)", ("curl", "dig", "nc", "loadgen"), ("hafailover",)),
    ("builds (go, gcc)", ("go", "compile", "link", "asm", "cgo", "gcc", "cc1", "as", "ld"), ()),
)


def comp_t(value: int) -> float:
    """A comp_t (13-bit mantissa, 3-bit base-8 exponent) as a number of ticks."""
    return float((value & 0x1FFF) << (3 * (value >> 13)))


def records(path: Path) -> list[tuple[str, float]]:
    """(command name, CPU seconds) of every process the accounting file records."""
    data = path.read_bytes()
    found = []
    for offset in range(0, len(data) - RECORD.size + 1, RECORD.size):
        fields = RECORD.unpack_from(data, offset)
        if fields[1] & 0x0F != 3:  # not an acct_v3 record (the version is in the low bits)
            raise SystemExit(f"{path}: record at {offset} is version {fields[1] & 0x0F}, not 3: not Linux's acct_v3")
        name = fields[18].split(b"\0", 1)[0].decode(errors="replace")
        found.append((name, (comp_t(fields[10]) + comp_t(fields[11])) / AHZ))
    return found


def kind(name: str) -> str:
    for label, names, prefixes in KINDS:
        if name in names or name.startswith(prefixes):
            return label
    return "other"


def accounting(path: str | None) -> None:
    """Turn process accounting on into ``path``, or off (None)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.acct(path.encode() if path else None) != 0:
        error = ctypes.get_errno()
        raise SystemExit(f"acct({path!r}) failed: {os.strerror(error)} (process accounting needs root and a kernel "
                         "with CONFIG_BSD_PROCESS_ACCT)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=0, help="also print the N costliest process names")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command to run")
    options = parser.parse_args()
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    if not command:
        parser.error("give the command to measure after --, e.g. -- make test")
    with tempfile.TemporaryDirectory(prefix="cpu-by-process-") as tmp:
        log = Path(tmp) / "pacct"
        log.touch()
        busy, started = machine_cpu_seconds(), time.monotonic()
        accounting(str(log))
        try:
            status = subprocess.run(command).returncode
        finally:
            accounting(None)
        wall, busy = time.monotonic() - started, machine_cpu_seconds() - busy
        found = records(log)
    totals: collections.Counter[str] = collections.Counter()
    counts: collections.Counter[str] = collections.Counter()
    names: collections.Counter[str] = collections.Counter()
    for name, seconds in found:
        totals[kind(name)] += seconds
        counts[kind(name)] += 1
        names[name] += seconds
    recorded = sum(totals.values())
    print(f"{' '.join(command)}: exit {status}, {wall:.0f} s, the machine's cores busy {busy:.0f} CPU-s, "
          f"{recorded:.0f} CPU-s recorded from {len(found)} processes that ended")
    print(f"| kind | CPU-s | share of recorded | processes |\n| --- | --- | --- | --- |")
    for label, seconds in totals.most_common():
        print(f"| {label} | {seconds:.1f} | {seconds / recorded * 100:.1f}% | {counts[label]} |")
    print(f"| not recorded (still running at the end, or the kernel's) | {max(busy - recorded, 0):.1f} | | |")
    if options.top:
        print(f"\nthe {options.top} costliest process names (accounting keeps 15 characters):")
        for name, seconds in names.most_common(options.top):
            print(f"  {seconds:8.1f} CPU-s  {name}")
    return status


if __name__ == "__main__":
    sys.exit(main())

"""The Go compiler's garbage collector setting for the engine's cold build (issue 53: both cores, Go's flags tuned).

    .venv/bin/python lab/bench/engine_gogc_figures.py                 # part yaml, GOGC 100 (Go's default) then 400
    .venv/bin/python lab/bench/engine_gogc_figures.py --part langhost --gogc 100 400 off

Builds one engine part (lab/engine/<part>/build.sh) once per GOGC value, one after another, each with an empty build
cache of its own (GOCACHE in a fresh temp directory: every package compiled, as on a fresh machine) and the module
cache as it is (the downloads are not what is measured), with the engine's own Go flags (lab/engine/build-flags.env).
Prints each build's wall time and CPU-seconds (user + system of the go command and the compilers and linker it ran)
and its CPU against the first value's; the last line is one JSON object. A value whose CPU is lower compiles the
same packages with less work: the whole cold build (about 850 CPU-seconds on 2 cores) gains about that ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "lab" / "engine"


def go_flags() -> str:
    """ENGINE_GOFLAGS as lab/engine/build-flags.env sets it."""
    return subprocess.run(["sh", "-c", f". {ENGINE / 'build-flags.env'} && printf %s \"$ENGINE_GOFLAGS\""],
                          capture_output=True, text=True, check=True).stdout


def build(part: str, gogc: str, flags: str) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"gogc-{gogc}-") as scratch:
        out, cache = Path(scratch) / "out", Path(scratch) / "gocache"
        (out / "bin").mkdir(parents=True)
        environment = {**os.environ, "GOCACHE": str(cache), "GOGC": gogc, "GOFLAGS": flags,
                       "ENGINE_PART_OUT": str(out), "GOTOOLCHAIN": "local"}
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        process = subprocess.run(["bash", str(ENGINE / part / "build.sh"), str(out / "bin")], env=environment,
                                 capture_output=True, text=True, stdin=subprocess.DEVNULL)
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if process.returncode != 0:
            sys.exit(f"lab/engine/{part}/build.sh with GOGC={gogc} exited {process.returncode}:\n{process.stderr[-3000:]}")
    cpu = (after.ru_utime - used.ru_utime) + (after.ru_stime - used.ru_stime)
    return {"gogc": gogc, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "max_rss_mib": round(after.ru_maxrss / 1024)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", default="yaml", help="an engine part with a build.sh (default yaml)")
    parser.add_argument("--gogc", nargs="+", default=["100", "400"], help="GOGC values, the first is the baseline")
    args = parser.parse_args()
    flags = go_flags()
    results = []
    for gogc in args.gogc:
        result = build(args.part, gogc, flags)
        results.append(result)
        print(f"GOGC={gogc}: wall {result['wall_s']} s, CPU {result['cpu_s']} s", flush=True)
    base = results[0]["cpu_s"]
    print(f"\nengine part {args.part}, cold build cache, {os.cpu_count()} cores, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("| GOGC | wall (s) | CPU (s) | CPU x first |")
    print("| --- | --- | --- | --- |")
    for r in results:
        print(f"| {r['gogc']} | {r['wall_s']} | {r['cpu_s']} | {r['cpu_s'] / base:.2f} |")
    print(json.dumps({"part": args.part, "builds": results}))


if __name__ == "__main__":
    main()

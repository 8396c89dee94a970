"""`make up`'s cold-run summary (scripts/cold_summary.py, issue 53): what a fresh machine's run spent, and nothing on a
warm run."""
import os
import re
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "cold_summary.py"
BUILD_INFO = """built {when} on x86_64, 2 cores, go1.26.8, GOMODCACHE 0 / GOCACHE 0 before; parts built: cli openstack
cli: pulumi v3.274.1 (pkg/v3): 760.9 s (CPU 583.0 s) [cli-3611e58f0c06060d]
openstack: pulumi-resource-openstack 5.5.3 (lab/engine/openstack) -> plugins/, 41 MiB: 145.1 s (CPU 184.9 s) [openstack-x]
    unpatched github.com/terraform-provider-openstack/terraform-provider-openstack/v3 v3.4.0
total: 1006.0 s (cold only if the Go caches were empty)
"""


def summary(tmp_path: Path, built_at: float, started: float) -> str:
    engine = tmp_path / "cache/engine/current"
    engine.mkdir(parents=True)
    for part in ("cli-3611e58f0c06060d", "openstack-x"):
        (tmp_path / "cache/engine/parts" / part).mkdir(parents=True)
        os.utime(tmp_path / "cache/engine/parts" / part, (built_at, built_at))
    (engine / "BUILD_INFO").write_text(BUILD_INFO.format(when=time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                           time.gmtime(built_at))))
    (tmp_path / "cache/localcloud-install.json").write_text(
        '{"seconds": 378.8, "packages": 212, "date": "%s"}' % time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                             time.gmtime(built_at)))
    environment = {**os.environ, "HA_ENDPOINT_CACHE": str(tmp_path / "cache"),
                   "HA_ENDPOINT_STATE": str(tmp_path / "state")}
    return subprocess.run([sys.executable, str(SCRIPT), str(started), "0", str(time.time() - 41)], env=environment,
                          capture_output=True, text=True, check=True).stdout


def test_a_cold_run_lists_each_part_it_built_with_its_wall_and_cpu_time(tmp_path):
    out = summary(tmp_path, built_at=time.time() - 100, started=time.time() - 1500)
    assert "goal: at most 10 min" in out
    assert "engine part cli                761 s (CPU 583 s)" in out
    assert "engine part openstack          145 s (CPU 185 s)" in out
    assert "local cloud packages (apt)     379 s, 212 packages" in out
    # the `up` began 41 s before the script was started: a loaded machine may take a second or more to start it
    assert re.search(r"pulumi up of the stack         4[1-5] s", out), out
    assert "busy of" in out


def test_a_warm_run_prints_nothing(tmp_path):
    # a run that started a second ago: the checkout's own .venv stamp (read by the script) is older, even right after
    # `make test` installed it (a start 60 s back failed then, as a fresh clone's first `make test` does)
    assert summary(tmp_path, built_at=time.time() - 86400, started=time.time() - 1) == ""


def test_an_engine_assembled_from_parts_built_before_lists_no_part(tmp_path):
    """A change to lab/engine/build.sh re-assembles the engine (a new BUILD_INFO) from the parts already built: nothing
    was built, so nothing is listed as if it had been."""
    out = summary(tmp_path, built_at=time.time() - 100, started=time.time() - 1500)
    assert "engine part cli" in out
    for part in ("cli-3611e58f0c06060d", "openstack-x"):
        os.utime(tmp_path / "cache/engine/parts" / part, (time.time() - 86400, time.time() - 86400))
    out = subprocess.run([sys.executable, str(SCRIPT), str(time.time() - 1500), "0", str(time.time() - 41)],
                         env={**os.environ, "HA_ENDPOINT_CACHE": str(tmp_path / "cache"),
                              "HA_ENDPOINT_STATE": str(tmp_path / "state")},
                         capture_output=True, text=True, check=True).stdout
    assert "engine part" not in out and "engine, all parts" not in out

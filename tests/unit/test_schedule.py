"""tests/schedule.py: pytest-xdist workers take the longest test file first, timed by the last run."""
import json
import subprocess
import sys
from pathlib import Path

from tests.schedule import estimate, lanes, order, read_durations

REPO = Path(__file__).resolve().parents[2]


def test_files_go_longest_first_by_recorded_time_then_by_tier():
    units = {"tests/unit/test_a.py": ["tests/unit/test_a.py::t1", "tests/unit/test_a.py::t2"],
             "tests/e2e/test_b.py": ["tests/e2e/test_b.py::t"],
             "tests/integration/test_c.py": ["tests/integration/test_c.py::t"],
             "tests/unit/test_d.py": ["tests/unit/test_d.py::t"]}
    # never timed: end-to-end before integration before unit; the unit file with more tests before the other
    assert order(units, {}) == ["tests/e2e/test_b.py", "tests/integration/test_c.py", "tests/unit/test_a.py",
                                "tests/unit/test_d.py"]
    # timed: the recorded seconds decide, whatever the tier
    known = {"tests/unit/test_d.py::t": 500.0, "tests/e2e/test_b.py::t": 3.0}
    assert order(units, known)[0] == "tests/unit/test_d.py"
    assert estimate("tests/e2e/test_b.py::t", known) == 3.0


def test_exclusive_lanes_split_whole_files_so_the_longest_lane_is_as_short_as_it_can_be(tmp_path):
    """Each exclusive lane runs on a cloud of its own (scripts/test.sh): a file stays in one lane (its stack fixtures
    are module-scoped), the lanes come out about equal, and the split printed by `python -m tests.schedule lanes N`
    is the one the function gives (the script reads it)."""
    known = {"tests/e2e/test_a.py::t1": 600.0, "tests/e2e/test_b.py::t1": 450.0, "tests/e2e/test_c.py::t1": 350.0,
             "tests/integration/test_d.py::t1": 120.0, "tests/integration/test_d.py::t2": 60.0}
    units = {"tests/e2e/test_a.py": ["tests/e2e/test_a.py::t1"], "tests/e2e/test_b.py": ["tests/e2e/test_b.py::t1"],
             "tests/e2e/test_c.py": ["tests/e2e/test_c.py::t1"],
             "tests/integration/test_d.py": ["tests/integration/test_d.py::t1", "tests/integration/test_d.py::t2"]}
    two = lanes(units, known, 2)
    assert two == [["tests/e2e/test_a.py", "tests/integration/test_d.py"], ["tests/e2e/test_b.py", "tests/e2e/test_c.py"]]
    assert sorted(f for lane in lanes(units, known, 3) for f in lane) == sorted(units)   # every file, once
    assert lanes(units, known, 1) == [order(units, known)]
    assert lanes({}, known, 2) == [[], []]                                                  # a lane may be empty
    # the first lane starts once the other tests are done: it gets what fits beside the others' work
    assert lanes(units, known, 2, first_after=900.0) == [
        ["tests/e2e/test_c.py"], ["tests/e2e/test_a.py", "tests/e2e/test_b.py", "tests/integration/test_d.py"]]

    (tmp_path / "test-durations.json").write_text(json.dumps(known))
    ids = "\n".join(t for tests in units.values() for t in tests) + "\n\n5 tests collected in 0.01s\n"
    run = subprocess.run([sys.executable, "-m", "tests.schedule", "lanes", "2"], input=ids, cwd=REPO,
                         capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "HA_ENDPOINT_CACHE": str(tmp_path)},
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["780 tests/e2e/test_a.py tests/integration/test_d.py",
                                       "800 tests/e2e/test_b.py tests/e2e/test_c.py"]
    later = subprocess.run([sys.executable, "-m", "tests.schedule", "lanes", "2", "--first-after", "900"], input=ids,
                           cwd=REPO, capture_output=True, text=True,
                           env={"PATH": "/usr/bin:/bin", "HA_ENDPOINT_CACHE": str(tmp_path)}, timeout=60)
    assert later.stdout.splitlines() == ["350 tests/e2e/test_c.py",
                                         "1230 tests/e2e/test_a.py tests/e2e/test_b.py tests/integration/test_d.py"]
    for bad in (["lanes", "x"], ["lanes", "2", "--first-after", "soon"], ["lanes", "2", "--after", "9"]):
        assert subprocess.run([sys.executable, "-m", "tests.schedule", *bad], cwd=REPO, capture_output=True,
                              text=True, timeout=60).returncode == 2, bad


def test_an_unreadable_or_foreign_record_counts_as_none(tmp_path):
    path = tmp_path / "d.json"
    assert read_durations(path) == {}
    path.write_text("{not json")
    assert read_durations(path) == {}
    path.write_text(json.dumps(["a", "b"]))
    assert read_durations(path) == {}
    path.write_text(json.dumps({"x::y": 2, "bad": "slow"}))
    assert read_durations(path) == {"x::y": 2.0}


def test_a_real_xdist_run_takes_the_longest_file_first_and_records_every_tests_time(tmp_path):
    """b is the longest file, then c, then a. b's last test is long: the worker must know its next test before it
    runs one, so the shortest file (a) is what waits behind it, and c comes after a."""
    suite = tmp_path / "tests" / "unit"
    suite.mkdir(parents=True)
    log = tmp_path / "order.log"
    for name in ("test_a", "test_b", "test_c"):
        (suite / f"{name}.py").write_text(
            f"def test_{name}_1():\n    open({str(log)!r}, 'a').write('{name}\\n')\n\n"
            f"def test_{name}_2():\n    pass\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "test-durations.json").write_text(json.dumps({"tests/unit/test_b.py::test_test_b_1": 90.0,
                                                           "tests/unit/test_b.py::test_test_b_2": 25.0,
                                                           "tests/unit/test_c.py::test_test_c_2": 30.0}))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests.schedule", "-n", "1", "--dist", "loadfile",
                          "-p", "no:cacheprovider", "tests"], cwd=tmp_path, capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HA_ENDPOINT_CACHE": str(cache)},
                         timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert log.read_text().split() == ["test_b", "test_a", "test_c"]
    recorded = json.loads((cache / "test-durations.json").read_text())
    assert set(recorded) == {f"tests/unit/test_{n}.py::test_test_{n}_{i}" for n in "abc" for i in (1, 2)}
    assert recorded["tests/unit/test_b.py::test_test_b_1"] < 90.0  # this run's time replaced the old one


def test_phases_ending_together_each_keep_their_times(tmp_path, monkeypatch):
    """`make test`'s phases record at the same moment (the offline tiers beside the lanes): each merge sees the
    others', so no phase's times are lost to the next schedule."""
    import threading
    from types import SimpleNamespace

    from tests import schedule

    monkeypatch.setenv("HA_ENDPOINT_CACHE", str(tmp_path))
    monkeypatch.delenv("HA_ENDPOINT_RECORD_DURATIONS", raising=False)

    def phase(n: int) -> None:
        reports = [SimpleNamespace(nodeid=f"tests/unit/test_{n}.py::test_{i}", when="call", duration=1.0 + n)
                   for i in range(200)]
        reporter = SimpleNamespace(stats={"passed": reports})
        schedule.pytest_terminal_summary(reporter, 0, SimpleNamespace())

    threads = [threading.Thread(target=phase, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    recorded = schedule.read_durations(tmp_path / "test-durations.json")
    assert len(recorded) == 6 * 200
    assert recorded["tests/unit/test_5.py::test_0"] == 6.0
    assert not list(tmp_path.glob("*.tmp"))

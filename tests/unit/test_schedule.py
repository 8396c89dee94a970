"""tests/schedule.py: pytest-xdist workers take the longest test file first, timed by the last run."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.schedule import estimate, lanes, main, order, read_durations

REPO = Path(__file__).resolve().parents[2]


def printed_lanes(argv: list[str], cache: Path, monkeypatch, capsys) -> list[str]:
    """What ``python -m tests.schedule`` prints for ``argv`` with ``HA_ENDPOINT_CACHE`` = ``cache``, asked of its
    ``main`` in this process (the command itself, as scripts/test.sh runs it, is run once: the test of the lanes)."""
    monkeypatch.setenv("HA_ENDPOINT_CACHE", str(cache))
    capsys.readouterr()
    assert main(argv) == 0
    return capsys.readouterr().out.splitlines()


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


def test_exclusive_lanes_split_whole_files_so_the_longest_lane_is_as_short_as_it_can_be(tmp_path, monkeypatch, capsys):
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
    kinds = tmp_path / "kinds"
    kinds.write_text("".join(f"exclusive {t}\n" for tests in units.values() for t in tests))
    run = subprocess.run([sys.executable, "-m", "tests.schedule", "lanes", "2", "--kinds", str(kinds)], cwd=REPO,
                         capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "HA_ENDPOINT_CACHE": str(tmp_path)},
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["780 tests/e2e/test_a.py tests/integration/test_d.py",
                                       "800 tests/e2e/test_b.py tests/e2e/test_c.py"]
    later = printed_lanes(["lanes", "2", "--kinds", str(kinds), "--first-after", "900"], tmp_path, monkeypatch, capsys)
    assert later == ["350 tests/e2e/test_c.py",
                     "1230 tests/e2e/test_a.py tests/e2e/test_b.py tests/integration/test_d.py"]
    for bad in (["lanes", "x", "--kinds", str(kinds)], ["lanes", "2", "--kinds", str(kinds), "--first-after", "soon"],
                ["lanes", "2", "--kinds", str(kinds), "--after", "9"], ["lanes", "2"]):
        with pytest.raises(SystemExit) as refused:   # argparse's usage error: the command's exit status 2
            main(bad)
        assert refused.value.code == 2, bad


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


def test_lanes_that_end_early_take_shared_files_that_fit_before_the_parallel_phase_ends(tmp_path, monkeypatch, capsys):
    """Lanes 2.. (clouds of their own) take shared files the parallel phase can spare: the longest that still lets
    the lane end before the parallel phase does without it; never a file pinned to the first cloud, never into lane 1
    (which runs after the parallel phase), never so much that the lane becomes the last to end."""
    from tests.schedule import read_kinds, spread

    known = {"tests/e2e/test_walk.py::t": 700.0, "tests/e2e/test_big.py::t": 600.0, "tests/e2e/test_mid.py::t": 300.0,
             "tests/e2e/test_mid.py::u": 100.0, "tests/e2e/test_small.py::t": 150.0, "tests/e2e/test_tiny.py::t": 50.0,
             "tests/e2e/test_x.py::t": 500.0}
    shared = {u: [i for i in known if i.startswith(u + "::")] for u in
              ("tests/e2e/test_walk.py", "tests/e2e/test_big.py", "tests/e2e/test_mid.py", "tests/e2e/test_small.py",
               "tests/e2e/test_tiny.py")}
    movable = set(shared) - {"tests/e2e/test_walk.py"}
    # 1900 s of shared tests, 2 at once: 950 s. Lane 2 expects 500 s, lane 3 700 s.
    moved = spread(shared, movable, [0.0, 500.0, 700.0], known, width=2.0)
    assert moved == [[], ["tests/e2e/test_small.py", "tests/e2e/test_tiny.py"], []]
    # after the move: parallel (700 + 600 + 400) / 2 = 850 s, lanes 700 s and 700 s; test_big (600 s) or test_mid
    # (400 s) would have made lane 2 the last to end (1100 s or 900 s against 650 s or 750 s)
    assert spread(shared, set(), [0.0, 500.0, 700.0], known, width=2.0) == [[], [], []]   # nothing movable
    assert spread(shared, movable, [0.0], known, width=2.0) == [[]]                         # lane 1 only
    assert spread(shared, movable, [0.0, 500.0], known, width=0.0) == [[], []]               # no record of the width
    # the parallel phase never ends before its longest file: one worker's worth of the walk stays the floor
    assert spread({"tests/e2e/test_walk.py": ["tests/e2e/test_walk.py::t"], "tests/e2e/test_tiny.py":
                   ["tests/e2e/test_tiny.py::t"]}, {"tests/e2e/test_tiny.py"}, [0.0, 600.0], known, width=10.0) == \
        [[], ["tests/e2e/test_tiny.py"]]

    kinds = tmp_path / "kinds"
    kinds.write_text("exclusive tests/e2e/test_x.py::t\nfirst_cloud tests/e2e/test_walk.py::t\n"
                     "shared tests/e2e/test_mid.py::t\nshared tests/e2e/test_mid.py::u\n"
                     "shared tests/e2e/test_small.py::t\nfirst_cloud tests/e2e/test_small.py::v\n")
    exclusive, got_shared, got_movable, own = read_kinds(kinds)
    assert exclusive == {"tests/e2e/test_x.py": ["tests/e2e/test_x.py::t"]} and own == set()
    assert sorted(got_shared) == ["tests/e2e/test_mid.py", "tests/e2e/test_small.py", "tests/e2e/test_walk.py"]
    assert got_movable == {"tests/e2e/test_mid.py"}   # a file with one pinned test stays whole on the first cloud

    (tmp_path / "test-durations.json").write_text(json.dumps(known))
    printed = printed_lanes(["lanes", "2", "--first-after", "900", "--kinds", str(kinds), "--width", "1"], tmp_path,
                            monkeypatch, capsys)
    # lane 1 starts 900 s in, so lane 2 runs test_x; the shared files take 700 + 400 + 210 s one at a time (test_small's
    # pinned test never timed: an end-to-end test's guess, 60 s): lane 2 ends with test_mid at 900 s, before 910 s
    assert printed == ["0", "500 tests/e2e/test_x.py", "moved 2 400 tests/e2e/test_mid.py"]


def test_the_collection_writes_each_tests_kind_for_the_schedule(tmp_path):
    """`make test`'s one collection says which tests are exclusive, which need the first cloud and which must never
    run there (markers); an `own_cloud` test is selected as an exclusive one by every `-m` of scripts/test.sh."""
    (tmp_path / "test_k.py").write_text(
        "import pytest\n\n@pytest.mark.exclusive\ndef test_a():\n    pass\n\n"
        "@pytest.mark.first_cloud\ndef test_b():\n    pass\n\ndef test_c():\n    pass\n\n"
        "@pytest.mark.own_cloud\ndef test_d():\n    pass\n")
    kinds = tmp_path / "kinds"

    def collect(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "tests.schedule", "-p",
                               "no:cacheprovider", "-c", "/dev/null", "--rootdir", str(tmp_path), *args, str(tmp_path)],
                              cwd=REPO, capture_output=True, text=True, timeout=120,
                              env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO),
                                   "HA_ENDPOINT_SCHEDULE_KINDS": str(kinds)})

    run = collect()
    assert run.returncode == 0, run.stdout + run.stderr
    assert kinds.read_text().splitlines() == ["exclusive test_k.py::test_a", "first_cloud test_k.py::test_b",
                                              "shared test_k.py::test_c", "own_cloud test_k.py::test_d"]
    # the lanes' selection takes it, the parallel phase's (on the first cloud) leaves it
    assert [line for line in collect("-m", "exclusive").stdout.splitlines() if "::" in line] == \
        ["test_k.py::test_a", "test_k.py::test_d"]
    assert [line for line in collect("-m", "not exclusive").stdout.splitlines() if "::" in line] == \
        ["test_k.py::test_b", "test_k.py::test_c"]


def test_a_file_marked_own_cloud_never_goes_to_the_first_lane_unless_it_is_the_only_one(tmp_path, monkeypatch, capsys):
    """The first lane runs on the first cloud, the user's (where `make up` keeps the dev stack): an `own_cloud` file
    (the README walk) goes to lane 2.. even when lane 1 would end first; with one cloud it has nowhere else to go
    (HA_ENDPOINT_TEST_CLOUDS=1: the test decides there, tests/e2e/test_readme_walk.py)."""
    known = {"tests/e2e/test_walk.py::t": 700.0, "tests/e2e/test_a.py::t": 600.0, "tests/e2e/test_b.py::t": 500.0}
    units = {unit: [f"{unit}::t"] for unit in ("tests/e2e/test_walk.py", "tests/e2e/test_a.py", "tests/e2e/test_b.py")}
    own = {"tests/e2e/test_walk.py"}
    # without the mark, the walk (the longest) would go to lane 1, starting at once here
    assert lanes(units, known, 3) == [["tests/e2e/test_walk.py"], ["tests/e2e/test_a.py"], ["tests/e2e/test_b.py"]]
    assert lanes(units, known, 2) == [["tests/e2e/test_walk.py"], ["tests/e2e/test_a.py", "tests/e2e/test_b.py"]]
    assert lanes(units, known, 2, own_cloud=own) == [["tests/e2e/test_a.py", "tests/e2e/test_b.py"],
                                                     ["tests/e2e/test_walk.py"]]
    for n in (2, 3):
        for first_after in (0.0, 900.0, 5000.0):
            split = lanes(units, known, n, first_after, own)
            assert "tests/e2e/test_walk.py" not in split[0], (n, first_after, split)
            assert sorted(f for lane in split for f in lane) == sorted(units)
    assert lanes(units, known, 1, own_cloud=own) == [["tests/e2e/test_walk.py", "tests/e2e/test_a.py",
                                                      "tests/e2e/test_b.py"]]

    # the same through the command scripts/test.sh runs: the kinds file, the lanes printed
    (tmp_path / "test-durations.json").write_text(json.dumps(known))
    kinds = tmp_path / "kinds"
    kinds.write_text("own_cloud tests/e2e/test_walk.py::t\nexclusive tests/e2e/test_a.py::t\n"
                     "exclusive tests/e2e/test_b.py::t\nshared tests/e2e/test_c.py::t\n")
    from tests.schedule import read_kinds
    exclusive, shared, movable, got_own = read_kinds(kinds)
    assert sorted(exclusive) == sorted(units) and got_own == own and movable == {"tests/e2e/test_c.py"}

    def printed(n: int) -> list[str]:
        return printed_lanes(["lanes", str(n), "--kinds", str(kinds)], tmp_path, monkeypatch, capsys)

    assert printed(3) == ["600 tests/e2e/test_a.py", "700 tests/e2e/test_walk.py", "500 tests/e2e/test_b.py"]
    assert printed(2) == ["1100 tests/e2e/test_a.py tests/e2e/test_b.py", "700 tests/e2e/test_walk.py"]


def test_the_run_record_keeps_each_failed_tests_report_for_when_the_output_is_gone(tmp_path):
    """CI keeps `make test`'s printed output only sometimes; the run record in the cache stays: a failure must be
    readable from it, with the words that explain it."""
    suite = tmp_path / "tests" / "e2e"
    suite.mkdir(parents=True)
    (suite / "test_x.py").write_text("def test_fine():\n    pass\n\n"
                                     "def test_broken():\n    assert 'az2' == 'az1', 'one az2 request lost'\n")
    record = tmp_path / "timings.jsonl"
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests.tiers", "-p", "no:cacheprovider",
                          "tests"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HA_ENDPOINT_TIMINGS": str(record),
                              "HA_ENDPOINT_PHASE": "exclusive lane 2"})
    assert run.returncode == 1, run.stdout + run.stderr
    (line,) = record.read_text().splitlines()
    phase = json.loads(line)
    assert phase["phase"] == "exclusive lane 2" and phase["outcomes"] == {"passed": 1, "failed": 1}
    assert list(phase["failures"]) == ["tests/e2e/test_x.py::test_broken"]
    assert "one az2 request lost" in phase["failures"]["tests/e2e/test_x.py::test_broken"]

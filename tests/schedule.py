"""Which test file a pytest-xdist worker takes next under ``--dist loadfile``: the longest first (a pytest plugin,
loaded from ``-p tests.schedule``, see pyproject.toml).

xdist's own file scheduling hands out files by their number of tests and gives a worker a new file whenever it has two
tests or fewer left. The end-to-end files have few tests that each take minutes, so they were handed out last and
piled up behind each other on one worker (the README walk, 270 s in one test, then another file of minutes) while the
other workers ran out of work: the parallel phase took as long as its most loaded worker.

Here a worker gets a new file only when it holds one test or none (a worker runs a test once it knows the next one,
so one must stay queued behind it), and the file it gets is the longest left, except behind a long last test, where
the shortest left waits instead of a long one. How long a file takes is what it took in the last run that ran it
(``$HA_ENDPOINT_CACHE/test-durations.json``: each test's set-up, call and tear-down, written at the end of each run by
the controller); a test never timed is estimated by its tier (an end-to-end test a minute, an integration test 15 s,
a policy or unit test a fraction of a second).
"""

from __future__ import annotations

import fcntl
import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

from tests.tiers import tier_of

PER_TEST_GUESS = {"e2e": 60.0, "integration": 15.0, "policies": 0.5, "unit": 0.2, "other": 1.0}
LONG_LAST_TEST = 20.0  # seconds: behind a last test this long, the shortest file waits rather than the longest


def durations_file() -> Path:
    cache = os.environ.get("HA_ENDPOINT_CACHE") or str(Path.home() / ".cache" / "ha-endpoint")
    return Path(cache) / "test-durations.json"


def read_durations(path: Path) -> dict[str, float]:
    """Test id → seconds in the last run that ran it; {} when nothing was recorded (or the record is unreadable)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items() if isinstance(v, (int, float))} if isinstance(data, dict) else {}


def estimate(nodeid: str, known: dict[str, float]) -> float:
    """Seconds the test is expected to take: its recorded time, else its tier's guess."""
    return known.get(nodeid, PER_TEST_GUESS[tier_of(nodeid)])


def seconds(tests: list[str], known: dict[str, float]) -> float:
    """Seconds a group of tests (a file, a lane) is expected to take: its tests' estimates added up."""
    return sum(estimate(t, known) for t in tests)


def order(units: dict[str, list[str]], known: dict[str, float]) -> list[str]:
    """The files (file → its selected test ids) longest first; ties by name, so the order is reproducible."""
    return sorted(units, key=lambda f: (-seconds(units[f], known), f))


def lanes(units: dict[str, list[str]], known: dict[str, float], n: int, first_after: float = 0.0,
          own_cloud: frozenset[str] | set[str] = frozenset()) -> list[list[str]]:
    """The files (file → its selected test ids) split into ``n`` lanes that end about together, for tests that need a
    cloud of their own each (the exclusive ones: scripts/test.sh runs a lane per cloud, the first one on the shared
    cloud once the other tests are done, ``first_after`` seconds in): longest file first, each to the lane expected
    to end first; a file of ``own_cloud`` (marked ``own_cloud``: never on the first cloud, the user's) never to the
    first lane while there is another, and to the first only when it is the one lane (``HA_ENDPOINT_TEST_CLOUDS=1``:
    such a test decides there whether it can run, e.g. the README walk when no dev stack is up). Reproducible: the
    same files and durations give the same lanes."""
    out: list[list[str]] = [[] for _ in range(n)]
    load = [first_after] + [0.0] * (n - 1)
    for unit in order(units, known):
        allowed = range(1, n) if unit in own_cloud and n > 1 else range(n)
        lane = min(allowed, key=lambda i: (load[i], i))
        out[lane].append(unit)
        load[lane] += seconds(units[unit], known)
    return out


def spread(shared: dict[str, list[str]], movable: set[str], loads: list[float], known: dict[str, float],
           width: float) -> list[list[str]]:
    """Which shared files (file → its test ids: the tests that share the first cloud, in the parallel phase) lanes 2..
    take after their own files, so that the lanes and the parallel phase end about together: the machine is busy to
    the end instead of idling behind the last parallel worker. ``loads``: each lane's expected seconds (lane 1, on the
    first cloud after the parallel phase, takes none); ``width``: how many tests the parallel phase ran at once in the
    last run (its tests' seconds over its wall time); only ``movable`` files move (a file none of whose tests needs
    the first cloud or changes the whole cloud). Longest first, each to the least loaded lane, while that lane still
    ends before the parallel phase without it would; one list per lane (the first one empty)."""
    out: list[list[str]] = [[] for _ in loads]
    if len(loads) < 2 or width <= 0:
        return out
    load = list(loads)
    cost = {unit: seconds(tests, known) for unit, tests in shared.items()}
    staying = set(shared)
    for unit in order(shared, known):
        if unit not in movable:
            continue
        staying.discard(unit)
        # the parallel phase without it: its tests spread over its width, and never shorter than its longest file
        parallel = max([sum(cost[u] for u in staying) / width] + [cost[u] for u in staying])
        lane = min(range(1, len(load)), key=lambda i: (load[i], i))
        if load[lane] + cost[unit] <= parallel:
            out[lane].append(unit)
            load[lane] += cost[unit]
        else:
            staying.add(unit)
    return out


def read_kinds(path: Path) -> tuple[dict[str, list[str]], dict[str, list[str]], set[str], set[str]]:
    """The collection written under ``HA_ENDPOINT_SCHEDULE_KINDS`` (lines ``<kind> <test id>``): the exclusive files
    (``own_cloud`` ones included) and the shared files (file → test ids), the shared files that may run on any cloud
    (none of their tests exclusive or marked ``first_cloud``), and the exclusive files that must not run on the first
    cloud (one of their tests marked ``own_cloud``)."""
    exclusive: dict[str, list[str]] = defaultdict(list)
    shared: dict[str, list[str]] = defaultdict(list)
    pinned: set[str] = set()
    own: set[str] = set()
    for line in path.read_text().splitlines():
        kind, _, nodeid = line.partition(" ")
        unit = nodeid.split("::", 1)[0]
        (exclusive if kind in ("exclusive", "own_cloud") else shared)[unit].append(nodeid)
        if kind != "shared":
            pinned.add(unit)
        if kind == "own_cloud":
            own.add(unit)
    return dict(exclusive), dict(shared), set(shared) - pinned, own


@pytest.hookimpl(tryfirst=True)   # before `-m` deselects by markers
def pytest_collection_modifyitems(config, items):
    """A test marked ``own_cloud`` (never on the first cloud) is run as an exclusive one: in a lane, alone on that
    lane's cloud (so every ``-m exclusive`` / ``-m "not exclusive"`` of scripts/test.sh selects it as one)."""
    for item in items:
        if item.get_closest_marker("own_cloud") and not item.get_closest_marker("exclusive"):
            item.add_marker("exclusive")


def pytest_collection_finish(session):
    """``HA_ENDPOINT_SCHEDULE_KINDS=<file>`` with ``--collect-only``: each collected test as ``<kind> <id>`` (kind:
    own_cloud, exclusive, first_cloud or shared), for ``python -m tests.schedule lanes --kinds``."""
    path = os.environ.get("HA_ENDPOINT_SCHEDULE_KINDS")
    if not path or not session.config.option.collectonly or hasattr(session.config, "workerinput"):
        return
    with open(path, "w") as out:
        for item in session.items:
            kind = next((k for k in ("own_cloud", "exclusive", "first_cloud") if item.get_closest_marker(k)), "shared")
            out.write(f"{kind} {item.nodeid}\n")


def main(argv: list[str]) -> int:
    """``python -m tests.schedule lanes N --kinds FILE [--first-after SECONDS] [--width TESTS]``: the exclusive tests
    of that collection (every integration and end-to-end test with its kind, :func:`pytest_collection_finish`) split
    into N lanes, the first starting SECONDS in (an ``own_cloud`` file never in the first while N > 1); prints one line per lane: its expected seconds (its tests' own), then
    its files; then, with a width, one line ``moved <lane> <seconds> <files>`` per lane that also takes shared files
    (:func:`spread`)."""
    import argparse

    def positive(text: str) -> int:
        if not text.isdigit() or int(text) < 1:
            raise argparse.ArgumentTypeError(f"{text!r}: a number of lanes, 1 or more")
        return int(text)

    parser = argparse.ArgumentParser(prog="python -m tests.schedule", description=main.__doc__)
    parser.add_argument("command", choices=["lanes"])
    parser.add_argument("n", type=positive)
    parser.add_argument("--kinds", type=Path, metavar="FILE", required=True,
                        help="the collection's kinds (pytest --collect-only with HA_ENDPOINT_SCHEDULE_KINDS=FILE)")
    parser.add_argument("--first-after", type=float, default=0.0, metavar="SECONDS")
    parser.add_argument("--width", type=float, default=0.0, metavar="TESTS",
                        help="the parallel phase's tests at once in the last run; > 0 moves shared files into lanes 2..")
    args = parser.parse_args(argv)   # a usage error exits 2
    known = read_durations(durations_file())
    units, shared, movable, own = read_kinds(args.kinds)
    split = lanes(units, known, args.n, args.first_after, own)
    loads = [seconds([t for unit in lane for t in units[unit]], known) for lane in split]
    for lane, load in zip(split, loads):
        print(f"{load:.0f}", *lane)
    for number, moved in enumerate(spread(shared, movable, loads, known, args.width), start=1):
        if moved:
            print("moved", number, f"{seconds([t for unit in moved for t in shared[unit]], known):.0f}", *moved)
    return 0


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class LongestFirst(LoadFileScheduling):
        """xdist's file scheduling with the order and hand-out rule above."""

        def __init__(self, config, log=None):
            super().__init__(config, log)
            self.known = read_durations(durations_file())
            self.ordered = False

        def _assign_work_unit(self, node) -> None:
            if not self.ordered:  # once, when the collection's files are known
                units = dict(self.workqueue)
                self.workqueue.clear()
                for scope in order({scope: list(tests) for scope, tests in units.items()}, self.known):
                    self.workqueue[scope] = units[scope]
                self.ordered = True
            pending = [nodeid for work in self.assigned_work.get(node, {}).values()
                       for nodeid, done in work.items() if not done]
            if len(pending) == 1 and len(self.workqueue) > 1 and estimate(pending[0], self.known) >= LONG_LAST_TEST:
                self.workqueue.move_to_end(next(reversed(self.workqueue)), last=False)  # the shortest, next
            super()._assign_work_unit(node)

        def _reschedule(self, node) -> None:
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
                return
            if self._pending_of(self.assigned_work[node]) > 1:
                return
            self._assign_work_unit(node)

    return LongestFirst(config, log)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The controller (or a run without workers) records each test's time: its set-up, call and tear-down; not in a run
    whose tests are sized otherwise than in `make test` (HA_ENDPOINT_RECORD_DURATIONS=0: `make test-scale`)."""
    if hasattr(config, "workerinput") or os.environ.get("HA_ENDPOINT_RECORD_DURATIONS") == "0":
        return
    times: dict[str, float] = defaultdict(float)
    for values in terminalreporter.stats.values():
        for report in values:
            if hasattr(report, "nodeid") and hasattr(report, "when"):
                times[report.nodeid] += float(getattr(report, "duration", 0.0) or 0.0)
    if not times:
        return
    path = durations_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # under a lock: `make test`'s phases end together (the offline tiers beside the lanes), and each one's
        # read-merge-write must see the others' times
        with open(path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            recorded = read_durations(path)
            recorded.update({nodeid: round(total, 2) for nodeid, total in times.items()})
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(recorded, indent=0, sort_keys=True) + "\n")
            tmp.replace(path)
    except OSError:
        pass  # the order is an optimisation: a read-only cache costs time, never a result


if __name__ == "__main__":
    import sys
    raise SystemExit(main(sys.argv[1:]))

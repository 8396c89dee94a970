"""``lab/bench/record.py``: a bench script's output kept as a dated record, listed in the results index and the nav."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "lab" / "bench" / "record.py"


def _results(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    results.mkdir()
    (results / "index.md").write_text("| record | date | printed by |\n| --- | --- | --- |\n")
    return results


def test_a_script_that_succeeds_is_recorded_with_its_output_when_and_how(tmp_path):
    results = _results(tmp_path)
    script = tmp_path / "tiny_figures.py"
    script.write_text('"""Tiny figures: one line of them."""\nprint("| n | s |")\nprint("| 1 | 0.5 |")\n')
    runs = [subprocess.run([sys.executable, str(RECORD), "--results", str(results), "--", str(script), "--x"],
                           capture_output=True, text=True, timeout=60) for _ in range(2)]
    assert [run.returncode for run in runs] == [0, 0], runs[0].stderr
    assert "| 1 | 0.5 |" in runs[0].stdout  # shown as it runs
    first, second = sorted(results.glob("*-tiny-figures*.md"), key=lambda path: len(path.name))
    text = first.read_text()
    assert text.startswith("# Tiny figures: one line of them (")
    assert f"`.venv/bin/python {script} --x`" in text and "load average" in text and "cores" in text
    assert "```text\n| n | s |\n| 1 | 0.5 |\n```" in text
    assert second.name.endswith("-tiny-figures-2.md") or second.name[:15] != first.name[:15]  # one record each
    rows = (results / "index.md").read_text().splitlines()[2:]
    assert [row.split("](")[1].split(")")[0] for row in rows] == [first.name, second.name]


def test_a_script_that_fails_is_not_recorded_and_its_status_is_kept(tmp_path):
    results = _results(tmp_path)
    script = tmp_path / "broken.py"
    script.write_text('print("half a table")\nraise SystemExit(3)\n')
    run = subprocess.run([sys.executable, str(RECORD), "--results", str(results), "--", str(script)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 3 and "not recorded" in run.stderr
    assert sorted(path.name for path in results.iterdir()) == ["index.md"]


def test_the_site_lists_every_record_by_itself():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from results_nav import on_config
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    config = on_config({"docs_dir": str(ROOT / "docs"), "nav": [{"Home": "index.md"}, {"Results": ["x.md"]}]})
    listed = config["nav"][1]["Results"]
    records = sorted(path.name for path in (ROOT / "docs" / "results").glob("*.md") if path.name != "index.md")
    assert listed == ["results/index.md", *(f"results/{name}" for name in records)]

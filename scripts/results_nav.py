"""MkDocs hook: the site's Results section lists every record in ``docs/results/`` by itself, newest last.

A record is written by ``lab/bench/record.py`` (or, before it existed, by hand), so no one edits ``mkdocs.yml`` for it:
the ``Results`` entry of the nav is the index followed by every other page of the folder, in name order (the names
start with their date), each titled by its own first heading.
"""

from __future__ import annotations

from pathlib import Path

SECTION = "Results"


def on_config(config):
    """Replace the nav's Results section with the index and every record."""
    folder = Path(config["docs_dir"]) / "results"
    records = sorted(path.name for path in folder.glob("*.md") if path.name != "index.md")
    for entry in config["nav"] or []:
        if isinstance(entry, dict) and SECTION in entry:
            entry[SECTION] = ["results/index.md", *(f"results/{name}" for name in records)]
    return config

"""README.md is a map (issue 47): what it is, the two commands, what `make up` leaves you with, where everything is,
links into the documentation site. At most 150 lines, and every link it holds leads somewhere: a file of the
repository, and for a page of docs/ a heading of that page (`mkdocs build --strict` checks the site's own links, not
the README's)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def slug(heading: str) -> str:
    """The anchor MkDocs' toc extension (and GitHub) gives a heading."""
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "").strip().lower())
    return re.sub(r"[-\s]+", "-", text).strip("-")


def test_the_readme_is_at_most_150_lines():
    assert len(README.splitlines()) <= 150, len(README.splitlines())


def test_every_link_of_the_readme_leads_to_a_file_and_heading_that_exist():
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", README):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        if not (ROOT / path).exists():
            broken.append(target)
        elif anchor and path.endswith(".md"):
            headings = re.findall(r"^#+ (.+)$", (ROOT / path).read_text(), re.M)
            if anchor not in {slug(heading) for heading in headings}:
                broken.append(target)
    assert not broken, broken


def test_the_readme_sections_the_components_messages_name_exist():
    """The component's messages say "see README.md 'Configuration'" and "README.md 'Kubernetes'"."""
    assert "\n## Configuration\n" in README and "\n## Kubernetes\n" in README

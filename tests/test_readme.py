"""The README is the front door (issue 39): short, the two commands in its first screen, CI running
the test command it shows, and every document of docs/ reachable from it through a link that exists."""

from __future__ import annotations

import re

from conftest import REPO

README = REPO / "README.md"
FIRST_SCREEN = 40  # lines
MAX_LINES = 200


def test_the_readme_is_short_and_shows_the_two_commands_in_its_first_screen():
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines; move sections into docs/"
    first_screen = "\n".join(lines[:FIRST_SCREEN])
    for command in ("bash scripts/reproduce.sh", "bash scripts/test.sh"):
        assert re.search(rf"^{re.escape(command)}\b", first_screen, re.M), f"{command!r} not in the first screen"


def test_ci_runs_the_readme_s_test_command():
    commands = [line for line in (REPO / ".ci" / "run").read_text().splitlines()
                if line.strip() and not line.startswith(("#", "set ", "cd "))]
    assert commands == ["bash scripts/test.sh"]
    assert "\nbash scripts/test.sh " in README.read_text()


def test_every_document_is_linked_from_the_readme_and_every_link_exists():
    text = README.read_text()
    targets = set(re.findall(r"\]\(([^)#\s]+)\)", text))
    assert targets, "no links"
    missing = sorted(t for t in targets if not (REPO / t).exists())
    assert missing == [], f"README links to files that do not exist: {missing}"
    unlinked = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md")
                      if p.relative_to(REPO).as_posix() not in targets)
    assert unlinked == [], f"docs not linked from the README: {unlinked}"


def test_the_verdict_table_is_what_the_committed_claims_table_counts():
    """The README's opening table is the output of the command it shows, on the committed claims table:
    a verdict changed without the README following fails here."""
    import pandas as pd

    d = pd.read_csv(REPO / "data" / "tables" / "reference-vm.claims.csv")
    counts = pd.crosstab(d.paper, d.verdict.str.split(" [(]").str[0], margins=True, margins_name="all")
    expected = ["| " + " | ".join([str(paper), *(str(int(v)) for v in row)]) + " |" for paper, row in counts.iterrows()]
    header = "| paper | " + " | ".join(counts.columns) + " |"
    lines = README.read_text().splitlines()
    at = lines.index(header)
    assert lines[at + 2 : at + 2 + len(expected)] == expected

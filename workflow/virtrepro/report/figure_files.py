"""Where a testbed's figures go and their report captions: paths and text only (no matplotlib), so that
the workflow can name the notebooks' outputs without importing the figures' code (``workflow/rules/notebooks.smk``).
The figure registry (:mod:`virtrepro.figures`) and :mod:`.plotting` use these."""

from __future__ import annotations

import re
from pathlib import Path

# The committed reference run (its raw logs, config/config.yaml's testbed of that name): the
# notebooks' default testbed, and the one testbed whose figures are the repository's own, figures/<paper>/
# (:func:`figures_home`).
REFERENCE_TESTBED = "reference-vm"


def figures_home(figures_dir: str | Path, testbed: str, main_figures: bool = False) -> Path:
    """Where ``testbed``'s figures go (``<home>/<paper>/<id>.png``, ``.pdf``, ``.reading.md``):
    ``figures_dir`` itself for the reference testbed, or for any testbed when asked (``main_figures``),
    else ``figures_dir/<testbed>``, so that another testbed's run, or a misspelt name, never replaces
    the committed figures. The notebooks, ``python -m virtrepro.figures``, the workflow's notebook rules
    (their outputs) and its report's captions all ask here."""
    return Path(figures_dir) if main_figures or testbed == REFERENCE_TESTBED else Path(figures_dir) / testbed


def figure_file(figures_dir: str | Path, paper: str, name: str, suffix: str) -> Path:
    """A figure's file: ``<figures_dir>/<paper>/<name><suffix>`` (``figures_dir``: a testbed's, see
    :func:`figures_home`)."""
    return Path(figures_dir) / paper / f"{name}{suffix}"


def testbed_figure_file(figures_dir: str | Path, testbed: str, paper: str, id: str, suffix: str,
                        main_figures: bool = False) -> Path:
    """One file of figure ``id`` of ``paper`` drawn for ``testbed`` (:func:`figures_home`)."""
    return figure_file(figures_home(figures_dir, testbed, main_figures), paper, id, suffix)


def write_captions(directory: str | Path, captions: dict[tuple[str, str], str],
                   figures_dir: str | Path | None = None) -> dict[tuple[str, str], Path]:
    """Each figure's report caption as <directory>/<paper>-<id>.rst (rewritten only when it changed):
    ``captions`` (paper, id) -> its registered caption (``Figure.report_caption``) and, where its notebook
    has written one (``<figures_dir>/<paper>/<id>.reading.md``), the reading computed from the data (what it
    shows, the verdicts of the claims it tests); ``figures_dir``: the testbed's (:func:`figures_home`)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    out = {}
    for (paper, id), text in captions.items():
        path = directory / f"{paper}-{id}.rst"
        reading = figure_file(figures_dir, paper, id, ".reading.md") if figures_dir is not None else None
        if reading is not None and reading.is_file():
            text += "\n" + markdown_to_rst(reading.read_text())
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
        out[(paper, id)] = path
    return out


def markdown_to_rst(text: str) -> str:
    """The little Markdown a reading holds (``**bold**``, ``- `` items, code in single backticks) as RST."""
    text = re.sub(r"(?<!`)`([^`]+)`(?!`)", r"``\1``", text)
    return text.strip() + "\n"

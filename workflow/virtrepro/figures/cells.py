"""The notebooks' figure cells, made from the figure registry: the list of figures is written once
(each ``@figure`` in its paper's module), and every notebook's cells that draw them are generated:

    python -m virtrepro.figures.cells            # rewrite the notebooks' figure cells from the registry
    python -m virtrepro.figures.cells --check    # exit 1 if a notebook's figure cells are not the registry's

Each registered figure of a paper has three code cells in ``notebooks/<paper>.ipynb``, marked in
their metadata (``{"virtrepro": {"figure": "<id>"}}``): the figure drawn (``nb.draw``), its reading
(``nb.reading``) and its numbers (``.show()``, whose output nbval checks). The generator keeps the
prose around them and their place: a figure's cells stand where its first marked cell stood (a
cell whose source is current keeps its outputs); a newly registered figure's cells come after the
last figure's; the cells of a figure no longer registered go. A code cell that draws a figure
without the mark is refused: every figure a notebook draws comes from the registry
(``tests/test_figures.py`` runs the check).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from . import by_paper

ROOT = Path(__file__).resolve().parents[3]
MARK = "virtrepro"  # the cell metadata's key: {"virtrepro": {"figure": id}}
READING_NOTE = "  # what the figure shows, and the verdicts of the claims it tests"


def variable(id: str) -> str:
    """The name a notebook gives the figure ``id`` drawn: the id as a Python name."""
    return re.sub(r"\W", "_", id)


def sources(id: str) -> list[str]:
    """The sources of figure ``id``'s cells: drawn, read, its numbers shown."""
    name = variable(id)
    return [f'{name} = nb.draw("{id}")\n{name}', f"nb.reading({name}){READING_NOTE}", f"# NBVAL_CHECK_OUTPUT\n{name}.show()"]


def figure_of(cell: dict) -> str | None:
    """The figure a cell is marked with, or None."""
    mark = cell.get("metadata", {}).get(MARK)
    return mark.get("figure") if isinstance(mark, dict) else None


def _new_cell(id: str, k: int, source: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "id": f"figure-{k}-{id}"[:64],
            "metadata": {MARK: {"figure": id}}, "outputs": [], "source": source.splitlines(keepends=True)}


def _cells(id: str, old: list[dict]) -> list[dict]:
    """Figure ``id``'s cells, keeping each of ``old`` (its marked cells, in order) whose source is current."""
    return [old[k] if k < len(old) and "".join(old[k]["source"]) == source else _new_cell(id, k, source)
            for k, source in enumerate(sources(id))]


def unmarked_draws(notebook: dict) -> list[str]:
    """The sources of code cells that draw a figure without the registry's mark."""
    return ["".join(c["source"]) for c in notebook["cells"]
            if c["cell_type"] == "code" and figure_of(c) is None and "nb.draw(" in "".join(c["source"])]


def generated(notebook: dict, ids: list[str]) -> dict:
    """``notebook`` with the figure cells of ``ids`` (the paper's registered figures, in order) as the
    registry makes them (see the module)."""
    cells, out, placed = notebook["cells"], [], []
    for cell in cells:
        id = figure_of(cell)
        if id is None:
            out.append(cell)
        elif id in ids and id not in placed:
            placed.append(id)
            out += _cells(id, [c for c in cells if figure_of(c) == id])
    marked = [i for i, cell in enumerate(out) if figure_of(cell) is not None]
    at = marked[-1] + 1 if marked else len(out)
    out[at:at] = [cell for id in ids if id not in placed for cell in _cells(id, [])]
    return {**notebook, "cells": out}


def text(notebook: dict) -> str:
    """A notebook as Jupyter writes it."""
    return json.dumps(notebook, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtrepro.figures.cells", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a notebook's figure cells are not the registry's")
    parser.add_argument("--notebooks", type=Path, default=ROOT / "notebooks")
    args = parser.parse_args(argv)
    stale = []
    for paper, ids in by_paper().items():
        path = args.notebooks / f"{paper}.ipynb"
        notebook = json.loads(path.read_text())
        for source in unmarked_draws(notebook):
            stale.append(f"{path}: a cell draws a figure the registry did not make: {source.splitlines()[0]}")
        new = text(generated(notebook, ids))
        if new != path.read_text():
            if args.check:
                stale.append(f"{path}: its figure cells are not the registry's: python -m virtrepro.figures.cells")
            else:
                path.write_text(new)
                print(f"wrote {path}")
    for line in stale:
        print(line)
    return 1 if stale else 0


if __name__ == "__main__":
    from ..cli import run as run_cli

    run_cli(main)

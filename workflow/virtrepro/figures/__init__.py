"""Figures as code: one function per figure, registered once with what it draws.

Each paper's module (``walters2008``, ``kumar2013``...) declares its figures with :func:`figure`:
the id (the file name under ``figures/<paper>/``, or ``figures/<testbed>/<paper>/`` for a testbed other than
the committed reference run: :func:`figures_home`), title, caption, the benchmarks it reads and the
claims of ``data/reference/claims.yaml`` it tests (patterns over claim ids). A figure function takes
the tidy table and a :class:`Setting` (the notebook's parameters) and returns a :class:`Drawn`: the
matplotlib figure and the small tables of numbers a reader wants beside it. Everything that lists
figures is derived from :data:`FIGURES`: ``workflow/rules/notebooks.smk`` (the notebooks' outputs and
the report's captions, :func:`write_captions`) and ``tests/test_figures.py`` (each registered figure
is drawn by its notebook). A notebook opens its paper with :class:`virtrepro.figures.reading.Notebook`
and calls ``draw(id)``.

Import order: the analysis layer (results, stats, plotting, claims, the catalogues); nothing below
imports this package.
"""

from __future__ import annotations

from .registry import (FIGURES, REFERENCE_TESTBED, Drawn, Figure, Setting, by_paper, draw, figure, figure_file,  # noqa: F401
                       figures_home, get, write_captions)

from . import walters2008, kumar2013, regola2010, kudryavtsev2012, youseff2006, summary, microbenchmarks  # noqa: E402,F401  (they register)

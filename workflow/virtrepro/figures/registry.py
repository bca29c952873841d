"""The figure registry: :func:`figure` declares a figure, :data:`FIGURES` holds them (see the package)."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from ..platforms.catalog import BASELINE
from ..report import figure_files
# the reference testbed, where a testbed's figures go and the report's captions: paths and text, in
# report.figure_files (the workflow names the notebooks' outputs from there without importing the figures)
from ..report.figure_files import REFERENCE_TESTBED, figures_home  # noqa: F401
from ..report.figure_files import testbed_figure_file as figure_file  # noqa: F401


@dataclass(frozen=True)
class Setting:
    """A notebook's parameters that a figure reads."""

    testbed: str = REFERENCE_TESTBED
    data_dir: str | Path = "data"
    reference_dir: str | Path = "data/reference"
    confidence: float = 0.95
    baseline: str = BASELINE
    margin: float = 0.05
    compare_testbeds: tuple = ()  # other testbeds to set beside this one (the summary's side-by-side figure)


@dataclass(repr=False)
class Drawn:
    """A drawn figure and the numbers a reader wants beside it (name -> table, or a line of text)."""

    fig: object
    numbers: dict = field(default_factory=dict)
    digits: int = 2
    paths: list = field(default_factory=list)
    # what a reader sees, in a sentence or two computed from the numbers drawn (the notebook's reading
    # after the figure; empty: the registered caption says it)
    summary: str = ""
    key: tuple = ()  # (paper, id), set when drawn through the registry
    # a figure without runs (a placeholder) that was not written because the files there are drawn from
    # runs (plotting.save): those files, left as they were
    kept: list = field(default_factory=list)
    # the platforms without runs of its benchmarks and why (common.without_runs_note), noted under it by draw
    without_runs: str = ""

    def text(self, *names: str) -> str:
        parts = []
        for name, shown in self.numbers.items():
            if names and not name.startswith(names):
                continue
            if isinstance(shown, pd.DataFrame):
                index = any(name is not None for name in shown.index.names)
                shown = "(none)" if shown.empty else shown.round(self.digits).to_string(index=index, na_rep="-")
            parts.append(f"{name}:\n{shown}")
        return "\n\n".join(parts)

    def show(self, *names: str) -> None:
        """Print the numbers (a notebook's checked output): all, or those whose name starts with one of ``names``."""
        print(self.text(*names))

    def __repr__(self) -> str:
        if self.paths:
            return "figure " + ", ".join(Path(p).name for p in self.paths)
        if self.kept:
            return f"figure without runs: not written over {', '.join(str(p) for p in self.kept)}, which are drawn from runs"
        return "figure (not written)"

    def _repr_png_(self):
        """A notebook shows the figure itself, embedded in its output (the PNG written to figures/; a
        placeholder that was not written, as drawn)."""
        png = [p for p in self.paths if Path(p).suffix == ".png"]
        if png:
            return Path(png[0]).read_bytes()
        if self.fig is None:
            return None
        import io

        buffer = io.BytesIO()
        self.fig.savefig(buffer, format="png", bbox_inches="tight")
        return buffer.getvalue()


@dataclass(frozen=True)
class Figure:
    paper: str
    id: str  # its file name under figures/<paper>/ (.png and .pdf)
    title: str
    caption: str  # what it shows, for the report
    benchmarks: tuple  # the benchmarks it reads
    claims: tuple  # patterns over claim ids (fnmatch) of the claims it tests
    draw: Callable = field(repr=False, compare=False)

    def claim_ids(self, claims: list[dict]) -> list[str]:
        """The ids of ``claims`` (claims.load_claims) this figure tests."""
        return [c["id"] for c in claims if c["paper"] == self.paper
                and any(fnmatch.fnmatchcase(c["id"], pattern) for pattern in self.claims)]

    def runs(self, table: pd.DataFrame) -> pd.DataFrame:
        """The rows of ``table`` this figure draws from (its benchmarks'); none: the figure is a placeholder,
        the paper's numbers and the reason ours are missing."""
        return table[table["benchmark"].isin(self.benchmarks)] if len(table) else table

    def report_caption(self) -> str:
        return f"{self.title}: {self.caption} Notebook ``{self.paper}``.\n"


# (paper, id) -> Figure, in the order the papers' modules declare them
FIGURES: dict[tuple[str, str], Figure] = {}


def figure(paper: str, id: str, *, title: str, caption: str, benchmarks, claims=()):
    """Register the decorated function as figure ``id`` of ``paper``."""

    def register(draw: Callable) -> Callable:
        if (paper, id) in FIGURES:
            raise ValueError(f"figure {paper}/{id} registered twice")
        FIGURES[(paper, id)] = Figure(paper, id, title, caption, tuple(benchmarks), tuple(claims), draw)
        return draw

    return register


def by_paper() -> dict[str, list[str]]:
    """Each paper's figure ids, in their order."""
    out: dict[str, list[str]] = {}
    for paper, name in FIGURES:
        out.setdefault(paper, []).append(name)
    return out


def get(paper: str, id: str) -> Figure:
    try:
        return FIGURES[(paper, id)]
    except KeyError:
        raise KeyError(f"no figure {id!r} of {paper!r} (registered: {', '.join(by_paper().get(paper, []))})") from None


def draw(paper: str, id: str, table: pd.DataFrame, setting: Setting, figures_dir: str | Path) -> Drawn:
    """Draw figure ``id`` of ``paper`` from ``table`` and save it as figures_dir/<paper>/<id>.png/.pdf
    (``figures_dir``: the testbed's, :func:`figures_home`). A figure with no run of its benchmarks in
    ``table`` is a placeholder, which never replaces a figure drawn from runs (:func:`plotting.save`):
    then nothing is written, and ``Drawn.kept`` names the files left as they were."""
    from ..report import plotting
    from .common import note_below, without_runs_note

    declared = get(paper, id)
    drawn = declared.draw(table, setting)
    drawn.key = (paper, id)
    # the platforms without runs of its benchmarks, and why: under every figure, said once here
    drawn.without_runs = without_runs_note(table, declared.benchmarks, setting.baseline)
    if drawn.without_runs:
        plotting.name_series(drawn.fig)  # as save names and places the legends, so that the note goes below them
        plotting.tidy_legends(drawn.fig)
        note_below(drawn.fig, drawn.without_runs)
    placeholder = declared.runs(table).empty
    drawn.paths = plotting.save(drawn.fig, figures_dir, paper, id, hosts=hosts(declared, table, setting),
                                placeholder=placeholder)
    if not drawn.paths:
        drawn.kept = [p for p in (plotting.figure_file(figures_dir, paper, id, s) for s in plotting.SUFFIXES) if p.exists()]
    return drawn


def hosts(declared: Figure, table: pd.DataFrame, setting: Setting) -> list[str]:
    """The machines (in words) the figure's benchmarks in ``table`` were measured on, each once
    (:func:`virtrepro.results.measured_on`)."""
    from .. import results

    drawn = set(declared.benchmarks) & set(table["benchmark"]) if len(table) else set()
    machines_of = results.measured_on(setting.testbed, setting.data_dir)
    return list(dict.fromkeys(name for benchmark in sorted(drawn) for name in machines_of.get(benchmark, [])))


def write_captions(directory: str | Path, figures_dir: str | Path | None = None) -> dict[tuple[str, str], Path]:
    """Each figure's report caption as <directory>/<paper>-<id>.rst (rewritten only when it changed):
    its registered caption and, where its notebook has written one (``<figures_dir>/<paper>/<id>.reading.md``),
    the reading computed from the data (what it shows, the verdicts of the claims it tests);
    ``figures_dir``: the testbed's (:func:`figures_home`). (:func:`virtrepro.report.figure_files.write_captions`)"""
    return figure_files.write_captions(directory, {key: fig.report_caption() for key, fig in FIGURES.items()}, figures_dir)

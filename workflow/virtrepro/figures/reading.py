"""What every paper notebook does once, said once: check its parameters, load the table, say what the
numbers can carry, draw the paper's registered figures and report its claims."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from ..analysis import claims
from .. import datalayout, results
from ..rawdata import machines
from ..declarations import platform_names
from ..report import plotting
from ..platforms import catalog as platform_catalog
from ..report.notebook import check_parameters, scale_note
from .registry import FIGURES, Drawn, Setting, draw, figures_home, get


# The notebooks' parameters when papermill sets none (a notebook's parameters cell sets each to None):
# the committed reference run; paths relative to notebooks/, where Jupyter and the workflow run them.
DEFAULTS = {
    "testbed": Setting.testbed,  # which testbed's raw logs to read (virtrepro.datalayout)
    "data_dir": "../data",  # where raw/ and tables/ live
    "reference_dir": "../data/reference",  # the papers' published numbers and claims
    "figures_dir": "../figures",  # the reference testbed's figures go to <figures_dir>/<paper>/, another's to <figures_dir>/<testbed>/<paper>/
    "confidence": Setting.confidence,  # level of the confidence intervals
    "baseline": Setting.baseline,  # overheads are relative to this platform
    "margin": Setting.margin,  # equivalence margin of claims without their own threshold
    "compare_testbeds": Setting.compare_testbeds,  # other testbeds beside this one (their tables, same data_dir)
    "main_figures": False,  # True: into <figures_dir>/<paper>/ whatever the testbed (registry.figures_home)
}
# a paper's own defaults over those (Kudryavtsev 2012 gives 97 % Student-t intervals; the summary sets the
# committed check of the fair method, another testbed of the same machine, beside the reference run)
PAPER_DEFAULTS = {"kudryavtsev2012": {"confidence": 0.97}, "summary": {"compare_testbeds": ("fair-quick",)}}


class Notebook:
    """A paper's notebook: ``Notebook("walters2008", testbed=testbed, ...)`` with the papermill parameters
    (None: :data:`DEFAULTS`, or the paper's :data:`PAPER_DEFAULTS`). A wrong parameter stops here (notebook.ParameterError), before any figure
    is written; so does a testbed without raw logs (results.NoRawLogsError, from results.load)."""

    def __init__(self, paper: str, **parameters):
        unknown = set(parameters) - set(DEFAULTS)
        if unknown:
            raise TypeError(f"Notebook: no parameter {', '.join(sorted(unknown))} (known: {', '.join(DEFAULTS)})")
        defaults = {**DEFAULTS, **PAPER_DEFAULTS.get(paper, {})}
        p = {name: default if parameters.get(name) is None else parameters[name] for name, default in defaults.items()}
        if parameters.get("compare_testbeds") is None:  # the default's testbeds where this data directory has them
            p["compare_testbeds"] = tuple(t for t in p["compare_testbeds"] if t != p["testbed"]
                                          and results.has_raw_logs(p["data_dir"], t))
        check_parameters(**p)
        self.paper, self.figures_dir = paper, p["figures_dir"]
        # where this notebook's figures go: <figures_dir>/<testbed>/ unless the testbed is the reference run's
        self.figures_home = figures_home(p["figures_dir"], p["testbed"], p["main_figures"])
        self.setting = Setting(p["testbed"], p["data_dir"], p["reference_dir"], p["confidence"], p["baseline"], p["margin"],
                               tuple(t for t in p["compare_testbeds"] if t != p["testbed"]))
        plotting.style()
        # the tidy table (results.load: built by the workflow's table rule; refused if missing or stale)
        self.table = results.load(p["testbed"], p["data_dir"])
        self.scale = scale_note(self.table)  # also the figures' footer (plotting.DATA_SCALE)
        # benchmark -> the machine its runs name (one: the table refuses a mix; virtrepro.rawdata.machines)
        self.machines = results.measured_on(p["testbed"], p["data_dir"])

    def about(self) -> str:
        """What the notebook's numbers can carry: scale, records, platforms, the platforms the testbed
        could not run with the reason (its platform probe, virtrepro.testbed.availability) and the QEMU
        probe's verdict."""
        table, s = self.table, self.setting
        lines = [self.scale, f"{len(table)} records from {table['source_log'].nunique()} raw logs of testbed {s.testbed!r}",
                 "platforms measured: " + ", ".join(sorted(table["platform"].unique()))]
        # the machines of the benchmarks this notebook's figures draw
        own = {b for (paper, _), fig in FIGURES.items() if paper == self.paper for b in fig.benchmarks}
        lines += machines.in_words((benchmark, name) for benchmark, names in self.machines.items()
                                   if benchmark in own or not own for name in names)
        facts = results.run_facts(s.testbed, s.data_dir)  # the probes, as the table's builder read them
        lines += [f"unavailable on this testbed: {platform_names.label(name)} ({why})"
                  for name, why in facts["unavailable_platforms"].items()]
        qemu = facts["probes"].get(datalayout.QEMU_PROBE)
        if qemu is not None:
            lines.append("QEMU accelerator probe: " + qemu["reason"])
        return "\n".join(lines)

    def view(self, benchmark, metric=None) -> pd.DataFrame:
        """One benchmark's rows of the table, widened (results.view): for a reader's own look."""
        return results.view(self.table, benchmark, metric=metric)

    def draw(self, id: str) -> Drawn:
        """Draw and write the paper's figure ``id`` (virtrepro.figures registry); the returned Drawn shows
        the figure in the notebook (the PNG embedded), its numbers with ``.show()`` and what it says with
        :meth:`reading`."""
        drawn = draw(self.paper, id, self.table, self.setting, self.figures_home)
        plt.close(drawn.fig)
        return drawn

    def reading(self, drawn: Drawn) -> "Reading":
        """What the reader sees in ``drawn`` and the verdicts of the paper's claims it tests, in a few
        sentences computed from the data (shown as text after the figure): the figure's own summary,
        else its registered caption; the data it rests on; one sentence per claim (claims.sentence)."""
        fig = get(*drawn.key)
        measured = fig.runs(self.table)
        lines = [drawn.summary or fig.caption]
        if measured.empty:
            lines.append(f"No runs of {', '.join(fig.benchmarks)} on testbed {self.setting.testbed!r}: "
                         "the figure shows what the paper published, with the reason ours is missing.")
        else:
            order = {name: i for i, name in enumerate(platform_catalog.NAMES)}
            labels = ", ".join(platform_names.label(p) for p in sorted(measured["platform"].unique(), key=lambda p: order.get(p, 99)))
            reps = measured.groupby(["platform", "variant"])["repetition"].nunique()
            counts = f"{reps.min()}" if reps.min() == reps.max() else f"{reps.min()} to {reps.max()}"
            scales = " and ".join(sorted(measured["scale"].dropna().unique())) or "an unrecorded"
            machine = sorted({name for b in fig.benchmarks for name in self.machines.get(b, [])})
            lines.append(f"Data: testbed {self.setting.testbed!r}, {scales} scale, {counts} repetitions a variant; {labels}"
                         + (f"; measured on {' and '.join(machine)}." if machine else ".")
                         + "".join(f" {line}." for line in drawn.without_runs.split("\n") if line))
        tested = fig.claim_ids(claims.load_claims(Path(self.setting.reference_dir) / "claims.yaml"))
        if tested:
            verdicts = self.verdicts()
            verdicts = verdicts[verdicts["id"].isin(tested)]
            lines += [f"- {claims.sentence(row)}" for _, row in verdicts.iterrows()]
        reading = Reading("\n\n".join(lines[:2]) + ("\n\n" + "\n".join(lines[2:]) if lines[2:] else ""))
        png = next((Path(p) for p in drawn.paths if Path(p).suffix == ".png"), None)
        if png is not None:  # beside the figure, for the report's caption (registry.write_captions)
            png.with_suffix(".reading.md").write_text(reading + "\n")
        return reading

    def answer(self) -> "Reading":
        """The summary's answer first: what the data can carry (claims per paper decided, not comparable,
        ..., and why, from the verdicts' table: figures.summary.opening), then per subsystem the papers'
        overheads then and ours now, with the verdicts of the claims on it (figures.summary.answer)."""
        from . import summary

        return Reading(summary.opening(self.setting) + "\n" + summary.answer(self.table, self.setting, self.verdicts("")))

    def published(self, columns: list[str], width: int = 60) -> str:
        """The paper's published numbers (data/reference/<paper>.csv) that the text states."""
        published = pd.read_csv(Path(self.setting.reference_dir) / f"{self.paper}.csv")
        return published[published["available"]][columns].to_string(index=False, max_colwidth=width)

    def verdicts(self, paper: str | None = None) -> pd.DataFrame:
        """claims.evaluate on this testbed for the claims of ``paper`` (this notebook's; "" for all papers)."""
        s, paper = self.setting, self.paper if paper is None else paper
        cache = self.__dict__.setdefault("_verdicts", {})  # every figure's reading asks again: evaluated once
        if paper not in cache:
            found = claims.load_claims(Path(s.reference_dir) / "claims.yaml")
            cache[paper] = claims.evaluate([c for c in found if not paper or c["paper"] == paper], self.table,
                                           level=s.confidence, margin=s.margin)
        return cache[paper].copy()

    def claims(self) -> str:
        """The paper's claims with their verdicts (claims.report)."""
        return claims.report(self.verdicts())


class Reading(str):
    """Text that a notebook shows as Markdown (a figure's reading)."""

    def _repr_markdown_(self) -> str:
        return str(self)

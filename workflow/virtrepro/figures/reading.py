"""What every paper notebook does once, said once: check its parameters, load the table, say what the
numbers can carry, draw the paper's registered figures and report its claims."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from .. import claims, plotting, results
from ..notebook import check_parameters, scale_note
from .registry import Drawn, Setting, draw


# The notebooks' parameters when papermill sets none (a notebook's parameters cell sets each to None):
# the committed reference run; paths relative to notebooks/, where Jupyter and the workflow run them.
DEFAULTS = {
    "testbed": Setting.testbed,  # which testbed's raw logs to read (data/raw/<testbed>/)
    "data_dir": "../data",  # where raw/ and tables/ live
    "reference_dir": "../data/reference",  # the papers' published numbers and claims
    "figures_dir": "../figures",  # figures are written to <figures_dir>/<paper>/
    "confidence": Setting.confidence,  # level of the confidence intervals
    "baseline": Setting.baseline,  # overheads are relative to this platform
    "margin": Setting.margin,  # equivalence margin of claims without their own threshold
}
# a paper's own defaults over those (Kudryavtsev 2012 gives 97 % Student-t intervals)
PAPER_DEFAULTS = {"kudryavtsev2012": {"confidence": 0.97}}


class Notebook:
    """A paper's notebook: ``Notebook("walters2008", testbed=testbed, ...)`` with the papermill parameters
    (None: :data:`DEFAULTS`, or the paper's :data:`PAPER_DEFAULTS`). A wrong parameter stops here (notebook.ParameterError), before any figure
    is written."""

    def __init__(self, paper: str, **parameters):
        unknown = set(parameters) - set(DEFAULTS)
        if unknown:
            raise TypeError(f"Notebook: no parameter {', '.join(sorted(unknown))} (known: {', '.join(DEFAULTS)})")
        defaults = {**DEFAULTS, **PAPER_DEFAULTS.get(paper, {})}
        p = {name: default if parameters.get(name) is None else parameters[name] for name, default in defaults.items()}
        check_parameters(**p)
        self.paper, self.figures_dir = paper, p["figures_dir"]
        self.setting = Setting(p["testbed"], p["data_dir"], p["reference_dir"], p["confidence"], p["baseline"], p["margin"])
        plotting.style()
        # raw logs -> tidy table (results.load: cached in data/tables/, rebuilt when a log changes)
        self.table = results.load(p["testbed"], p["data_dir"])
        self.scale = scale_note(self.table)  # also the figures' footer (plotting.DATA_SCALE)

    def about(self) -> str:
        """What the notebook's numbers can carry: scale, records, platforms and the QEMU probe's verdict."""
        table, s = self.table, self.setting
        lines = [self.scale, f"{len(table)} records from {table['source_log'].nunique()} raw logs of testbed {s.testbed!r}",
                 "platforms measured: " + ", ".join(sorted(table["platform"].unique()))]
        probe = Path(s.data_dir) / "raw" / s.testbed / "probes" / "qemu-accel.json"
        if probe.exists():
            lines.append("QEMU accelerator probe: " + json.loads(probe.read_text())["reason"])
        return "\n".join(lines)

    def view(self, benchmark, metric=None) -> pd.DataFrame:
        """One benchmark's rows of the table, widened (results.view): for a reader's own look."""
        return results.view(self.table, benchmark, metric=metric)

    def draw(self, id: str) -> Drawn:
        """Draw and write the paper's figure ``id`` (virtrepro.figures registry); the returned Drawn shows
        the figure in the notebook and its numbers with ``.show()``."""
        drawn = draw(self.paper, id, self.table, self.setting, self.figures_dir)
        plt.close(drawn.fig)
        print("written:", ", ".join(Path(p).name for p in drawn.paths))
        return drawn

    def published(self, columns: list[str], width: int = 60) -> str:
        """The paper's published numbers (data/reference/<paper>.csv) that the text states."""
        published = pd.read_csv(Path(self.setting.reference_dir) / f"{self.paper}.csv")
        return published[published["available"]][columns].to_string(index=False, max_colwidth=width)

    def verdicts(self, paper: str | None = None) -> pd.DataFrame:
        """claims.evaluate on this testbed for the claims of ``paper`` (this notebook's; "" for all papers)."""
        s, paper = self.setting, self.paper if paper is None else paper
        found = claims.load_claims(Path(s.reference_dir) / "claims.yaml")
        return claims.evaluate([c for c in found if not paper or c["paper"] == paper], self.table, level=s.confidence,
                               margin=s.margin)

    def claims(self) -> str:
        """The paper's claims with their verdicts (claims.report)."""
        return claims.report(self.verdicts())

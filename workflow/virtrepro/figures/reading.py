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


class Notebook:
    """A paper's notebook: ``Notebook("walters2008", testbed=testbed, ...)`` with the papermill parameters.
    A wrong parameter stops here (notebook.ParameterError), before any figure is written."""

    def __init__(self, paper: str, *, testbed, data_dir, reference_dir, figures_dir, confidence, baseline, margin=None):
        check_parameters(testbed=testbed, data_dir=data_dir, reference_dir=reference_dir, figures_dir=figures_dir,
                         confidence=confidence, baseline=baseline, margin=margin)
        self.paper, self.figures_dir = paper, figures_dir
        kw = {} if margin is None else {"margin": margin}
        self.setting = Setting(testbed, data_dir, reference_dir, confidence, baseline, **kw)
        plotting.style()
        # raw logs -> tidy table (results.load: cached in data/tables/, rebuilt when a log changes)
        self.table = results.load(testbed, data_dir)
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

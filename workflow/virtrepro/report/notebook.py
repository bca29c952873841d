"""What each paper notebook checks first: its parameters (papermill's ``-p``).

A wrong parameter (``confidence=1.5``, a baseline that is no platform, a data directory that
is not there) stops the notebook in its first code cell with one line naming the parameter,
before any figure is written; :func:`virtrepro.results.load` then refuses a testbed without raw
logs (a misspelt name: it names the testbeds that have data) and a table that lacks a column,
naming the file.
"""

from __future__ import annotations

import re
from numbers import Real
from pathlib import Path

from ..errors import VirtreproError

TESTBED_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")  # as the configuration's schema has it


class ParameterError(VirtreproError):
    """A notebook parameter has a value the notebook cannot use."""


def _fraction(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, Real) or not 0 < value < 1:
        raise ParameterError(f"notebook parameter {name!r}: {value!r} is not a number between 0 and 1 (exclusive)")


def check_parameters(*, testbed, data_dir, reference_dir, figures_dir, confidence, baseline, margin=None,
                     compare_testbeds=(), main_figures=False) -> None:
    """Raise ParameterError naming the first parameter a notebook cannot use (the testbed's own data
    is checked by :func:`virtrepro.results.load`, the compared testbeds' here)."""
    from ..platforms.catalog import NAMES as PLATFORMS
    from ..results import NoRawLogsError, require_raw_logs

    if not isinstance(testbed, str) or not TESTBED_NAME.match(testbed):
        raise ParameterError(f"notebook parameter 'testbed': {testbed!r} is not a testbed name")
    for name, value in (("data_dir", data_dir), ("reference_dir", reference_dir)):
        if not isinstance(value, (str, Path)) or not Path(value).is_dir():
            raise ParameterError(f"notebook parameter {name!r}: {value!r} is not a directory")
    if not isinstance(figures_dir, (str, Path)) or not str(figures_dir):
        raise ParameterError(f"notebook parameter 'figures_dir': {figures_dir!r} is not a directory name")
    if not isinstance(main_figures, bool):
        raise ParameterError(f"notebook parameter 'main_figures': {main_figures!r} is not True or False")
    _fraction("confidence", confidence)
    if margin is not None:
        _fraction("margin", margin)
    if baseline not in PLATFORMS:
        raise ParameterError(f"notebook parameter 'baseline': {baseline!r} is not a platform ({', '.join(PLATFORMS)})")
    if isinstance(compare_testbeds, str) or not all(isinstance(t, str) and TESTBED_NAME.match(t) for t in compare_testbeds):
        raise ParameterError(f"notebook parameter 'compare_testbeds': {compare_testbeds!r} is not a list of testbed names")
    for other in compare_testbeds:
        try:
            require_raw_logs(data_dir, other)
        except NoRawLogsError as error:
            raise ParameterError(f"notebook parameter 'compare_testbeds': {error}") from None


# what each scale's numbers can carry (config/config.yaml, scales)
SCALE_MEANING = {
    "quick": "a smoke check (2-3 repetitions of short runs, small files): it shows that every platform, "
             "benchmark and figure works, not what a platform costs; no conclusion rests on it",
    "reference": "repetitions chosen by the data, at least a minimum, until each 95 % interval is narrow enough "
                 "or a cap (config/config.yaml; each variant's rule, the width reached and why it stopped are "
                 "in the table), disks and memory measured where the papers measured them",
    "paper": "the papers' own sizes and repetition counts",
}


def scale_note(table) -> str:
    """One line for the top of a notebook: at which scale its data were measured, and what that
    scale's numbers can carry (from the table's ``scale`` column, the sidecars' record)."""
    if table is None or len(table) == 0 or "scale" not in table.columns:
        return "scale of the data: no runs yet"
    scales = [s for s in dict.fromkeys(table["scale"].dropna()) if s]
    if not scales:
        return "scale of the data: not recorded"
    parts = [f"{s} ({SCALE_MEANING.get(s, 'see config/config.yaml')})" for s in scales]
    from . import plotting

    testbeds = [t for t in dict.fromkeys(table["testbed"].dropna()) if t] if "testbed" in table.columns else []
    plotting.DATA_SCALE = "".join(f"testbed {t!r}, " for t in testbeds[:1] if len(testbeds) == 1) + " and ".join(
        f"{s} scale" for s in scales) + (" (a smoke check: no verdict rests on it)" if scales == ["quick"] else "")
    return "scale of the data: " + "; ".join(parts)

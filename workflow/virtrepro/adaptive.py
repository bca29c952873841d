"""Repetitions chosen by the data: a variant's stopping rule and its decision.

A scale may give a benchmark ``repetitions: {min: 5, max: 30, rel_half_width: 0.02, confidence:
0.95, metrics: [...]}`` instead of a count. The variant is measured ``min`` times; then it keeps
adding repetitions until the Student-t interval of the mean (:func:`stats.mean_ci`, at
``confidence``) of every deciding series has a half-width of at most ``rel_half_width`` of its
mean (``width reached``), or it has ``max`` repetitions (``cap reached``), as the Phoronix Test
Suite's standard-deviation rule and Hoefler and Belli (SC15) do.

The deciding series are the records of the rule's ``metrics`` (all of a run's metrics when it
names none): one series per metric and position of the record among that metric's records in a
log (IOZone's log holds one ``write`` record per file size: each size is a series), so that no
label of any parser needs to be known here. Every series must reach the width.

A constant series (every value the same at the printed resolution) has a half-width of 0; a
series of fewer than 2 values, or with a mean of 0, never reaches a relative width.

This module is pure: the measurement (:mod:`virtrepro.measure`) and the table
(:mod:`virtrepro.results`) decide from the same parsed records with :func:`decide`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

WIDTH_REACHED = "width reached"
CAP_REACHED = "cap reached"
CONTINUE = "continue"  # neither yet: another repetition is due
FIXED = "fixed count"  # a variant without a rule (the table's stop reason)


@dataclass(frozen=True)
class RepetitionRule:
    """When a variant has enough repetitions (see the module's doc)."""

    min: int
    max: int
    rel_half_width: float
    confidence: float = 0.95
    metrics: tuple[str, ...] = ()

    def __post_init__(self):
        if not 1 <= self.min <= self.max:
            raise ValueError(f"repetitions: min {self.min} must be at least 1 and at most max {self.max}")

    @classmethod
    def from_config(cls, value, translated: bool = False) -> RepetitionRule | None:
        """The rule of a scale's ``repetitions`` value; None for a plain count. ``translated``: the
        platform runs guest code by binary translation, and the value's ``max_translated`` (when
        given) is its cap."""
        if not isinstance(value, dict):
            return None
        cap = value.get("max_translated", value["max"]) if translated else value["max"]
        return cls(int(value["min"]), int(cap), float(value["rel_half_width"]),
                   float(value.get("confidence", 0.95)), tuple(value.get("metrics") or ()))

    def as_dict(self) -> dict:
        return {"min": self.min, "max": self.max, "rel_half_width": self.rel_half_width,
                "confidence": self.confidence, "metrics": list(self.metrics)}

    def label(self) -> str:
        """The rule in a file name (the marker's ``reps-<label>``): ``5to30-w0.02-c0.95``."""
        return f"{self.min}to{self.max}-w{self.rel_half_width:g}-c{self.confidence:g}"


@dataclass(frozen=True)
class Decision:
    """What the rule says about ``n`` repetitions: ``reason`` is one of WIDTH_REACHED,
    CAP_REACHED, CONTINUE; ``rel_half_width`` the widest deciding series' relative half-width
    (NaN: none has an interval), ``widths`` every series'."""

    n: int
    reason: str
    rel_half_width: float
    widths: dict = field(default_factory=dict)

    @property
    def stop(self) -> bool:
        return self.reason != CONTINUE

    def as_dict(self, rule: RepetitionRule) -> dict:
        return {"rule": rule.as_dict(), "n": self.n, "stop_reason": self.reason,
                "rel_half_width": _finite_or_none(self.rel_half_width),
                "widths": {key: _finite_or_none(value) for key, value in self.widths.items()}}


def _finite_or_none(value: float):
    return None if math.isnan(value) or math.isinf(value) else round(float(value), 6)


def relative_half_width(values, confidence: float = 0.95) -> float:
    """Half the width of the t-interval of the mean, relative to the mean's magnitude: 0 for a
    constant sample of 2 or more values, NaN for fewer than 2 values, inf for a mean of 0."""
    from . import stats  # statsmodels and scipy: imported where a decision is made, not with the plan

    data = [float(v) for v in values]
    if len(data) < 2:
        return math.nan
    mean, low, high = stats.mean_ci(data, confidence)
    if math.isnan(low):  # constant: no spread at the printed resolution
        return 0.0
    if mean == 0:
        return math.inf
    return (high - low) / 2 / abs(mean)


def series(logs: list[list[dict]], metrics: tuple[str, ...] = ()) -> dict[str, list[float]]:
    """The deciding series of a variant's logs (each a list of parsed records with ``metric`` and
    ``value``, in repetition order): ``<metric>`` for a metric with one record a log, else
    ``<metric>#<position>``."""
    found: dict[tuple[str, int], list[float]] = {}
    for records in logs:
        seen: dict[str, int] = {}
        for record in records:
            metric = record["metric"]
            if metrics and metric not in metrics:
                continue
            position = seen.get(metric, 0)
            seen[metric] = position + 1
            found.setdefault((metric, position), []).append(float(record["value"]))
    several = {metric for metric, position in found if position > 0}
    return {(f"{metric}#{position}" if metric in several else metric): values
            for (metric, position), values in found.items()}


def decide(rule: RepetitionRule, logs: list[list[dict]]) -> Decision:
    """The rule's decision on a variant's complete logs so far (see :func:`series`). ValueError
    when none of the metrics the rule names is in the logs (a misspelt metric never converges;
    a variant may have only some of them: isolation's CPU victim has no disk bandwidth)."""
    found = series(logs, rule.metrics)
    if logs and not found:
        raise ValueError(f"none of the repetition rule's metrics ({', '.join(rule.metrics)}) is in the "
                         f"{len(logs)} logs")
    widths = {key: relative_half_width(values, rule.confidence) for key, values in found.items()}
    worst = max((math.inf if math.isnan(w) else w for w in widths.values()), default=math.nan)
    n = len(logs)
    if n >= rule.min and worst <= rule.rel_half_width:
        reason = WIDTH_REACHED
    elif n >= rule.max:
        reason = CAP_REACHED
    else:
        reason = CONTINUE
    return Decision(n, reason, worst, widths)

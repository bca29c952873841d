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

A rule that serves the verdict (``target: claims`` in the configuration; ``interval`` ``signed-rank``)
decides on the interval the verdicts use instead (docs/methodology.md, "Repetitions chosen by the
data"): a series stops when the exact one-sample signed-rank interval of its log values
(:func:`stats.hl_location_ci`, at ``confidence``) has a half-width on the log scale of at most its
target. The target of a metric comes from the tightest threshold m of the claims that select the
variant (:func:`virtrepro.planning.targets.claim_targets`): (m / 2) / sqrt(2), since the ratio's interval
combines two such samples; a metric no claim uses keeps ``rel_half_width`` as its target. Such a
rule never stops below :func:`verdict_min_n` repetitions (the fewest at which every interval the
verdicts use exists: 6 at 95 %), and it looks at widths only, never at an estimate.

Where rounds exist it judges the paired interval instead (:func:`decide_rounds`, one decision for a
job's platforms): a job measures a variant on all its platforms in rounds, and the verdicts compare a
platform with native paired by round (the interval of the per-round log ratio, in which a drift
common to a round cancels). A platform other than native whose logs and native's carry rounds then
stops on each claim series when the exact signed-rank interval of its per-round log ratios to native
(:func:`paired_half_width`: :func:`stats.hl_paired_ci`, the verdicts' function, over the rounds both
have, :func:`stats.by_round`) has a log half-width of at most m / 2 (:attr:`Target.paired_half_width`:
the verdict's own interval, no sqrt(2)); its series of metrics no claim uses keep their own
one-sample interval and ``rel_half_width``. Native is the pairs' other half: it stops only when every
platform paired with it has stopped, or at its cap. The fallback is the one-sample rule above,
exactly as it was: a job without native, native alone, a metric with no claim target, logs without
rounds (the committed reference data, measured before rounds). The paired rule too never stops
below :func:`verdict_min_n` and looks at widths only.

This module is pure: the measurement (:mod:`virtrepro.measurement.variant`, through
:func:`virtrepro.planning.plan.job_decisions`), the plan's estimate (:func:`virtrepro.planning.plan.rule_stops`,
the same) and the table (:mod:`virtrepro.results`) decide from the same parsed records and rounds
with :func:`decide_rounds`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..platforms.catalog import BASELINE

WIDTH_REACHED = "width reached"
CAP_REACHED = "cap reached"
CONTINUE = "continue"  # neither yet: another repetition is due
FIXED = "fixed count"  # a variant without a rule (the table's stop reason)


T_INTERVAL = "t"  # the Student-t interval of the mean, relative to the mean (the first rule)
SIGNED_RANK = "signed-rank"  # the signed-rank interval of the log values, against the claims' targets


def verdict_min_n(confidence: float = 0.95) -> int:
    """The fewest repetitions at which every interval the verdicts and this rule use exists at
    ``confidence``: the one-sample signed-rank interval (6 at 95 %), the Mann-Whitney interval of a
    ratio (4 a side) and the bootstrap of an aggregate (5)."""
    from ..analysis import stats

    return max(stats.signed_rank_min_n(confidence), stats.rank_sum_min_n(confidence), stats.MIN_N_BOOTSTRAP)


@dataclass(frozen=True)
class Target:
    """A metric's target half-width on the log scale (``half_width``), from the tightest claim
    threshold ``margin`` of the claims ``claims`` that select the variant."""

    metric: str
    margin: float
    claims: tuple[str, ...]

    @property
    def half_width(self) -> float:
        """The target of one platform's own sample: the ratio's unpaired interval combines two."""
        return self.margin / 2 / math.sqrt(2)

    @property
    def paired_half_width(self) -> float:
        """The target of the paired interval of the per-round log ratios: m / 2."""
        return self.margin / 2

    def as_dict(self) -> dict:
        return {"metric": self.metric, "margin": self.margin, "half_width": round(self.half_width, 6),
                "claims": list(self.claims)}


@dataclass(frozen=True)
class RepetitionRule:
    """When a variant has enough repetitions (see the module's doc)."""

    min: int
    max: int
    rel_half_width: float
    confidence: float = 0.95
    metrics: tuple[str, ...] = ()
    interval: str = T_INTERVAL
    targets: tuple[Target, ...] = ()

    def __post_init__(self):
        if self.interval not in (T_INTERVAL, SIGNED_RANK):
            raise ValueError(f"repetitions: interval {self.interval!r} is neither {T_INTERVAL!r} nor {SIGNED_RANK!r}")
        if self.interval == SIGNED_RANK and self.max < verdict_min_n(self.confidence):
            raise ValueError(f"repetitions: max {self.max} is below {verdict_min_n(self.confidence)}, the fewest "
                             f"repetitions at which the verdicts' intervals exist at confidence {self.confidence:g}")
        if not 1 <= self.min <= self.max:
            raise ValueError(f"repetitions: min {self.min} must be at least 1 and at most max {self.max}")

    @classmethod
    def from_config(cls, value, translated: bool = False, targets: tuple[Target, ...] = ()) -> RepetitionRule | None:
        """The rule of a scale's ``repetitions`` value (or of one a sidecar recorded); None for a plain
        count. ``translated``: the platform runs guest code by binary translation, and the value's
        ``max_translated`` (when given) is its cap. ``target: claims`` with no ``targets`` (a variant no
        claim selects: only a figure shows it) is capped at ``max_unclaimed`` when given. ``target: claims`` (or a recorded ``interval``
        ``signed-rank``) gives the rule that serves the verdict, with ``targets`` (or the recorded
        ones), its minimum raised to :func:`verdict_min_n`."""
        if not isinstance(value, dict):
            return None
        cap = value.get("max_translated", value["max"]) if translated else value["max"]
        confidence = float(value.get("confidence", 0.95))
        interval = value.get("interval", SIGNED_RANK if value.get("target") == "claims" else T_INTERVAL)
        low = int(value["min"])
        if interval == SIGNED_RANK:
            low = max(low, verdict_min_n(confidence))
            targets = targets or tuple(Target(t["metric"], float(t["margin"]), tuple(t["claims"]))
                                       for t in value.get("targets") or ())
            if not targets and value.get("max_unclaimed") is not None:  # no claim's verdict rests on it: a figure's
                cap = min(int(cap), int(value["max_unclaimed"]))
        return cls(low, int(cap), float(value["rel_half_width"]), confidence, tuple(value.get("metrics") or ()),
                   interval, targets if interval == SIGNED_RANK else ())

    def as_dict(self) -> dict:
        facts = {"min": self.min, "max": self.max, "rel_half_width": self.rel_half_width,
                 "confidence": self.confidence, "metrics": list(self.metrics)}
        if self.interval != T_INTERVAL:  # the first rule's record stays as it was
            facts.update(interval=self.interval, targets=[t.as_dict() for t in self.targets])
        return facts

    def label(self) -> str:
        """The rule in a file name (the marker's ``reps-<label>``): ``5to30-w0.02-c0.95``; the rule
        that serves the verdict adds ``-sr`` and the tightest claim threshold (``-sr-m0.05``)."""
        text = f"{self.min}to{self.max}-w{self.rel_half_width:g}-c{self.confidence:g}"
        if self.interval == SIGNED_RANK:
            text += "-sr" + (f"-m{min(t.margin for t in self.targets):g}" if self.targets else "")
        return text

    def target(self, key: str) -> float:
        """The largest half-width a series (``<metric>`` or ``<metric>#<position>``) may have to stop:
        its metric's claim target, else ``rel_half_width``."""
        metric = key.split("#", 1)[0]
        return next((t.half_width for t in self.targets if t.metric == metric), self.rel_half_width)

    def deciding_metrics(self) -> tuple[str, ...]:
        """The metrics whose series decide: the named ones and those a claim sets a target for (all
        of a run's metrics when none is named)."""
        if not self.metrics:
            return ()
        return tuple(dict.fromkeys([*self.metrics, *(t.metric for t in self.targets)]))


@dataclass(frozen=True)
class Decision:
    """What the rule says about ``n`` repetitions: ``reason`` is one of WIDTH_REACHED,
    CAP_REACHED, CONTINUE; ``rel_half_width`` the widest deciding series' relative half-width
    (NaN: none has an interval), ``widths`` every series'. Decided over a job's platforms
    (:func:`decide_rounds`): ``paired`` names the other side of the paired intervals (a platform:
    the baseline; the baseline: the platforms paired with it; empty: decided alone), and
    ``waiting`` the paired platforms the baseline still waits for."""

    n: int
    reason: str
    rel_half_width: float
    widths: dict = field(default_factory=dict)
    paired: tuple[str, ...] = ()
    waiting: tuple[str, ...] = ()
    baseline: bool = False  # the baseline's decision: the pairs' other half

    @property
    def stop(self) -> bool:
        return self.reason != CONTINUE

    def as_dict(self, rule: RepetitionRule) -> dict:
        facts = {"rule": rule.as_dict(), "n": self.n, "stop_reason": self.reason,
                 "rel_half_width": _finite_or_none(self.rel_half_width),
                 "widths": {key: _finite_or_none(value) for key, value in self.widths.items()}}
        if self.paired:  # a decision alone is recorded as it was
            facts["paired"] = list(self.paired)
            if self.baseline:
                facts["waiting"] = list(self.waiting)
        return facts

    def how(self) -> str:
        """How it was decided, for a progress line: ``alone``, ``paired by round with native``, or
        the baseline's ``other half of the pairs of lxc, podman (waits for lxc)``."""
        if not self.paired:
            return "alone"
        if not self.baseline:
            return f"paired by round with {', '.join(self.paired)}"
        waits = f"waits for {', '.join(self.waiting)}" if self.waiting else "all stopped"
        return f"other half of the pairs of {', '.join(self.paired)} ({waits})"


def _finite_or_none(value: float):
    return None if math.isnan(value) or math.isinf(value) else round(float(value), 6)


def log_half_width(values, confidence: float = 0.95) -> float:
    """Half the width, on the log scale, of the signed-rank interval of the log values
    (:func:`stats.hl_location_ci`): NaN where it has no interval (too few values, or a value of 0 or
    below); a constant sample's width is its printed resolution's alone."""
    from ..analysis import stats

    ci = stats.hl_location_ci(values, confidence, describe=False)  # the width alone
    if ci.method == "none":
        return math.nan
    return (math.log(ci.high) - math.log(ci.low)) / 2


def relative_half_width(values, confidence: float = 0.95) -> float:
    """Half the width of the t-interval of the mean, relative to the mean's magnitude: 0 for a
    constant sample of 2 or more values, NaN for fewer than 2 values, inf for a mean of 0."""
    from ..analysis import stats  # statsmodels and scipy: imported where a decision is made, not with the plan

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
    return {key: [value for _, value in found] for key, found in _indexed_series(logs, metrics).items()}


def _indexed_series(logs: list[list[dict]], metrics: tuple[str, ...] = ()) -> dict[str, list[tuple[int, float]]]:
    """:func:`series`, each value with the index of its log (to find the log's round)."""
    found: dict[tuple[str, int], list[tuple[int, float]]] = {}
    for index, records in enumerate(logs):
        seen: dict[str, int] = {}
        for record in records:
            metric = record["metric"]
            if metrics and metric not in metrics:
                continue
            position = seen.get(metric, 0)
            seen[metric] = position + 1
            found.setdefault((metric, position), []).append((index, float(record["value"])))
    several = {metric for metric, position in found if position > 0}
    return {(f"{metric}#{position}" if metric in several else metric): values
            for (metric, position), values in found.items()}


def decide(rule: RepetitionRule, logs: list[list[dict]]) -> Decision:
    """The rule's decision on a variant's complete logs so far (see :func:`series`). ValueError
    when none of the metrics the rule names is in the logs (a misspelt metric never converges;
    a variant may have only some of them: isolation's CPU victim has no disk bandwidth).

    Each series is held to its own target (:meth:`RepetitionRule.target`). The decision uses the
    widths alone, never an estimate: shifting a series leaves its decision as it was."""
    metrics = rule.deciding_metrics()
    found = series(logs, metrics)
    if logs and not found:
        raise ValueError(f"none of the repetition rule's metrics ({', '.join(metrics)}) is in the "
                         f"{len(logs)} logs")
    if rule.interval == SIGNED_RANK:
        widths = {key: log_half_width(values, rule.confidence) for key, values in found.items()}
        low = max(rule.min, verdict_min_n(rule.confidence))
    else:
        widths = {key: relative_half_width(values, rule.confidence) for key, values in found.items()}
        low = rule.min
    worst = max((math.inf if math.isnan(w) else w for w in widths.values()), default=math.nan)
    reached = bool(widths) and all(not math.isnan(w) and w <= rule.target(key) for key, w in widths.items())
    n = len(logs)
    if n >= low and reached:
        reason = WIDTH_REACHED
    elif n >= rule.max:
        reason = CAP_REACHED
    else:
        reason = CONTINUE
    return Decision(n, reason, worst, widths)


def paired_half_width(platform, baseline, confidence: float = 0.95) -> float:
    """Half the width, on the log scale, of the exact signed-rank interval of the per-round log
    ratios ``platform[i] / baseline[i]`` (:func:`stats.hl_paired_ci`, the verdicts' interval of a
    ratio paired by round); NaN where it has none (fewer than 6 rounds at 95 %, a value of 0 or below)."""
    from ..analysis import stats

    ci = stats.hl_paired_ci(platform, baseline, confidence, describe=False)  # the width alone
    if ci.method == "none":
        return math.nan
    return (math.log(ci.high) - math.log(ci.low)) / 2


def _rounds_of(rounds, count: int) -> list:
    """One round a log (None: measured before rounds, or not given)."""
    given = list(rounds or ())[:count]
    return given + [None] * (count - len(given))


def _worst(widths: dict) -> float:
    return max((math.inf if math.isnan(w) else w for w in widths.values()), default=math.nan)


def _decide_paired(rule: RepetitionRule, logs: list[list[dict]], rounds, base_logs: list[list[dict]],
                   base_rounds, baseline: str) -> Decision | None:
    """A platform's decision on the paired intervals (see :func:`decide_rounds`); None where none of
    its claim series pairs with the baseline's by round (it is decided alone)."""
    from ..analysis import stats

    if rule.interval != SIGNED_RANK or not rule.targets or not base_logs:
        return None
    metrics = rule.deciding_metrics()
    found = _indexed_series(logs, metrics)
    base = _indexed_series(base_logs, metrics)
    rounds, base_rounds = _rounds_of(rounds, len(logs)), _rounds_of(base_rounds, len(base_logs))
    widths, targets, paired = {}, {}, False
    for key, values in found.items():
        claim = next((t for t in rule.targets if t.metric == key.split("#", 1)[0]), None)
        matched = None
        if claim is not None and base.get(key) and None not in rounds and None not in base_rounds:
            matched = stats.by_round([v for _, v in values], [rounds[i] for i, _ in values],
                                     [v for _, v in base[key]], [base_rounds[i] for i, _ in base[key]])
        if matched is None:  # no claim, or no rounds in common: its own sample, as alone
            widths[key] = log_half_width([v for _, v in values], rule.confidence)
            targets[key] = rule.target(key)
        else:
            paired = True
            widths[key] = paired_half_width(matched[0], matched[1], rule.confidence)
            targets[key] = claim.paired_half_width
    if not paired:
        return None
    reached = all(not math.isnan(w) and w <= targets[key] for key, w in widths.items())
    n = len(logs)
    if n >= max(rule.min, verdict_min_n(rule.confidence)) and reached:
        reason = WIDTH_REACHED
    elif n >= rule.max:
        reason = CAP_REACHED
    else:
        reason = CONTINUE
    return Decision(n, reason, _worst(widths), widths, (baseline,))


def _decide_baseline(rule: RepetitionRule, logs: list[list[dict]], pairs: dict[str, Decision]) -> Decision:
    """The baseline's decision while platforms pair with it: its claim series are the pairs' other
    half, so it stops when every paired platform has stopped (and its series no pair covers reach
    their own targets alone), or at its cap. ``width reached`` when every pair reached its width,
    ``cap reached`` when a pair stopped at its cap (or the baseline is at its own); its widths are
    the widest of its pairs' for the series they cover, its own for the rest."""
    alone = decide(rule, logs)
    covered: dict[str, float] = {}
    for decision in pairs.values():
        for key, width in decision.widths.items():
            if any(t.metric == key.split("#", 1)[0] for t in rule.targets):
                covered[key] = max(covered.get(key, -math.inf), math.inf if math.isnan(width) else width)
    widths = {**alone.widths, **covered}
    own = all(key in covered or (not math.isnan(w) and w <= rule.target(key)) for key, w in alone.widths.items())
    waiting = tuple(name for name, decision in pairs.items() if not decision.stop)
    n = len(logs)
    if n >= max(rule.min, verdict_min_n(rule.confidence)) and own and not waiting:
        # its width is its pairs': reached when every pair reached it, else a pair's cap stopped it
        widths_reached = all(decision.reason == WIDTH_REACHED for decision in pairs.values())
        reason = WIDTH_REACHED if widths_reached else CAP_REACHED
    elif n >= rule.max:
        reason = CAP_REACHED
    else:
        reason = CONTINUE
    return Decision(n, reason, _worst(widths), widths, tuple(pairs), waiting, baseline=True)


def decide_rounds(rules: dict[str, RepetitionRule | None], logs: dict[str, list[list[dict]]],
                  rounds: dict[str, list] | None = None, baseline: str = BASELINE) -> dict[str, Decision]:
    """The decision for every platform of one measurement job that has a rule (``rules``: the
    platform's rule, None for a fixed count; ``logs``: its parsed logs in repetition order, the
    baseline's too when it has no rule; ``rounds``: the round of each log, None for a log measured
    before rounds). The measurement after each round, the plan's estimate and the table decide with it.

    A platform other than the ``baseline`` under the signed-rank rule with claim targets, whose logs
    and the baseline's carry rounds, is judged on the interval its verdict uses: for each claim
    series, the exact signed-rank interval of the per-round log ratios to the baseline
    (:func:`paired_half_width`, over the rounds both have, :func:`stats.by_round`), against the
    claim's m / 2 (:attr:`Target.paired_half_width`); its other series keep their own sample and
    target. The baseline is then the pairs' other half: it stops when every paired platform has
    stopped (see :func:`_decide_baseline`), or at its cap. Everything else (no baseline in the job,
    no claim target, logs without rounds) is :func:`decide` alone, unchanged. Never below
    :func:`verdict_min_n`; widths only, never an estimate. ValueError as :func:`decide`."""
    rounds = rounds or {}
    decisions: dict[str, Decision] = {}
    for platform, rule in rules.items():
        if rule is None:
            continue
        try:
            alone = decide(rule, logs[platform])  # its errors, and its decision where nothing pairs
        except ValueError as error:
            raise ValueError(f"{platform}: {error}") from None
        paired = None
        if platform != baseline and baseline in logs:
            paired = _decide_paired(rule, logs[platform], rounds.get(platform), logs[baseline],
                                    rounds.get(baseline), baseline)
        decisions[platform] = paired or alone
    pairs = {platform: decision for platform, decision in decisions.items() if decision.paired}
    if pairs and rules.get(baseline) is not None:
        decisions[baseline] = _decide_baseline(rules[baseline], logs[baseline], pairs)
    return decisions

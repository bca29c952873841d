"""Summary statistics over repetitions and platform-vs-baseline comparisons.

statsmodels and scipy underneath. Two families:

**The verdicts' intervals** (:mod:`virtrepro.claims`), chosen by what is compared, never by a test on
the same data (a normality pre-test decides nothing: its conditional coverage is worse than either
method's, Rochon, Kieser and Kopp 2012; Shapiro-Wilk p-values are still recorded in ``RatioCI.shapiro``):

* a ratio platform / baseline of two samples: :func:`hl_ratio_ci`, Hodges-Lehmann on log values
  with the exact Mann-Whitney (Moses) interval, distribution-free under a scale shift; it reports
  its ACHIEVED confidence (97.1 % at 4 + 4, 96.8 % at 5 + 5, 95.0-96 % from 10 + 10 for a nominal
  95 %) and gives no interval (``too_few``) where even the widest falls short (3 + 3: 90 %);
* paired rounds: :func:`hl_paired_ci`, the signed-rank counterpart (96.9 % at 6 rounds, none at 5);
* one sample's median: :func:`median_order_ci`, order statistics (96.9 % at n = 6, none at 5);
* one sample's location on the log scale: :func:`hl_location_ci`, the one-sample signed-rank interval
  of the log values (none below :func:`signed_rank_min_n`, 6 at 95 %): the repetition rule's
  per-sample proxy for the ratio's width (:mod:`virtrepro.adaptive`);
* a product of ratios (a ratio of ratios from four samples, a geometric mean over variants):
  :func:`shift_bootstrap_ci`, each sample resampled on its own, percentile tails stretched by
  sqrt(n / (n - 1)); coverage 0.96-0.97 pooled over 5 to 30 values a sample and four noise shapes
  (``bench/interval_coverage.py`` prints the table; ``tests/test_rank_intervals.py`` asserts it);
* values printed at a resolution (ties) widen the rank and bootstrap intervals by each value's
  rounding bound on the log scale, so their coverage holds for the true values behind the print
  (the comment block before :func:`printed_resolution`).

**The figures' and summaries' intervals** use the same methods, so a whisker and a verdict never
disagree by construction: ``overhead`` and ``compare_to_baseline`` (a platform against a baseline,
one Holm family per call) give the Hodges-Lehmann ratio with its exact Mann-Whitney interval
(:func:`hl_ratio_ci`), ``location_ci``/``summarize`` a sample's median with its order-statistic
interval (:func:`median_order_ci`), ``paired_rounds`` the signed-rank interval of paired rounds
(:func:`hl_paired_ci`), ``drift_between_parts`` a part's ratio to the other's (:func:`hl_ratio_ci`).
Each says its achieved confidence in ``ci_note``; where n is too small for any interval at the level
there is none (``ci_method`` ``none``), never a guess. ``mean_ci`` (a Student-t interval of a mean,
normal theory, said so) serves the repetition rule's width (:mod:`virtrepro.adaptive`) only.
Shapiro-Wilk p-values are reported as a description and decide nothing.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import DescrStatsW

N_RESAMPLES = 9999
CONSTANT_NOTE = "all samples are constant: no information about their variance, no interval and no test"


def _clean(values) -> np.ndarray:
    """The finite values (NaN dropped) as a flat float array."""
    data = np.asarray(values, dtype=float).ravel()
    return data[~np.isnan(data)]


def _constant(x: np.ndarray) -> bool:
    return x.size >= 2 and bool(np.ptp(x) == 0)


def shapiro_p(values) -> float:
    """Shapiro-Wilk p-value of the non-NaN values; NaN below 3 values or for a constant sample."""
    x = _clean(values)
    if x.size < 3 or _constant(x):
        return float("nan")
    return float(scipy_stats.shapiro(x).pvalue)


def seed_for(seed: int, *labels) -> list[int]:
    """A generator seed of its own for one group or variant: ``[seed, crc32(label), ...]``, so that
    adding a variant never changes another's resamples."""
    return [int(seed)] + [zlib.crc32(str(label).encode()) for label in labels]


def mean_ci(values, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and two-sided Student-t confidence interval of the mean (assumes normality).

    NaN values are removed first. With fewer than 2 values, or a constant sample (no information
    about the variance), the interval is undefined (NaN, NaN); it is never faked.
    """
    data = _clean(values)
    if data.size == 0:
        raise ValueError("no values")
    mean = float(data.mean())
    if data.size < 2 or _constant(data):
        return mean, float("nan"), float("nan")
    low, high = DescrStatsW(data).tconfint_mean(alpha=1 - level)
    return mean, float(low), float(high)


def median_order_ci(values, level: float = 0.95) -> tuple[float, float, float]:
    """Distribution-free interval for the median from order statistics: ``[x_(k), x_(n+1-k)]`` with
    the largest ``k`` whose coverage ``1 - 2 * P(Binomial(n, 1/2) <= k - 1)`` is at least ``level``.

    Returns ``(low, high, coverage)``; ``(nan, nan, best possible coverage)`` when n is too small
    for the level (``[min, max]`` covers with ``1 - 2 / 2^n``: 93.75 % at n = 5).
    """
    x = np.sort(_clean(values))
    n = x.size
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    k = np.arange(1, n // 2 + 1)
    coverage = 1 - 2 * scipy_stats.binom.cdf(k - 1, n, 0.5)
    ok = k[coverage >= level]
    if ok.size == 0:
        return float("nan"), float("nan"), float(coverage[0]) if coverage.size else 0.0
    best = int(ok.max())
    return float(x[best - 1]), float(x[n - best]), float(coverage[best - 1])


def location_ci(values, level: float = 0.95) -> dict:
    """n, mean, median, std and the median's distribution-free interval (:func:`median_order_ci`:
    order statistics, exact coverage for any continuous distribution, stated in ``ci_note``; none
    below 6 values at 95 %). ``ci_of`` names the estimand (``median``), ``shapiro_p`` is a description."""
    x = _clean(values)
    nan = float("nan")
    out = {
        "n": int(x.size), "mean": float(x.mean()) if x.size else nan,
        "std": float(x.std(ddof=1)) if x.size > 1 else nan, "median": float(np.median(x)) if x.size else nan,
        "shapiro_p": shapiro_p(x), "ci_method": "none", "ci_of": "", "ci_low": nan, "ci_high": nan, "ci_note": "",
    }  # fmt: skip
    if x.size == 0:
        out["ci_note"] = "no values"
        return out
    low, high, coverage = median_order_ci(x, level)
    if low == low:
        out.update(ci_method="median-order", ci_of="median", ci_low=low, ci_high=high,
                   ci_note=f"order-statistic interval of the median, achieved confidence {coverage:.1%}")  # fmt: skip
    else:
        out["ci_note"] = f"no {level:.0%} interval of the median at n = {x.size} (at most {coverage:.1%})"
    return out


def summarize(frame: pd.DataFrame, by: list[str], level: float = 0.95, value: str = "value") -> pd.DataFrame:
    """Per group, over the group's non-NaN values: n, mean, std, median, the Shapiro-Wilk p-value
    (a description) and the median's interval (:func:`location_ci`): columns ``ci_low``, ``ci_high``,
    ``ci_method``, ``ci_of``, ``ci_note``, ``level``."""
    rows = []
    for key, group in frame.groupby(by, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key)), **location_ci(group[value], level), "level": level})
    columns = [*by, "n", "mean", "std", "median", "shapiro_p", "ci_method", "ci_of", "ci_low", "ci_high", "ci_note", "level"]
    return pd.DataFrame(rows, columns=columns)


# ---------------------------------------------------------------------------
# Comparing a platform with a baseline
# ---------------------------------------------------------------------------
#
# Conventions shared by everything below:
#
# - "baseline" is the reference sample (e.g. native), "platform" the sample
#   under test (e.g. a VM or container).
# - ratio = the Hodges-Lehmann ratio platform / baseline (hl_ratio_ci: exp of the median of all
#   log x_i - log y_j), with its exact Mann-Whitney interval.
# - overhead_percent is positive when the platform is WORSE than the baseline,
#   whatever the metric's direction:
#       higher is better (throughput, bandwidth, FLOP/s): (1 - ratio) * 100
#       lower is better  (times, latencies):              (ratio - 1) * 100
#   The mapping assumes a metric with positive values (a positive baseline
#   mean); for metrics that can be negative the ratio is still reported but
#   the percentage has no "overhead" meaning.
# - Differences and test statistics are oriented platform minus baseline.
# - NaN values are removed before any computation; an interval or p-value that
#   cannot be computed is NaN, never a made-up number.
# - alpha = 1 - level everywhere.

def _ratio_to_overhead(ratio: float, higher_is_better: bool) -> float:
    return (1.0 - ratio) * 100.0 if higher_is_better else (ratio - 1.0) * 100.0


def _overhead_interval(low: float, high: float, higher_is_better: bool) -> tuple[float, float]:
    """Map a ratio interval to an overhead-percent interval (kept ordered low <= high)."""
    a = _ratio_to_overhead(low, higher_is_better)
    b = _ratio_to_overhead(high, higher_is_better)
    if np.isnan(a) or np.isnan(b):
        return float("nan"), float("nan")
    return (min(a, b), max(a, b))


@dataclass(frozen=True)
class RatioCI:
    """A ratio (two samples', paired rounds', or a product of such ratios), its interval at ``level``
    and one-sided p-values.

    ``method``: ``hl-moses``, ``hl-signed-rank``, ``bootstrap-hl`` or ``none`` (no interval; ``note``
    says why).
    :meth:`p_value` inverts the same method, so a bound of the two-sided interval is where
    the one-sided p-value is ``(1 - level) / 2``.
    """

    estimate: float
    low: float
    high: float
    method: str
    note: str
    df: float
    level: float
    unbounded: bool = False
    shapiro: tuple = ()
    _p: Callable[[float, str], float] | None = field(default=None, repr=False, compare=False)
    achieved: float = float("nan")  # the interval's achieved confidence where it is exact (the rank intervals)
    too_few: bool = False  # no interval because the samples are too small for the level

    def p_value(self, r0: float, alternative: str) -> float:
        """One-sided p-value against ``R <= r0`` (``alternative="greater"``) or ``R >= r0``
        (``"less"``); NaN when there is no interval."""
        if alternative not in ("greater", "less"):
            raise ValueError("alternative is 'greater' or 'less'")
        return float("nan") if self._p is None else float(self._p(r0, alternative))


def _t_p(stat: float, df: float, alternative: str) -> float:
    if np.isnan(stat):
        return float("nan")
    return float(scipy_stats.t.sf(stat, df) if alternative == "greater" else scipy_stats.t.cdf(stat, df))


def overhead(baseline_values, platform_values, higher_is_better: bool, level: float = 0.95) -> dict:
    """The ratio platform / baseline (:func:`hl_ratio_ci`: Hodges-Lehmann with the exact Mann-Whitney
    interval), the overhead in percent and their intervals.

    ``overhead_percent`` is positive when the platform is worse than the baseline: ``(1 - ratio) *
    100`` if ``higher_is_better`` (throughput), else ``(ratio - 1) * 100`` (times, latencies), so
    +10 means "10 % worse" for both kinds of metric. ``overhead_ci_low <= overhead_ci_high`` always.
    No interval (``method`` ``none``, ``too_few``) where the sizes allow none at ``level`` (3 + 3 at
    95 %), and none for a value that is not positive; ``ci_note`` says why, or the achieved confidence.
    Returns a dict with keys ``n_baseline, n_platform, mean_baseline, mean_platform, ratio,
    ratio_ci_low, ratio_ci_high, overhead_percent, overhead_ci_low, overhead_ci_high, ci_note, level,
    method, achieved, too_few, shapiro_p_baseline, shapiro_p_platform, higher_is_better`` and ``ci``
    (the :class:`RatioCI`, for p-values)."""
    base, plat = _clean(baseline_values), _clean(platform_values)
    if base.size == 0 or plat.size == 0:
        raise ValueError("both samples need at least one non-NaN value")
    ci = hl_ratio_ci(plat, base, level)
    o_low, o_high = _overhead_interval(ci.low, ci.high, higher_is_better)
    return {
        "n_baseline": int(base.size), "n_platform": int(plat.size),
        "mean_baseline": float(base.mean()), "mean_platform": float(plat.mean()),
        "ratio": ci.estimate, "ratio_ci_low": ci.low, "ratio_ci_high": ci.high,
        "overhead_percent": _ratio_to_overhead(ci.estimate, higher_is_better),
        "overhead_ci_low": o_low, "overhead_ci_high": o_high, "ci_note": ci.note, "level": level,
        "method": ci.method, "achieved": ci.achieved, "too_few": ci.too_few,
        "shapiro_p_platform": ci.shapiro[0] if ci.shapiro else float("nan"),
        "shapiro_p_baseline": ci.shapiro[1] if ci.shapiro else float("nan"),
        "higher_is_better": bool(higher_is_better), "ci": ci,
    }  # fmt: skip


def rank_p(ci: RatioCI, r0: float = 1.0) -> float:
    """Two-sided p-value of the ratio ``r0`` from a rank interval's inversion (twice the smaller
    one-sided p, at most 1); NaN without an interval."""
    p = 2.0 * min(ci.p_value(r0, "greater"), ci.p_value(r0, "less"))
    return min(1.0, p) if p == p else float("nan")


def equivalence_p(ci: RatioCI, margin: float) -> float:
    """Two one-sided tests of the ratio against ``1 - margin`` and ``1 + margin`` (the larger of the
    two one-sided p-values: below alpha when the 1 - 2 alpha interval lies inside the margin)."""
    p = (ci.p_value(1.0 + margin, "less"), ci.p_value(1.0 - margin, "greater"))
    return max(p) if p == p and all(x == x for x in p) else float("nan")


def holm(p_values) -> np.ndarray:
    """Holm step-down adjusted p-values, in the order given, over ONE family: the p-values given.

    Uses ``statsmodels.stats.multitest.multipletests(method="holm")``. NaN
    p-values (no test) are left out of the family (so they do not count towards the
    number of tests) and stay NaN in the output. The families this project uses: a figure or
    table's comparisons (:func:`compare_to_baseline`, one call per figure) and a claim's
    comparisons across its variants (:mod:`virtrepro.claims`).
    """
    p = np.asarray(p_values, dtype=float).ravel()
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        out[ok] = multipletests(p[ok], method="holm")[1]
    return out


def outliers(values, rule: str = "none", k: float | None = None) -> np.ndarray:
    """Boolean mask, True for samples flagged as outliers. Nothing is removed.

    Rules
    -----
    ``"none"``: nothing is flagged.

    ``"iqr"`` (Tukey fences, default ``k = 1.5``): flag ``x < Q1 - k*IQR`` or
    ``x > Q3 + k*IQR``; ``IQR = scipy.stats.iqr`` and the quartiles by ``numpy.quantile``, both
    with linear interpolation (Hyndman-Fan type 7, as R's default).

    ``"mad"`` (default ``k = 3.5``): flag ``|x - median| > k * MAD`` with
    ``MAD = scipy.stats.median_abs_deviation(x, scale="normal")`` (``1.4826 * median|x - median|``);
    with ``k = 3.5`` this is the Iglewicz-Hoaglin modified z-score rule.

    Both comparisons are strict. With a zero spread (IQR or MAD = 0) every
    value away from the quartiles / median is flagged. NaN entries are never
    flagged and do not enter the quartiles or median.
    """
    data = np.asarray(values, dtype=float).ravel()
    mask = np.zeros(data.shape, dtype=bool)
    if rule in (None, "none"):
        return mask
    finite = ~np.isnan(data)
    x = data[finite]
    if rule not in ("iqr", "mad"):
        raise ValueError(f"unknown outlier rule {rule!r}; use 'none', 'iqr' or 'mad'")
    if x.size == 0:
        return mask
    if rule == "iqr":
        k = 1.5 if k is None else k
        q1, q3 = np.quantile(x, [0.25, 0.75])
        spread = scipy_stats.iqr(x)
        flagged = (x < q1 - k * spread) | (x > q3 + k * spread)
    else:
        k = 3.5 if k is None else k
        flagged = np.abs(x - np.median(x)) > k * scipy_stats.median_abs_deviation(x, scale="normal")
    mask[finite] = flagged
    return mask


VERDICTS = ("equivalent", "worse", "better", "inconclusive")


def compare_to_baseline(
    frame: pd.DataFrame,
    baseline: str,
    value: str = "value",
    by: list[str] | None = None,
    *,
    higher_is_better: bool | str,
    level: float = 0.95,
    margin: float = 0.05,
    platform: str = "platform",
    outlier_rule: str = "none",
    outlier_k: float | None = None,
) -> pd.DataFrame:
    """Compare every non-baseline platform with ``baseline``, per group: ONE Holm family.

    The rows one call returns are one family of tests for Holm's correction: call it once per
    figure (or table) with all the comparisons that figure shows, so a comparison has the same
    adjusted p-value wherever that figure is drawn (``holm_family_size`` says how many tests the
    family had). Claims have their own families (:mod:`virtrepro.claims`).

    For each group of ``by`` (all rows form one group when ``by`` is empty or None) and each
    platform (column ``platform``) other than ``baseline``, one row with:

    - the ``by`` columns, ``platform``, ``baseline``;
    - ``n_baseline, n_platform, mean_baseline, mean_platform`` (after NaN and outlier removal) and
      ``dropped_baseline, dropped_platform``: how many values the outlier rule removed (0 when
      ``outlier_rule="none"``, the default; the rule is applied to each sample on its own);
    - ``ratio, ratio_ci_low, ratio_ci_high, overhead_percent, overhead_ci_low, overhead_ci_high,
      ci_method, ci_note, achieved, shapiro_p_baseline, shapiro_p_platform`` from :func:`overhead`
      (the Hodges-Lehmann ratio and its exact Mann-Whitney interval; overhead > 0 means worse);
    - ``p_value``: the two-sided Mann-Whitney p of a ratio of 1 (:func:`rank_p`) and ``holm_p``, its
      Holm adjustment over all rows of this call (rows without a p are left out), ``holm_family_size``;
    - ``tost_p``: the equivalence p for a ratio within ``1 +- margin`` (:func:`equivalence_p`; not
      multiplicity-adjusted);
    - ``significant``: ``holm_p < alpha``;
    - ``verdict``, with ``alpha = 1 - level``: ``"equivalent"`` if ``tost_p < alpha`` (the only way
      to a "no relevant overhead" statement; a difference can be equivalent and significant), else
      ``"worse"`` / ``"better"`` if ``holm_p < alpha`` (in the direction of the ratio), else
      ``"inconclusive"`` (also with no interval at this n). A non-significant test alone never
      yields "equivalent".

    ``higher_is_better`` is a bool for the whole frame, or the name of a boolean column (constant
    within each group and platform pair). Groups where a side has no values still produce rows
    (verdict ``"inconclusive"``, ``ci_note`` says why).
    """
    if outlier_rule not in (None, "none", "iqr", "mad"):
        raise ValueError(f"unknown outlier rule {outlier_rule!r}")
    by = list(by or [])
    alpha = 1.0 - level
    data = frame[frame[platform].notna()]
    groups = data.groupby(by, sort=True, dropna=False) if by else [((), data)]

    def sample(group: pd.DataFrame, name) -> tuple[np.ndarray, int]:
        values = _clean(group.loc[group[platform] == name, value])
        flagged = outliers(values, outlier_rule, outlier_k)
        return values[~flagged], int(flagged.sum())

    rows = []
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        base, base_dropped = sample(group, baseline)
        for other in sorted(p for p in group[platform].unique() if p != baseline):
            plat, plat_dropped = sample(group, other)
            hib = _direction(pd.concat([group[group[platform] == baseline], group[group[platform] == other]]),
                             higher_is_better)
            row = {**dict(zip(by, key)), platform: other, "baseline": baseline, "dropped_baseline": base_dropped,
                   "dropped_platform": plat_dropped, "higher_is_better": hib}  # fmt: skip
            row.update(_compared(base, plat, hib, level, margin))
            rows.append(row)
    columns = [
        *by, platform, "baseline", "n_baseline", "n_platform", "dropped_baseline", "dropped_platform",
        "mean_baseline", "mean_platform", "higher_is_better", "ratio", "ratio_ci_low", "ratio_ci_high",
        "overhead_percent", "overhead_ci_low", "overhead_ci_high", "ci_method", "ci_note", "achieved",
        "shapiro_p_baseline", "shapiro_p_platform", "p_value", "holm_p", "holm_family_size", "tost_p",
        "significant", "verdict", "level", "margin", "outlier_rule",
    ]  # fmt: skip
    out = pd.DataFrame(rows, columns=[c for c in columns if c not in _DERIVED])
    out["holm_p"] = holm(out["p_value"].to_numpy(float)) if len(out) else []
    out["holm_family_size"] = int(out["p_value"].notna().sum())
    out["significant"] = out["holm_p"] < alpha
    out["verdict"] = [
        "equivalent" if tost < alpha else ("better" if ratio_better else "worse") if sig else "inconclusive"
        for tost, sig, ratio_better in zip(out["tost_p"], out["significant"], out["overhead_percent"] < 0)
    ]
    out["level"], out["margin"], out["outlier_rule"] = level, margin, outlier_rule or "none"
    return out[columns]


_DERIVED = ("holm_p", "holm_family_size", "significant", "verdict", "level", "margin", "outlier_rule")


def _direction(rows: pd.DataFrame, higher_is_better: bool | str) -> bool:
    if isinstance(higher_is_better, str):
        flags = rows[higher_is_better].dropna().unique()
        if len(flags) != 1:
            raise ValueError(f"column {higher_is_better!r} must hold one value per group, got {list(flags)}")
        return bool(flags[0])
    return bool(higher_is_better)


def _compared(base: np.ndarray, plat: np.ndarray, hib: bool, level: float, margin: float) -> dict:
    """One comparison's columns of :func:`compare_to_baseline` (NaN, with the reason, without values)."""
    nan = float("nan")
    if not (base.size and plat.size):
        return {"n_baseline": int(base.size), "n_platform": int(plat.size),
                "mean_baseline": float(base.mean()) if base.size else nan,
                "mean_platform": float(plat.mean()) if plat.size else nan,
                "ratio": nan, "ratio_ci_low": nan, "ratio_ci_high": nan, "overhead_percent": nan,
                "overhead_ci_low": nan, "overhead_ci_high": nan, "ci_method": "none", "achieved": nan,
                "ci_note": "no values for the baseline" if not base.size else "no values for the platform",
                "shapiro_p_baseline": shapiro_p(base), "shapiro_p_platform": shapiro_p(plat),
                "p_value": nan, "tost_p": nan}  # fmt: skip
    res = overhead(base, plat, hib, level)
    ci = res.pop("ci")
    res["ci_method"] = res.pop("method")
    for key in ("level", "too_few", "higher_is_better"):
        res.pop(key)
    return {**res, "p_value": rank_p(ci), "tost_p": equivalence_p(ci, margin)}


def drift_between_parts(table: pd.DataFrame, platform: str, level: float = 0.95) -> pd.DataFrame:
    """A platform's second part against its first, per benchmark, variant and metric.

    The workflow measures a variant's repetitions in two parts, in the order A B C D D C B A
    over (platform, part) (:func:`virtrepro.config.run_sequence`): for the first platform (the
    baseline) the two parts are the furthest apart in time, so a drift of the host over the run
    shows there first. One row per group with both parts: ``n_part1, n_part2, mean_part1,
    mean_part2`` and ``ratio`` (part 2 / part 1, :func:`hl_ratio_ci`) with its interval (NaN where
    the data carry none at this n, with ``ci_note``). Logs measured before the parts existed (``part`` empty)
    are left out; an empty frame when none has both parts."""
    columns = ["benchmark", "variant", "metric", "n_part1", "n_part2", "mean_part1", "mean_part2",
               "ratio", "ratio_ci_low", "ratio_ci_high", "ci_method", "ci_note"]
    if "part" not in table.columns:
        return pd.DataFrame(columns=columns)
    rows = []
    data = table[(table["platform"] == platform) & table["part"].notna()]
    for (benchmark, variant, metric), group in data.groupby(["benchmark", "variant", "metric"], sort=True):
        first = group.loc[group["part"] == 1, "value"].to_numpy(dtype=float)
        second = group.loc[group["part"] == 2, "value"].to_numpy(dtype=float)
        if first.size == 0 or second.size == 0 or np.nanmean(first) <= 0:
            continue
        interval = hl_ratio_ci(second, first, level)
        rows.append({"benchmark": benchmark, "variant": variant, "metric": metric,
                     "n_part1": int(np.isfinite(first).sum()), "n_part2": int(np.isfinite(second).sum()),
                     "mean_part1": float(np.nanmean(first)), "mean_part2": float(np.nanmean(second)),
                     "ratio": interval.estimate, "ratio_ci_low": interval.low, "ratio_ci_high": interval.high,
                     "ci_method": interval.method, "ci_note": interval.note})
    return pd.DataFrame(rows, columns=columns)


def paired_rounds(table: pd.DataFrame, baseline: str, level: float = 0.95) -> pd.DataFrame:
    """Platforms against ``baseline`` measured in alternating rounds (:mod:`virtrepro.interleave`).

    Repetition r of every platform ran back to back (round r), so the ratio platform / baseline of
    one round is a paired comparison made seconds apart: a drift of the host slower than a round
    cancels in it. Per platform, benchmark, variant, metric and labels, over the rounds both have:
    ``rounds``, ``above`` (rounds whose ratio exceeds 1), ``ratio`` (the Hodges-Lehmann estimate of
    the rounds' log ratios) and its exact signed-rank interval (:func:`hl_paired_ci`; none below 6
    rounds at 95 %, ``ci_note`` says why or its achieved confidence). Ratios are of the metric's
    values, whatever its direction. Rounds with a value that is not positive are left out (no log)."""
    columns = ["platform", "benchmark", "variant", "metric", "labels", "rounds", "above", "ratio",
               "ratio_ci_low", "ratio_ci_high", "ci_method", "ci_note"]
    keys = ["benchmark", "variant", "metric", "labels"]
    rounds = table.groupby([*keys, "repetition", "platform"])["value"].mean().unstack("platform")
    if baseline not in rounds.columns:
        return pd.DataFrame(columns=columns)
    rows = []
    for platform in sorted(set(rounds.columns) - {baseline}):
        for key, group in rounds[[platform, baseline]].groupby(level=keys, sort=True):
            both = group[(group[platform] > 0) & (group[baseline] > 0)]
            if both.empty:
                continue
            ci = hl_paired_ci(both[platform].to_numpy(float), both[baseline].to_numpy(float), level)
            rows.append({"platform": platform, **dict(zip(keys, key)), "rounds": len(both),
                         "above": int((both[platform] > both[baseline]).sum()), "ratio": ci.estimate,
                         "ratio_ci_low": ci.low, "ratio_ci_high": ci.high, "ci_method": ci.method, "ci_note": ci.note})
    return pd.DataFrame(rows, columns=columns)


# ---------------------------------------------------------------------------
# Trends over an ordered parameter, and spreads (claims' ``trend`` and ``spread`` kinds)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """An estimate with its two-sided interval at ``level`` and Student-t one-sided p-values
    (``p_value(s0, "greater")`` against ``estimate <= s0``); no interval when ``se`` is 0 or NaN."""

    estimate: float
    se: float
    df: float
    level: float
    note: str

    @property
    def tested(self) -> bool:
        return bool(np.isfinite(self.se) and self.se > 0 and self.df >= 1)

    @property
    def low(self) -> float:
        return self.estimate - scipy_stats.t.ppf(0.5 + self.level / 2, self.df) * self.se if self.tested else float("nan")

    @property
    def high(self) -> float:
        return self.estimate + scipy_stats.t.ppf(0.5 + self.level / 2, self.df) * self.se if self.tested else float("nan")

    def p_value(self, s0: float, alternative: str) -> float:
        if alternative not in ("greater", "less"):
            raise ValueError("alternative is 'greater' or 'less'")
        return _t_p((self.estimate - s0) / self.se, self.df, alternative) if self.tested else float("nan")


def log_slope(platform: dict, baseline: dict | None = None, level: float = 0.95) -> Estimate:
    """The slope of log values over the steps of an ordered parameter, by ordinary least squares.

    ``platform`` maps ``(variant, step)`` to a sample (``step``: 0, 1, ... in the parameter's order).
    Without ``baseline``: ``log y = a_variant + b step``. With ``baseline`` (same keys): the slope of
    the log ratio platform / baseline, ``log y = mu_(variant, step) + platform (a_variant + b step)``,
    every cell's baseline mean free, so ``b`` is how the ratio changes per step. One slope ``b`` is
    common to the variants given (pass one variant for its own slope). Assumes normal errors with one
    variance on the log scale (says so in ``note``); every value must be positive.
    """
    rows, cells = [], sorted(platform, key=str)
    if baseline is not None:
        cells = [c for c in cells if c in baseline]
    variants = sorted({v for v, _ in cells}, key=str)
    cell_ix = {c: i for i, c in enumerate(cells)}
    var_ix = {v: i for i, v in enumerate(variants)}
    n_cols = (len(cells) if baseline is not None else 0) + len(variants) + 1
    for side, samples in (("platform", platform), ("baseline", baseline)):
        if samples is None:
            continue
        for cell in cells:
            for value in _clean(samples[cell]):
                x = np.zeros(n_cols)
                if baseline is not None:
                    x[cell_ix[cell]] = 1.0
                if side == "platform":
                    offset = len(cells) if baseline is not None else 0
                    x[offset + var_ix[cell[0]]] = 1.0
                    x[-1] = float(cell[1])
                rows.append((x, value))
    nan = float("nan")
    note = "least squares on log values (assumes normal errors with one variance on the log scale)"
    if not rows or any(v <= 0 for _, v in rows):
        return Estimate(nan, nan, nan, level, "a value is 0 or negative: no slope on the log scale")
    design = np.array([x for x, _ in rows])
    y = np.log(np.array([v for _, v in rows]))
    if len({c[1] for c in cells}) < 2:
        return Estimate(nan, nan, nan, level, "fewer than two steps of the parameter")
    if np.linalg.matrix_rank(design) < n_cols:
        return Estimate(nan, nan, nan, level, "the steps run do not identify a slope")
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    df = len(y) - n_cols
    every = [_clean(side[c]) for side in (platform, baseline) if side is not None for c in cells]
    if all(x.size < 2 or _constant(x) for x in every):
        return Estimate(float(coef[-1]), nan, float(df), level, CONSTANT_NOTE)
    if df < 1:
        return Estimate(float(coef[-1]), nan, nan, level, "no residual degrees of freedom: no interval")
    sigma2 = float(np.sum((y - design @ coef) ** 2) / df)
    se = float(np.sqrt(sigma2 * np.linalg.inv(design.T @ design)[-1, -1]))
    return Estimate(float(coef[-1]), se, float(df), level, note)


def spread_difference(platform: list, baseline: list, level: float = 0.95) -> Estimate:
    """Brown-Forsythe comparison of the relative spread of two sides: the difference (platform -
    baseline) of the mean absolute deviation of log values from their sample's median, with a pooled
    Student-t interval (the two-sample t of Brown-Forsythe: its square is ``scipy.stats.levene(...,
    center="median")``'s F for two samples). Each side is a list of samples (variants): deviations
    are taken within each sample, then pooled. About 0.05 means 5 % more scatter around the median."""
    nan = float("nan")

    def deviations(samples):
        out = []
        for sample in samples:
            x = _clean(sample)
            if x.size < 3:
                continue  # two values are equally far from their median: no information on spread
            if np.any(x <= 0):
                raise ValueError("spread on the log scale needs positive values")
            logs = np.log(x)
            out.append(np.abs(logs - np.median(logs)))
        return np.concatenate(out) if out else np.array([])

    zp, zb = deviations(platform), deviations(baseline)
    if zp.size < 3 or zb.size < 3:
        return Estimate(nan, nan, nan, level, "fewer than 3 values a sample: no spread test")
    diff = float(zp.mean() - zb.mean())
    df = zp.size + zb.size - 2
    pooled = ((zp.size - 1) * zp.var(ddof=1) + (zb.size - 1) * zb.var(ddof=1)) / df
    se = float(np.sqrt(pooled * (1 / zp.size + 1 / zb.size)))
    note = "Brown-Forsythe: t on absolute deviations of log values from the median"
    return Estimate(diff, se, float(df), level, CONSTANT_NOTE if se == 0 else note)


# ---------------------------------------------------------------------------
# Distribution-free intervals for the verdicts (no normality pre-test)
# ---------------------------------------------------------------------------
#
# A ratio platform / baseline is a shift of log values: log x = log y + delta under a scale model
# (the platform multiplies every run by r = exp(delta)). Hodges-Lehmann estimates delta by the median
# of the m*n differences log x_i - log y_j; the exact Mann-Whitney (Moses) interval is the k-th
# smallest to the k-th largest difference, k from the exact null distribution of U, so it covers
# delta with the ACHIEVED confidence 1 - 2 P(U <= k - 1) for any continuous distribution (96.8 % at
# 5 + 5 for a nominal 95 %; none at 3 + 3, where even [min, max] has 90 %). Paired rounds: the
# Walsh averages of the log differences and the signed-rank distribution. Values printed at a
# resolution h are the true values rounded, each log value within e = -log(1 - h / 2x) of the
# true one, so every difference within E = max e_x + max e_y and the interval computed from the
# printed values, widened by E on each side, contains the interval of the true values: its
# coverage is at least the achieved confidence, ties or not (the note gives E when it matters).
# p-values invert the same interval: the one-sided p against r0 is below (1 - level) / 2 exactly
# when the bound excludes r0. A product of several shifts (a ratio of ratios from four samples, a
# geometric mean over variants) has no exact rank interval: a bootstrap that resamples every
# sample on its own, the statistic recomputed from the resamples' Hodges-Lehmann shifts, and the
# percentile interval at tails stretched by sqrt(n / (n - 1)) on the normal scale (n the smallest
# sample: a resample's spread is too small by about that factor), whose coverage
# tests/test_rank_intervals.py shows by simulation (0.96 pooled from 5 values a sample).

MIN_N_BOOTSTRAP = 5  # the bootstrap's coverage is shown from 5 values a sample (tests/test_stats.py)
N_RESAMPLES_SHIFT = 4000


def printed_resolution(values) -> float:
    """The resolution the values were printed at: ``10**-d`` with ``d`` the most decimals any value has
    in its shortest printed form (``[1.88, 1.9]`` -> 0.01, ``[2701.0]`` -> 1); at most 15 decimals."""
    decimals = 0
    for v in _clean(values):
        text = np.format_float_positional(abs(float(v)), unique=True, trim="-")
        decimals = max(decimals, len(text.partition(".")[2]))
    return 10.0 ** -min(decimals, 15)


def _log_rounding(x: np.ndarray) -> np.ndarray:
    """How far each log value of ``x`` may lie from the log of the true value rounded to it (at most)."""
    half = printed_resolution(x) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > half, -np.log1p(-half / np.maximum(x, half)), np.inf)


@lru_cache(maxsize=None)
def rank_sum_cdf(m: int, n: int) -> np.ndarray:
    """``P(U <= u)`` for u = 0..m*n, U the Mann-Whitney statistic of m against n untied values under
    the null (exact: counts of the arrangements, ``c(i, j, u) = c(i - 1, j, u - j) + c(i, j - 1, u)``)."""
    rows = [np.ones(1) for _ in range(n + 1)]  # i = 0: one arrangement with U = 0 for every j
    for i in range(1, m + 1):
        new = [np.ones(1)]
        for j in range(1, n + 1):
            counts = np.zeros(i * j + 1)
            counts[: len(new[j - 1])] += new[j - 1]
            counts[j : j + len(rows[j])] += rows[j]
            new.append(counts)
        rows = new
    counts = rows[n]
    return np.cumsum(counts) / counts.sum()


@lru_cache(maxsize=None)
def signed_rank_cdf(n: int) -> np.ndarray:
    """``P(T <= t)`` for t = 0..n(n+1)/2, T the Wilcoxon signed-rank statistic of n untied, non-zero
    differences under the null (exact: subset sums of 1..n)."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1
    for r in range(1, n + 1):
        counts[r:] = counts[r:] + counts[:-r].copy()
    return np.cumsum(counts) / counts.sum()


def _rank_interval(name: str, what: str, diffs: np.ndarray, slack: np.ndarray, cdf: np.ndarray, level: float,
                   shapiro: tuple) -> RatioCI:  # fmt: skip
    """The ratio ``exp(median(diffs))`` and the interval from the k-th smallest of ``diffs - slack`` to
    the k-th largest of ``diffs + slack`` (``slack``: each difference's rounding bound), k the largest
    whose tail ``P(S <= k - 1)`` (``cdf``) is at most ``(1 - level) / 2``; no interval when even k = 1
    has a larger tail. p-values invert the same rule."""
    lower, upper = np.sort(diffs - slack), np.sort(diffs + slack)
    total = diffs.size
    estimate = float(np.exp(np.median(diffs)))
    alpha = 1.0 - level
    ok = np.nonzero(cdf[:total] <= alpha / 2 + 1e-12)[0]
    if ok.size == 0:
        best = 1 - 2 * cdf[0]
        note = f"{what}: no {level:.0%} interval, even the widest has confidence {best:.1%}"
        return RatioCI(estimate, float("nan"), float("nan"), "none", note, float("nan"), level, False, shapiro,
                       None, best, True)  # fmt: skip
    k = int(ok[-1]) + 1
    achieved = float(1 - 2 * cdf[k - 1])

    def p_value(r0, alternative):
        if r0 <= 0:
            return 0.0 if alternative == "greater" else 1.0
        delta = np.log(r0)
        if alternative == "greater":  # the lower bound exceeds delta while fewer than k lie at or below it
            count = int(np.searchsorted(lower, delta, side="right"))
        else:
            count = total - int(np.searchsorted(upper, delta, side="left"))
        return float(cdf[min(count, total)])

    widest = float(np.max(slack))
    rounding = f"; widened by up to {widest:.2%} a side for the printed resolution" if widest >= 5e-5 else ""
    note = f"{what}, achieved confidence {achieved:.1%}{rounding}"
    low, high = np.exp(lower[k - 1]), np.exp(upper[total - k])
    return RatioCI(estimate, float(low), float(high), name, note, float("nan"), level, False, shapiro, p_value,
                   achieved)  # fmt: skip


def _positive(*samples) -> str:
    if any(x.size == 0 for x in samples):
        return "no values in a sample"
    if any(np.any(x <= 0) for x in samples):
        return "a value is 0 or negative: no ratio on the log scale"
    return ""


def _rounding_note(widen: float) -> str:
    return f"; widened by {widen:.2%} a side for the printed resolution" if widen >= 5e-5 else ""


def hl_ratio_ci(platform, baseline, level: float = 0.95) -> RatioCI:
    """Ratio platform / baseline of two independent samples under a scale shift: ``exp`` of the
    Hodges-Lehmann shift of log values (the median of all ``log x_i - log y_j``) and the exact
    Mann-Whitney (Moses) interval, at the achieved confidence (``RatioCI.achieved``; see the comment
    above). ``method`` ``hl-moses``, or ``none`` with ``too_few`` set when no interval reaches
    ``level`` at these sizes (3 + 3 at 95 %). The Shapiro-Wilk p-values are recorded, not used."""
    x, y = _clean(platform), _clean(baseline)
    shapiro = (shapiro_p(x), shapiro_p(y))
    nan = float("nan")
    why = _positive(x, y)
    if why:
        return RatioCI(nan, nan, nan, "none", why, nan, level, False, shapiro)
    diffs = (np.log(x)[:, None] - np.log(y)[None, :]).ravel()
    slack = (_log_rounding(x)[:, None] + _log_rounding(y)[None, :]).ravel()
    return _rank_interval("hl-moses", f"Hodges-Lehmann with the exact Mann-Whitney interval ({x.size} + {y.size})",
                          diffs, slack, rank_sum_cdf(x.size, y.size), level, shapiro)


def hl_paired_ci(platform, baseline, level: float = 0.95) -> RatioCI:
    """Ratio platform / baseline of paired values (``platform[i]`` and ``baseline[i]`` measured in one
    round): ``exp`` of the Hodges-Lehmann estimate of the log differences (the median of their Walsh
    averages) and the exact signed-rank interval, at its achieved confidence; ``hl-signed-rank``, or
    ``none`` (too few rounds: 5 at 95 %, where the widest has 93.75 %). Pairs with a NaN are left out."""
    x, y = np.asarray(platform, dtype=float).ravel(), np.asarray(baseline, dtype=float).ravel()
    if x.size != y.size:
        raise ValueError("paired samples need the same length")
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    nan = float("nan")
    why = _positive(x, y)
    w = np.log(x) - np.log(y) if not why else np.array([])
    shapiro = (shapiro_p(w),)
    if why:
        return RatioCI(nan, nan, nan, "none", why, nan, level, False, shapiro)
    i, j = np.triu_indices(w.size)
    e = _log_rounding(x) + _log_rounding(y)  # each log difference's rounding bound
    return _rank_interval("hl-signed-rank", f"Hodges-Lehmann with the exact signed-rank interval ({w.size} rounds)",
                          (w[i] + w[j]) / 2, (e[i] + e[j]) / 2, signed_rank_cdf(w.size), level, shapiro)


def hl_location_ci(values, level: float = 0.95) -> RatioCI:
    """The location of one sample on the log scale: ``exp`` of the Hodges-Lehmann estimate of the
    log values (the median of their Walsh averages, a pseudo-median) and the exact one-sample
    signed-rank interval, each bound widened for the printed resolution as in :func:`hl_paired_ci`;
    ``hl-signed-rank``, or ``none`` with ``too_few`` below :func:`signed_rank_min_n` values (6 at 95 %).
    Distribution-free for a sample symmetric on the log scale; the repetition rule
    (:mod:`virtrepro.adaptive`) uses its width as a per-sample proxy for the ratio's interval."""
    x = _clean(values)
    nan = float("nan")
    why = _positive(x)
    if why:
        return RatioCI(nan, nan, nan, "none", why, nan, level, False, ())
    w = np.log(x)
    i, j = np.triu_indices(w.size)
    e = _log_rounding(x)
    return _rank_interval("hl-signed-rank", f"Hodges-Lehmann with the exact signed-rank interval ({w.size} values)",
                          (w[i] + w[j]) / 2, (e[i] + e[j]) / 2, signed_rank_cdf(w.size), level, (shapiro_p(w),))


def signed_rank_min_n(level: float = 0.95) -> int:
    """The fewest values for which the exact signed-rank interval reaches ``level``: the widest
    interval (the extreme Walsh averages) has confidence ``1 - 2 * 2**-n`` (6 at 95 %, 8 at 99 %)."""
    n = 1
    while 2.0 ** -n > (1.0 - level) / 2 + 1e-12:
        n += 1
    return n


def rank_sum_min_n(level: float = 0.95) -> int:
    """The fewest values a side (equal sizes) for which the exact Mann-Whitney interval of
    :func:`hl_ratio_ci` reaches ``level``: the widest has confidence ``1 - 2 / C(2n, n)`` (4 at 95 %)."""
    n = 1
    while 1.0 / math.comb(2 * n, n) > (1.0 - level) / 2 + 1e-12:
        n += 1
    return n


def _hl_resampled(x: np.ndarray, y: np.ndarray, rng, n_resamples: int) -> np.ndarray:
    """The Hodges-Lehmann shift of log values of ``n_resamples`` resamples of x against y."""
    lx, ly = np.log(x), np.log(y)
    out = np.empty(n_resamples)
    step = max(1, 2_000_000 // (x.size * y.size))
    for start in range(0, n_resamples, step):
        size = min(step, n_resamples - start)
        a = lx[rng.integers(0, x.size, (size, x.size))]
        b = ly[rng.integers(0, y.size, (size, y.size))]
        out[start : start + size] = np.median((a[:, :, None] - b[:, None, :]).reshape(size, -1), axis=1)
    return out


def hl_ratio_estimate(pairs) -> float:
    """The point estimate of :func:`shift_bootstrap_ci`, ``exp(sum_i c_i HL_i)`` for ``pairs`` of
    ``(x_i, y_i, c_i)`` (one pair with c = 1: that of :func:`hl_ratio_ci`), without an interval; NaN
    when a sample is empty or has a value <= 0."""
    samples = [(_clean(x), _clean(y), float(c)) for x, y, c in pairs]
    if _positive(*[s for x, y, _ in samples for s in (x, y)]):
        return float("nan")
    return float(np.exp(sum(c * np.median((np.log(x)[:, None] - np.log(y)[None, :]).ravel()) for x, y, c in samples)))


def shift_bootstrap_ci(pairs, level: float = 0.95, seed=0, n_resamples: int = N_RESAMPLES_SHIFT) -> RatioCI:
    """``R = exp(sum_i c_i HL_i)`` with ``HL_i`` the Hodges-Lehmann shift of log values of ``x_i`` against
    ``y_i``; ``pairs`` is a list of ``(x_i, y_i, c_i)``. A ratio of ratios (a speed-up, an isolation
    efficiency) is ``[(plat_num, plat_den, 1), (base_num, base_den, -1)]``; the geometric mean of k
    per-variant ratios has ``c_i = 1 / k``.

    Interval: every sample resampled on its own (``seed``, e.g. :func:`seed_for`), the statistic
    recomputed, and the percentiles at the tails ``Phi(sqrt(n / (n - 1)) z_(alpha / 2))``, n the
    smallest sample (a resample's spread is too small by about that factor; Student-t quantiles in
    their place, Hesterberg's expanded percentile interval, covered 98-99 % at n = 5-11 for four
    samples). Its coverage is shown by simulation (tests/test_rank_intervals.py,
    bench/interval_coverage.py), from :data:`MIN_N_BOOTSTRAP` values a sample;
    ``none`` with ``too_few`` below. The values' printed resolution widens it as for the rank
    intervals. p-values invert the same percentiles."""
    samples = [(_clean(x), _clean(y), float(c)) for x, y, c in pairs]
    flat = [s for x, y, _ in samples for s in (x, y)]
    shapiro = tuple(shapiro_p(s) for s in flat)
    nan = float("nan")
    why = _positive(*flat)
    if why:
        return RatioCI(nan, nan, nan, "none", why, nan, level, False, shapiro)
    estimate = hl_ratio_estimate(samples)
    n = min(s.size for s in flat)
    what = f"bootstrap of the Hodges-Lehmann shifts of {len(flat)} samples (stretched percentile)"
    if n < MIN_N_BOOTSTRAP:
        return RatioCI(estimate, nan, nan, "none", f"{what}: coverage shown from {MIN_N_BOOTSTRAP} values a sample, "
                       f"a sample has {n}", nan, level, False, shapiro, None, nan, True)  # fmt: skip
    widen = float(sum(abs(c) * (np.max(_log_rounding(x)) + np.max(_log_rounding(y))) for x, y, c in samples))
    rng = np.random.default_rng(seed)
    boot = sum(c * _hl_resampled(x, y, rng, n_resamples) for x, y, c in samples)
    boot = np.sort(boot)
    stretch = np.sqrt(n / (n - 1))  # the resamples' spread is too small by about this factor

    def tail(alpha_half):  # the percentile tail that stands for a two-sided alpha / 2
        return float(scipy_stats.norm.cdf(stretch * scipy_stats.norm.ppf(alpha_half)))

    a = tail((1 - level) / 2)
    low, high = np.quantile(boot, [a, 1 - a])

    def p_value(r0, alternative):
        if r0 <= 0:
            return 0.0 if alternative == "greater" else 1.0
        delta = np.log(r0)
        if alternative == "greater":
            below = np.searchsorted(boot, delta + widen, side="right") / boot.size
        else:
            below = 1 - np.searchsorted(boot, delta - widen, side="left") / boot.size
        return float(scipy_stats.norm.cdf(scipy_stats.norm.ppf(below) / stretch))  # tail() inverted

    note = f"{what}, {n_resamples} resamples" + _rounding_note(widen)
    return RatioCI(estimate, float(np.exp(low - widen)), float(np.exp(high + widen)), "bootstrap-hl", note, nan,
                   level, False, shapiro, p_value, level)  # fmt: skip

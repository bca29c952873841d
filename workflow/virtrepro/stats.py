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

**Means, for figures and summaries**: ``mean_ci``/``location_ci``/``summarize`` describe one sample
per group; ``ratio_ci`` is the interval for a ratio of means (or a product of powers of means), used
by ``overhead`` and the figures; ``welch_test``, ``holm``, ``outliers``, ``tost_p`` and
``compare_to_baseline`` compare a platform with a baseline (conventions are stated in the comment
block before ``ratio_ci``). These keep the rule below (:func:`interval_method`):

* every sample is checked for normality with Shapiro-Wilk when it has at least 3 values and is not
  constant (the p-value is recorded); a sample "departs from normality" when that p-value is below
  ``normality_alpha`` (0.05). Values tied at the printed resolution (``[1, 1, 2]``) depart too.
* no departure: the normal-theory interval, which says so (``t`` for a mean, ``fieller`` for a ratio
  of two means, ``delta-log`` for a product of powers of means);
* a departure and every sample with at least :data:`MIN_N_BCA` (20) values: BCa bootstrap
  (``scipy.stats.bootstrap``), seeded per call;
* a departure at smaller n: the median's order-statistic interval for one sample
  (``median-order``; no interval when n is too small for the level), and no interval (``none``) for a
  ratio of means.
* a constant sample carries no information about its variance: when every sample is constant there
  is no interval and no test (``none``, and the note says so); when only some are, their variance is
  taken as 0 (below the printed resolution) and the note says so.
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
from statsmodels.stats.weightstats import DescrStatsW, ttost_ind

NORMALITY_ALPHA = 0.05
MIN_N_BCA = 20  # BCa only where every sample has at least this many values
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


def interval_method(samples, parametric: str, normality_alpha: float = NORMALITY_ALPHA) -> tuple[str, str]:
    """The interval method for ``samples`` under the module's rule, and a note saying why.

    ``parametric`` is the normal-theory method's name (``t``, ``fieller``, ``delta-log``); the
    result is it, ``bca``, or ``none`` (with the reason in the note).
    """
    if any(x.size < 2 for x in samples):
        return "none", "fewer than 2 values in a sample: no interval"
    if all(_constant(x) for x in samples):
        return "none", CONSTANT_NOTE
    pvals = [shapiro_p(x) for x in samples]
    departing = [p for p in pvals if p < normality_alpha]
    if departing:
        shown = ", ".join(f"{p:.3g}" for p in departing)
        if all(x.size >= MIN_N_BCA for x in samples):
            return "bca", f"a sample departs from normality (Shapiro-Wilk p = {shown}): BCa bootstrap"
        return "none", (
            f"a sample departs from normality (Shapiro-Wilk p = {shown}) and n < {MIN_N_BCA}: no interval "
            "of the ratio of means drawn (the verdicts use the Hodges-Lehmann interval, in the claims table)"
        )
    note = "normal-theory interval (assumes normality)"
    if any(_constant(x) for x in samples):
        note += "; a constant sample's variance is taken as 0 (below the printed resolution)"
    return parametric, note


def _bca(samples, statistic, level: float, seed, n_resamples: int = N_RESAMPLES, alternative="two-sided", previous=None):
    """scipy.stats.bootstrap, BCa, each sample resampled independently."""
    return scipy_stats.bootstrap(
        tuple(samples), statistic, n_resamples=0 if previous is not None else n_resamples, paired=False,
        confidence_level=level, alternative=alternative, method="BCa", vectorized=True,
        bootstrap_result=previous, rng=np.random.default_rng(seed),
    )  # fmt: skip


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


def location_ci(
    values, level: float = 0.95, normality_alpha: float = NORMALITY_ALPHA, seed=0, n_resamples: int = N_RESAMPLES
) -> dict:
    """n, mean, median, std and one interval for the sample's location, by the module's rule.

    ``ci_method``: ``t`` (mean; assumes normality), ``bca`` (mean; n >= 20, normality rejected),
    ``median-order`` (median; normality rejected at n < 20), ``none``; ``ci_of`` names the estimand
    (``mean``/``median``), ``ci_note`` says why, ``shapiro_p`` is the recorded diagnostic.
    """
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
    method, note = interval_method([x], "t", normality_alpha)
    out["ci_note"] = note
    if method == "t":
        _, out["ci_low"], out["ci_high"] = mean_ci(x, level)
        out.update(ci_method="t", ci_of="mean")
    elif method == "bca":
        res = _bca([x], lambda a, axis=-1: np.mean(a, axis=axis), level, seed, n_resamples)
        out.update(ci_method="bca", ci_of="mean", ci_low=float(res.confidence_interval.low),
                   ci_high=float(res.confidence_interval.high))  # fmt: skip
    elif note.startswith("a sample departs"):
        low, high, coverage = median_order_ci(x, level)
        out.update(ci_method="median-order", ci_of="median", ci_low=low, ci_high=high)
        out["ci_note"] = (
            f"departs from normality (Shapiro-Wilk p = {out['shapiro_p']:.3g}): order-statistic interval "
            + (f"of the median, coverage {coverage:.1%}" if low == low else f"of the median impossible at n = {x.size} (at most {coverage:.1%})")
        )
    return out


def summarize(
    frame: pd.DataFrame, by: list[str], level: float = 0.95, value: str = "value",
    normality_alpha: float = NORMALITY_ALPHA, seed: int = 0,
) -> pd.DataFrame:  # fmt: skip
    """Per group, over the group's non-NaN values: n, mean, std, median, the Shapiro-Wilk p-value
    and one location interval by the module's rule (:func:`location_ci`): columns ``ci_low``,
    ``ci_high``, ``ci_method``, ``ci_of``, ``ci_note``, ``level``. Each group's bootstrap (if any)
    has its own seed (:func:`seed_for`)."""
    rows = []
    for key, group in frame.groupby(by, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        res = location_ci(group[value], level, normality_alpha, seed_for(seed, key))
        rows.append({**dict(zip(by, key)), **res, "level": level})
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
# - ratio = mean(platform) / mean(baseline).
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

_UNBOUNDED_NOTE = (
    "Fieller interval unbounded: the baseline mean is not significantly different "
    "from 0 at this level (g = t^2 * var(mean_b) / mean_b^2 >= 1), so the ratio "
    "has no finite confidence interval"
)


def _ratio_to_overhead(ratio: float, higher_is_better: bool) -> float:
    return (1.0 - ratio) * 100.0 if higher_is_better else (ratio - 1.0) * 100.0


def _overhead_interval(low: float, high: float, higher_is_better: bool) -> tuple[float, float]:
    """Map a ratio interval to an overhead-percent interval (kept ordered low <= high)."""
    a = _ratio_to_overhead(low, higher_is_better)
    b = _ratio_to_overhead(high, higher_is_better)
    if np.isnan(a) or np.isnan(b):
        return float("nan"), float("nan")
    return (min(a, b), max(a, b))


def fieller_interval(
    mean_b: float, var_mean_b: float, mean_p: float, var_mean_p: float, t: float
) -> tuple[float, float, bool]:
    """Fieller interval for mean_p / mean_b with independent means.

    ``var_mean_*`` are the variances of the sample means (s^2 / n) and ``t`` the
    two-sided critical value. The interval is the set of R with
    ``(mean_p - R*mean_b)^2 <= t^2 * (var_mean_p + R^2 * var_mean_b)``, i.e. the
    roots of ``a R^2 + b R + c = 0`` with ``a = mean_b^2 - t^2 var_mean_b``,
    ``b = -2 mean_b mean_p`` and ``c = mean_p^2 - t^2 var_mean_p``.
    Returns ``(low, high, bounded)``; when ``a <= 0`` the set is not a finite
    interval and ``(nan, nan, False)`` is returned.
    """
    a = mean_b**2 - t**2 * var_mean_b
    if not a > 0:
        return float("nan"), float("nan"), False
    b = -2.0 * mean_b * mean_p
    c = mean_p**2 - t**2 * var_mean_p
    disc = max(b * b - 4.0 * a * c, 0.0)  # = 4 t^2 (a var_mean_p + mean_p^2 var_mean_b) >= 0
    root = np.sqrt(disc)
    return float((-b - root) / (2 * a)), float((-b + root) / (2 * a)), True


def _satterthwaite(weights, sizes) -> float:
    """Welch-Satterthwaite df of a sum of variance terms ``weights`` from samples of ``sizes``; terms
    that are 0 (constant samples) drop out."""
    w = np.asarray(weights, dtype=float)
    n = np.asarray(sizes, dtype=float)
    keep = w > 0
    return float(w[keep].sum() ** 2 / np.sum(w[keep] ** 2 / (n[keep] - 1)))


@dataclass(frozen=True)
class RatioCI:
    """A ratio ``R = prod mean(x_i)^c_i``, its interval at ``level`` and one-sided p-values.

    ``method``: ``fieller``, ``delta-log``, ``bca`` or ``none`` (no interval; ``note`` says why).
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


def ratio_ci(
    terms, level: float = 0.95, method: str = "auto", normality_alpha: float = NORMALITY_ALPHA,
    seed=0, n_resamples: int = N_RESAMPLES,
) -> RatioCI:  # fmt: skip
    """Interval for ``R = prod_i mean(x_i)^c_i`` over independent samples; ``terms`` is a list of
    ``(values, c_i)``. ``[(platform, 1), (baseline, -1)]`` is a ratio of two means; four terms a
    ratio of ratios (a speed-up or isolation efficiency against the baseline's); the terms of k
    such ratios with ``c_i / k`` their geometric mean (a summary across variants or benchmarks is a
    geometric mean of ratios, never an arithmetic mean of ratios).

    ``method="auto"`` follows the module's rule: ``fieller`` for a ratio of two means (see
    :func:`overhead`), ``delta-log`` otherwise: on the log scale ``theta = sum c_i log m_i`` with
    ``var = sum c_i^2 s_i^2 / (n_i m_i^2)``, a Student-t quantile with Welch-Satterthwaite df of
    those terms, bounds ``exp(theta +- t se)`` (every mean must be positive); ``bca`` where a sample
    departs from normality and every n >= 20; ``none`` below. ``"fieller"``, ``"delta-log"`` and
    ``"bca"`` force a method (``bca`` still needs n >= 20).
    """
    if method not in ("auto", "fieller", "delta-log", "bca"):
        raise ValueError(f"unknown method {method!r}; use 'auto', 'fieller', 'delta-log' or 'bca'")
    if not 0 < level < 1:
        raise ValueError("level must be in (0, 1)")
    samples = [_clean(v) for v, _ in terms]
    powers = np.array([float(c) for _, c in terms])
    if any(x.size == 0 for x in samples):
        raise ValueError("every sample needs at least one non-NaN value")
    nan = float("nan")
    means = np.array([x.mean() for x in samples])
    two = len(terms) == 2 and tuple(powers) == (1.0, -1.0)
    shapiro = tuple(shapiro_p(x) for x in samples)

    def result(estimate, method_used, note, low=nan, high=nan, df=nan, unbounded=False, p=None):
        return RatioCI(float(estimate), float(low), float(high), method_used, note, float(df), level, unbounded, shapiro, p)

    if two:
        estimate = means[0] / means[1] if means[1] != 0 else nan
        if means[1] == 0:
            return result(nan, "none", "baseline mean is 0: ratio undefined")
    else:
        if not np.all(means > 0):
            return result(nan, "none", "a mean is 0 or negative: no relative difference on the log scale")
        estimate = float(np.exp(np.sum(powers * np.log(means))))
    parametric = "fieller" if two else "delta-log"
    chosen, note = interval_method(samples, parametric, normality_alpha)
    if method != "auto" and not (note.startswith("fewer") or note == CONSTANT_NOTE):
        if method == "fieller" and not two:
            raise ValueError("Fieller's interval is for a ratio of two means")
        if method == "bca" and not all(x.size >= MIN_N_BCA for x in samples):
            return result(estimate, "none", f"BCa needs at least {MIN_N_BCA} values in every sample")
        chosen = method
        note = "BCa bootstrap" if method == "bca" else "normal-theory interval (assumes normality)"
    if chosen == "none":
        return result(estimate, "none", note)
    alpha = 1.0 - level
    sizes = np.array([x.size for x in samples], dtype=float)
    var_means = np.array([x.var(ddof=1) for x in samples]) / sizes
    if chosen == "fieller":
        (m_p, m_b), (v_p, v_b) = means, var_means
        ratio = estimate
        if v_p + ratio**2 * v_b > 0:
            df = _satterthwaite([v_p, ratio**2 * v_b], sizes)
        else:  # the ratio is 0 and the platform constant (NPB times printed as 0.00 s): the baseline's df,
            df = float(sizes[1] - 1)  # the limit of Welch-Satterthwaite as the platform's term vanishes
        t = float(scipy_stats.t.ppf(1 - alpha / 2, df))
        low, high, bounded = fieller_interval(m_b, v_b, m_p, v_p, t)
        if not bounded:
            note = _UNBOUNDED_NOTE

        def p_fieller(r0, alternative):
            se = np.sqrt(v_p + r0**2 * v_b)
            stat = (m_p - r0 * m_b) / se * np.sign(m_b) if se > 0 else nan
            return _t_p(stat, df, alternative)

        return result(estimate, "fieller", note, low, high, df, not bounded, p_fieller)
    if chosen == "delta-log":
        theta = float(np.sum(powers * np.log(means)))
        weights = powers**2 * var_means / means**2
        se = float(np.sqrt(weights.sum()))
        df = _satterthwaite(weights, sizes)
        t = float(scipy_stats.t.ppf(1 - alpha / 2, df))

        def p_delta(r0, alternative):
            if r0 <= 0:
                return 0.0 if alternative == "greater" else 1.0
            return _t_p((theta - np.log(r0)) / se, df, alternative)

        return result(estimate, "delta-log", note, np.exp(theta - t * se), np.exp(theta + t * se), df, False, p_delta)

    # BCa: scipy.stats.bootstrap with the statistic itself, each sample resampled independently
    def statistic(*xs, axis=-1):
        return np.prod([np.mean(x, axis=axis) ** c for x, c in zip(xs, powers)], axis=0)

    res = _bca(samples, statistic, level, seed, n_resamples)
    if not np.all(np.isfinite(res.bootstrap_distribution)):
        return result(estimate, "none", "a resampled denominator mean is 0: no bootstrap interval", unbounded=True)

    def p_bca(r0, alternative):
        # the one-sided BCa bound at confidence 1 - p equals r0: find p by bisection
        side = "greater" if alternative == "greater" else "less"

        def bound(p):
            ci = _bca(samples, statistic, 1 - p, seed, previous=res, alternative=side).confidence_interval
            return ci.low if side == "greater" else ci.high

        lo, hi = 1e-6, 1 - 1e-6
        excluded = (lambda b: b > r0) if side == "greater" else (lambda b: b < r0)
        if excluded(bound(lo)):
            return lo
        if not excluded(bound(hi)):
            return 1.0
        for _ in range(30):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if excluded(bound(mid)) else (mid, hi)
        return hi

    ci = res.confidence_interval
    return result(estimate, "bca", note, ci.low, ci.high, nan, False, p_bca)


def overhead(
    baseline_values,
    platform_values,
    higher_is_better: bool,
    level: float = 0.95,
    method: str = "auto",
    n_resamples: int = N_RESAMPLES,
    seed=0,
    normality_alpha: float = NORMALITY_ALPHA,
) -> dict:
    """Ratio of means platform/baseline, overhead in percent, and their CI.

    Conventions
    -----------
    ``ratio = mean(platform) / mean(baseline)``. ``overhead_percent`` is
    positive when the platform is worse than the baseline:
    ``(1 - ratio) * 100`` if ``higher_is_better`` (throughput), else
    ``(ratio - 1) * 100`` (times, latencies). So +10 means "10 % worse" for
    both kinds of metric, and -10 means "10 % better".

    Methods (:func:`ratio_ci`; ``method="auto"`` chooses by the module's rule)
    -------
    ``"fieller"`` (both samples consistent with normality): Fieller's theorem for two independent
    samples with unequal variances. With ``v_b = s_b^2/n_b`` and ``v_p = s_p^2/n_p``
    the interval is ``{R : (mean_p - R mean_b)^2 <= t^2 (v_p + R^2 v_b)}``
    (see :func:`fieller_interval`). ``t`` is the ``1 - alpha/2`` Student-t
    quantile with Welch-Satterthwaite degrees of freedom for the linear
    combination ``mean_p - R mean_b`` evaluated at the point estimate
    ``R = ratio``::

        df = (v_p + R^2 v_b)^2 / (v_p^2/(n_p-1) + R^4 v_b^2/(n_b-1))

    (the plug-in choice used e.g. by the R package mratios; a constant sample's term drops out).
    If ``g = t^2 v_b / mean_b^2 >= 1`` the baseline mean is not significantly
    different from 0, the confidence set is unbounded, and the bounds are
    NaN with ``ci_unbounded = True`` and an explanation in ``ci_note``.

    ``"bca"``: a sample departs from normality and both have n >= 20: ``scipy.stats.bootstrap``
    (BCa) of the ratio of means, seeded with ``seed``. ``"none"``: no interval (fewer than 2 values,
    both samples constant, or a departure from normality at n < 20); ``ci_note`` says why.

    Returns a dict with keys: ``n_baseline, n_platform, mean_baseline,
    mean_platform, ratio, ratio_ci_low, ratio_ci_high, overhead_percent,
    overhead_ci_low, overhead_ci_high, ci_unbounded, ci_note, df, level,
    method, shapiro_p_baseline, shapiro_p_platform, higher_is_better``. ``method`` is the
    interval's method; ``df`` is NaN unless it is ``fieller``.
    ``overhead_ci_low <= overhead_ci_high`` always (for higher-is-better
    metrics the low overhead bound comes from the high ratio bound).
    """
    base = _clean(baseline_values)
    plat = _clean(platform_values)
    if base.size == 0 or plat.size == 0:
        raise ValueError("both samples need at least one non-NaN value")
    ci = ratio_ci([(plat, 1), (base, -1)], level, method, normality_alpha, seed, n_resamples)
    o_low, o_high = _overhead_interval(ci.low, ci.high, higher_is_better)
    return {
        "n_baseline": int(base.size),
        "n_platform": int(plat.size),
        "mean_baseline": float(base.mean()),
        "mean_platform": float(plat.mean()),
        "ratio": ci.estimate,
        "ratio_ci_low": ci.low,
        "ratio_ci_high": ci.high,
        "overhead_percent": _ratio_to_overhead(ci.estimate, higher_is_better),
        "overhead_ci_low": o_low,
        "overhead_ci_high": o_high,
        "ci_unbounded": ci.unbounded,
        "ci_note": ci.note,
        "df": ci.df,
        "level": level,
        "method": ci.method,
        "shapiro_p_platform": ci.shapiro[0],
        "shapiro_p_baseline": ci.shapiro[1],
        "higher_is_better": bool(higher_is_better),
    }


def welch_test(baseline_values, platform_values) -> dict:
    """Welch's unequal-variance two-sample t-test (two-sided), via scipy; assumes normality.

    The statistic is oriented platform minus baseline:
    ``t = (mean_p - mean_b) / sqrt(s_p^2/n_p + s_b^2/n_b)`` with
    Welch-Satterthwaite degrees of freedom
    ``df = (v_p + v_b)^2 / (v_p^2/(n_p-1) + v_b^2/(n_b-1))``, ``v = s^2/n``.
    NaN values are removed first; with fewer than 2 values in a sample, or two constant samples
    (no information about the variance: scipy would return t = inf, p = 0 and a made-up df = 1),
    the result is NaN and ``note`` says why. Returns ``{"statistic", "p_value", "df", "note"}``.
    """
    base = _clean(baseline_values)
    plat = _clean(platform_values)
    nan = float("nan")
    if base.size < 2 or plat.size < 2:
        return {"statistic": nan, "p_value": nan, "df": nan, "note": "fewer than 2 values in a sample: no test"}
    if _constant(base) and _constant(plat):
        return {"statistic": nan, "p_value": nan, "df": nan, "note": CONSTANT_NOTE}
    res = scipy_stats.ttest_ind(plat, base, equal_var=False)
    return {"statistic": float(res.statistic), "p_value": float(res.pvalue), "df": float(res.df), "note": ""}


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


def tost_p(baseline_values, platform_values, margin: float = 0.05) -> float:
    """TOST equivalence p-value, relative margin of the baseline mean (assumes normality).

    Null: ``|mean_p - mean_b| >= margin * |mean_b|``; alternative: the
    difference lies strictly inside ``(-margin*|mean_b|, +margin*|mean_b|)``.
    Welch version: ``statsmodels.stats.weightstats.ttost_ind(platform,
    baseline, low, upp, usevar="unequal")``. The margin uses the observed
    baseline mean as if it were known (the usual practical simplification).
    NaN when a sample has fewer than 2 values, both samples are constant (no information about
    the variance) or the statistic is undefined.
    """
    base = _clean(baseline_values)
    plat = _clean(platform_values)
    if base.size < 2 or plat.size < 2 or (_constant(base) and _constant(plat)):
        return float("nan")
    delta = margin * abs(float(base.mean()))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = ttost_ind(plat, base, -delta, delta, usevar="unequal")[0]
    return float(p)


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
    method: str = "auto",
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    normality_alpha: float = NORMALITY_ALPHA,
    outlier_rule: str = "none",
    outlier_k: float | None = None,
) -> pd.DataFrame:
    """Compare every non-baseline platform with ``baseline``, per group: ONE Holm family.

    The rows one call returns are one family of tests for Holm's correction: call it once per
    figure (or table) with all the comparisons that figure shows, so a comparison has the same
    adjusted p-value wherever that figure is drawn (``holm_family_size`` says how many tests the
    family had). Claims have their own families (:mod:`virtrepro.claims`).

    For each group of ``by`` (all rows form one group when ``by`` is empty or
    None) and each platform (column ``platform``) other than ``baseline``,
    one row with:

    - the ``by`` columns, ``platform``, ``baseline``;
    - ``n_baseline, n_platform, mean_baseline, mean_platform`` (after NaN and
      outlier removal) and ``dropped_baseline, dropped_platform``: how many
      values the outlier rule removed (0 when ``outlier_rule="none"``, the
      default: nothing is dropped unless the caller asks for it; the rule is
      applied to each platform's sample within the group separately);
    - ``ratio, ratio_ci_low, ratio_ci_high, overhead_percent,
      overhead_ci_low, overhead_ci_high, ci_unbounded, ci_method, ci_note,
      shapiro_p_baseline, shapiro_p_platform`` from :func:`overhead` (same conventions: overhead
      > 0 means the platform is worse; ``ci_method`` names the interval, each row's bootstrap
      seeded on its own with :func:`seed_for`);
    - ``welch_p`` (two-sided, :func:`welch_test`) and ``holm_p``: Holm
      adjustment over all rows returned by this call (rows with NaN p are
      left out of the family), ``holm_family_size``;
    - ``tost_p``: equivalence p-value for the margin ``margin * |mean_baseline|``
      (:func:`tost_p`; not multiplicity-adjusted);
    - ``significant``: ``holm_p < alpha``;
    - ``verdict``, with ``alpha = 1 - level``, decided in this order:

      0. ``"inconclusive"`` when a sample departs from normality at n < 20 or both samples are
         constant (``ci_method`` is ``none``; ``ci_note`` says why): the t-tests' assumptions
         do not hold, whatever their p-values;
      1. ``"equivalent"`` if ``tost_p < alpha``: the difference is shown to
         lie within +/- margin. This is the ONLY way this function supports
         a "no relevant overhead" claim. A difference can be both
         equivalent and significant (tiny but real); ``significant`` and the
         overhead columns still show it.
      2. ``"worse"`` / ``"better"`` if ``holm_p < alpha``; the direction is
         that of ``overhead_percent`` (worse = lower throughput or longer
         time). "worse"/"better" is used rather than "slower"/"faster" so the
         wording is right for both metric directions.
      3. ``"inconclusive"`` otherwise, including when p-values are NaN
         (too few values, missing baseline in the group). A non-significant
         t-test alone never yields "equivalent".

    ``higher_is_better`` is a bool for the whole frame, or the name of a
    boolean column (it must be constant within each group and platform pair).
    Groups where the baseline has no values still produce rows (verdict
    ``"inconclusive"``, ``ci_note`` says why).
    """
    if outlier_rule not in (None, "none", "iqr", "mad"):
        raise ValueError(f"unknown outlier rule {outlier_rule!r}")
    by = list(by or [])
    alpha = 1.0 - level
    data = frame[frame[platform].notna()]
    if by:
        groups = data.groupby(by, sort=True, dropna=False)
    else:
        groups = [((), data)]

    def sample(group: pd.DataFrame, name) -> tuple[np.ndarray, int]:
        values = _clean(group.loc[group[platform] == name, value])
        flagged = outliers(values, outlier_rule, outlier_k)
        return values[~flagged], int(flagged.sum())

    def direction(group: pd.DataFrame) -> bool:
        if isinstance(higher_is_better, str):
            flags = group[higher_is_better].dropna().unique()
            if len(flags) != 1:
                raise ValueError(
                    f"column {higher_is_better!r} must hold one value per group, got {list(flags)}"
                )
            return bool(flags[0])
        return bool(higher_is_better)

    rows = []
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        base, base_dropped = sample(group, baseline)
        others = sorted(p for p in group[platform].unique() if p != baseline)
        for other in others:
            plat, plat_dropped = sample(group, other)
            both = pd.concat([group[group[platform] == baseline], group[group[platform] == other]])
            hib = direction(both)
            row = {**dict(zip(by, key)), platform: other, "baseline": baseline}
            if base.size and plat.size:
                res = overhead(base, plat, hib, level=level, method=method, n_resamples=n_resamples,
                               seed=seed_for(seed, *key, other), normality_alpha=normality_alpha)  # fmt: skip
            else:
                nan = float("nan")
                res = {
                    "n_baseline": int(base.size), "n_platform": int(plat.size),
                    "mean_baseline": float(base.mean()) if base.size else nan,
                    "mean_platform": float(plat.mean()) if plat.size else nan,
                    "ratio": nan, "ratio_ci_low": nan, "ratio_ci_high": nan,
                    "overhead_percent": nan, "overhead_ci_low": nan, "overhead_ci_high": nan,
                    "ci_unbounded": False, "method": "none", "shapiro_p_baseline": shapiro_p(base),
                    "shapiro_p_platform": shapiro_p(plat),
                    "ci_note": "no values for the baseline" if not base.size else "no values for the platform",
                }  # fmt: skip
            row.update(
                {
                    "n_baseline": res["n_baseline"],
                    "n_platform": res["n_platform"],
                    "dropped_baseline": base_dropped,
                    "dropped_platform": plat_dropped,
                    "mean_baseline": res["mean_baseline"],
                    "mean_platform": res["mean_platform"],
                    "higher_is_better": hib,
                    "ratio": res["ratio"],
                    "ratio_ci_low": res["ratio_ci_low"],
                    "ratio_ci_high": res["ratio_ci_high"],
                    "overhead_percent": res["overhead_percent"],
                    "overhead_ci_low": res["overhead_ci_low"],
                    "overhead_ci_high": res["overhead_ci_high"],
                    "ci_unbounded": res["ci_unbounded"],
                    "ci_method": res["method"],
                    "ci_note": res["ci_note"],
                    "shapiro_p_baseline": res["shapiro_p_baseline"],
                    "shapiro_p_platform": res["shapiro_p_platform"],
                    "welch_p": welch_test(base, plat)["p_value"],
                    "tost_p": tost_p(base, plat, margin),
                    "_untestable": res["method"] == "none" and (
                        res["ci_note"] == CONSTANT_NOTE or res["ci_note"].startswith("a sample departs")
                    ),
                }
            )
            rows.append(row)

    columns = [
        *by, platform, "baseline", "n_baseline", "n_platform", "dropped_baseline",
        "dropped_platform", "mean_baseline", "mean_platform", "higher_is_better", "ratio",
        "ratio_ci_low", "ratio_ci_high", "overhead_percent", "overhead_ci_low",
        "overhead_ci_high", "ci_unbounded", "ci_method", "ci_note", "shapiro_p_baseline",
        "shapiro_p_platform", "welch_p", "holm_p", "holm_family_size", "tost_p",
        "significant", "verdict", "level", "margin", "outlier_rule",
    ]  # fmt: skip
    derived = ("holm_p", "holm_family_size", "significant", "verdict", "level", "margin", "outlier_rule")
    out = pd.DataFrame(rows, columns=[c for c in columns if c not in derived] + ["_untestable"])
    out["holm_p"] = holm(out["welch_p"].to_numpy()) if len(out) else []
    out["holm_family_size"] = int(out["welch_p"].notna().sum())
    out["significant"] = out["holm_p"] < alpha
    verdicts = []
    for tost, sig, m_b, m_p, hib, untestable in zip(
        out["tost_p"], out["significant"], out["mean_baseline"], out["mean_platform"], out["higher_is_better"],
        out["_untestable"],
    ):  # fmt: skip
        # direction from the means, so it does not depend on the sign of the baseline mean
        worse = (m_p < m_b) if hib else (m_p > m_b)
        if untestable:
            verdicts.append("inconclusive")
        elif tost < alpha:
            verdicts.append("equivalent")
        elif sig and m_p != m_b:
            verdicts.append("worse" if worse else "better")
        else:
            verdicts.append("inconclusive")
    out["verdict"] = verdicts
    out["level"] = level
    out["margin"] = margin
    out["outlier_rule"] = outlier_rule or "none"
    return out[columns]


def drift_between_parts(table: pd.DataFrame, platform: str, level: float = 0.95) -> pd.DataFrame:
    """A platform's second part against its first, per benchmark, variant and metric.

    The workflow measures a variant's repetitions in two parts, in the order A B C D D C B A
    over (platform, part) (:func:`virtrepro.config.run_sequence`): for the first platform (the
    baseline) the two parts are the furthest apart in time, so a drift of the host over the run
    shows there first. One row per group with both parts: ``n_part1, n_part2, mean_part1,
    mean_part2`` and ``ratio`` (part 2 / part 1) with its interval (:func:`ratio_ci`; NaN where the
    data carry none, with ``ci_note``). Logs measured before the parts existed (``part`` empty)
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
        interval = ratio_ci([(second, 1), (first, -1)], level=level, seed=seed_for(0, benchmark, variant, metric))
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
    ``rounds``, ``above`` (rounds whose ratio exceeds 1), ``ratio`` (the geometric mean of the
    rounds' ratios) and its interval, the Student-t interval of the mean log ratio, under the
    module's rule (:func:`interval_method`: the log ratios' normality is checked; a departure gives
    BCa at 20 rounds or more and no interval, ``none``, below). Ratios are of the metric's values,
    whatever its direction. Rounds with a value that is not positive are left out (no log)."""
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
            logs = np.log(both[platform].to_numpy(float) / both[baseline].to_numpy(float))
            method, note = interval_method([logs], "t")
            low = high = float("nan")
            if method == "t":
                _, low, high = mean_ci(logs, level)
            elif method == "bca":
                found = _bca([logs], np.mean, level, seed_for(0, platform, *key)).confidence_interval
                low, high = float(found.low), float(found.high)
            rows.append({"platform": platform, **dict(zip(keys, key)), "rounds": int(logs.size),
                         "above": int((logs > 0).sum()), "ratio": float(np.exp(logs.mean())),
                         "ratio_ci_low": float(np.exp(low)), "ratio_ci_high": float(np.exp(high)),
                         "ci_method": method, "ci_note": note})
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
